#!/usr/bin/env bash
# tests/tool/test_tool.sh BIN FAKE_SERVER - tests of the `redlock` command.
#
# Starts its own redis-server nodes (scripts/redis-nodes.sh: free loopback
# ports, a temp dir, stopped by the PIDs it wrote), also on failure and on
# interruption. Prints "ok NAME" / "not ok NAME" lines. Every command runs
# under timeout(1) and the whole script under a 240 s watchdog (valgrind and
# a loaded machine take their time).
# VALGRIND (from the Makefile) runs a few commands under valgrind.
# TOOL_SKIP=sentinel,cluster leaves out those sections (each reported as
# "skip tool SECTION: ..."), for the server matrix (mk/matrix.mk).
# REDLOCK_TEST_SERVERS (scripts/redis-nodes.sh) picks the nodes' servers;
# a case that needs a newer server than the oldest node is skipped, by
# name, with what it needs.
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
  for d in "$T/nodes" "$T/auth" "$T/dead" "$T/evict" "$T/replica" "$T/tlsnodes" "$T/tlsreq" "$T/tls2" "$T/tls3" \
           "$T/restart" "$T/fresh"; do
    [ -f "$d/pids" ] && "$NODES_SH" stop "$d" >/dev/null 2>&1
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "not ok tool tests interrupted or timed out"; exit 1' INT TERM HUP

# a hung test is stopped after 240 s (the EXIT trap still stops the nodes);
# its output goes nowhere so that it never holds the caller's pipe open
( sleep 240 & s=$!; trap 'kill $s; exit 0' TERM; wait $s; kill -TERM $$ ) >/dev/null 2>&1 &
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
# fast78 NAME PATTERN ARGS... : a mistake that no wait cures: status 78
# within a second (ARGS ask to wait 30 s), and a line of stderr matches
# PATTERN (grep -E), naming the fix
fast78() {
  local name=$1 pat=$2 t0 t1; shift 2
  t0=$(now_ms); rl "$@"; t1=$(now_ms)
  if [ "$RC" -eq 78 ] && [ $((t1 - t0)) -lt 1000 ] && grep -qE "$pat" "$T/err"; then
    ok "$name: 78 in $((t1 - t0)) ms under -w 30s, naming the fix"
  else nok "$name" "status $RC after $((t1 - t0)) ms (want 78 within 1000 ms), stderr: $(tr '\n' '|' <"$T/err")"; fi
}
# jlog NAME EXPR: every line of $T/err is a JSON object of the log's
# schema (v 1, ts RFC 3339 UTC with ms, event, name, pid), and the python
# expression EXPR holds on L (the objects), E (their events, in order),
# ev(EVENT) (those objects of EVENT) and RC
jlog() {
  local name=$1
  command -v python3 >/dev/null || { skip "$name: python3 missing (scripts/deps.sh installs it)"; return; }
  if python3 - "$T/err" "$2" "$RC" <<'PY'
import json, re, sys
RC = int(sys.argv[3])
L = [json.loads(line) for line in open(sys.argv[1], encoding='utf-8')]
E = [d['event'] for d in L]
ts = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$')
def ev(name): return [d for d in L if d['event'] == name]
ok = all(isinstance(d, dict) and d.get('v') == 1 and ts.match(d.get('ts', '')) and isinstance(d.get('pid'), int)
         and 'name' in d for d in L) and E and E[-1] == 'exit'
sys.exit(0 if ok and eval('(' + sys.argv[2] + ')') else 1)
PY
  then ok "$name"; else nok "$name" "status $RC"; fi
}
json_ok() { # python expression on d, the JSON object in $T/out (no python3: only the line count is checked)
  command -v python3 >/dev/null || return 0
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(' '.join(sys.argv[2].split())) else 1)" "$T/out" "$1"
}

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

