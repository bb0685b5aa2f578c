#!/usr/bin/env bash
# Mutation checks: each tests/core/mutations/*.patch re-introduces a known bug into
# a copy of redlock.h (build/mutations/<name>/redlock.h); the simulator, built
# against that copy, must report a violation within RUNS schedules of the
# profile named by the patch's "Profile:" line (it stops at the first). A
# checker that cannot find a bug we know of proves nothing.
# A patch may instead name the file it mutates and the test that must catch it:
#   Target: adapters/redlock_socket.h   the file patched (default redlock.h); the
#                                       copy sits among copies of redlock.h and
#                                       adapters/*.h in build/mutations/<name>/
#                                       (an example or a make file too, e.g.
#                                       examples/socket.c, mk/hiredis.mk: at
#                                       its path under that directory)
#   Check: <shell command>              builds and runs the test against the copy
#                                       ($MUT: that directory, first in -I; $CC);
#                                       it succeeds only if the test caught the
#                                       mutation (grep its "not ok" line): a test
#                                       that could not run catches nothing
# (a Check that starts redis-server nodes runs here too: the nodes are its own).
# A bug the simulator cannot see names its detector instead: "Unit: NAME..."
# builds tests/core/unit.c against the copy and runs those tests (names as
# its command line takes them); one of them must fail.
# The patches are checked side by side (scripts/parallel.sh, one per CPU).
# Builds are most of the cost: the unit tests are built without
# optimisation (they run in a fraction of a second), and the simulator is
# first built so and searches the first QUICK_RUNS schedules, where nearly
# every mutation is caught; only one not caught there is built with -O2
# for the whole search of RUNS schedules.
# Usage: tests/core/mutations/check.sh [RUNS] [BUILD_DIR]
#        tests/core/mutations/check.sh --one PATCH RUNS BUILD_DIR
set -u
if [ "${1:-}" != --one ]; then
  runs=${1:-20000}
  build=${2:-build}
  one=()
  for patch in tests/core/mutations/*.patch; do
    one+=("$0 --one $patch $runs $build")
  done
  exec scripts/parallel.sh "${one[@]}"
fi
patch=$2
runs=$3
build=$4
cc=${CC:-cc}
name=$(basename "$patch" .patch)
dir="$build/mutations/$name"
profile=$(sed -n 's/^Profile: *//p' "$patch" | head -n 1)
target=$(sed -n 's/^Target: *//p' "$patch" | head -n 1)
target=${target:-redlock.h}
check=$(sed -n 's/^Check: *//p' "$patch" | head -n 1)
units=$(sed -n 's/^Unit: *//p' "$patch" | head -n 1)
mkdir -p "$dir"
if [ "$target" != redlock.h ]; then # the copy's relative includes stay among the copies
  mkdir -p "$dir/adapters" "$dir/$(dirname "$target")" && cp redlock.h "$dir/" && cp adapters/*.h "$dir/adapters/"
fi
if ! patch -s -o "$dir/$target" "$target" < "$patch" >/dev/null 2>&1; then
  echo "not ok mutation $name: patch no longer applies to $target (update it)"
  exit 1
fi
if [ -n "$check" ]; then
  if out=$(MUT="$dir" CC="$cc" bash -c "$check" 2>&1); then
    echo "ok mutation $name caught: $(printf '%s\n' "$out" | tail -n 1)"
    exit 0
  fi
  printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
  echo "not ok mutation $name not caught"
  exit 1
fi
if [ -n "$units" ]; then
  if ! $cc -std=c99 -O0 -Wall -Wextra -Wpedantic -Werror -I"$dir" -I. -Itests/shared tests/core/unit.c -o "$dir/unit" -pthread; then
    echo "not ok mutation $name: does not build"
    exit 1
  fi
  # shellcheck disable=SC2086 # the test names, one word each
  failed=$("$dir/unit" $units 2>&1 | sed -n 's/^not ok //p' | head -n 1)
  if [ -n "$failed" ]; then echo "ok mutation $name caught by unit $failed"; exit 0; fi
  echo "not ok mutation $name not caught by unit $units"
  exit 1
fi
# search OPT RUNS: builds the simulator against the copy and searches
# RUNS schedules; $line is its verdict, $seed the first violation
search() {
  if ! $cc -std=c99 "$1" -Wall -Wextra -Wpedantic -Werror -I"$dir" -I. -Itests/shared tests/core/sim.c -o "$dir/sim"; then
    echo "not ok mutation $name: does not build"
    exit 1
  fi
  out=$("$dir/sim" --profile "$profile" --runs "$2" --seed 1 --expect-violations --first --label "$profile" 2>&1)
  line=$(printf '%s\n' "$out" | grep -E '^(ok|not ok) ' | tail -n 1)
  seed=$(printf '%s\n' "$out" | sed -n 's/^# seed \([0-9]*\): \(.*\) (N=.*/seed \1: \2/p' | head -n 1)
}
quick=${QUICK_RUNS:-300}
[ "$quick" -lt "$runs" ] || quick=$runs
search -O0 "$quick"
case "$line" in ok*) ;; *) [ "$quick" -lt "$runs" ] && search -O2 "$runs" ;; esac
case "$line" in
  ok*) echo "ok mutation $name caught by ${line#ok } [$seed]" ;;
  *) echo "not ok mutation $name not caught: ${line#not ok }"; exit 1 ;;
esac
