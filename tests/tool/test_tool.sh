#!/usr/bin/env bash
# tests/tool/test_tool.sh BIN FAKE_SERVER - tests of the `redlock` command.
#
# Starts its own redis-server nodes (scripts/redis-nodes.sh: free loopback
# ports, a temp dir, stopped by the PIDs it wrote), also on failure and on
# interruption. Prints "ok NAME" / "not ok NAME" lines. Every command runs
# under timeout(1) and the whole script under a 150 s watchdog.
# VALGRIND (from the Makefile) runs a few commands under valgrind.
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FAKE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
VALGRIND=${VALGRIND:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NODES_SH=$ROOT/scripts/redis-nodes.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/redlock-tool.XXXXXX")
WATCHDOG=

cleanup() {
  local p
  # the watchdog kills its own sleep on TERM
  [ -n "$WATCHDOG" ] && { kill -TERM "$WATCHDOG"; wait "$WATCHDOG"; } 2>/dev/null
  # only jobs still running: their PIDs cannot have been reused
  for p in $(jobs -p); do { kill -KILL "$p"; wait "$p"; } 2>/dev/null; done
  for d in "$T/nodes" "$T/auth" "$T/dead"; do
    [ -f "$d/pids" ] && "$NODES_SH" stop "$d" >/dev/null 2>&1
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "not ok tool tests interrupted or timed out"; exit 1' INT TERM HUP

# a hung test is stopped after 150 s (the EXIT trap still stops the nodes);
# its output goes nowhere so that it never holds the caller's pipe open
( sleep 150 & s=$!; trap 'kill $s; exit 0' TERM; wait $s; kill -TERM $$ ) >/dev/null 2>&1 &
WATCHDOG=$!

PASS=0
FAIL=0
ok() { echo "ok tool $1"; PASS=$((PASS + 1)); }
nok() {
  echo "not ok tool $1"; shift
  local l; for l in "$@"; do echo "#   $l"; done
  [ -s "$T/err" ] && sed 's/^/#   stderr: /' "$T/err" | head -5
  FAIL=$((FAIL + 1))
}

# rl ARGS... : runs the tool (bounded), stdout in $T/out, stderr in $T/err, status in RC
rl() { timeout -k 2 30 "$BIN" "$@" >"$T/out" 2>"$T/err"; RC=$?; }
now_ms() { date +%s%3N; }

# expect NAME WANT ARGS... : the status is WANT
expect() {
  local name=$1 want=$2; shift 2
  rl "$@"
  if [ "$RC" -eq "$want" ]; then ok "$name"; else nok "$name" "exit status $RC, want $want"; fi
}

# usage NAME ARGS... : status 64, exactly one line on stderr, nothing on stdout
usage() {
  local name=$1; shift
  rl "$@"
  local lines; lines=$(wc -l <"$T/err")
  if [ "$RC" -eq 64 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/out" ] && grep -q '^redlock: ' "$T/err"; then
    ok "usage: $name"
  else
    nok "usage: $name" "exit status $RC (want 64), $lines stderr lines (want 1)"
  fi
}

wait_file() { # path, up to 10 s
  local i; for i in $(seq 1 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1
}

command -v redis-server >/dev/null || { echo "not ok tool tests: redis-server missing (scripts/deps.sh)"; exit 1; }

# ---------------------------------------------------------------- no servers
unset REDLOCK_NODES
usage "no arguments"
usage "unknown command" frobnicate x
usage "unknown option" -n 127.0.0.1:6379 --frobnicate acquire x
usage "unknown short option" -n 127.0.0.1:6379 -Z acquire x
usage "bad duration unit" -n 127.0.0.1:6379 -t 10x acquire x
usage "bad duration text" -n 127.0.0.1:6379 -w soon acquire x
usage "zero ttl" -n 127.0.0.1:6379 -t 0 acquire x
usage "negative duration" -n 127.0.0.1:6379 -t -5s acquire x
usage "option without value" -n 127.0.0.1:6379 acquire x --ttl
usage "bad port" -n 127.0.0.1:99999 acquire x
usage "bad URL port" -n redis://127.0.0.1:0/0 acquire x
usage "bad URL db" -n redis://127.0.0.1:6379/zero acquire x
usage "TLS URL" -n rediss://127.0.0.1:6379 acquire x
usage "unknown URL scheme" -n http://127.0.0.1 acquire x
usage "user without password" -n redis://alice@127.0.0.1 acquire x
usage "IPv6 without brackets" -n ::1:6379 acquire x
usage "empty node" -n 127.0.0.1:6379,,127.0.0.1:6380 acquire x
usage "duplicate node" -n 127.0.0.1:6379,localhost:6380,127.0.0.1:6379 acquire x
usage "too many nodes" -n "$(seq -s, -f '127.0.0.1:%g' 7001 7017)" acquire x
usage "no nodes" acquire x
REDLOCK_NODES= usage "empty REDLOCK_NODES" acquire x
usage "run without --" -n 127.0.0.1:6379 run x true
usage "run without COMMAND" -n 127.0.0.1:6379 run x --
usage "run without NAME" -n 127.0.0.1:6379 run -- true
usage "acquire without NAME" -n 127.0.0.1:6379 acquire
usage "acquire extra argument" -n 127.0.0.1:6379 acquire x y
usage "release without TOKEN" -n 127.0.0.1:6379 release x
usage "release bad TOKEN" -n 127.0.0.1:6379 release x not-a-token
usage "bad --mode" -n 127.0.0.1:6379 --mode fast acquire x
usage "bad --on-lost" -n 127.0.0.1:6379 --on-lost shrug run x -- true
usage "ttl too short for run" -n 127.0.0.1:6379 -t 15ms run x -- true
usage "NAME too long" -n 127.0.0.1:6379 acquire "$(head -c 600 /dev/zero | tr '\0' k)"

rl -n 'redis://bob:Sup3rSecret@127.0.0.1:99999/0' acquire x
if [ "$RC" -eq 64 ] && ! grep -q Sup3rSecret "$T/err" && grep -q 'bob:\*\*\*@' "$T/err"; then
  ok "bad URL message redacts the password"
else nok "bad URL message redacts the password" "status $RC"; fi
rl -n 'redis://:p@ss/w0rd@127.0.0.1:99999' acquire x
if [ "$RC" -eq 64 ] && ! grep -q 'w0rd' "$T/err"; then ok "password with @ and / is redacted"
else nok "password with @ and / is redacted" "status $RC"; fi

rl --help
if [ "$RC" -eq 0 ] && grep -q '^Usage: redlock run' "$T/out" && grep -q '^  77 ' "$T/out" &&
   grep -q '^  75 ' "$T/out" && grep -q '^  64 ' "$T/out" && [ ! -s "$T/err" ]; then
  ok "--help: usage and exit codes on stdout, status 0"
else nok "--help" "status $RC"; fi
rl --version
if [ "$RC" -eq 0 ] && grep -q '^redlock [0-9]' "$T/out"; then ok "--version"; else nok "--version" "status $RC"; fi

# ----------------------------------------------------------------- 3 nodes
NODES=$("$NODES_SH" start 3 "$T/nodes") || { echo "not ok tool tests: cannot start redis nodes"; exit 1; }
export REDLOCK_NODES=$NODES
PIDS=$(cat "$T/nodes/pids")
PORT0=$(head -n 1 "$T/nodes/ports")
pause_nodes() { local p; for p in $PIDS; do kill -STOP "$p"; done; }
resume_nodes() { local p; for p in $PIDS; do kill -CONT "$p"; done; }
rcli() { timeout 5 redis-cli -p "$PORT0" "$@"; }

# status pass-through
expect "run: status 0 passes through" 0 run st -- true
expect "run: status 3 passes through" 3 run st -- sh -c 'exit 3'
expect "run: status 42 passes through" 42 run st -- sh -c 'exit 42'
expect "run: COMMAND killed by SIGTERM gives 143" 143 run st -- sh -c 'kill -TERM $$'
expect "run: COMMAND killed by SIGKILL gives 137" 137 run st -- sh -c 'kill -KILL $$'
expect "run: COMMAND not found gives 127" 127 run st -- "$T/no-such-command"
printf 'echo hi\n' >"$T/noexec"; chmod 644 "$T/noexec"
expect "run: COMMAND not executable gives 126" 126 run st -- "$T/noexec"
rl run st -- sh -c 'echo "args: $*"' sh a 'b c'
if [ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = "args: a b c" ]; then ok "run: COMMAND gets its arguments and stdout"
else nok "run: COMMAND gets its arguments and stdout" "status $RC, out $(cat "$T/out")"; fi
rl inspect st
if grep -q "is free on all 3 nodes" "$T/out"; then ok "run: lock released after COMMAND exits"
else nok "run: lock released after COMMAND exits" "$(cat "$T/out")"; fi
rl run -t 5s st -- sh -c "$BIN inspect st"
if [ "$RC" -eq 0 ] && grep -q "is held by .* on 3/3 nodes" "$T/out"; then ok "run: lock held while COMMAND runs"
else nok "run: lock held while COMMAND runs" "status $RC"; fi

# acquire / inspect / extend / release by token
rl acquire -t 10s tok; TOKEN=$(cat "$T/out")
if [ "$RC" -eq 0 ] && [[ "$TOKEN" =~ ^[0-9a-f]{32}$ ]]; then ok "acquire prints a token"
else nok "acquire prints a token" "status $RC, out '$TOKEN'"; fi
rl inspect tok
if [ "$RC" -eq 0 ] && [ "$(grep -c "held    ${TOKEN:0:8}" "$T/out")" -eq 3 ] &&
   grep -q "is held by ${TOKEN:0:8} on 3/3 nodes (quorum 2)" "$T/out" && ! grep -q "${TOKEN:8:8}" "$T/out"; then
  ok "inspect: holder's 8-char token prefix on each node, never the whole token"
else nok "inspect shows the holder" "status $RC"; sed 's/^/#   /' "$T/out"; fi
ttl_ok=1
for v in $(awk '$2 == "held" { sub(/s$/, "", $4); print $4 }' "$T/out"); do
  awk -v v="$v" 'BEGIN { exit !(v > 8 && v <= 10) }' || ttl_ok=0
done
[ $ttl_ok -eq 1 ] && ok "inspect: remaining TTL per node" || nok "inspect: remaining TTL per node" "$(cat "$T/out")"
expect "run --no-wait on a held lock: 75 (busy)" 75 run --no-wait tok -- true
grep -q "locked by someone else" "$T/err" && ok "busy: message says so" || nok "busy: message says so"
t0=$(now_ms); rl run -w 600ms --retry-delay 50ms tok -- true; t1=$(now_ms)
if [ "$RC" -eq 75 ] && [ $((t1 - t0)) -ge 500 ] && [ $((t1 - t0)) -lt 3000 ]; then
  ok "run -w 600ms on a held lock: 75 after the wait ($((t1 - t0)) ms)"
else nok "run -w 600ms on a held lock" "status $RC after $((t1 - t0)) ms"; fi
expect "acquire --no-wait on a held lock: 75" 75 acquire --no-wait tok
expect "extend by token" 0 extend -t 20s tok "$TOKEN"
pttl=$(rcli PTTL tok)
[ "${pttl:-0}" -gt 15000 ] && ok "extend: PTTL is the new ttl ($pttl ms)" || nok "extend: PTTL is the new ttl" "PTTL $pttl"
expect "release with a wrong token: 1" 1 release tok 0123456789abcdef0123456789abcdef
expect "extend with a wrong token: 1" 1 extend tok 0123456789abcdef0123456789abcdef
expect "release by token" 0 release tok "$TOKEN"
expect "release again: 1 (not held)" 1 release tok "$TOKEN"
expect "extend after release: 1 (not held)" 1 extend tok "$TOKEN"
rl inspect tok
grep -q "is free on all 3 nodes" "$T/out" && ok "inspect after release: free" || nok "inspect after release: free"
rl acquire -t 300ms short; TOKEN=$(cat "$T/out"); sleep 0.45
expect "release after the TTL ran out: 1" 1 release short "$TOKEN"

# legacy mode (SETNX/GETSET values "expiry:token")
rl --legacy acquire -t 10s leg; TOKEN=$(cat "$T/out")
v=$(rcli GET leg)
if [ "$RC" -eq 0 ] && [[ "$v" =~ ^[0-9]+:$TOKEN$ ]]; then ok "legacy: acquire writes expiry:token"
else nok "legacy: acquire writes expiry:token" "status $RC, value '$v'"; fi
rl inspect leg
grep -q "is held by ${TOKEN:0:8} on 3/3" "$T/out" && grep -q "legacy value" "$T/out" &&
  ok "legacy: inspect reads the legacy value" || nok "legacy: inspect reads the legacy value"
expect "legacy: a modern run sees the lock busy" 75 run --no-wait leg -- true
expect "legacy: --mode legacy run sees the lock busy" 75 run --mode legacy --no-wait leg -- true
expect "legacy: extend by token" 0 --legacy extend -t 30s leg "$TOKEN"
v=$(rcli GET leg); exp=${v%%:*}
left=$((exp - $(now_ms)))
[ "$left" -gt 25000 ] && ok "legacy: extend moves the expiry in the value" || nok "legacy: extend" "left $left"
expect "legacy: release by token" 0 --legacy release leg "$TOKEN"
expect "legacy: run in legacy mode" 0 --legacy run leg -- true
rl inspect leg
grep -q "is free on all 3 nodes" "$T/out" && ok "legacy: released" || nok "legacy: released"

# split votes: a failed acquire undoes its own SET before redlock exits.
# The key is held by someone else on nodes 1 and 2 and free on node 3, so
# an attempt's SET lands on node 3 and the core's undo round (EVAL
# compare-and-delete on every node) must reach node 3 and be answered
# before the process ends; otherwise node 3 keeps the key for --ttl and,
# with split votes, every contender is locked out. Checked right after
# each exit, 10 runs per way of failing. In every other run, nodes 1 and 2
# are paused (CLIENT PAUSE 500 ms, longer than --wait 400ms) so that their
# refusals surely come after node 3's OK: the undo is then always still to
# be sent when the attempt fails (without the pause that depends on the
# timing). Nothing below waits for time: if the pause were over before the
# tool starts, the run would only be an unpaused one.
# (--node-timeout 1s: the undo is answered in about a millisecond; the
# larger bound only keeps a loaded machine from timing the round out.)
PORT1=$(sed -n 2p "$T/nodes/ports")
PORT2=$(sed -n 3p "$T/nodes/ports")
rcli_p() { local p=$1; shift; timeout 5 redis-cli -p "$p" "$@"; }
rcli_p "$PORT0" SET split someone-else PX 120000 >/dev/null
rcli_p "$PORT1" SET split someone-else PX 120000 >/dev/null
split_test() { # NAME ARGS... : 10 runs, each exits 75 and leaves node 3 free
  local name=$1 i left=0 bad=0 codes=; shift
  for i in $(seq 1 10); do
    if [ $((i % 2)) -eq 1 ]; then
      rcli_p "$PORT0" CLIENT PAUSE 500 >/dev/null
      rcli_p "$PORT1" CLIENT PAUSE 500 >/dev/null
    fi
    rl --node-timeout 1s "$@"
    [ "$RC" -eq 75 ] || { bad=$((bad + 1)); codes="$codes $RC"; }
    if [ "$(rcli_p "$PORT2" EXISTS split)" != 0 ]; then
      left=$((left + 1))
      rcli_p "$PORT2" DEL split >/dev/null # the next run starts from a free node 3 again
    fi
  done
  if [ $left -eq 0 ] && [ $bad -eq 0 ]; then
    ok "split vote: $name leaves no key on the free node (10 runs)"
  else
    nok "split vote: $name leaves no key on the free node" \
        "$left of 10 runs left their key on node 3 after exiting" "$bad runs exited other than 75:$codes"
  fi
}
split_test "acquire --no-wait" acquire --no-wait split
split_test "run --no-wait" run --no-wait split -- true
split_test "run --wait 400ms" run --wait 400ms --retry-delay 50ms split -- true
[ "$(rcli_p "$PORT0" GET split)" = someone-else ] && [ "$(rcli_p "$PORT1" GET split)" = someone-else ] &&
  ok "split vote: the other holder's keys are untouched" || nok "split vote: the other holder's keys are untouched"
rcli_p "$PORT0" DEL split >/dev/null; rcli_p "$PORT1" DEL split >/dev/null
# a release: the node that answers after the quorum is released too (in
# every other run node 3 is paused for 300 ms, so it answers both the SET
# and the release after the others have decided)
left=0
for i in $(seq 1 10); do
  [ $((i % 2)) -eq 1 ] && rcli_p "$PORT2" CLIENT PAUSE 300 >/dev/null
  rl run --node-timeout 1s rel-all -- true
  n=0; for p in "$PORT0" "$PORT1" "$PORT2"; do n=$((n + $(rcli_p "$p" EXISTS rel-all))); done
  [ "$RC" -eq 0 ] && [ "$n" -eq 0 ] || { left=$((left + 1)); for p in "$PORT0" "$PORT1" "$PORT2"; do rcli_p "$p" DEL rel-all >/dev/null; done; }
done
[ $left -eq 0 ] && ok "release: the key is gone from all 3 nodes when run exits (10 runs)" ||
  nok "release: the key is gone from all 3 nodes when run exits" "$left of 10 runs left a key"

# renewal: a holder keeps the lock past its TTL
"$BIN" run -t 600ms renew -- sh -c "echo up >'$T/renew.up'; sleep 1.8" >/dev/null 2>"$T/renew.err" &
p=$!
wait_file "$T/renew.up"; sleep 1.2
expect "renewal: lock still held 1.2 s into a 600 ms TTL" 75 run --no-wait renew -- true
wait $p; rc=$?
[ $rc -eq 0 ] && ok "renewal: holder exits 0" || nok "renewal: holder exits 0" "status $rc" "$(cat "$T/renew.err")"

# signals: forwarded to COMMAND; interrupting a wait exits by the signal
"$BIN" run fwd -- sh -c "trap 'kill \$! 2>/dev/null; exit 7' TERM; echo up >'$T/fwd.up'; sleep 20 & wait" >/dev/null 2>&1 &
p=$!
wait_file "$T/fwd.up"; kill -TERM $p; wait $p; rc=$?
[ $rc -eq 7 ] && ok "run: SIGTERM to redlock is forwarded, COMMAND's status 7 passes through" ||
  nok "run: SIGTERM forwarded" "status $rc"
rl inspect fwd
grep -q "is free on all 3 nodes" "$T/out" && ok "run: released after a forwarded signal" || nok "run: released after a forwarded signal"
rl acquire -t 10s intr; TOKEN=$(cat "$T/out")
"$BIN" run -w 20s intr -- true >/dev/null 2>&1 &
p=$!
sleep 0.4; t0=$(now_ms); kill -INT $p; wait $p; rc=$?; t1=$(now_ms)
if [ $rc -eq 130 ] && [ $((t1 - t0)) -lt 2000 ]; then ok "SIGINT while waiting: exits by SIGINT (130) at once"
else nok "SIGINT while waiting" "status $rc after $((t1 - t0)) ms"; fi
"$BIN" -q release intr "$TOKEN"

# lost lock: nodes paused, renewals fail, COMMAND is signalled, exit 77
lost_test() { # on-lost
  local mode=$1 f="$T/lost-$1" p t0 t1
  "$BIN" run -t 1s --on-lost="$mode" "lost-$mode" -- sh -c \
      "trap 'echo got-TERM >>$f.log; kill \$! 2>/dev/null; exit 143' TERM; echo up >$f.up; sleep 2 & wait; echo finished >>$f.log" \
      >/dev/null 2>"$f.err" &
  p=$!
  LOST_RC=x; LOST_MS=0; LOST_LOG=; LOST_ERR=
  wait_file "$f.up" || return
  t0=$(now_ms)
  pause_nodes
  wait $p; LOST_RC=$?
  t1=$(now_ms)
  resume_nodes
  LOST_MS=$((t1 - t0)); LOST_LOG=$(cat "$f.log" 2>/dev/null); LOST_ERR=$(cat "$f.err")
}
lost_test term
if [ "$LOST_RC" = 77 ] && [ "$LOST_LOG" = got-TERM ] && [ $LOST_MS -lt 1900 ] && grep -q "lost the lock" <<<"$LOST_ERR"; then
  ok "lost (nodes SIGSTOPped): COMMAND gets SIGTERM, exit 77 after $LOST_MS ms"
else nok "lost: on-lost=term" "status $LOST_RC, log '$LOST_LOG', $LOST_MS ms" "$LOST_ERR"; fi
lost_test kill
if [ "$LOST_RC" = 77 ] && [ -z "$LOST_LOG" ] && [ $LOST_MS -lt 1900 ]; then
  ok "lost: --on-lost=kill kills COMMAND, exit 77 after $LOST_MS ms"
else nok "lost: on-lost=kill" "status $LOST_RC, log '$LOST_LOG', $LOST_MS ms"; fi
lost_test ignore
if [ "$LOST_RC" = 77 ] && [ "$LOST_LOG" = finished ] && [ $LOST_MS -ge 1500 ]; then
  ok "lost: --on-lost=ignore lets COMMAND finish, still exit 77"
else nok "lost: on-lost=ignore" "status $LOST_RC, log '$LOST_LOG', $LOST_MS ms"; fi
"$BIN" run -t 1s --kill-after 300ms lost-stubborn -- sh -c \
    "trap '' TERM; echo up >$T/stub.up; sleep 3; echo survived >$T/stub.log" >/dev/null 2>&1 &
p=$!
wait_file "$T/stub.up"; pause_nodes; wait $p; rc=$?; resume_nodes
[ $rc -eq 77 ] && [ ! -e "$T/stub.log" ] && ok "lost: COMMAND ignoring SIGTERM gets SIGKILL after --kill-after" ||
  nok "lost: --kill-after" "status $rc"

# mutual exclusion: 10 concurrent runs append enter/leave lines to one file
: >"$T/mutex.log"
MPIDS=()
for i in $(seq 1 10); do
  "$BIN" run -t 2s -w 40s --retry-delay 20ms mutex -- \
    sh -c "echo \"enter $i\" >>'$T/mutex.log'; sleep 0.05; echo \"leave $i\" >>'$T/mutex.log'" >/dev/null 2>"$T/mutex.$i.err" &
  MPIDS+=($!);
done
mfail=0
for p in "${MPIDS[@]}"; do wait "$p" || mfail=$((mfail + 1)); done
if [ $mfail -eq 0 ] && [ "$(wc -l <"$T/mutex.log")" -eq 20 ] &&
   awk 'NR % 2 == 1 { if ($1 != "enter") exit 1; who = $2 } NR % 2 == 0 { if ($1 != "leave" || $2 != who) exit 1 }' "$T/mutex.log" &&
   [ "$(sort -u "$T/mutex.log" | wc -l)" -eq 20 ]; then
  ok "mutual exclusion: 10 concurrent runs, 20 enter/leave lines, never interleaved"
else nok "mutual exclusion" "$mfail runs failed"; head -30 "$T/mutex.log" | sed 's/^/#   /'; fi

# unreachable nodes (69): a stopped node's port and a missing unix socket
DEAD=$("$NODES_SH" start 1 "$T/dead") && "$NODES_SH" stop "$T/dead"
rl -n "$DEAD,$T/missing.sock,127.0.0.1:$PORT0" run unr -- true
if [ "$RC" -eq 69 ] && grep -q "$DEAD" "$T/err" && grep -q "$T/missing.sock" "$T/err"; then
  ok "unreachable: 2 of 3 nodes down gives 69 and names them"
else nok "unreachable: 69 naming the nodes" "status $RC"; fi
t0=$(now_ms); rl -n "$T/missing.sock" -w 20s acquire unr; t1=$(now_ms)
[ "$RC" -eq 69 ] && [ $((t1 - t0)) -lt 2000 ] && ok "unreachable: fails at once even with -w 20s" ||
  nok "unreachable: fails at once" "status $RC after $((t1 - t0)) ms"
expect "unreachable: inspect gives 69" 69 -n "$DEAD,$T/missing.sock,127.0.0.1:$PORT0" inspect unr
expect "unreachable: release gives 69" 69 -n "$DEAD,$T/missing.sock" release unr 0123456789abcdef0123456789abcdef
rl -n "$DEAD,$NODES" run one-down -- true
[ "$RC" -eq 0 ] && ok "one of 4 nodes down: quorum 3 of 4 still acquires" || nok "one of 4 nodes down" "status $RC"

# protocol error (76): nodes that do not speak RESP
"$FAKE" 60 "$T/fake.port" &
wait_file "$T/fake.port"; FP=$(cat "$T/fake.port")
expect "protocol: a non-Redis node gives 76" 76 -n "127.0.0.1:$FP" run proto -- true
grep -q "protocol" "$T/err" && ok "protocol: message says protocol error" || nok "protocol: message"
expect "protocol: inspect gives 76" 76 -n "127.0.0.1:$FP" inspect proto
expect "protocol: release gives 76" 76 -n "127.0.0.1:$FP" release proto 0123456789abcdef0123456789abcdef

# AUTH (78), unix sockets, ACL users and SELECT on a password-protected node
mkdir -p "$T/auth"
SOCK=$T/auth/r.sock
"$NODES_SH" start 1 "$T/auth" --requirepass 's3cr3t' --unixsocket "$SOCK" --unixsocketperm 700 >/dev/null ||
  nok "auth node starts"
APORT=$(cat "$T/auth/ports")
expect "auth: no password gives 78" 78 -n "127.0.0.1:$APORT" acquire a
rl -n "redis://:wrong-pw@127.0.0.1:$APORT" acquire a
[ "$RC" -eq 78 ] && ! grep -q wrong-pw "$T/err" && ok "auth: wrong password gives 78, not echoed" || nok "auth: wrong password" "status $RC"
expect "auth: unknown ACL user gives 78" 78 -n "redis://nobody:pw@127.0.0.1:$APORT" acquire a
expect "SELECT refused (db 99 of 16) gives 76" 76 -n "redis://:s3cr3t@127.0.0.1:$APORT/99" acquire a
rl -n "redis://:s3cr3t@127.0.0.1:$APORT/3" acquire -t 10s a; TOKEN=$(cat "$T/out")
v=$(timeout 5 redis-cli -p "$APORT" -a s3cr3t -n 3 --no-auth-warning GET a)
[ "$RC" -eq 0 ] && [ "$v" = "$TOKEN" ] && ok "redis://:pass@host:port/3 authenticates and SELECTs db 3" ||
  nok "redis:// URL with password and db" "status $RC, value '$v'"
rl -n "unix://:s3cr3t@$SOCK?db=3" inspect a
[ "$RC" -eq 0 ] && grep -q "held    ${TOKEN:0:8}" "$T/out" && ok "unix:// URL with password and ?db=3" || nok "unix:// URL" "status $RC"
timeout 5 redis-cli -p "$APORT" -a s3cr3t --no-auth-warning ACL SETUSER locker on '>pw2' '~*' '+@all' >/dev/null
expect "ACL user: redis://user:pass@ releases" 0 -n "redis://locker:pw2@127.0.0.1:$APORT/3" release a "$TOKEN"
timeout 5 redis-cli -p "$APORT" -a s3cr3t --no-auth-warning CONFIG SET requirepass '' >/dev/null
expect "unix socket path as a node" 0 -n "$SOCK" run u -- true
"$NODES_SH" stop "$T/auth"

# valgrind: acquire, inspect, extend, release, run (0 errors, 0 leaks)
if [ -n "$VALGRIND" ]; then
  vg() { timeout -k 2 60 $VALGRIND "$BIN" "$@" >"$T/out" 2>"$T/err"; RC=$?; }
  vg acquire -t 10s vgl; a=$RC; TOKEN=$(cat "$T/out")
  vg inspect vgl; b=$RC
  vg extend vgl "$TOKEN"; c=$RC
  vg release vgl "$TOKEN"; d=$RC
  vg run -t 1s vgl -- sh -c 'sleep 0.5; exit 5'; e=$RC
  vg -n "$T/missing.sock" acquire vgl; f=$RC
  if [ "$a$b$c$d$e$f" = "0000569" ]; then ok "valgrind: acquire, inspect, extend, release, run, unreachable: 0 errors, 0 leaks"
  else nok "valgrind" "statuses $a $b $c $d $e $f (99 = valgrind error)"; fi
fi

echo "# tool tests: $PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