skip() { echo "skip tool $1"; }
# skipped SECTION: is SECTION in TOOL_SKIP? (then says so)
skipped() {
  case ",${TOOL_SKIP:-}," in *",$1,"*) skip "$1: left out (TOOL_SKIP=$TOOL_SKIP)"; return 0 ;; esac
  return 1
}
# version PORT: the node's redis_version as major * 100 + minor (Valkey
# 8 says 7.2, the Redis it follows); 0 when it does not say
version() {
  local v
  v=$(timeout 5 redis-cli -p "$1" INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')
  [[ "$v" =~ ^([0-9]+)\.([0-9]+) ]] && echo $((BASH_REMATCH[1] * 100 + BASH_REMATCH[2])) || echo 0
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
usage "TLS options without a TLS node" -n 127.0.0.1:6379 --tls-ca /etc/hostname acquire x
usage "TLS certificate without its key" -n rediss://127.0.0.1:6379 --tls-cert /etc/hostname acquire x
usage "TLS CA file that cannot be read" -n rediss://127.0.0.1:6379 --tls-ca /nonexistent/ca.crt acquire x
usage "TLS on a unix socket" -n /tmp/r.sock --tls acquire x
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
usage "NAME in the fence counters' namespace" -n 127.0.0.1:6379 run redlock:fence:job -- true
grep -q "may not start with 'redlock:fence:': that prefix holds the fence counters" "$T/err" &&
  ok "usage: a fence counter's NAME says why" || nok "usage: a fence counter's NAME says why" "$(cat "$T/err")"
usage "NAME in the fence counters' namespace (acquire)" -n 127.0.0.1:6379 acquire redlock:fence:job

rl -n 'redis://bob:Sup3rSecret@127.0.0.1:99999/0' acquire x
if [ "$RC" -eq 64 ] && ! grep -q Sup3rSecret "$T/err" && grep -q 'bob:\*\*\*@' "$T/err"; then
  ok "bad URL message redacts the password"
else nok "bad URL message redacts the password" "status $RC"; fi
rl -n 'redis://:p@ss/w0rd@127.0.0.1:99999' acquire x
if [ "$RC" -eq 64 ] && ! grep -q 'w0rd' "$T/err"; then ok "password with @ and / is redacted"
else nok "password with @ and / is redacted" "status $RC"; fi

usage "a ',' in a password" -n 'redis://:pa,ss@127.0.0.1:6379' acquire x
grep -q "^redlock: bad node 'redis://\*\*\*@127.0.0.1:6379': a ',' in a user name or password must be written %2C" "$T/err" &&
  ! grep -q ':pa\|ss@' "$T/err" && ok "usage: a ',' in a password says to write %2C, shows no part of the password" ||
  nok "usage: a ',' in a password says to write %2C" "$(cat "$T/err")"
REDLOCK_NODES='127.0.0.1:6380,rediss://al:x,y,z@127.0.0.1:6379/2' usage "a ',' in a password (REDLOCK_NODES)" acquire x
grep -q "'rediss://\*\*\*@127.0.0.1:6379/2': a ',' in a user name or password must be written %2C" "$T/err" &&
  ok "usage: a ',' in a password in REDLOCK_NODES says to write %2C" || nok "usage: ',' in REDLOCK_NODES" "$(cat "$T/err")"
usage "--label with a space" -n 127.0.0.1:6379 acquire --label 'a b' x
usage "--label with --no-label" -n 127.0.0.1:6379 acquire --label a --no-label x
usage "--label does not apply to release" -n 127.0.0.1:6379 release --label a x 0123456789abcdef0123456789abcdef
usage "release: a TOKEN whose label is too long" -n 127.0.0.1:6379 release x "$(head -c 65 /dev/zero | tr '\0' k)0123456789abcdef0123456789abcdef"
usage "--shared with --exclusive" -n 127.0.0.1:6379 run -s -x rwk -- true
grep -q "'--shared' and '--exclusive' do not go together" "$T/err" && ok "usage: -s -x says they do not go together" ||
  nok "usage: -s -x says they do not go together" "$(cat "$T/err")"

# a build without TLS (NOTLS_BIN, from the Makefile) says so for --tls and
# for rediss://, at once whatever --wait says
if [ -n "${NOTLS_BIN:-}" ]; then
  for how in "-n 127.0.0.1:6379 --tls" "-n rediss://127.0.0.1:6379"; do
    # shellcheck disable=SC2086 # the options, word by word
    t0=$(now_ms); timeout -k 2 30 "$NOTLS_BIN" $how -w 30s acquire x >"$T/out" 2>"$T/err"; RC=$?; t1=$(now_ms)
    [ "$RC" -eq 78 ] && [ $((t1 - t0)) -lt 1000 ] &&
      grep -qx "redlock: this build has no TLS: rediss:// and --tls need redlock built with REDLOCK_SOCKET_TLS and OpenSSL (make build/redlock)" "$T/err" &&
      ok "a build without TLS ($how, -w 30s): 78 in $((t1 - t0)) ms, 'this build has no TLS: ...'" ||
      nok "a build without TLS says so ($how)" "status $RC after $((t1 - t0)) ms"
  done
fi

rl --help
if [ "$RC" -eq 0 ] && grep -q '^Usage: redlock run' "$T/out" && grep -q '^  77 ' "$T/out" &&
   grep -q '^  75 ' "$T/out" && grep -q '^  64 ' "$T/out" && [ ! -s "$T/err" ]; then
  ok "--help: usage and exit codes on stdout, status 0"
else nok "--help" "status $RC"; fi
rl --version
if [ "$RC" -eq 0 ] && grep -q '^redlock [0-9]' "$T/out"; then ok "--version"; else nok "--version" "status $RC"; fi

# the command line: getopt_long, per-command help, options per command
rl run --help
if [ "$RC" -eq 0 ] && grep -q '^Usage: redlock run ' "$T/out" && ! grep -q 'redlock acquire' "$T/out" &&
   grep -q -- '--on-lost' "$T/out" && grep -q -- '--foreground' "$T/out" && ! grep -q -- '--json' "$T/out" &&
   grep -q '^  77 ' "$T/out" && [ ! -s "$T/err" ]; then
  ok "run --help: run's usage, its options (no --json) and exit codes"
else nok "run --help" "status $RC"; fi
rl help inspect
if [ "$RC" -eq 0 ] && grep -q '^Usage: redlock inspect ' "$T/out" && grep -q -- '--json' "$T/out" &&
   ! grep -q -- '--on-lost' "$T/out" && grep -q '^  1      inspect: NAME is free' "$T/out"; then
  ok "help inspect: inspect's usage, --json, its exit codes"
else nok "help inspect" "status $RC"; fi
for c in acquire release extend; do
  rl "$c" -h
  [ "$RC" -eq 0 ] && grep -q "^Usage: redlock $c " "$T/out" && [ "$(grep -c '^Usage\|^       redlock' "$T/out")" -eq 1 ] &&
    ok "$c -h: its own usage only" || nok "$c -h" "status $RC"
done
usage "help for an unknown command" help frobnicate
usage "option that does not apply (--json to run)" -n 127.0.0.1:6379 run --json x -- true
usage "bad --log-format" -n 127.0.0.1:6379 --log-format bogus acquire x
usage "bad --stats format" -n 127.0.0.1:6379 --stats=xml acquire x
usage "option that does not apply (--stats to inspect)" -n 127.0.0.1:6379 --stats inspect x
usage "option that does not apply (--on-lost to acquire)" -n 127.0.0.1:6379 --on-lost kill acquire x
usage "value given to a flag (--no-wait=1)" -n 127.0.0.1:6379 acquire --no-wait=1 x
usage "ambiguous abbreviation (--no)" -n 127.0.0.1:6379 acquire --no x
grep -q "ambiguous option '--no'" "$T/err" && ok "usage: ambiguous abbreviation says so" || nok "usage: ambiguous abbreviation says so"
usage "missing value of a short option (-t at the end)" -n 127.0.0.1:6379 acquire x -t
grep -q "option '-t' needs a value" "$T/err" && ok "usage: '-t' needs a value" || nok "usage: '-t' needs a value"
# every long option of --help is in the manual page
if [ -n "${MAN_PAGE:-}" ]; then
  rl --help; missing=
  for opt in $(grep -o -- '--[a-z][a-z-]*' "$T/out" | sort -u); do
    grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$ROOT/$MAN_PAGE" || missing="$missing $opt"
  done
  [ -z "$missing" ] && ok "man page: documents every option of --help" || nok "man page: options missing:$missing"
  v=$("$ROOT/scripts/version.sh")
  grep -q "^\.TH REDLOCK 1 .*\"redlock $v\"" "$ROOT/$MAN_PAGE" && ok "man page: version $v" ||
    nok "man page: version is not $v"
fi

# ----------------------------------------------------------------- 3 nodes
# (durable, as scripts/redis-nodes.sh starts them: they count at once)
NODES=$("$NODES_SH" start 3 "$T/nodes") || { echo "not ok tool tests: cannot start redis nodes"; exit 1; }
# three nodes that do not keep keys across restarts, for the restart tests
# below: started now, they are up longer than those tests' ttl by then
RESTART_NODES=$("$NODES_SH" start --volatile 3 "$T/restart") || nok "restart: volatile nodes start"
export REDLOCK_NODES=$NODES
PIDS=$(cat "$T/nodes/pids")
PORT0=$(head -n 1 "$T/nodes/ports")
OLDEST=9999 # the oldest node's version, for the cases newer servers only can run
for p in $(cat "$T/nodes/ports"); do v=$(version "$p"); [ "$v" -lt "$OLDEST" ] && OLDEST=$v; done
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

# --log-format json: events in order, every line parsed; --stats
rl --log-format json --stats -t 600ms run js -- sh -c 'sleep 0.3; exit 3'
jlog "json log: run gives acquired (3 votes of 3), renewed, released, stats, exit (status 3)" "
  RC == 3 and E[0] == 'acquired' and ev('acquired')[0]['votes'] == 3 and ev('acquired')[0]['quorum'] == 2 and
  ev('acquired')[0]['node_count'] == 3 and ev('acquired')[0]['latency_ms'] >= 0 and ev('acquired')[0]['validity_ms'] > 0 and
  E.index('acquired') < E.index('renewed') < E.index('released') < E.index('stats') < E.index('exit') and
  ev('exit')[0]['code'] == 3 and ev('exit')[0]['status'] == 3 and ev('stats')[0]['acquires']['started'] == 1 and
  ev('stats')[0]['acquires']['acquired'] == 1 and ev('stats')[0]['renewals'] >= 1 and ev('stats')[0]['releases'] == 1 and
  ev('stats')[0]['acquire_ms']['count'] == 1 and ev('stats')[0]['held'] == 0 and ev('stats')[0]['held_max'] == 1 and
  [n['connects'] for n in ev('stats')[0]['nodes']] == [1, 1, 1] and ev('stats')[0]['nodes'][0]['failures']['connect'] == 0"
rl --log-format json acquire js
TOKEN=$(cat "$T/out")
jlog "json log: acquire gives acquired and exit 0, the token alone on stdout" "
  RC == 0 and E == ['acquired', 'exit'] and ev('exit')[0]['code'] == 0 and ev('acquired')[0]['attempts'] == 1 and
  open(sys.argv[1].replace('/err', '/out')).read().strip() == '$TOKEN' and len('$TOKEN') > 32"
rl --log-format json --no-wait run js -- true
jlog "json log: a busy lock gives not_acquired (its words, status) and exit 75" "
  RC == 75 and E == ['not_acquired', 'exit'] and L[0]['status'] == 'locked' and
  L[0]['reason'].startswith(\"'js' is locked by someone else\") and L[0]['code'] == 75 and L[1]['code'] == 75"
rl --log-format json -n "redis://:pw-json-5ecret@127.0.0.1:1,127.0.0.1:2,$PORT0" acquire js
jlog "json log: bad nodes give not_acquired naming each failed node, the password masked" "
  RC == 69 and E == ['not_acquired', 'exit'] and [n['node'] for n in L[0]['nodes']] == ['redis://:***@127.0.0.1:1', '127.0.0.1:2']
  and all(n['status'] == 'connect' for n in L[0]['nodes']) and 'not acquired: 2 of 3 nodes failed' in L[0]['reason']"
grep -q 5ecret "$T/err" && nok "json log: the password appears" || ok "json log: the password never appears"
rl --log-format json release js "$TOKEN"
jlog "json log: release gives released (3 votes) and exit 0" "RC == 0 and E == ['released', 'exit'] and L[0]['votes'] == 3"
J=$(printf 'j"q\\\x01\xff\xc3\xa9')
rl --log-format json --stats=json acquire "$J"
jlog "json log: NAME escaped (quote, backslash, control byte, invalid byte as \\u00ff, UTF-8 as is); --stats=json" "
  RC == 0 and E == ['acquired', 'stats', 'exit'] and all(d['name'] == 'j\"q\\\\\\x01\\u00ff\\u00e9' for d in L) and
  b'\\\\u00ff' in open(sys.argv[1], 'rb').read() and 'é'.encode() in open(sys.argv[1], 'rb').read()"
"$BIN" -q release "$J" "$(cat "$T/out")"
rl --stats -t 600ms run js -- sleep 0.3
if [ "$RC" -eq 0 ] && grep -Eq '^redlock: stats: acquires +1: acquired 1, busy 0' "$T/err" &&
   grep -Eq '^redlock: stats: renewals +[1-9][0-9]* \(0 failed\); extends 0 \(0 failed\); releases 1 \(0 failed\)' "$T/err" &&
   grep -Eq '^redlock: stats: held +0 now, 1 at most' "$T/err" && grep -Eq '^redlock: stats: acquire +p50 [0-9.]+m?s, p99 ' "$T/err" &&
   [ "$(grep -c '^redlock: stats: node 127.0.0.1:[0-9]*: 1 connects, 0 drops' "$T/err")" = 3 ]
then ok "--stats text: acquires 1, acquired 1, renewals >= 1, releases 1, held at most 1, acquire p50/p99, 1 connect a node"
else nok "--stats text" "status $RC"; fi

# getopt_long forms: combined flags (last of -q/-v wins), -t10s, --ttl=10s, abbreviations
rl -qv run gl -- true
[ "$RC" -eq 0 ] && grep -q "^redlock: acquired 'gl'" "$T/err" && ok "getopt: -qv combined (verbose wins)" || nok "getopt: -qv" "status $RC"
rl -vq run gl -- true
[ "$RC" -eq 0 ] && [ ! -s "$T/err" ] && ok "getopt: -vq combined (quiet wins)" || nok "getopt: -vq" "status $RC"
rl acquire -t3s gl; TOKEN=$(cat "$T/out")
pttl=$(rcli PTTL gl)
[ "$RC" -eq 0 ] && [ "${pttl:-0}" -gt 1000 ] && [ "${pttl:-0}" -le 3000 ] && ok "getopt: -t3s (attached value)" || nok "getopt: -t3s" "status $RC, PTTL $pttl"
rl --ttl=20s extend gl "$TOKEN"
pttl=$(rcli PTTL gl)
[ "$RC" -eq 0 ] && [ "${pttl:-0}" -gt 15000 ] && ok "getopt: --ttl=20s (value after =)" || nok "getopt: --ttl=20s" "status $RC, PTTL $pttl"
expect "getopt: --verb and --node-t abbreviations" 0 --verb --node-t 300ms release gl "$TOKEN"

# acquire / inspect / extend / release by token. A token is the label
# "host:pid:" (the pid of the redlock that acquired) and 32 hex digits;
# inspect shows the first 8 of those digits and the label
HOST=$(uname -n | cut -c1-40)
rl acquire -t 10s tok; TOKEN=$(cat "$T/out")
if [ "$RC" -eq 0 ] && [[ "$TOKEN" =~ ^[^\ ]+:[0-9]+:[0-9a-f]{32}$ ]] && [ "${TOKEN%%:*}" = "$HOST" ] &&
   [ "$(rcli GET tok)" = "$TOKEN" ]; then
  ok "acquire prints a token: this host's name, redlock's pid and 32 hex digits, the value on the nodes"
else nok "acquire prints a token" "status $RC, out '$TOKEN'"; fi
HX=${TOKEN: -32:8}; WHO=${TOKEN%:*}
rl inspect tok
if [ "$RC" -eq 0 ] && [ "$(grep -c "held    $HX  [0-9.]*s  by $WHO\$" "$T/out")" -eq 3 ] &&
   grep -q "is held by $HX ($WHO) on 3/3 nodes (quorum 2)" "$T/out" && ! grep -q "${TOKEN: -24:8}" "$T/out"; then
  ok "inspect: the holder's host and pid and 8 of its token's digits on each node, never the whole token"
else nok "inspect shows the holder" "status $RC"; sed 's/^/#   /' "$T/out"; fi
ttl_ok=1
for v in $(awk '$2 == "held" { sub(/s$/, "", $4); print $4 }' "$T/out"); do
  awk -v v="$v" 'BEGIN { exit !(v > 8 && v <= 10) }' || ttl_ok=0
done
[ $ttl_ok -eq 1 ] && ok "inspect: remaining TTL per node" || nok "inspect: remaining TTL per node" "$(cat "$T/out")"
# the label: --label, --no-label; a run's is redlock's own pid; tokens of
# other clients (no label, or a label of their own) read too, and a label
# "42:" on a key with a TTL is no legacy expiry
rl acquire -t 10s --label ci-7 lab; T1=$(cat "$T/out")
rl acquire -t 10s --no-label lab2; T2=$(cat "$T/out")
rl inspect --json lab
if [[ "$T1" =~ ^ci-7:[0-9a-f]{32}$ ]] && [[ "$T2" =~ ^[0-9a-f]{32}$ ]] &&
   json_ok "d['label']=='ci-7' and d['holder']=='${T1: -32:8}' and all(n['label']=='ci-7' for n in d['nodes'])"; then
  ok "label: --label ci-7 makes tokens ci-7:..., inspect --json names it; --no-label: 32 hex digits"
else nok "label: --label / --no-label" "tokens '$T1' '$T2'" "$(head -c 300 "$T/out")"; fi
expect "label: release by a --label token" 0 release lab "$T1"
rl inspect --json lab2
json_ok "d['state']=='held' and d['label'] is None and d['holder']=='${T2:0:8}'" && ok "label: a token without a label: label null" ||
  nok "label: a token without a label" "$(head -c 300 "$T/out")"
expect "label: release by a token without a label" 0 release lab2 "$T2"
rl run lab -- sh -c "$BIN inspect --json lab; echo \$PPID"
head -n 1 "$T/out" >"$T/out.json"; ppid=$(tail -n 1 "$T/out"); cp "$T/out.json" "$T/out"
[ "$RC" -eq 0 ] && json_ok "d['label']=='$HOST:$ppid' and d['state']=='held'" &&
  ok "label: run's tokens name this host and redlock's pid ($HOST:$ppid)" || nok "label: run's label" "status $RC, pid $ppid"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" SET ext "web9:77:0123456789abcdef0123456789abcdef" PX 10000 >/dev/null; done
rl inspect ext
[ "$RC" -eq 0 ] && grep -q "is held by 01234567 (web9:77) on 3/3" "$T/out" && ok "label: another client's labelled token reads" ||
  nok "label: another client's labelled token" "$(cat "$T/out")"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" SET ext "42:0123456789abcdef0123456789abcdef" PX 10000 >/dev/null; done
rl inspect ext
[ "$RC" -eq 0 ] && grep -q "is held by 01234567 (42) on 3/3" "$T/out" && ! grep -q legacy "$T/out" &&
  ok "label: a label '42:' on a key with a TTL is no legacy expiry" || nok "label: '42:' label" "$(cat "$T/out")"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" DEL ext >/dev/null; done

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
# a failed extend on healthy nodes: decided by two answers before the third
# came, it names no node as timed out (8 runs: the third answer's timing varies)
bad=0
for i in $(seq 1 8); do
  rl --node-timeout 2s extend tok 0123456789abcdef0123456789abcdef
  { [ "$RC" -eq 1 ] && ! grep -q "timed out\|no answer" "$T/err" &&
    grep -q "this token does not hold the lock (it does on 0 of 3 nodes, a quorum needs 2; [23] held by another token" "$T/err"; } ||
    { bad=$((bad + 1)); cp "$T/err" "$T/ext.err"; }
done
[ $bad -eq 0 ] && ok "extend with another holder's lock: 1, no healthy node called timed out (8 runs)" ||
  nok "extend with another holder's lock: no node called timed out" "$bad of 8 runs: $(tr '\n' '|' <"$T/ext.err")"
expect "release by token" 0 release tok "$TOKEN"
expect "release again: 1 (not held)" 1 release tok "$TOKEN"
rl extend tok "$TOKEN"
[ "$RC" -eq 1 ] && ! grep -q "timed out\|no answer" "$T/err" && grep -q "expired or released" "$T/err" &&
  ok "extend after release: 1 (not held), no healthy node called timed out" ||
  nok "extend after release: 1, no node called timed out" "status $RC"
rl inspect tok
[ "$RC" -eq 1 ] && grep -q "is free on all 3 nodes" "$T/out" && ok "inspect after release: free, exit 1" || nok "inspect after release: free" "status $RC"
rl acquire -t 300ms short; TOKEN=$(cat "$T/out"); sleep 0.45
expect "release after the TTL ran out: 1" 1 release short "$TOKEN"

# reentrant runs: COMMAND gets the owner in REDLOCK_OWNER; a run inside (with
# --reentrant or without: it inherits the owner) re-enters (the count is 2 on
# every node); another owner, or a run with REDLOCK_OWNER unset, waits; the
# key is gone afterwards
rl run --reentrant re -- sh -c "echo \"\$REDLOCK_OWNER\"; $BIN run --reentrant --no-wait re -- sh -c 'echo \"inner \$REDLOCK_OWNER\"; redis-cli -p $PORT0 HGET re \"\$REDLOCK_OWNER\"'"
owner=$(sed -n 1p "$T/out")
if [ "$RC" -eq 0 ] && [ -n "$owner" ] && [ "$(sed -n 2p "$T/out")" = "inner $owner" ] && [ "$(sed -n 3p "$T/out")" = 2 ]; then
  ok "reentrant: a nested run of the owner re-enters (count 2)"
else nok "reentrant: a nested run of the owner re-enters" "status $RC, out $(tr '\n' '|' <"$T/out")"; fi
expect "reentrant: a run inside without --reentrant inherits the owner and enters" 0 run --reentrant re -- \
  "$BIN" run --no-wait re -- sh -c "redis-cli -p $PORT0 HGET re \"\$REDLOCK_OWNER\" | grep -qx 2"
expect "reentrant: a run inside with REDLOCK_OWNER unset waits (75)" 75 run --reentrant re -- \
  env -u REDLOCK_OWNER "$BIN" run --no-wait re -- true
expect "reentrant: a --legacy run inside does not inherit: it waits (75)" 75 run --reentrant re -- \
  "$BIN" run --legacy --no-wait re -- true
expect "reentrant: another owner inside waits (75)" 75 run --reentrant re -- "$BIN" run --reentrant --owner other --no-wait re -- true
expect "reentrant: --owner given outside, the same owner inside re-enters" 0 run --reentrant --owner job-7 re -- \
  "$BIN" run --reentrant --owner job-7 --no-wait re -- true
rl run --reentrant --owner ins-1 re -- "$BIN" inspect re
[ "$RC" -eq 0 ] && grep -q "is held by owner ins-1 (reentrant, by $HOST:[0-9]*) on 3/3 nodes" "$T/out" &&
  [ "$(grep -c "reentrant: owner ins-1, 1 entries" "$T/out")" -eq 3 ] &&
  ok "reentrant: inspect names the owner and its entries" || nok "reentrant: inspect names the owner" "$(cat "$T/out")"
[ "$(rcli EXISTS re)" = 0 ] && ok "reentrant: no key left after the runs" || nok "reentrant: no key left after the runs"
usage "--owner without --reentrant" run --owner x re -- true
usage "--owner with a space" run --reentrant --owner 'a b' re -- true
usage "--reentrant with --legacy" run --reentrant --legacy re -- true
usage "--reentrant does not apply to acquire" acquire --reentrant re
REDLOCK_OWNER='a b' usage "a bad REDLOCK_OWNER" run --reentrant re -- true

# the inherited owner is scoped: a nested run re-enters only a lock an
# enclosing `run --reentrant` holds (its NAME on its nodes, in
# REDLOCK_OWNER_SCOPE); sibling runs of another NAME below it take turns
# (plain, --reentrant, --fence), as without the outer run. Each sibling
# holds the lock 300 ms and makes a directory while it does: a second one
# inside at the same time cannot.
printf '%s\n' "mkdir '$T/in' 2>/dev/null || echo overlap" 'echo "ran ${REDLOCK_FENCE:--}"' 'sleep 0.3' \
  "rmdir '$T/in' 2>/dev/null" >"$T/sib.sh"
siblings() { # TEST-NAME OUTER-OPTS SIBLING-OPTS
  local t0 t1; t0=$(now_ms)
  rl run $2 sa -- sh -c "$BIN run $3 sb -- sh $T/sib.sh & $BIN run $3 sb -- sh $T/sib.sh & wait"
  t1=$(now_ms)
  local fences; fences=$(grep '^ran [0-9]' "$T/out" | sort -u | wc -l) # with --fence: two, and not the same
  if [ "$RC" -eq 0 ] && [ "$(grep -c '^ran' "$T/out")" -eq 2 ] && ! grep -q overlap "$T/out" && [ $((t1 - t0)) -ge 600 ] &&
     { [ "$fences" -eq 2 ] || [ "${3#*--fence}" = "$3" ]; }; then
    ok "scoped owner: $1 ($((t1 - t0)) ms)"
  else nok "scoped owner: $1" "status $RC after $((t1 - t0)) ms, out $(tr '\n' '|' <"$T/out")"; fi
}
siblings "sibling runs of another NAME under run --reentrant take turns" --reentrant ""
siblings "sibling --reentrant runs of another NAME under it take turns (each its own owner)" --reentrant --reentrant
siblings "sibling --fence runs of another NAME under run --reentrant --fence take turns, two fences" \
  "--reentrant --fence" --fence
expect "scoped owner: a nested run of NAME on other nodes does not re-enter (75)" 75 run --reentrant re -- \
  "$BIN" -n "127.0.0.1:$PORT0" run --no-wait re -- true
rl run --reentrant re -- "$BIN" run --reentrant re2 -- sh -c "echo \"\$REDLOCK_OWNER\"; $BIN run --no-wait re -- sh -c 'echo \"\$REDLOCK_OWNER\"'; $BIN run --no-wait re2 -- sh -c 'echo \"\$REDLOCK_OWNER\"'"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 3 ] && [ "$(sed -n 3p "$T/out")" = "$(sed -n 1p "$T/out")" ] &&
   [ "$(sed -n 2p "$T/out")" != "$(sed -n 1p "$T/out")" ]; then
  ok "scoped owner: under NAME, a run --reentrant NAME2 has its own owner; runs of both NAMEs inside re-enter as theirs"
else nok "scoped owner: nested NAMEs re-enter as their owners" "status $RC, out $(tr '\n' '|' <"$T/out")"; fi
expect "scoped owner: a NAME with a space and % re-enters" 0 run --reentrant 'r e%' -- "$BIN" run --no-wait 'r e%' -- true
expect "scoped owner: REDLOCK_OWNER alone (no scope): a plain run does not re-enter (75)" 75 run --reentrant --owner job-9 re -- \
  env -u REDLOCK_OWNER_SCOPE REDLOCK_OWNER=job-9 "$BIN" run --no-wait re -- true
expect "scoped owner: REDLOCK_OWNER alone is the default owner of run --reentrant" 0 run --reentrant --owner job-9 re -- \
  env -u REDLOCK_OWNER_SCOPE REDLOCK_OWNER=job-9 "$BIN" run --reentrant --no-wait re -- true
REDLOCK_OWNER=x REDLOCK_OWNER_SCOPE='zz re x' usage "a bad REDLOCK_OWNER_SCOPE" run re -- true
[ "$(rcli EXISTS re)$(rcli EXISTS re2)$(rcli EXISTS sb)$(rcli EXISTS 'r e%')" = 0000 ] && ok "scoped owner: no key left" ||
  nok "scoped owner: no key left"

# fenced runs: COMMAND gets REDLOCK_FENCE, higher at each run; the counter
# (redlock:fence:NAME) stays on every node; inspect shows it; a plain run
# gets none; --fence with --reentrant, --legacy or outside run is refused
rl run --fence fe -- sh -c 'echo "$REDLOCK_FENCE"'; f1=$(cat "$T/out"); rc1=$RC
rl run --fence fe -- sh -c 'echo "$REDLOCK_FENCE"'; f2=$(cat "$T/out")
if [ "$rc1" -eq 0 ] && [ "$RC" -eq 0 ] && [[ "$f1" =~ ^[0-9]+$ ]] && [[ "$f2" =~ ^[0-9]+$ ]] && [ "$f2" -gt "$f1" ] &&
   [ "$(rcli GET redlock:fence:fe)" = "$f2" ] && [ "$(rcli PTTL redlock:fence:fe)" = -1 ] && [ "$(rcli EXISTS fe)" = 0 ]; then
  ok "fence: COMMAND gets REDLOCK_FENCE, higher at each run ($f1, $f2), the counter stays"
else nok "fence: COMMAND gets REDLOCK_FENCE, higher at each run" "status $rc1/$RC, fences '$f1' '$f2'"; fi
rl inspect fe
[ "$RC" -eq 1 ] && grep -q "^fence counter: $f2 (the highest; per node: $f2 $f2 $f2)$" "$T/out" &&
  ok "fence: inspect shows the counter" || nok "fence: inspect shows the counter" "status $RC, $(tr '\n' '|' <"$T/out")"
rl inspect --json fe
grep -q "\"fence\":$f2,\"nodes\"" "$T/out" && ok "fence: inspect --json has the counter" ||
  nok "fence: inspect --json has the counter" "$(cat "$T/out")"
rl run fe -- sh -c 'echo "[$REDLOCK_FENCE]"'
[ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = "[]" ] && ok "fence: a plain run gets no REDLOCK_FENCE" ||
  nok "fence: a plain run gets no REDLOCK_FENCE" "$(cat "$T/out")"
rl run --reentrant --fence rf -- sh -c "echo \"\$REDLOCK_FENCE\"; $BIN run --fence --no-wait rf -- sh -c 'echo \"inner \$REDLOCK_FENCE\"'; $BIN run --no-wait rf -- echo plain"
fo=$(sed -n 1p "$T/out")
if [ "$RC" -eq 0 ] && [[ "$fo" =~ ^[0-9]+$ ]] && [ "$(sed -n 2p "$T/out")" = "inner $fo" ] && [ "$(sed -n 3p "$T/out")" = plain ] &&
   [ "$(rcli EXISTS rf)" = 0 ]; then
  ok "fence: a reentrant fenced run's nested runs enter, the fenced one with the same fence ($fo)"
else nok "fence: a reentrant fenced run's nested runs enter" "status $RC, out $(tr '\n' '|' <"$T/out")"; fi
# an ACL user confined to its own keys (~app:*) runs scripts, but a fenced
# run needs its counter too: the ACL's denial of a key is said as such (78
# at once, naming both keys), not as "refuses scripts"; with
# ~redlock:fence:app:* it runs; a key outside ~app:* is denied the same way
APP=
for p in $(cat "$T/nodes/ports"); do
  timeout 5 redis-cli -p "$p" ACL SETUSER app on '>apw' '~app:*' '+@all' >/dev/null
  APP="$APP${APP:+,}redis://app:apw@127.0.0.1:$p"
done
t0=$(now_ms); rl -n "$APP" -w 20s run --fence app:job -- true; t1=$(now_ms)
if [ "$RC" -eq 78 ] && [ $((t1 - t0)) -lt 3000 ] && ! grep -q "refuses scripts" "$T/err" &&
   grep -q "the ACL denies this user the key 'app:job' or its fence counter 'redlock:fence:app:job'" "$T/err"; then
  ok "ACL: a fenced run denied its counter key: 78 at once, the key denial named ($((t1 - t0)) ms)"
else nok "ACL: a fenced run denied its counter key" "status $RC after $((t1 - t0)) ms"; fi
rl -n "$APP" --no-wait run other -- true
[ "$RC" -eq 78 ] && grep -q "the ACL denies this user the key 'other'$" "$T/err" &&
  ok "ACL: a run denied its key: 78, the key named" || nok "ACL: a run denied its key" "status $RC"
for p in $(cat "$T/nodes/ports"); do
  timeout 5 redis-cli -p "$p" ACL SETUSER app '~redlock:fence:app:*' >/dev/null
done
rl -n "$APP" run --fence app:job -- sh -c 'echo "$REDLOCK_FENCE"'
[ "$RC" -eq 0 ] && [[ "$(cat "$T/out")" =~ ^[0-9]+$ ]] && ok "ACL: with ~redlock:fence:app:* the fenced run holds (fence $(cat "$T/out"))" ||
  nok "ACL: with ~redlock:fence:app:* the fenced run holds" "status $RC"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" ACL DELUSER app >/dev/null; done
# a user without the notification channels (Redis 7: no channels unless
# granted): its subscribers are refused; a wait says so once per node and
# still works at the retry delay
NOCH=
if [ "$OLDEST" -lt 602 ]; then
  skip "ACL: a waiter denied the notification channels: needs Redis 6.2 or later (ACL channel permissions), the oldest node is $((OLDEST / 100)).$((OLDEST % 100))"
else
for p in $(cat "$T/nodes/ports"); do
  timeout 5 redis-cli -p "$p" ACL SETUSER noch on '>ncpw' '~*' '+@all' resetchannels >/dev/null
  NOCH="$NOCH${NOCH:+,}redis://noch:ncpw@127.0.0.1:$p"
done
rl acquire -t 20s noch; NOCH_TOKEN=$(cat "$T/out")
rl -n "$NOCH" -w 1500ms acquire noch
nw=$(grep -c "refuses release notifications (" "$T/err")
[ "$RC" -eq 75 ] && [ "$nw" -eq "$(wc -w <"$T/nodes/ports")" ] &&
  ok "ACL: a waiter denied the notification channels: one warning per node ($nw), 75 at the wait's end" ||
  nok "ACL: a waiter denied the notification channels: one warning per node" "status $RC, $nw warnings"
rl release noch "$NOCH_TOKEN"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" ACL DELUSER noch >/dev/null; done
fi
# the lock command refused with an error reply: the server's own words
# for it (kept by the adapter with the node's status), never those of
# another command: a user denied SET (and PING)
NOSET=
for p in $(cat "$T/nodes/ports"); do
  timeout 5 redis-cli -p "$p" ACL SETUSER noset on '>nspw' '~*' '+@all' '-set' '-ping' >/dev/null
  NOSET="$NOSET${NOSET:+,}redis://noset:nspw@127.0.0.1:$p"
done
rl -n "$NOSET" run noset -- true
[ "$RC" -eq 78 ] && grep -q "error reply to the lock command: NOPERM .*'set' command" "$T/err" && ! grep -q "'ping'" "$T/err" &&
  ok "ACL: a user denied SET: 78, the server's words for SET (not for the probe's PING)" ||
  nok "ACL: a user denied SET: the server's words for SET" "status $RC"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" ACL DELUSER noset >/dev/null; done
# a user without scripting: the locks that need scripts say so (78: the
# configuration's), each naming its own kind
NOSC=
for p in $(cat "$T/nodes/ports"); do
  timeout 5 redis-cli -p "$p" ACL SETUSER nosc on '>ncpw' '~*' '+@all' '-@scripting' >/dev/null
  # every channel, on its own: a server before 6.2 has no channel
  # permissions (every user may subscribe) and refuses the word
  timeout 5 redis-cli -p "$p" ACL SETUSER nosc '&*' >/dev/null
  NOSC="$NOSC${NOSC:+,}redis://nosc:ncpw@127.0.0.1:$p"
done
rl -n "$NOSC" run -s nosc -- true
[ "$RC" -eq 78 ] && grep -q "refuses scripts (EVAL, EVALSHA), which a readers-writer lock (-s, -x) needs" "$T/err" &&
  ! grep -q "reentrant" "$T/err" && ok "no scripting: a readers-writer run gives 78 and names its kind of lock" ||
  nok "no scripting: a readers-writer run" "status $RC"
rl -n "$NOSC" run --reentrant nosc -- true
[ "$RC" -eq 78 ] && grep -q "which a reentrant lock (--reentrant) needs" "$T/err" &&
  ok "no scripting: a reentrant run gives 78 and names its kind of lock" || nok "no scripting: a reentrant run" "status $RC"
for p in $(cat "$T/nodes/ports"); do timeout 5 redis-cli -p "$p" ACL DELUSER nosc >/dev/null; done
# a replica refuses writes: READONLY, for the plain lock's SET and a fenced lock's script
REPLICA=$("$NODES_SH" start 1 "$T/replica" --replicaof 127.0.0.1 "$PORT0") || nok "a replica node starts"
rl -n "$REPLICA" acquire ro
[ "$RC" -eq 76 ] && grep -qx "redlock: node $REPLICA: error reply to the lock command: READONLY You can't write against a read only replica." "$T/err" &&
  ok "a replica: acquire gives 76 with the server's words (READONLY)" || nok "a replica: acquire says READONLY" "status $RC"
rl -n "$REPLICA" run --fence ro -- true
# (a server before 7.0 wraps it: "ERR Error running script ... -READONLY ...", the words said are the wrapped ones)
[ "$RC" -eq 76 ] && grep -q "^redlock: node $REPLICA: error reply to the lock command: READONLY " "$T/err" &&
  ok "a replica: a fenced run (a script) gives 76 with the server's words (READONLY)" || nok "a replica: fenced run says READONLY" "status $RC"
"$NODES_SH" stop "$T/replica"
usage "--fence with --legacy" run --fence --legacy fe -- true
usage "--fence does not apply to acquire" acquire --fence fe

# readers-writer runs: -s readers together (inspect counts them), a writer
# (-x) or a plain run waits; a writer alone, readers wait; no key left
rl run -s rwk -- sh -c "$BIN run -s --no-wait rwk -- $BIN inspect rwk; echo s=\$?; $BIN run -x --no-wait rwk -- true; echo x=\$?; $BIN run --no-wait rwk -- true; echo p=\$?"
if [ "$RC" -eq 0 ] && [ "$(grep -c '(2 readers, writer -, update -, 0 writers waiting)' "$T/out")" -eq 3 ] &&
   grep -qx 's=0' "$T/out" && grep -qx 'x=75' "$T/out" && grep -qx 'p=75' "$T/out" &&
   grep -q "'rwk' is held (readers-writer) on 3/3 nodes (quorum 2)" "$T/out"; then
  ok "rw: -s runs share NAME (inspect counts 2 readers); -x and a plain run wait"
else nok "rw: -s runs share NAME" "status $RC, out $(tr '\n' '|' <"$T/out")"; fi
rl run -x rwk -- sh -c "$BIN inspect --json rwk; $BIN run -s --no-wait rwk -- true; echo s=\$?"
if [ "$RC" -eq 0 ] && grep -q '"rw":{"readers":0,"writer":"[0-9a-f]\{8\}","writer_label":"'"$HOST"':[0-9]*","update":null,"update_label":null,"writers_waiting":0}' "$T/out" &&
   grep -qx 's=75' "$T/out" && [ "$(rcli EXISTS rwk)" = 0 ]; then
  ok "rw: -x holds NAME alone (inspect --json names the writer), a reader waits; no key left"
else nok "rw: -x holds NAME alone" "status $RC, out $(tr '\n' '|' <"$T/out")"; fi
usage "--shared with --reentrant" run -s --reentrant rwk -- true
usage "--exclusive with --fence" run -x --fence rwk -- true
usage "--shared does not apply to acquire" acquire -s rwk

# legacy mode (SETNX/GETSET values "expiry:token")
rl --legacy acquire -t 10s leg; TOKEN=$(cat "$T/out")
v=$(rcli GET leg)
if [ "$RC" -eq 0 ] && [[ "$v" =~ ^[0-9]+:$TOKEN$ ]]; then ok "legacy: acquire writes expiry:token"
else nok "legacy: acquire writes expiry:token" "status $RC, value '$v'"; fi
rl inspect leg
grep -q "is held by ${TOKEN: -32:8} (${TOKEN%:*}) on 3/3" "$T/out" && grep -q "legacy value" "$T/out" &&
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

# a node lost and regained while run holds the lock: one line each, without
# -v (ttl 6s: renewals every 2 s; node 3 paused from 0.3 s to 3.8 s, its
# key there lives until 6 s)
f=$T/chg
"$BIN" run -t 6s chg -- sh -c "echo up >'$f.up'; sleep 5" >/dev/null 2>"$f.err" &
p=$!
wait_file "$f.up"; sleep 0.3
P3=$(sed -n 3p "$T/nodes/pids")
kill -STOP "$P3"; sleep 3.5; kill -CONT "$P3"
wait $p; rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$f.err")" -eq 2 ] &&
   [ "$(sed -n 1p "$f.err")" = "redlock: warning: 'chg' held on 2 of 3 nodes; node 127.0.0.1:$PORT2: timed out (no answer within 200ms)" ] &&
   [ "$(sed -n 2p "$f.err")" = "redlock: 'chg' held on 3 of 3 nodes; node 127.0.0.1:$PORT2 holds it again" ]; then
  ok "run: a node lost and regained during run is reported once each, without -v"
else nok "run: a node lost and regained during run is reported" "status $rc" "$(tr '\n' '|' <"$f.err")"; fi

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
  "$BIN" run -t 1s ${LOST_OPTS:-} --on-lost="$mode" "lost-$mode" -- sh -c \
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
LOST_OPTS="--log-format json" lost_test kill
if [ "$LOST_RC" = 77 ] && [ -z "$LOST_LOG" ] && [ $LOST_MS -lt 1900 ]; then
  ok "lost: --on-lost=kill kills COMMAND, exit 77 after $LOST_MS ms"
else nok "lost: on-lost=kill" "status $LOST_RC, log '$LOST_LOG', $LOST_MS ms"; fi
cp "$T/lost-kill.err" "$T/err"; RC=$LOST_RC
jlog "json log: a lost lock gives lost (its reason, action kill) and exit 77" "
  RC == 77 and E[0] == 'acquired' and len(ev('lost')) == 1 and re.match('^[a-z_]+$', ev('lost')[0]['reason']) and
  ev('lost')[0]['action'] == 'kill' and ev('exit')[0]['code'] == 77 and ev('exit')[0]['status'] == 137"
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

# COMMAND never outlives its lock: it runs in a process group of its own,
# led by a watcher that SIGKILLs the group when redlock dies
gone() { # PID... : all gone (or zombies) within 1.5 s
  local i p alive
  for i in $(seq 1 30); do
    alive=0
    for p in "$@"; do
      case "$(ps -o stat= -p "$p" 2>/dev/null)" in ''|Z*) ;; *) alive=1 ;; esac
    done
    [ $alive -eq 0 ] && return 0
    sleep 0.05
  done
  return 1
}
f=$T/k9
"$BIN" run -t 4s k9 -- sh -c "echo \$\$ >$f.sh; sleep 60 & echo \$! >$f.child;
    while :; do echo tick >>$f.log; sleep 0.05; done" >/dev/null 2>&1 &
