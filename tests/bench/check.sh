#!/usr/bin/env bash
# make check-bench: a failed cycle is counted in its row, not fatal
# (bench/README.md, "Failed cycles"). Each benchmark's --fail-every N makes
# every Nth cycle ask, once, for a key another owner holds: the run must
# exit 0 with the failures counted in their rows; with --fail-every 1 no
# cycle succeeds, and the run must exit non-zero naming the rows. bench_wait
# (no injected failures: its rows count failed calls anyway) runs every row
# once. Tiny sizes on one node: a few seconds, mostly waiting.
# Usage: tests/bench/check.sh BUILD_DIR (from the repository root)
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME CONDITION...: one TAP line; on failure, the run's output.
check() {
  local name=$1 out=$2
  shift 2
  if "$@"; then echo "ok $name"; else echo "not ok $name"; sed 's/^/# /' "$out"; fi
}
has() { grep -qF -- "$2" "$1"; }

# bench_transport, both runs side by side (separate nodes)
mkdir -p "$tmp/some" "$tmp/all"
# (0.2 s of contention and read-mostly: long enough for every row to have
# successes on a loaded machine)
args=(--nodes 1 --cycles 100)
nice "$build/bench_transport" "${args[@]}" --contend 0.2 --fail-every 10 --out "$tmp/some" >"$tmp/some/log" 2>&1 &
p1=$!
nice "$build/bench_transport" "${args[@]}" --contend 0.1 --fail-every 1 >"$tmp/all/log" 2>&1 &
p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?

# 100 cycles per row, every 10th failing; 64 locks in flight, 7 rounds, 6
# of them failing each round. A loaded machine may fail a few more (a
# node's answer after its 50 ms timeout): at least those, and the rest
# counted as successes, with a rate and latencies.
seq_rows() { awk -F, 'NR > 1 && $22 >= 10 && $22 < 100 && $23 >= 42 && $23 < 448 && $4 > 0 && $5 > 0 && $17 > 0 { n++ }
                      END { print n + 0 }' "$tmp/some/transport.csv"; }
# "ROW: F failed, S succeeded" on stderr: every sequential row (8, and 4
# plain or fenced) and in-flight row (8) adds up, with at least the injected failures
sums() { awk 'match($0, /: [0-9]+ failed, [0-9]+ succeeded/) {
                split(substr($0, RSTART + 2, RLENGTH - 2), w, " ")
                if ($0 ~ /(sequential|fenced\)|fenced): /) s += w[1] >= 10 && w[1] + w[3] == 100
                if ($0 ~ / in flight: /) f += w[1] >= 42 && w[1] + w[3] == 448 }
              END { print s + 0, f + 0 }' "$tmp/some/log"; }
check "bench_transport --fail-every 10: exits 0" "$tmp/some/log" test "$rc1" -eq 0
check "bench_transport --fail-every 10: every sequential row counts its failed cycles (at least 10) and in flight (at least 42), with a rate and latencies of the rest" \
  "$tmp/some/log" test "$(seq_rows)" -eq 8
check "bench_transport --fail-every 10: each row's failed and succeeded add up to its cycles" "$tmp/some/log" \
  test "$(sums)" = "12 8"
check "bench_transport --fail-every 10: the table's failed columns" "$tmp/some/log" \
  sh -c "grep -Eq '^socket +1 +1 +[1-9][0-9]* +[1-9][0-9]+ +[0-9]+/[0-9]+/[0-9]+ .* [1-9][0-9]+ +[0-9]+ +[0-9]+%\$' '$tmp/some/log'"
check "bench_transport --fail-every 10: the fenced table counts them (plain/fenced)" "$tmp/some/log" \
  sh -c "grep -Eq '^ +1 +1 .* [1-9][0-9]+/[1-9][0-9]+\$' '$tmp/some/log'"
check "bench_transport --fail-every 10: contention.csv has the failed column" "$tmp/some/log" \
  sh -c "head -1 '$tmp/some/contention.csv' | grep -q ',gave_up,failed\$'"
