#!/usr/bin/env bash
# Runs each check target given on the command line through make and counts
# TAP-style "ok" / "not ok" lines across all of them. A check that exits
# non-zero without reporting a failure counts as one. Ends with the single
# line "N passed, N failed".
#
#   scripts/run-tests.sh A B -- -j2 C D E F
# runs groups side by side, separated by "--": A then B in one lane, and
# C, D, E, F taken in that order by two lanes (-jN: N lanes serve the
# group, each taking the next check when it is done with one). `make test`
# gives the checks that need only the CPU (compilers, the simulator,
# memcheck of the core) one lane, and those that start redis-server nodes
# and mostly wait on them two, longest first, so that the lanes share the
# machine's cores well. Each check's output is shown whole when it ends.
# -nN: the group's checks run at nice N (`make test` gives the CPU checks
# 10: they want throughput, while the node checks' timing is what they
# test, and they must not wait for a core). Without "--", one group;
# without -jN, one lane for it.
set -u
make=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
groups=() group=
for a in "$@"; do
  if [ "$a" = "--" ]; then groups+=("$group"); group=
  else group="$group $a"; fi
done
groups+=("$group")

# run_check CHECK: its output to $tmp/<check>.out, its make status to
# $tmp/<check>.rc; the whole report (output and timing) printed at once so
# that the lanes do not interleave mid-check. The CPU time each check used
# (its processes that were waited for, in seconds) is printed beside its
# wall time: what the lanes' balance needs.
cpu_ms() { # FILE: the lane's children's user + system time so far, in ms, into FILE
  times > "$1.times" # in the lane's shell, not a subshell: its children are the lane's
  awk 'NR == 2 { t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
    printf "%d\n", t * 1000 }' "$1.times" > "$1"
}
run_check() {
  local t=$1 start rc cpu0 cpu=$tmp/cpu.$BASHPID
  start=$SECONDS
  cpu_ms "$cpu"; cpu0=$(cat "$cpu")
  nice -n "${NICENESS:-0}" $make --no-print-directory -s "$t" > "$tmp/$t.out" 2>&1
  rc=$?
  echo "$rc" > "$tmp/$t.rc"
  cpu_ms "$cpu"
  { echo "== $t"; cat "$tmp/$t.out"
    echo "== $t: $((SECONDS - start)) s (cpu $(( ($(cat "$cpu") - cpu0) / 1000 )) s)"; } > "$tmp/$t.report"
  flock "$tmp" cat "$tmp/$t.report"
}
# next_check QUEUE: the first check of the queue file, taken off it
next_check() {
  flock "$1.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' sh "$1"
}
run_lane() { # QUEUE: takes checks off it until it is empty
  local t
  while t=$(next_check "$1") && [ -n "$t" ]; do run_check "$t"; done
}

all=
g=0
for group in "${groups[@]}"; do
  g=$((g + 1)); lanes=1; niceness=0
  # shellcheck disable=SC2086 # a group is a list of words
  set -- $group
  while :; do
    case "${1:-}" in
      -j[0-9]*) lanes=${1#-j}; shift ;;
      -n[0-9]*) niceness=${1#-n}; shift ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || continue
  all="$all $*"
  printf '%s\n' "$@" > "$tmp/queue.$g"
  for _ in $(seq 1 "$lanes"); do NICENESS=$niceness run_lane "$tmp/queue.$g" & done
done
wait

pass=0 fail=0
for t in $all; do
  p=$(grep -c '^ok ' "$tmp/$t.out")
  f=$(grep -c '^not ok ' "$tmp/$t.out")
  rc=$(cat "$tmp/$t.rc" 2>/dev/null || echo 1)
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok $t exited with status $rc"
    f=1
  fi
  pass=$((pass + p)); fail=$((fail + f))
done
echo "all checks: $SECONDS s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