p=$!
wait_file "$f.child"; sleep 0.2
t0=$(now_ms); kill -KILL $p; wait $p 2>/dev/null
if gone "$(cat "$f.sh")" "$(cat "$f.child")"; then
  ok "kill -9 of redlock run: COMMAND and its child are gone within $(( $(now_ms) - t0 )) ms (ttl 4s)"
else nok "kill -9 of redlock run: COMMAND and its child gone" "still running: $(ps -o pid=,comm= -p "$(cat "$f.sh")","$(cat "$f.child")")"; fi
rl run -w 15s k9 -- sh -c "echo second >>$f.log; sleep 0.3; echo second-done >>$f.log"
if [ "$RC" -eq 0 ] && [ "$(tail -n 2 "$f.log" | tr '\n' ' ')" = "second second-done " ]; then
  ok "kill -9 of redlock run: the next holder (after the TTL) runs with no tick of the old COMMAND beside it"
else nok "kill -9: no overlap with the next holder" "status $RC" "$(tail -n 4 "$f.log" | tr '\n' ' ')"; fi

f=$T/lostgrp
"$BIN" run -t 1s --on-lost kill lost-grp -- sh -c "sleep 60 & echo \$! >$f.child; echo up >$f.up; wait" >/dev/null 2>&1 &
p=$!
wait_file "$f.up"; pause_nodes; wait $p; rc=$?; resume_nodes
if [ $rc -eq 77 ] && gone "$(cat "$f.child")"; then ok "lost with --on-lost kill: COMMAND's own child is killed too (process group)"
else nok "lost with --on-lost kill: COMMAND's child" "status $rc, child $(ps -o pid=,stat= -p "$(cat "$f.child")")"; fi

