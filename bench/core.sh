#!/usr/bin/env bash
# make bench-core: the core's cost per acquire + release cycle, in time and in
# instructions (callgrind counts instructions inside run_cycles only, which
# is repeatable on a noisy machine).
set -eu
bin=${1:-build/bench_core}
cpu=$(( $(nproc) - 1 ))
echo "layout: benchmark pinned to CPU $cpu (taskset), $(nproc) CPUs"
taskset -c "$cpu" "$bin" 1000000
if command -v valgrind >/dev/null; then
  k=20000
  for n in 1 3 5; do
    out=$(mktemp)
    valgrind --tool=callgrind --toggle-collect=run_cycles --callgrind-out-file="$out" \
      "$bin" --cycles-only "$n" "$k" >/dev/null 2>&1
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out" | head -n 1)
    [ -n "$ir" ] || ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out" | head -n 1)
    rm -f "$out"
    echo "N=$n  callgrind: $((ir / k)) instructions/cycle ($ir over $k cycles)"
  done
fi
