#!/usr/bin/env bash
# Runs each argument, a shell command line, with at most JOBS at once
# (default: the number of CPUs), and prints each one's output whole, in
# argument order, as soon as it and those before it are done. Exits 1 if
# any command did. Used by the check targets whose steps are independent
# (the simulator's profiles); tests/mutate/mutate.py reads its arguments
# as separate commands.
# Usage: scripts/parallel.sh 'CMD1 ARGS' 'CMD2 ARGS' ...
set -u
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$#
started=0 shown=0 status=0

# Prints the finished outputs that are next in order.
show_ready() {
  while [ "$shown" -lt "$started" ] && [ -f "$tmp/$shown.rc" ]; do
    cat "$tmp/$shown.out"
    [ "$(cat "$tmp/$shown.rc")" = 0 ] || status=1
    shown=$((shown + 1))
  done
}

for cmd in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n 2>/dev/null || sleep 0.1
    show_ready
  done
  ( eval "$cmd" > "$tmp/$started.out" 2>&1; echo $? > "$tmp/$started.rc.tmp"; mv "$tmp/$started.rc.tmp" "$tmp/$started.rc" ) &
  started=$((started + 1))
done
while [ "$shown" -lt "$n" ]; do
  wait -n 2>/dev/null || sleep 0.1
  show_ready
done
exit $status