f=$T/fwdgrp
"$BIN" run fwd-grp -- sh -c "sleep 60 & echo \$! >$f.child; echo up >$f.up; wait" >/dev/null 2>&1 &
p=$!
wait_file "$f.up"; kill -TERM $p; wait $p; rc=$?
if [ $rc -eq 143 ] && gone "$(cat "$f.child")"; then ok "run: a forwarded SIGTERM reaches COMMAND's children (143)"
else nok "run: forwarded SIGTERM reaches the group" "status $rc"; fi

f=$T/stub2
"$BIN" run --kill-after 400ms stub-fwd -- sh -c "trap '' TERM; echo up >$f.up; sleep 30; echo survived >$f.log" >/dev/null 2>"$f.err" &
p=$!
wait_file "$f.up"; t0=$(now_ms); kill -TERM $p; wait $p; rc=$?; t1=$(now_ms)
rl inspect stub-fwd
if [ $rc -eq 137 ] && [ ! -e "$f.log" ] && [ $((t1 - t0)) -ge 350 ] && [ $((t1 - t0)) -lt 5000 ] &&
   grep -q "is free on all 3 nodes" "$T/out" && grep -q "did not exit 400ms after" "$f.err"; then
  ok "run: COMMAND ignoring a forwarded SIGTERM gets SIGKILL after --kill-after ($((t1 - t0)) ms), lock released"
else nok "run: --kill-after after a forwarded SIGTERM" "status $rc after $((t1 - t0)) ms" "$(cat "$f.err")"; fi

f=$T/tstp
"$BIN" run -t 10s tstp -- sh -c "echo \$\$ >$f.sh; while :; do sleep 0.05; done" >/dev/null 2>&1 &
p=$!
wait_file "$f.sh"; kill -TSTP $p
# COMMAND's shell may be caught between vfork and its child's exec: dash
# then waits uninterruptibly (D) for a child that is itself stopped
st=; for i in $(seq 1 40); do st="$(ps -o stat= -p $p | cut -c1)$(ps -o stat= -p "$(cat "$f.sh")" | cut -c1)"; case $st in T[TD]) break;; esac; sleep 0.05; done
[ "$st" = TD ] && st=TT
kill -CONT $p
st2=; for i in $(seq 1 40); do st2="$(ps -o stat= -p $p | cut -c1)$(ps -o stat= -p "$(cat "$f.sh")" | cut -c1)"; [ "$st2" = SS ] && break; sleep 0.05; done
kill -TERM $p; wait $p; rc=$?
[ "$st" = TT ] && [ "$st2" = SS ] && [ $rc -eq 143 ] && ok "run: SIGTSTP stops COMMAND's group and redlock, SIGCONT resumes both" ||
  nok "run: SIGTSTP / SIGCONT" "states '$st' then '$st2', status $rc"

# a terminal (util-linux script(1) gives one): in its own group COMMAND
# cannot read it, and redlock says so; with --foreground it can
if script --version 2>/dev/null | grep -q util-linux; then
  printf 'hello\n' | timeout -k 2 10 script -qec "$BIN run --foreground tty-fg -- sh -c 'read l; echo got:\$l; exit 3'" /dev/null >"$T/tty.out" 2>&1
  rc=$?
  grep -q 'got:hello' "$T/tty.out" && [ $rc -eq 3 ] && ok "run --foreground: COMMAND reads the terminal, status 3 passes through" ||
    nok "run --foreground: COMMAND reads the terminal" "status $rc" "$(tr -d '\r' <"$T/tty.out" | head -3)"
  ( printf 'hello\n' | timeout -k 2 3 script -qec "$BIN run -t 2s tty-bg -- sh -c 'read l'" /dev/null >"$T/tty.out" 2>&1 ) 2>/dev/null
  grep -q 'use --foreground for a command that reads the terminal' "$T/tty.out" &&
    ok "run: COMMAND stopped reading the terminal (SIGTTIN) is reported, with the way out" ||
    nok "run: SIGTTIN hint" "$(tr -d '\r' <"$T/tty.out" | head -3)"
  freed=0; for i in $(seq 1 60); do rl inspect tty-bg; grep -q "is free on all 3 nodes" "$T/out" && { freed=1; break; }; sleep 0.1; done
  [ $freed -eq 1 ] && ok "run: the terminal's hangup ends it all, the lock is released" || nok "run: lock released after the hangup" "$(cat "$T/out")"
