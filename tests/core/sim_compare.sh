#!/bin/sh
# sim_compare.sh BASE [RUNS] - the simulator's output for the same seeds,
# built from git revision BASE and from the working tree, compared.
#
# For every profile and seeds 1..3 it records the summary lines and a
# digest of the full --trace (every command sent, every reply and result,
# in order; request tags and the per-process part of owner names left out,
# as both are drawn from the process's randomness; the verdict lines, ok
# and not ok, left out of both, as they count what the checkers did). A
# change that keeps the core's behaviour keeps both; any difference is
# printed and the script exits 1. Shows that a restructuring of redlock.h changes no
# behaviour: tests/core/sim_compare.sh main
set -eu
base=${1:?usage: sim_compare.sh BASE [RUNS]}
runs=${2:-300}
build=${BUILD:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/simcmp.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$work/base"
git archive "$base" redlock.h tests/core/sim.c tests/shared | tar -x -C "$work/base"
cc=${CC:-cc}
flags="-std=c99 -O2 -w"
$cc $flags -I"$work/base" -I"$work/base/tests/shared" "$work/base/tests/core/sim.c" -o "$work/sim-base"
$cc $flags -I. -Itests/shared tests/core/sim.c -o "$work/sim-new"

profiles=$(sed -n 's/^    {"\([a-z0-9-]*\)", .*/\1/p' tests/core/sim.c)
fail=0 n=0
for p in $profiles; do
    for seed in 1 2 3; do
        for side in base new; do
            "$work/sim-$side" --profile "$p" --runs "$runs" --seed "$seed" --expect-violations >"$work/$side.sum" 2>&1 || true
            "$work/sim-$side" --profile "$p" --runs "$((runs / 10 + 1))" --seed "$seed" --trace 2>&1 |
                sed -e 's/#[0-9a-f]*:/#:/g' -e 's/\([0-9a-f]\{16\}\):[0-9a-f]\{16\}/\1:/g' -e '/^ok /d' -e '/^not ok /d' \
                    >"$work/$side.trace" || true
            { grep -v '^ok \|^not ok ' "$work/$side.sum" || true; sha256sum <"$work/$side.trace"; } >"$work/$side.out"
        done
        n=$((n + 1))
        if ! cmp -s "$work/base.out" "$work/new.out"; then
            echo "differs: profile $p seed $seed"
            diff "$work/base.out" "$work/new.out" | head -20
            fail=$((fail + 1))
        fi
    done
done
echo "sim-compare against $base: $n profile/seed pairs ($runs schedules each, traces of $((runs / 10 + 1))), $fail differ"
[ "$fail" -eq 0 ]
