#!/usr/bin/env bash
# Mutation checks: each tests/core/mutations/*.patch re-introduces a known bug into
# a copy of redlock.h (build/mutations/<name>/redlock.h); the simulator, built
# against that copy, must report a violation within RUNS schedules of the
# profile named by the patch's "Profile:" line. A checker that cannot find a
# bug we know of proves nothing.
# Usage: tests/core/mutations/check.sh [RUNS] [BUILD_DIR]
set -u
runs=${1:-20000}
build=${2:-build}
cc=${CC:-cc}
status=0
for patch in tests/core/mutations/*.patch; do
  name=$(basename "$patch" .patch)
  dir="$build/mutations/$name"
  profile=$(sed -n 's/^Profile: *//p' "$patch" | head -n 1)
  mkdir -p "$dir"
  if ! patch -s -o "$dir/redlock.h" redlock.h < "$patch" >/dev/null 2>&1; then
    echo "not ok mutation $name: patch no longer applies to redlock.h (update it)"
    status=1; continue
  fi
  if ! $cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I"$dir" -I. -Itests/shared tests/core/sim.c -o "$dir/sim"; then
    echo "not ok mutation $name: does not build"
    status=1; continue
  fi
  out=$("$dir/sim" --profile "$profile" --runs "$runs" --seed 1 --expect-violations --label "$profile" 2>&1)
  line=$(printf '%s\n' "$out" | grep -E '^(ok|not ok) ' | tail -n 1)
  seed=$(printf '%s\n' "$out" | sed -n 's/^# seed \([0-9]*\): \(.*\) (N=.*/seed \1: \2/p' | head -n 1)
  case "$line" in
    ok*) echo "ok mutation $name caught by ${line#ok } [$seed]" ;;
    *) echo "not ok mutation $name not caught: ${line#not ok }"; status=1 ;;
  esac
done
exit $status