else
  echo "# script(1) from util-linux missing: terminal tests skipped"
fi

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
grep -q "is unknown: too few nodes answered (1 of 3, quorum 2)" "$T/out" && ok "inspect: too few answered reads 'unknown'" ||
  nok "inspect: unknown" "$(tail -1 "$T/out")"

# inspect --json: one object; held 0, free 1, unknown 69
rl acquire -t 20s js; TOKEN=$(cat "$T/out")
rl -n "$DEAD,127.0.0.1:$PORT0,127.0.0.1:$PORT1" inspect --json js
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 1 ] &&
   json_ok "d['key']=='js' and d['state']=='held' and d['holder']=='${TOKEN: -32:8}' and d['label']=='${TOKEN%:*}'
            and d['held_on']==2 and d['quorum']==2 and d['node_count']==3 and d['answered']==2 and len(d['nodes'])==3
            and d['nodes'][0]=={'node':'$DEAD','state':'error','holder':None,'label':None,'ttl_ms':None,'owner':None,'count':None,'fence':None,'rw':None,'legacy':False,'error':'connection refused','maxmemory_policy':None,'evicts':None,
                               'run_id':None,'uptime_s':None,'durable':None,'restart':None}
            and d['nodes'][1]['state']=='held' and d['nodes'][1]['holder']=='${TOKEN: -32:8}' and d['nodes'][1]['label']=='${TOKEN%:*}'
            and 15000 < d['nodes'][1]['ttl_ms'] <= 20000
            and d['nodes'][1]['error'] is None"; then
  ok "inspect --json: held (0), holder prefix, per-node state, TTL in ms and errors"
else nok "inspect --json: held" "status $RC" "$(head -c 300 "$T/out")"; fi
"$BIN" -q release js "$TOKEN"
rl inspect --json js
[ "$RC" -eq 1 ] && json_ok "d['state']=='free' and d['holder'] is None and d['held_on']==0 and all(n['state']=='free' for n in d['nodes'])" &&
  ok "inspect --json: free (1)" || nok "inspect --json: free" "status $RC"
rl -n "$DEAD,$T/missing.sock,127.0.0.1:$PORT0" inspect --json js
[ "$RC" -eq 69 ] && json_ok "d['state']=='unknown' and d['answered']==1 and d['nodes'][1]['error']=='no such socket'" &&
  ok "inspect --json: unknown (69), errors per node" || nok "inspect --json: unknown" "status $RC"
rl inspect --json "$(printf 'k\x01"\\\xff\xc3\xa9')"
[ "$RC" -eq 1 ] && json_ok "d['key']=='k\x01\"\\\\\ufffd\u00e9'" && ok "inspect --json: key escaped (quote, backslash, control, bad UTF-8, UTF-8)" ||
  nok "inspect --json: escaping" "status $RC" "$(cat "$T/out")"
expect "unreachable: release gives 69" 69 -n "$DEAD,$T/missing.sock" release unr 0123456789abcdef0123456789abcdef
rl -n "$DEAD,$NODES" run one-down -- true
[ "$RC" -eq 0 ] && ok "one of 4 nodes down: quorum 3 of 4 still acquires" || nok "one of 4 nodes down" "status $RC"

# messages: each failure in its own words, naming the node
rl -n "$DEAD,$T/missing.sock,127.0.0.1:$PORT0" acquire msg
if [ "$RC" -eq 69 ] && grep -qx "redlock: 'msg' not acquired: 2 of 3 nodes failed, a quorum needs 2" "$T/err" &&
   grep -qx "redlock: node $DEAD: connection refused" "$T/err" && grep -qx "redlock: node $T/missing.sock: no such socket" "$T/err"; then
  ok "message: refused connection and missing socket, one line per node"
else nok "message: refused connection / missing socket" "status $RC"; fi
t0=$(now_ms); rl -n "nosuchhost.invalid:6379,127.0.0.1:$PORT0" -w 20s acquire msg; t1=$(now_ms)
if [ "$RC" -eq 69 ] && [ $((t1 - t0)) -lt 5000 ] &&
   grep -q "^redlock: node nosuchhost.invalid:6379: name does not resolve (.*)$" "$T/err"; then
  ok "message: a name that does not resolve says so, at once even with -w 20s"
else nok "message: unresolvable name" "status $RC after $((t1 - t0)) ms"; fi
# one node down while the lock is held: one warning line by default, none with -q
ONE_DOWN="$DEAD,127.0.0.1:$PORT0,127.0.0.1:$PORT1"
rl -n "$ONE_DOWN" acquire -t 10s deg; TOKEN=$(cat "$T/out")
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
   grep -qx "redlock: warning: 'deg' held on 2 of 3 nodes; node $DEAD: connection refused" "$T/err"; then
  ok "degraded: acquire with one node down prints one warning line naming it"
else nok "degraded: one warning line" "status $RC"; fi
"$BIN" -q -n "$ONE_DOWN" release deg "$TOKEN"
rl -q -n "$ONE_DOWN" run deg -- true
[ "$RC" -eq 0 ] && [ ! -s "$T/err" ] && ok "degraded: -q silences the warning" || nok "degraded: -q" "status $RC"
rl -n "$ONE_DOWN" run deg -- true
[ "$RC" -eq 0 ] && grep -qx "redlock: warning: 'deg' held on 2 of 3 nodes; node $DEAD: connection refused" "$T/err" &&
  ok "degraded: run warns too" || nok "degraded: run warns" "status $RC"
kill -STOP "$(sed -n 3p "$T/nodes/pids")"
rl acquire -t 10s deg-slow; TOKEN=$(cat "$T/out")
kill -CONT "$(sed -n 3p "$T/nodes/pids")"
[ "$RC" -eq 0 ] && grep -qx "redlock: warning: 'deg-slow' held on 2 of 3 nodes; node 127.0.0.1:$PORT2: timed out (no answer within 200ms)" "$T/err" &&
  ok "degraded: a node that does not answer: 'timed out (no answer within 200ms)'" || nok "degraded: timed out words" "status $RC"
"$BIN" -q release deg-slow "$TOKEN"
rl -v run healthy -- true
if [ "$RC" -eq 0 ] && grep -q "^redlock: acquired 'healthy': quorum 2/3 reached in [0-9.]*m\?s; 3/3 nodes hold it" "$T/err" &&
   ! grep -q warning "$T/err"; then
  ok "verbose: healthy nodes read 'quorum 2/3 reached in ...; 3/3 nodes hold it', no warning"
else nok "verbose: healthy summary" "status $RC"; fi

# protocol error (76): nodes that do not speak RESP
"$FAKE" 60 "$T/fake.port" &
wait_file "$T/fake.port"; FP=$(cat "$T/fake.port")
expect "protocol: a non-Redis node gives 76" 76 -n "127.0.0.1:$FP" run proto -- true
grep -q "protocol" "$T/err" && ok "protocol: message says protocol error" || nok "protocol: message"
expect "protocol: inspect gives 76" 76 -n "127.0.0.1:$FP" inspect proto
expect "protocol: release gives 76" 76 -n "127.0.0.1:$FP" release proto 0123456789abcdef0123456789abcdef

# a connect that times out (a listener whose accept queue is full)
"$FAKE" 30 "$T/full.port" full &
wait_file "$T/full.port"; FULL=127.0.0.1:$(cat "$T/full.port")
t0=$(now_ms); rl -n "$FULL" inspect ct; t1=$(now_ms)
if [ "$RC" -eq 69 ] && grep -qx "redlock: node $FULL: connect timed out after 1.000s" "$T/err" && [ $((t1 - t0)) -lt 4000 ]; then
  ok "message: a connect that times out says so ($((t1 - t0)) ms)"
else nok "message: connect timeout" "status $RC after $((t1 - t0)) ms"; fi
rl -n "$FULL,127.0.0.1:$PORT0" acquire ct
[ "$RC" -eq 69 ] && grep -q "^redlock: node $FULL: \(connect timed out\|timed out (no answer within 200ms)\)" "$T/err" &&
  ok "message: acquire with a node whose connect times out: 69, timeout words" || nok "message: acquire, connect timeout" "status $RC"

# AUTH (78), unix sockets, ACL users and SELECT on a password-protected node
mkdir -p "$T/auth"
SOCK=$T/auth/r.sock
"$NODES_SH" start 1 "$T/auth" --requirepass 's3cr3t' --unixsocket "$SOCK" --unixsocketperm 700 >/dev/null ||
  nok "auth node starts"
APORT=$(cat "$T/auth/ports")
rl -n "127.0.0.1:$APORT" acquire a
[ "$RC" -eq 78 ] && grep -qx "redlock: node 127.0.0.1:$APORT: a password is required: NOAUTH Authentication required." "$T/err" &&
  ok "auth: no password gives 78: 'a password is required' and the server's words" || nok "auth: no password" "status $RC"
t0=$(now_ms); rl -n "redis://:wrong-pw@127.0.0.1:$APORT" -w 20s acquire a; t1=$(now_ms)
if [ "$RC" -eq 78 ] && ! grep -q wrong-pw "$T/err" && [ $((t1 - t0)) -lt 3000 ] &&
   grep -q "^redlock: node redis://:\*\*\*@127.0.0.1:$APORT: authentication refused: \(WRONGPASS\|ERR\) ..*" "$T/err"; then
  ok "auth: wrong password gives 78 at once with -w 20s; the node (password ***) and the server's words, password not echoed"
else nok "auth: wrong password" "status $RC after $((t1 - t0)) ms"; fi
WRONG_PW_MSG=$(grep '^redlock: node' "$T/err")
rl -n "redis://nobody:pw@127.0.0.1:$APORT" acquire a
[ "$RC" -eq 78 ] && grep -q "^redlock: node redis://nobody:\*\*\*@127.0.0.1:$APORT: authentication refused: " "$T/err" &&
  ok "auth: unknown ACL user gives 78 and names the user" || nok "auth: unknown ACL user" "status $RC"
t0=$(now_ms); rl -n "redis://:wrong-pw@127.0.0.1:$APORT,127.0.0.1:$PORT0,$DEAD" -w 20s run a -- true; t1=$(now_ms)
[ "$RC" -eq 78 ] && [ $((t1 - t0)) -lt 3000 ] && ok "auth: wrong password + a node down leave no quorum: 78 at once" ||
  nok "auth: wrong password + a node down" "status $RC after $((t1 - t0)) ms"
t0=$(now_ms); rl -n "redis://:s3cr3t@127.0.0.1:$APORT/99" -w 20s acquire a; t1=$(now_ms)
if [ "$RC" -eq 78 ] && [ $((t1 - t0)) -lt 3000 ] &&
   grep -qx "redlock: node redis://:\*\*\*@127.0.0.1:$APORT/99: SELECT 99 refused: ERR DB index is out of range" "$T/err"; then
  ok "SELECT refused (db 99 of 16): 78 at once with -w 20s, with the server's words"
else nok "SELECT refused" "status $RC after $((t1 - t0)) ms"; fi
SELECT_MSG=$(grep '^redlock: node' "$T/err")
rl -n "redis://:s3cr3t@127.0.0.1:$APORT/3" acquire -t 10s a; TOKEN=$(cat "$T/out")
v=$(timeout 5 redis-cli -p "$APORT" -a s3cr3t -n 3 --no-auth-warning GET a)
[ "$RC" -eq 0 ] && [ "$v" = "$TOKEN" ] && ok "redis://:pass@host:port/3 authenticates and SELECTs db 3" ||
  nok "redis:// URL with password and db" "status $RC, value '$v'"
rl -n "unix://:s3cr3t@$SOCK?db=3" inspect a
[ "$RC" -eq 0 ] && grep -q "held    ${TOKEN: -32:8}" "$T/out" && ok "unix:// URL with password and ?db=3" || nok "unix:// URL" "status $RC"
timeout 5 redis-cli -p "$APORT" -a s3cr3t --no-auth-warning ACL SETUSER locker on '>pw2' '~*' '+@all' >/dev/null
expect "ACL user: redis://user:pass@ releases" 0 -n "redis://locker:pw2@127.0.0.1:$APORT/3" release a "$TOKEN"
# a user without scripts: release / extend by token read PTTL and GET, then act
timeout 5 redis-cli -p "$APORT" -a s3cr3t --no-auth-warning ACL SETUSER plain on '>pw3' '~*' '+@all' '-@scripting' >/dev/null
NS="redis://plain:pw3@127.0.0.1:$APORT/3"
rl -n "$NS" acquire -t 10s ns; TOKEN=$(cat "$T/out")
rl -v -n "$NS" extend -t 20s ns "$TOKEN"
pttl=$(timeout 5 redis-cli -p "$APORT" -a s3cr3t -n 3 --no-auth-warning PTTL ns)
[ "$RC" -eq 0 ] && [ "${pttl:-0}" -gt 15000 ] && grep -q "scripts refused, using GET + compare" "$T/err" &&
  ok "no scripts (ACL): extend by token reads PTTL and GET, then PEXPIRE (PTTL $pttl ms)" ||
  nok "no scripts (ACL): extend by token" "status $RC, PTTL $pttl, $(cat "$T/err")"
