#!/usr/bin/env bash
# make bench-core: the core's cost per acquire + release cycle and per
# watchdog renewal, in time and in instructions (callgrind counts
# instructions inside run_cycles / run_renewals only, which is repeatable on
# a noisy machine), alone and with 1,000 to 100,000 other locks held; and,
# given the same benchmark built with REDLOCK_NO_STATS, what the client's
# statistics cost: the same cycle both ways, side by side.
set -eu
bin=${1:-build/bench_core}
nostats=${2:-}
cpu=$(( $(nproc) - 1 ))
echo "layout: benchmark pinned to CPU $cpu (taskset), $(nproc) CPUs"
taskset -c "$cpu" "$bin" 1000000
if [ -n "$nostats" ]; then
  echo "statistics: the same acquire + release cycle with them (default) and without (REDLOCK_NO_STATS)"
  for n in 1 3; do # alternated, so that a busy moment hits both
    for round in 1 2; do
      echo "N=$n  with:    $(taskset -c "$cpu" "$bin" --rate "$n" 500000)"
      echo "N=$n  without: $(taskset -c "$cpu" "$nostats" --rate "$n" 500000)"
    done
  done
fi
if command -v valgrind >/dev/null; then
  k=20000
  # instructions inside the function named $1 for bench_core's other arguments
  # (the benchmark: $cbin, else $bin)
  count() {
    local fn=$1 out ir
    shift
    out=$(mktemp)
    valgrind --tool=callgrind --toggle-collect="$fn" --callgrind-out-file="$out" "${cbin:-$bin}" "$@" >/dev/null 2>&1 || { rm -f "$out"; echo 0; return; }
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out" | head -n 1)
    [ -n "$ir" ] || ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out" | head -n 1)
    rm -f "$out"
    echo "$ir"
  }
  for n in 1 3 5; do
    ir=$(count run_cycles --cycles-only "$n" "$k")
    echo "N=$n  callgrind: $((ir / k)) instructions/cycle ($ir over $k cycles)"
    if [ -n "$nostats" ]; then
      base=$(cbin=$nostats count run_cycles --cycles-only "$n" "$k")
      awk -v ir="$ir" -v base="$base" -v k="$k" -v n="$n" 'BEGIN { if (base > 0)
        printf "N=%d  callgrind: %d instructions/cycle without statistics: they add %d (%.1f%%)\n",
               n, base / k, (ir - base) / k, 100 * (ir - base) / base }'
    fi
  done
  # the same work with other locks held on the client: the cost must not grow
  for what in cycles renewals; do
    fn=run_$what
    base=$(count "$fn" --"$what"-only 1 "$k")
    for others in 1000 10000 100000; do
      ir=$(count "$fn" --"$what"-only 1 "$k" "$others")
      [ "$base" -gt 0 ] && [ "$ir" -gt 0 ] || { echo "error: callgrind run failed ($what, $others other locks)"; exit 1; }
      awk -v ir="$ir" -v base="$base" -v k="$k" -v what="${what%s}" -v others="$others" 'BEGIN {
        printf "N=1  callgrind: %d instructions/%s with %d other locks held (%d alone: %.3fx)\n",
               ir / k, what, others, base / k, ir / base }'
    done
  done
fi