check "bench_transport --fail-every 1: exits 1" "$tmp/all/log" test "$rc2" -eq 1
check "bench_transport --fail-every 1: names the rows without a success" "$tmp/all/log" \
  sh -c "grep -F 'rows without a success:' '$tmp/all/log' | grep -F 'socket, 1 node, run 1, sequential' |
         grep -F 'hiredis libev, 1 node, run 2, 64 in flight' | grep -F 'socket, 1 node, run 2, fenced' |
         grep -F 'read-mostly rw, 1 node, run 1' | grep -qF 'contention socket foreign tuned, 1 node, run 2'"
check "bench_transport --fail-every 1: its rows show every cycle failed, no latency" "$tmp/all/log" \
  sh -c "grep -Eq '^socket +1 +1 +0 +100 +- +- ' '$tmp/all/log'"

# bench_tls: one block of 100 cycles, 5 connects per transport
for f in 10 1; do
  nice "$build/bench_tls" --cycles 100 --blocks 1 --connects 5 --fail-every $f >"$tmp/tls$f" 2>&1
  echo $? >"$tmp/tls$f.rc"
done
check "bench_tls --fail-every 10: exits 0, each transport counts its failed cycles (at least 10 of 100), with a rate" "$tmp/tls10" \
  sh -c "test $(cat "$tmp/tls10.rc") -eq 0 && grep -Eq '^plain +[1-9][0-9]* .* [1-9][0-9] +[0-9.]+ +[0-9]+\$' '$tmp/tls10' &&
         grep -Eq '^TLS +[1-9][0-9]* .* [1-9][0-9] +[0-9.]+ +[0-9]+\$' '$tmp/tls10'"
check "bench_tls --fail-every 1: exits 1 naming the rows" "$tmp/tls1" \
  sh -c "test $(cat "$tmp/tls1.rc") -eq 1 && grep -qF 'no successful cycle in the plain row' '$tmp/tls1' &&
         grep -qF 'no successful cycle in the TLS row' '$tmp/tls1'"

# bench_scale: 100 locks held 0.2 s, then 50. "N locks  acquired A (failed F)",
# in each row of the count (socket: own table and defaults; hiredis, whose
# blocking acquires would wait out the defaults' retries one by one: own
# table): A + F = N, at least every 10th failed, some acquired
acquired() { awk -v n="$2" -v min="$3" -v want="$4" '$1 == n && $2 == "locks" && $3 == "acquired" {
               f = $6; sub(/\)/, "", f); rows++; if (!($4 > 0 && f + 0 >= min && $4 + f == n)) bad = 1 }
             END { exit !(rows == want && !bad) }' "$1"; }
scale_some() { test "$(cat "$1.rc")" -eq 0 && acquired "$1" 100 10 $2 && acquired "$1" 50 5 $2; }
for t in socket hiredis; do
  rows=both; nrows=2
  if [ $t = hiredis ]; then rows=own; nrows=1; fi
  for f in 10 1; do
    nice "$build/bench_scale" --locks 100,50 --hold 0.2 --ttl 1000 --transport $t --fail-every $f --rows $rows >"$tmp/scale$t$f" 2>&1
    echo $? >"$tmp/scale$t$f.rc"
  done
  check "bench_scale --transport $t --fail-every 10: exits 0, at least 10 and 5 acquires failed, the others acquired ($rows)" \
    "$tmp/scale${t}10" scale_some "$tmp/scale${t}10" $nrows
  check "bench_scale --transport $t --fail-every 1: exits 1 naming both rows" "$tmp/scale${t}1" \
    sh -c "test $(cat "$tmp/scale${t}1.rc") -eq 1 && grep -qF 'no lock acquired in the 100 locks row' '$tmp/scale${t}1' &&
           grep -qF 'no lock acquired in the 50 locks row' '$tmp/scale${t}1'"
done

# bench_wait: every row at a tiny size (4 clients, 0.3 s): exits 0, each of
# its 8 rows acquired (a rate above 0), with its failed calls and fairness
nice "$build/bench_wait" --seconds 0.3 --runs 1 --clients 4 >"$tmp/wait" 2>&1
echo $? >"$tmp/wait.rc"
check "bench_wait: exits 0, all 8 rows acquired, with failed calls, min/max and Jain's index" "$tmp/wait" \
  sh -c "test $(cat "$tmp/wait.rc") -eq 0 &&
         test \$(grep -Ec '^(library|hand-written)[a-z ]* +1 +[1-9][0-9]* +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9]+/[0-9]+ +[0-9]+% +[01]\.[0-9]+ ' '$tmp/wait') -eq 8"