expect "no scripts (ACL): release with a wrong token: 1" 1 -n "$NS" release ns 0123456789abcdef0123456789abcdef
expect "no scripts (ACL): release by token" 0 -n "$NS" release ns "$TOKEN"
v=$(timeout 5 redis-cli -p "$APORT" -a s3cr3t -n 3 --no-auth-warning EXISTS ns)
[ "$v" = "0" ] && ok "no scripts (ACL): the key is gone" || nok "no scripts (ACL): the key is gone" "EXISTS $v"
timeout 5 redis-cli -p "$APORT" -a s3cr3t --no-auth-warning CONFIG SET requirepass '' >/dev/null
expect "unix socket path as a node" 0 -n "$SOCK" run u -- true
"$NODES_SH" stop "$T/auth"

# a node that may evict keys (Redis as a cache: --maxmemory 2mb
# --maxmemory-policy allkeys-random) beside two plain ones: inspect shows
# each node's policy and warns; a fenced run does not count it (alone: 78
# at once, COMMAND not run), a plain run counts it with a warning, and
# --evicting refuse / count turn that around
mkdir -p "$T/evict"
"$NODES_SH" start 1 "$T/evict" --maxmemory 2mb --maxmemory-policy allkeys-random >/dev/null || nok "evict: node starts"
EV=127.0.0.1:$(cat "$T/evict/ports")
EV3="$EV,127.0.0.1:$PORT0,127.0.0.1:$PORT1"
rl -n "$EV3" inspect evk
if [ "$RC" -eq 1 ] && grep -qx "maxmemory-policy per node: allkeys-random (may evict keys), noeviction, noeviction" "$T/out" &&
   [ "$(grep -c '^redlock: warning: ' "$T/err")" -eq 1 ] &&
   grep -qx "redlock: warning: node $EV may evict any key (maxmemory-policy allkeys-random): a lock there can vanish before its TTL, and so can fence counters" "$T/err"; then
  ok "evict: inspect shows each node's maxmemory-policy and warns about the one that may evict"
else nok "evict: inspect shows the policies" "status $RC, $(tr '\n' '|' <"$T/out")"; fi
rl -n "$EV3" inspect --json evk
[ "$RC" -eq 1 ] && json_ok "d['nodes'][0]['maxmemory_policy']=='allkeys-random' and d['nodes'][0]['evicts']=='all'
                          and d['nodes'][1]['maxmemory_policy']=='noeviction' and d['nodes'][1]['evicts']=='none'" &&
  ok "evict: inspect --json has nodes[].maxmemory_policy and nodes[].evicts" || nok "evict: inspect --json" "$(cat "$T/out")"
t0=$(now_ms); rl -n "$EV" -w 20s run --fence evf -- echo ran; t1=$(now_ms)
if [ "$RC" -eq 78 ] && [ ! -s "$T/out" ] && [ $((t1 - t0)) -lt 3000 ] &&
   grep -qx "redlock: 'evf' not acquired: 1 of 1 nodes failed, a quorum needs 1" "$T/err" &&
   grep -qx "redlock: node $EV: may evict keys (maxmemory-policy allkeys-random): not counted for this lock (--evicting count to count it)" "$T/err" &&
   grep -q "^redlock: warning: node $EV may evict any key (maxmemory-policy allkeys-random): .*; not counted for this lock$" "$T/err"; then
  ok "evict: a fenced run on that node alone: 78 at once with -w 20s, COMMAND not run, the node and its policy named"
else nok "evict: a fenced run on that node alone" "status $RC after $((t1 - t0)) ms, out $(cat "$T/out")"; fi
rl -n "$EV3" run --fence evf -- sh -c 'echo "$REDLOCK_FENCE"'; f1=$(cat "$T/out")
rl -n "$EV3" run --fence evf -- sh -c 'echo "$REDLOCK_FENCE"'; f2=$(cat "$T/out")
[ "$RC" -eq 0 ] && [[ "$f1" =~ ^[0-9]+$ ]] && [[ "$f2" =~ ^[0-9]+$ ]] && [ "$f2" -gt "$f1" ] &&
  grep -q "^redlock: warning: node $EV may evict .*; not counted for this lock$" "$T/err" &&
  ok "evict: a fenced run beside two plain nodes holds on those ($f1, $f2), with the warning" ||
  nok "evict: a fenced run beside two plain nodes" "status $RC, fences '$f1' '$f2'"
rl -n "$EV" run evp -- echo ran
[ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = ran ] &&
  grep -qx "redlock: warning: node $EV may evict any key (maxmemory-policy allkeys-random): a lock there can vanish before its TTL, and so can fence counters; counted for this lock (--evicting refuse: not)" "$T/err" &&
  ok "evict: a plain run counts the node, with the warning" || nok "evict: a plain run counts the node" "status $RC"
expect "evict: acquire --evicting refuse on that node alone: 78" 78 -n "$EV" acquire --evicting refuse eva
rl -n "$EV" run --fence --evicting count evf -- sh -c 'echo "$REDLOCK_FENCE"'
[ "$RC" -eq 0 ] && [[ "$(cat "$T/out")" =~ ^[0-9]+$ ]] && ok "evict: run --fence --evicting count counts it" ||
  nok "evict: run --fence --evicting count" "status $RC"
rl -q -n "$EV" run evp -- true
[ "$RC" -eq 0 ] && [ ! -s "$T/err" ] && ok "evict: -q silences the warning" || nok "evict: -q silences the warning" "status $RC"
usage "--evicting takes refuse or count" run --evicting maybe evp -- true
usage "--evicting does not apply to inspect" inspect --evicting refuse evp
"$NODES_SH" stop "$T/evict"

# TLS: a node with a TLS port (and one that requires client certificates),
# certificates made for the test (tests/shared/tls_certs.sh)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p "$T/tls" "$T/tlsnodes" "$T/tlsreq" "$T/tls2" "$T/tls3"
TLS_OK=0
if "$ROOT/tests/shared/tls_certs.sh" "$T/tls"; then
  TLSARGS=(--tls-cert-file "$T/tls/server.crt" --tls-key-file "$T/tls/server.key" --tls-ca-cert-file "$T/tls/ca.crt")
  TP=$(free_port); TQ=$(free_port); T2=$(free_port); T3=$(free_port)
  "$NODES_SH" start 1 "$T/tlsnodes" --tls-port "$TP" "${TLSARGS[@]}" --tls-auth-clients no >/dev/null &&
    "$NODES_SH" start 1 "$T/tlsreq" --tls-port "$TQ" "${TLSARGS[@]}" --tls-auth-clients yes >/dev/null &&
    "$NODES_SH" start 1 "$T/tls2" --tls-port "$T2" "${TLSARGS[@]}" --tls-auth-clients no >/dev/null &&
    "$NODES_SH" start 1 "$T/tls3" --tls-port "$T3" "${TLSARGS[@]}" --tls-auth-clients no >/dev/null && TLS_OK=1
fi
if [ "$TLS_OK" = 1 ]; then
  PLAINP=$(cat "$T/tlsnodes/ports")
  CA=$T/tls/ca.crt
  rl -n "rediss://127.0.0.1:$TP" --tls-ca "$CA" run -t 2s tl -- sh -c 'echo inside'
  [ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = inside ] && ok "tls: run over rediss:// with --tls-ca" || nok "tls: run over rediss://" "status $RC"
  rl -n "127.0.0.1:$TP" --tls --tls-ca "$CA" acquire -t 10s tl; TOKEN=$(cat "$T/out")
  v=$(timeout 5 redis-cli -p "$PLAINP" GET tl)
  [ "$RC" -eq 0 ] && [ "$v" = "$TOKEN" ] && ok "tls: --tls on a host:port node acquires (the node holds the token)" ||
    nok "tls: --tls acquire" "status $RC, value '$v'"
  REDLOCK_NODES="rediss://127.0.0.1:$TP" rl --tls-ca "$T/tls/cadir" inspect tl
  [ "$RC" -eq 0 ] && grep -q "held    ${TOKEN: -32:8}" "$T/out" && grep -q "rediss://127.0.0.1:$TP" "$T/out" &&
    ok "tls: REDLOCK_NODES with rediss://, --tls-ca a hashed directory" || nok "tls: REDLOCK_NODES rediss://" "status $RC"
  expect "tls: release by token" 0 -n "rediss://127.0.0.1:$TP" --tls-ca "$CA" --tls-server-name localhost release tl "$TOKEN"
  TLS3="rediss://127.0.0.1:$TP,rediss://127.0.0.1:$T2,rediss://127.0.0.1:$T3"
  rl -n "$TLS3" --tls-ca "$CA" run -t 300ms tl3 -- sh -c 'sleep 0.5; echo done'
  [ "$RC" -eq 0 ] && [ "$(cat "$T/out")" = done ] && ok "tls: run on 3 TLS nodes, renewed past the ttl" ||
    nok "tls: run on 3 TLS nodes" "status $RC"
  rl -n "$TLS3" --tls-ca "$CA" acquire -t 10s tl3; TOKEN=$(cat "$T/out")
  held=0; for f in tlsnodes tls2 tls3; do
    [ "$(timeout 5 redis-cli -p "$(cat "$T/$f/ports")" GET tl3)" = "$TOKEN" ] && held=$((held + 1)); done
  expect "tls: 3 TLS nodes: contended while held" 75 -n "$TLS3" --tls-ca "$CA" --no-wait acquire tl3
  [ "$held" -eq 3 ] && ok "tls: acquire on 3 TLS nodes: all 3 hold the token" || nok "tls: acquire on 3 TLS nodes" "held on $held"
  expect "tls: release on 3 TLS nodes" 0 -n "$TLS3" --tls-ca "$CA" release tl3 "$TOKEN"
  # TLS mistakes: each fails at once (no retry cures it) and says what to change
  fast78 "tls: an unknown CA" "^redlock: node rediss://127.0.0.1:$TP: TLS handshake: certificate refused: .*\(trust the CA that signed it: --tls-ca FILE\)$" \
    -n "rediss://127.0.0.1:$TP" --tls-ca "$T/tls/other-ca.crt" -w 30s acquire tl
  fast78 "tls: an unknown CA on 3 TLS nodes (run)" "^redlock: node rediss://127.0.0.1:$T3: .*--tls-ca FILE\)$" \
    -n "$TLS3" --tls-ca "$T/tls/other-ca.crt" -w 30s run tl -- true
  fast78 "tls: a wrong --tls-server-name" "^redlock: node rediss://127.0.0.1:$TP: TLS handshake: certificate refused: hostname mismatch \(the certificate is for another name: --tls-server-name NAME\)$" \
    -n "rediss://127.0.0.1:$TP" --tls-ca "$CA" --tls-server-name redis.example -w 30s acquire tl
  expect "tls: --tls-insecure-skip-verify accepts an unknown CA" 0 -n "rediss://127.0.0.1:$TP" --tls-ca "$T/tls/other-ca.crt" \
    --tls-insecure-skip-verify run tl -- true
  fast78 "tls: no client certificate where one is required" "^redlock: node rediss://127.0.0.1:$TQ: TLS .*certificate required \(the server asks for a client certificate: --tls-cert FILE --tls-key FILE\)$" \
    -n "rediss://127.0.0.1:$TQ" --tls-ca "$CA" -w 30s acquire tl
  expect "tls: --tls-cert / --tls-key where required" 0 -n "rediss://127.0.0.1:$TQ" --tls-ca "$CA" \
    --tls-cert "$T/tls/client.crt" --tls-key "$T/tls/client.key" run tl -- true
  rl -n "rediss://127.0.0.1:$TP" --tls-ca "$CA" --tls-cert "$T/tls/client.crt" --tls-key "$T/tls/server.key" acquire tl
  [ "$RC" -eq 78 ] && grep -q "cannot load the TLS files" "$T/err" &&
    ok "tls: a key that does not match the certificate: 78, says so" || nok "tls: mismatched key" "status $RC"
  "$FAKE" 20 "$T/fake-tls.port" &
  wait_file "$T/fake-tls.port"; FT=$(cat "$T/fake-tls.port")
  fast78 "tls: a server that answers the handshake in plain text" "^redlock: node rediss://127.0.0.1:$FT: TLS handshake: .*\(is this port TLS\? a plain-text port is a redis:// node\)$" \
    -n "rediss://127.0.0.1:$FT" --tls-ca "$CA" -w 30s acquire tl
  # a plain-text Redis is silent to a handshake, a TLS port resets plain
  # text: the tool asks the port in the other protocol
  fast78 "tls: a plain-text Redis port behind rediss://" "^redlock: node rediss://127.0.0.1:$PLAINP: timed out: the port answers in plain text, not TLS: is this port TLS\? \(a plain-text port is a redis:// node: no rediss://, no --tls\)$" \
    -n "rediss://127.0.0.1:$PLAINP" --tls-ca "$CA" -w 30s acquire tl
  fast78 "tls: --tls on a plain-text Redis port (run)" "^redlock: node 127.0.0.1:$PLAINP: .*is this port TLS\?" \
    -n "127.0.0.1:$PLAINP" --tls --tls-ca "$CA" -w 30s run tl -- true
  fast78 "tls: plain text to a TLS port" "^redlock: node 127.0.0.1:$TP: connection lost: the port speaks TLS, not plain text: is this port TLS\? \(then rediss:// or --tls\)$" \
    -n "127.0.0.1:$TP" -w 30s acquire tl
  fast78 "tls: plain text to 2 TLS ports of 3 (run)" "^redlock: node 127.0.0.1:$T2: connection lost: the port speaks TLS" \
    -n "127.0.0.1:$TP,127.0.0.1:$T2,127.0.0.1:$PLAINP" -w 30s run tl -- true
  grep -q "^redlock: 'tl' not acquired: 2 of 3 nodes failed, a quorum needs 2$" "$T/err" &&
    ok "tls: plain text to 2 TLS ports of 3: the summary counts 2 failed" || nok "tls: 2 of 3 summary" "$(cat "$T/err")"
  if [ -n "$VALGRIND" ]; then
    timeout -k 2 60 $VALGRIND "$BIN" -n "rediss://127.0.0.1:$TP" --tls-ca "$CA" run -t 1s tlv -- true >"$T/out" 2>"$T/err"; a=$?
    timeout -k 2 60 $VALGRIND "$BIN" -n "rediss://127.0.0.1:$TP" --tls-ca "$T/tls/other-ca.crt" --no-wait acquire tlv >"$T/out" 2>"$T/err"; b=$?
    timeout -k 2 60 $VALGRIND "$BIN" -n "127.0.0.1:$TP" acquire tlv >"$T/out" 2>"$T/err"; c=$? # the port asked in TLS
    [ "$a$b$c" = "07878" ] && ok "valgrind: run over TLS, a refused certificate, a TLS port asked in TLS: 0 errors, 0 leaks" ||
      nok "valgrind over TLS" "statuses $a $b $c (99 = valgrind error)"
  fi
  for f in tlsnodes tlsreq tls2 tls3; do "$NODES_SH" stop "$T/$f"; done
else
  nok "tls: certificates and TLS nodes (openssl, redis-server with TLS)"
fi

# ---------------------------------------------------------------- restarts
# A node that may have lost keys at a restart counts no grant until the
# lock's ttl (--max-ttl if longer) has passed since then (redlock.h
# section 4, Restarts). The nodes here keep no keys across restarts
# (--volatile): what the rule is for. A client that first sees such a
# node counts from its start as INFO's uptime_in_seconds tells it (the
# library allows for its whole seconds): no grant before the ttl.

# node_uptime PORT: the node's uptime_in_seconds
node_uptime() { timeout 5 redis-cli -p "$1" INFO server | sed -n 's/^uptime_in_seconds:\([0-9]*\).*/\1/p'; }

# Fresh servers: for one ttl after they start, no grant counts (the
# documented cost): refused at once with 75, words naming each node, then
# granted once they have been up for the ttl, never before.
t0=$(now_ms)
FRESH=$("$NODES_SH" start --volatile 3 "$T/fresh") || nok "restart: fresh nodes start"
# (a ttl of 5s for the refusal: the machine may be slow to get there)
rl -n "$FRESH" -t 5s --no-wait acquire fr
named=0
for p in $(cat "$T/fresh/ports"); do
  grep -Eq "^redlock: node 127\.0\.0\.1:$p: up (less than 1s|[0-9]+s only), without keeping keys across restarts \(no appendonly with appendfsync always\) and may have lost keys then: its grants count 5\.000s \(the lock's ttl\) after that, in about " "$T/err" &&
    named=$((named + 1))
done
[ "$RC" -eq 75 ] && [ ! -s "$T/out" ] && [ "$named" -ge 2 ] &&
  grep -Eq "^redlock: 'fr' not acquired: [23] of 3 nodes restarted recently and may have lost keys, their grants do not count yet \(a quorum needs 2\)$" "$T/err" &&
  ok "restart: fresh servers that keep no keys: acquire --no-wait gives 75, naming $named nodes, when their grants count" ||
  nok "restart: fresh servers: 75 naming the nodes" "status $RC, $named nodes named"
rl -n "$FRESH" -t 1s --max-ttl 30s --no-wait acquire fr
[ "$RC" -eq 75 ] && grep -q "its grants count 30\.000s (--max-ttl) after that" "$T/err" &&
  ok "restart: --max-ttl 30s longer than the ttl: the bound is 30s" || nok "restart: --max-ttl is the bound" "status $RC"
rl -n "$FRESH" inspect --json fr
json_ok "all(n['durable'] is False and n['restart']['why']=='uptime' and 0 <= n['restart']['ago_ms'] < 60000 and
          len(n['run_id'])==40 and n['uptime_s'] < 60 for n in d['nodes'])" &&
  ok "restart: inspect --json: fresh nodes are not durable, may have lost keys at their start" ||
  nok "restart: inspect --json of fresh nodes" "$(head -c 400 "$T/out")"
rl inspect --json fr
json_ok "all(n['durable'] is True and n['restart'] is None and len(n['run_id'])==40 and n['uptime_s'] >= 0 for n in d['nodes'])" &&
  ok "restart: inspect --json: durable nodes (appendonly, appendfsync always) may not have lost keys" ||
  nok "restart: inspect --json of durable nodes" "$(head -c 400 "$T/out")"
rl -n "$FRESH" inspect fr
[ "$(grep -c '^restarts per node: not durable (up [0-9a-z ]*s, may have lost keys at its start); not durable (up [0-9a-z ]*s, may have lost keys at its start); not durable (up [0-9a-z ]*s, may have lost keys at its start)$' "$T/out")" = 1 ] &&
  ok "restart: inspect's table says so per node" || nok "restart: inspect's restarts line" "$(tail -n 1 "$T/out")"
rl -n "$FRESH" -t 2s -w 10s acquire fr; t1=$(now_ms)
[ "$RC" -eq 0 ] && [ $((t1 - t0)) -ge 2000 ] &&
  ok "restart: fresh servers grant once up for the ttl, not before ($((t1 - t0)) ms after their start began)" ||
  nok "restart: fresh servers grant after the ttl" "status $RC after $((t1 - t0)) ms"
"$NODES_SH" stop "$T/fresh"

# The scenario of a restart under a holder: A holds NAME (ttl 3s, renewed)
# on three nodes up longer than that; two of them are killed and restarted
# empty. B at once: refused (75), never granted while A may count on
# NAME; B waiting: granted, but only the ttl after the restart. A learns
# the restart (a new run_id) and loses the lock (77); its COMMAND is gone
# before B's runs.
if [ -n "${RESTART_NODES:-}" ]; then
  P1=$(sed -n 2p "$T/restart/ports"); P2=$(sed -n 3p "$T/restart/ports")
  for _ in $(seq 1 60); do # bounded: they started with the tests above
    up=1; for p in $(cat "$T/restart/ports"); do [ "$(node_uptime "$p")" -ge 5 ] 2>/dev/null || up=0; done
    [ $up = 1 ] && break; sleep 0.1
  done
  f=$T/rs
  "$BIN" -n "$RESTART_NODES" -v -t 3s run rs -- sh -c "echo up >'$f.up'; while :; do echo tick >>'$f.log'; sleep 0.05; done" \
    >/dev/null 2>"$f.err" &
  pa=$!
  if wait_file "$f.up"; then
    rl -n "$RESTART_NODES" inspect rs; held=$RC
    t0=$(now_ms)
    "$NODES_SH" restart --volatile "$T/restart" 1 && "$NODES_SH" restart --volatile "$T/restart" 2 || nok "restart: nodes restart"
    rl -n "$RESTART_NODES" -t 3s --no-wait run rs -- sh -c "echo B-now >>'$f.log'"
    # (the outcome is decided by the first two answers: one or both of the
    # restarted nodes are named)
    named=$(grep -Ec "^redlock: node 127\.0\.0\.1:($P1|$P2): up (less than 1s|[0-9]+s only), without keeping keys across restarts .* its grants count 3\.000s \(the lock's ttl\) after that" "$T/err")
    [ "$held" -eq 0 ] && [ "$RC" -eq 75 ] && ! grep -q B-now "$f.log" && [ "$named" -ge 1 ] &&
      grep -Eq "^redlock: 'rs' not acquired: $named of 3 nodes restarted recently and may have lost keys, their grants do not count yet(; 1 held by another token)? \(a quorum needs 2\)$" "$T/err" &&
      ok "restart: 2 of 3 nodes restarted empty under a holder: B at once is refused (75), naming $named of them" ||
      nok "restart: B at once is refused" "A held: $held (want 0); B: status $RC (want 75)"
    rl -n "$RESTART_NODES" -v -t 3s -w 15s run rs -- sh -c "echo B-in >>'$f.log'; date +%s%3N"
    tb=$(cat "$T/out")
    [ "$RC" -eq 0 ] && [ -n "$tb" ] && [ $((tb - t0)) -ge 3000 ] &&
      ok "restart: B waiting is granted after the bound since the restart, not before ($((tb - t0)) ms after it began)" ||
      nok "restart: B granted after the ttl" "status $RC, B in $((${tb:-0} - t0)) ms after the restart began"
    grep -q "^redlock: node 127.0.0.1:$P1: up .*, without keeping keys across restarts" "$T/err" &&
      ok "restart: -v reports a node that may have lost keys when its connection opens" ||
      nok "restart: -v reports the restarted node"
    wait $pa; ra=$?
    [ "$ra" -eq 77 ] && [ "$(sed -n '/B-in/,$p' "$f.log" | grep -c tick)" -eq 0 ] &&
      grep -q "^redlock: node 127.0.0.1:$P1: restarted .* ago (a new run_id: another server process)" "$f.err" &&
      ok "restart: A sees the new run_id and loses the lock (77); no tick of its COMMAND after B's entry" ||
      nok "restart: A loses the lock, never beside B" "A status $ra (want 77), ticks after B: $(sed -n '/B-in/,$p' "$f.log" | grep -c tick)" \
        "$(tr '\n' '|' <"$f.err" | head -c 400)"
  else
    nok "restart: A holds the lock"; kill "$pa" 2>/dev/null; wait "$pa" 2>/dev/null
  fi
  "$NODES_SH" stop "$T/restart"
fi
usage "--max-ttl does not apply to inspect" --max-ttl 10s inspect x
usage "--max-ttl negative" -n 127.0.0.1:6379 --max-ttl -1s acquire x

# valgrind: acquire, inspect, extend, release, run (0 errors, 0 leaks)
if [ -n "$VALGRIND" ]; then
  # (--node-timeout 2s: valgrind is slow, and on a loaded machine its
  # first answers can take longer than 200 ms)
  vg() { timeout -k 2 60 $VALGRIND "$BIN" --node-timeout 2s "$@" >"$T/out" 2>"$T/err"; RC=$?; }
  vg acquire -t 10s vgl; a=$RC; TOKEN=$(cat "$T/out")
  vg inspect vgl; b=$RC
  vg extend vgl "$TOKEN"; c=$RC
  vg release vgl "$TOKEN"; d=$RC
  vg --log-format json --stats run -t 1s vgl -- sh -c 'sleep 0.5; exit 5'; e=$RC
  vg --log-format json -n "$T/missing.sock" acquire vgl; f=$RC
  if [ "$a$b$c$d$e$f" = "0000569" ]; then ok "valgrind: acquire, inspect, extend, release, run (JSON log, --stats), unreachable (JSON log): 0 errors, 0 leaks"
  else nok "valgrind" "statuses $a $b $c $d $e $f (99 = valgrind error)"; fi
fi

# A durable node (appendonly yes, appendfsync always: the tests' nodes)
# killed and restarted keeps its keys, and counts at once for a client
# that first sees it: its keys outlive the restart.
rl acquire -t 20s dur; TOKEN=$(cat "$T/out")
PORT2=$(sed -n 3p "$T/nodes/ports")
if "$NODES_SH" restart "$T/nodes" 2; then
  rl --no-wait acquire dur2; T2=$(cat "$T/out"); rc2=$RC
  rl inspect --json dur
  [ "$(timeout 5 redis-cli -p "$PORT2" GET dur)" = "$TOKEN" ] && [ "$rc2" -eq 0 ] &&
    json_ok "d['nodes'][2]['durable'] is True and d['nodes'][2]['restart'] is None and d['nodes'][2]['uptime_s'] < 30 and d['held_on']==3" &&
    ok "restart: a durable node killed and restarted keeps its keys and counts at once" ||
    nok "restart: a durable node keeps its keys and counts at once" "acquire status $rc2, $(head -c 300 "$T/out")"
  rl release dur "$TOKEN"; rl release dur2 "$T2"
else nok "restart: a durable node restarts"; fi

# ---------------------------------------------------------------- replicas
# --wait-replicas N[/T] (redlock.h section 4, Deployments): a primary and
# one replica. WAIT 1 grants and the replica has the token when acquire
# returns; WAIT 2 (one replica only) is not counted: 69, the node named,
# and no key left on the primary.
# (a replica that has just synced gets writes once it has acknowledged the
# sync, up to a second later: a write and a WAIT on one connection first)
WRP=$("$NODES_SH" start 1 "$T/wrp" --repl-diskless-sync-delay 0) || nok "replicas: the primary starts"
"$NODES_SH" start 1 "$T/wrr" --replicaof 127.0.0.1 "${WRP#127.0.0.1:}" >/dev/null || nok "replicas: the replica starts"
WRR=$(cat "$T/wrr/ports")
for _ in $(seq 1 100); do # bounded: 10 s
  [ "$(printf 'SET wr:probe 1\nWAIT 1 100\n' | timeout 5 redis-cli -p "${WRP#127.0.0.1:}" | tail -n 1)" = 1 ] && break
  sleep 0.1
done
rl -n "$WRP" --wait-replicas 1 acquire wr1
[ "$RC" -eq 0 ] && [ "$(timeout 5 redis-cli -p "$WRR" GET wr1)" = "$(cat "$T/out")" ] &&
  ok "replicas: --wait-replicas 1 on a primary with one replica acquires; the replica has the token" ||
  nok "replicas: --wait-replicas 1 acquires" "status $RC, $(head -c 200 "$T/err")"
rl -n "$WRP" --wait-replicas 2/100ms --no-wait acquire wr2
[ "$RC" -eq 69 ] && [ "$(timeout 5 redis-cli -p "${WRP#127.0.0.1:}" EXISTS wr2)" = 0 ] &&
  grep -qx "redlock: node $WRP: fewer than 2 replicas acknowledged the write within 100ms (WAIT), or WAIT was refused: not counted (--wait-replicas)" "$T/err" &&
  ok "replicas: --wait-replicas 2/100ms with one replica: 69, the node named, no key left" ||
  nok "replicas: --wait-replicas 2 refused" "status $RC, $(head -c 300 "$T/err")"
rl -n "$WRP" --wait-replicas 1 run -t 1s wr3 -- sleep 1.2
[ "$RC" -eq 0 ] && ok "replicas: run --wait-replicas 1 renews past its ttl" || nok "replicas: run renews" "status $RC"
usage "--wait-replicas not a number" -n "$WRP" --wait-replicas x acquire wr4
usage "--wait-replicas timeout 0" -n "$WRP" --wait-replicas 1/0 acquire wr4
usage "--wait-replicas does not apply to inspect" --wait-replicas 1 inspect wr4
"$NODES_SH" stop "$T/wrr"
"$NODES_SH" stop "$T/wrp"

# ---------------------------------------------------------------- Sentinel
# A Sentinel-managed group (a primary, a replica, three sentinels:
# tests/tool/sentinel_group.c) as one node: redis-sentinel://s1+s2+s3/NAME.
# The tool finds the primary through the sentinels; during SENTINEL
# FAILOVER, A (run, ttl 2s) sees the new primary at its next renewal and
# loses the lock (77); B, a new client, is refused at once (75) and,
# waiting, gets the lock after A's COMMAND is gone.
if skipped sentinel; then :
elif [ -n "${GROUP_BIN:-}" ]; then
  export BIN T
  rm -f "$T"/sg.*
  "$GROUP_BIN" rl-tool '
    "$BIN" -n "$SNODES" acquire sk1 >"$T/sg.tok" 2>"$T/sg.acq.err"; echo $? >"$T/sg.acq.rc"
    "$BIN" -n "$SNODES" inspect --json sk1 >"$T/sg.insp" 2>/dev/null
    redis-cli -p "$PRIMARY" GET sk1 >"$T/sg.primary"
    "$BIN" -n "$SNODES" release sk1 "$(cat "$T/sg.tok")" 2>/dev/null; echo $? >"$T/sg.rel.rc"
    ( timeout 30 "$BIN" -n "$SNODES" -v -t 2s run sk2 -- sh -c "echo up >\"$T/sg.up\"; while :; do echo tick >>\"$T/sg.log\"; sleep 0.05; done" \
        2>"$T/sg.a.err"; echo $? >"$T/sg.a.rc" ) &
    for i in $(seq 1 100); do [ -f "$T/sg.up" ] && break; sleep 0.05; done' '
    "$BIN" -n "$SNODES" -t 2s --no-wait acquire sk2 >/dev/null 2>"$T/sg.b.err"; echo $? >"$T/sg.b.rc"
    "$BIN" -n "$SNODES" -t 2s -w 15s run sk2 -- sh -c "echo B-in >>\"$T/sg.log\"" 2>"$T/sg.b2.err"; echo $? >"$T/sg.b2.rc"
    for i in $(seq 1 100); do [ -f "$T/sg.a.rc" ] && break; sleep 0.1; done' 2>"$T/sg.err"
  [ "$(cat "$T/sg.acq.rc" 2>/dev/null)" = 0 ] && [ -s "$T/sg.tok" ] && [ "$(cat "$T/sg.primary")" = "$(cat "$T/sg.tok")" ] &&
    grep -q '"held_on": *1' "$T/sg.insp" && [ "$(cat "$T/sg.rel.rc")" = 0 ] &&
    ok "sentinel: a redis-sentinel:// node: acquire puts the token on the primary, inspect shows it held, release" ||
    nok "sentinel: acquire, inspect, release through the sentinels" "acquire $(cat "$T/sg.acq.rc" 2>/dev/null): $(head -c 200 "$T/sg.acq.err"); $(cat "$T/sg.err")"
  [ "$(cat "$T/sg.b.rc" 2>/dev/null)" = 75 ] &&
    ok "sentinel: after SENTINEL FAILOVER, B at once is refused (75)" ||
    nok "sentinel: B at once after the failover" "status $(cat "$T/sg.b.rc" 2>/dev/null), $(head -c 300 "$T/sg.b.err")"
  [ "$(cat "$T/sg.a.rc" 2>/dev/null)" = 77 ] && grep -q "failed over to another server" "$T/sg.a.err" &&
    [ "$(cat "$T/sg.b2.rc" 2>/dev/null)" = 0 ] && [ "$(sed -n '/B-in/,$p' "$T/sg.log" | grep -c tick)" = 0 ] &&
    ok "sentinel: A sees the failover at its renewal and loses the lock (77); B waiting gets it, no tick of A after B's entry" ||
    nok "sentinel: A loses the lock, B gets it after" "A: $(cat "$T/sg.a.rc" 2>/dev/null), B waiting: $(cat "$T/sg.b2.rc" 2>/dev/null), $(tail -n 3 "$T/sg.a.err" | tr '\n' '|')"
else
  nok "sentinel: GROUP_BIN (tests/tool/sentinel_group.c) not given"
fi
# ---------------------------------------------------------------- Cluster
# A 3-master Redis Cluster (tests/tool/cluster.c) as one node:
# redis-cluster://m1+m2+m3. acquire puts the token on the master of the
# key's slot only; inspect shows it held on the one node; release; `run`
# on a key of each master; a fenced run needs a {hash tag} in NAME (64,
# saying so), and with one it gets a fence. TLS clusters are refused (64).
if skipped cluster; then :
elif [ -n "${CLUSTER_BIN:-}" ]; then
  export BIN T
  rm -f "$T"/cl.*
  "$CLUSTER_BIN" '
    "$BIN" -n "$CNODES" acquire ck1 >"$T/cl.tok" 2>"$T/cl.acq.err"; echo $? >"$T/cl.acq.rc"
    "$BIN" -n "$CNODES" inspect --json ck1 >"$T/cl.insp" 2>/dev/null
    for p in $PORT0 $PORT1 $PORT2; do redis-cli -p "$p" GET ck1; done >"$T/cl.get"
    "$BIN" -n "$CNODES" release ck1 "$(cat "$T/cl.tok")" 2>/dev/null; echo $? >"$T/cl.rel.rc"
    redis-cli -p "$PORT2" GET ck1 >"$T/cl.after"
    for k in a b c d e f; do "$BIN" -n "$CNODES" -t 2s run "run-$k" -- sh -c "echo in-$k" >>"$T/cl.run" 2>>"$T/cl.run.err" || echo "fail $k" >>"$T/cl.run"; done
    "$BIN" -n "$CNODES" --fence run fk -- true 2>"$T/cl.fence.err"; echo $? >"$T/cl.fence.rc"
    "$BIN" -n "$CNODES" --fence run "{fk}" -- sh -c "echo \$REDLOCK_FENCE" >"$T/cl.fence2" 2>&1; echo $? >"$T/cl.fence2.rc"' 2>"$T/cl.err"
  [ "$(cat "$T/cl.acq.rc" 2>/dev/null)" = 0 ] && [ -s "$T/cl.tok" ] && [ "$(grep -c "^$(cat "$T/cl.tok")\$" "$T/cl.get")" = 1 ] &&
    [ "$(grep -c '^MOVED' "$T/cl.get")" = 2 ] && grep -q '"held_on": *1' "$T/cl.insp" && [ "$(cat "$T/cl.rel.rc")" = 0 ] &&
    [ -z "$(tr -d '\n' <"$T/cl.after")" ] &&
    ok "cluster: a redis-cluster:// node: acquire puts the token on the key's master only, inspect shows it held, release" ||
    nok "cluster: acquire, inspect, release on a cluster" "acquire $(cat "$T/cl.acq.rc" 2>/dev/null): $(head -c 200 "$T/cl.acq.err"); $(head -c 300 "$T/cl.get" | tr '\n' '|'); $(cat "$T/cl.err")"
  [ "$(grep -c '^in-' "$T/cl.run" 2>/dev/null)" = 6 ] &&
    ok "cluster: run on six keys runs each COMMAND" ||
    nok "cluster: run on six keys" "$(tr '\n' '|' <"$T/cl.run" 2>/dev/null) $(head -c 300 "$T/cl.run.err" 2>/dev/null)"
  [ "$(cat "$T/cl.fence.rc" 2>/dev/null)" = 64 ] && grep -q "hash tag" "$T/cl.fence.err" &&
    [ "$(cat "$T/cl.fence2.rc" 2>/dev/null)" = 0 ] && grep -q '^[1-9][0-9]*$' "$T/cl.fence2" &&
    ok "cluster: --fence needs a {hash tag} in NAME (64, saying so); with one, COMMAND gets a fence" ||
    nok "cluster: --fence on a cluster" "untagged $(cat "$T/cl.fence.rc" 2>/dev/null): $(head -c 200 "$T/cl.fence.err"); tagged $(cat "$T/cl.fence2.rc" 2>/dev/null): $(head -c 200 "$T/cl.fence2")"
else
  nok "cluster: CLUSTER_BIN (tests/tool/cluster.c) not given"
fi
rl -n redis-cluster://127.0.0.1:7000 --wait-replicas 1 acquire cl
[ "$RC" -eq 64 ] && grep -q "wait-replicas does not go with a cluster node" "$T/err" &&
  ok "cluster: --wait-replicas with a cluster node is refused (64), saying so" || nok "cluster: --wait-replicas refused" "status $RC"
# the same over TLS: a rediss-cluster:// node on a TLS cluster (tls-cluster)
if [ -n "${CLUSTER_BIN:-}" ] && [ "$TLS_OK" = 1 ] && [[ ",${TOOL_SKIP:-}," != *,cluster,* ]]; then
  CLUSTER_TLS_DIR="$T/tls" "$CLUSTER_BIN" '
    "$BIN" -n "$CNODES" --tls-ca "$T/tls/ca.crt" acquire tck >"$T/tcl.tok" 2>"$T/tcl.err"; echo $? >"$T/tcl.rc"
    for p in $PORT0 $PORT1 $PORT2; do redis-cli -p "$p" GET tck; done >"$T/tcl.get"
    "$BIN" -n "$CNODES" --tls-ca "$T/tls/ca.crt" release tck "$(cat "$T/tcl.tok")" 2>>"$T/tcl.err"; echo $? >>"$T/tcl.rc"
    "$BIN" -n "$CNODES" --tls-ca "$T/tls/other-ca.crt" acquire tck2 2>"$T/tcl.bad"; echo $? >"$T/tcl.badrc"' 2>>"$T/tcl.err"
  [ "$(tr '\n' ' ' <"$T/tcl.rc" 2>/dev/null)" = "0 0 " ] && [ -s "$T/tcl.tok" ] &&
    [ "$(grep -c "^$(cat "$T/tcl.tok")\$" "$T/tcl.get")" = 1 ] &&
    ok "cluster: a rediss-cluster:// node: acquire puts the token on the key's master over TLS, release" ||
    nok "cluster: rediss-cluster://" "$(tr '\n' ' ' <"$T/tcl.rc" 2>/dev/null): $(head -c 300 "$T/tcl.err")"
  [ "$(cat "$T/tcl.badrc" 2>/dev/null)" != 0 ] && grep -q "certificate" "$T/tcl.bad" &&
    ok "cluster: rediss-cluster:// with another CA is refused, saying why" ||
    nok "cluster: rediss-cluster:// wrong CA" "$(cat "$T/tcl.badrc" 2>/dev/null): $(head -c 300 "$T/tcl.bad")"
fi

echo "# tool tests: $PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
