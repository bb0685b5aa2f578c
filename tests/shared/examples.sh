#!/usr/bin/env bash
# The example programs (built by `make examples`), each held to one shape:
#   * --help: the usage on stdout, nothing on stderr, status 0; a bad
#     command line (an unknown option, two arguments) and a bad node list:
#     the usage or the parser's words on stderr, nothing on stdout, 64;
#   * the nodes: the argument, else $REDLOCK_NODES, else 127.0.0.1:6379 —
#     an argument naming a dead node wins over a live $REDLOCK_NODES (the
#     program fails within seconds), $REDLOCK_NODES alone takes and releases
#     the lock on the node it names (whose connection count must grow),
#     and with neither the program uses 127.0.0.1:6379;
#   * it links only the libraries it needs: the NEEDED entries of the binary
#     (linked with --no-as-needed: what its rule names) are among the ones
#     allowed below, and include the adapter's own.
# Nodes are redis-servers started here (stopped by PID), durable as a
# client wants them to grant at once (redlock.h section 4, Restarts: a node
# that may lose its keys at a restart counts no grant for a ttl after it
# starts): --appendonly yes --appendfsync always, their data in a temp dir
# under /dev/shm when that is writable (fsync costs nothing there), else in
# the temp dir of the logs. Where a private network namespace can be had
# (unshare -rn), the whole check runs inside one, so that the server on
# 127.0.0.1:6379 that the default needs is ours; elsewhere that check is
# skipped ("# skip", counted neither way). The shell example nested_run.sh is checked
# too when no EXAMPLE is named (--help, on $REDLOCK_NODES and on the
# default). The README's quick start: tests/docs/test_snippets.sh.
# Usage: tests/shared/examples.sh BUILD_DIR [EXAMPLE...]
set -u
if [ -z "${EXAMPLES_NETNS:-}" ] && unshare -rn true 2>/dev/null; then
  EXAMPLES_NETNS=1 exec unshare -rn "$0" "$@"
fi
build=${1:-build}
shift
examples=${*:-example_socket example_poll_loop example_stats hiredis_sync libev_async fenced_write}
status=0
dir=$(mktemp -d)
data=$dir
if [ -d /dev/shm ] && [ -w /dev/shm ]; then data=$(mktemp -d /dev/shm/redlock-examples.XXXXXX) || data=$dir; fi
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir" "$data"' EXIT
if [ -n "${EXAMPLES_NETNS:-}" ]; then
  PATH=$PATH:/usr/sbin:/sbin ip link set lo up || { echo "not ok examples: no loopback in the namespace"; exit 1; }
fi

# The libraries each example may link besides libc (pthread: where the C
# library still has it apart), the first one it must.
allowed() {
  case $1 in
    example_socket) echo "- libpthread" ;; # the watchdog thread
    example_poll_loop|example_stats) echo "-" ;;
    hiredis_sync|fenced_write) echo "libhiredis libpthread" ;;
    libev_async) echo "libhiredis libev" ;;
  esac
}

# start PORT: a durable redis-server of ours on 127.0.0.1:PORT (PID in $pids)
start() {
  mkdir -p "$dir/$1" "$data/$1"
  redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync always --dir "$data/$1" \
    >"$dir/$1/log" 2>&1 &
  pids="$pids $!"
  for _ in $(seq 50); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "not ok examples: redis-server on port $1 did not start: $(tail -c 300 "$dir/$1/log")"
  exit 1
}
# connections the server on port $1 had since the last call (CONFIG
# RESETSTAT), this question's own not counted
conns() {
  redis-cli -p "$1" info stats | sed -n 's/^total_connections_received:\([0-9]*\).*/\1/p' | { read -r n; echo $((n - 1)); }
  redis-cli -p "$1" config resetstat >/dev/null
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start "$port"
[ -n "${EXAMPLES_NETNS:-}" ] && start 6379

# run NAME ARGS...: the example's status in $rc, its output in $dir/out and $dir/err
run() {
  timeout 30 "$build/$1" "${@:2}" >"$dir/out" 2>"$dir/err"
  rc=$?
}
bad() { echo "not ok example $1: $(printf '%s' "$2" | tr '\n' ' ')"; status=1; }

for ex in $examples; do
  bin="$build/$ex"
  if [ ! -x "$bin" ]; then bad "$ex" "not built"; continue; fi

  REDLOCK_NODES=127.0.0.1:1 run "$ex" --help
  if [ "$rc" -eq 0 ] && grep -q '^usage: ' "$dir/out" && grep -q 'REDLOCK_NODES' "$dir/out" &&
     grep -q '127\.0\.0\.1:6379' "$dir/out" && [ ! -s "$dir/err" ]; then
    echo "ok example $ex --help: the usage (and the default nodes) on stdout, status 0"
  else bad "$ex" "--help: status $rc, stdout '$(head -c 100 "$dir/out")', stderr '$(head -c 100 "$dir/err")'"; fi

  usage_ok=1
  for args in "--bogus" "127.0.0.1:$port 127.0.0.1:$port"; do
    # shellcheck disable=SC2086 # two words on purpose
    run "$ex" $args
    if [ "$rc" -ne 64 ] || ! grep -q '^usage: ' "$dir/err" || [ -s "$dir/out" ]; then
      bad "$ex" "bad usage '$args': status $rc, stderr '$(head -c 100 "$dir/err")'"; usage_ok=0
    fi
  done
  run "$ex" "127.0.0.1:$port,h:0"
  if [ "$rc" -ne 64 ] || ! grep -q "bad node 'h:0': port must be 1..65535" "$dir/err" || [ -s "$dir/out" ]; then
    bad "$ex" "a bad node list: status $rc, stderr '$(head -c 100 "$dir/err")'"; usage_ok=0
  fi
  [ "$usage_ok" = 1 ] && echo "ok example $ex: bad usage and a bad node list on stderr, status 64"

  # linked with --no-as-needed (the Makefile): NEEDED is what the rule names
  needed=$(readelf -d "$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(lib[^.]*\)\..*\]/\1/p' | sort -u | tr '\n' ' ')
  extra=""
  for lib in $needed; do
    case " libc $(allowed "$ex") " in *" $lib "*) ;; *) extra="$extra $lib" ;; esac
  done
  own=$(allowed "$ex" | cut -d' ' -f1)
  if [ -z "$extra" ] && case " $needed" in *" libc "*) true ;; *) false ;; esac &&
     { [ "$own" = - ] || case " $needed" in *" $own "*) true ;; *) false ;; esac; }; then
    echo "ok example $ex links only what it needs: ${needed% }"
  else bad "$ex" "links ${needed:-nothing readable}(not needed:${extra:- none}; allowed: libc $(allowed "$ex" | tr -d -))"; fi

  conns "$port" >/dev/null
  REDLOCK_NODES="127.0.0.1:$port" run "$ex" 127.0.0.1:1
  down=$rc
  made=$(conns "$port")
  if [ "$down" -eq 0 ] || [ "$down" -eq 124 ] || [ "$made" != 0 ]; then
    bad "$ex" "its argument (a dead node) over a live \$REDLOCK_NODES: status $down, $made connections to the live one"
    continue
  fi
  REDLOCK_NODES="127.0.0.1:$port" run "$ex"
  made=$(conns "$port")
  if [ "$rc" -ne 0 ] || [ "$made" -lt 1 ]; then
    bad "$ex" "\$REDLOCK_NODES alone: status $rc, $made connections to it, $(tail -c 300 "$dir/out")$(tail -c 300 "$dir/err")"
    continue
  fi
  echo "ok example $ex: its argument wins (a dead node: status $down), \$REDLOCK_NODES alone takes the lock there (connections: $made)"
  if [ -n "${EXAMPLES_NETNS:-}" ]; then
    conns 6379 >/dev/null
    env -u REDLOCK_NODES timeout 30 "$bin" >"$dir/out" 2>&1
    rc=$?
    made=$(conns 6379)
    if [ "$rc" -eq 0 ] && [ "$made" -ge 1 ]; then echo "ok example $ex: no nodes given: 127.0.0.1:6379 (connections: $made)"
    else bad "$ex" "no nodes given: status $rc, $made connections to 127.0.0.1:6379, $(tail -c 300 "$dir/out")"; fi
  else
    echo "# skip example $ex: the default node (no private network namespace here for a server on 127.0.0.1:6379)"
  fi
done

case " $examples " in *" fenced_write "*)
  # The fenced write: the stopped holder's late write is rejected, the
  # second holder's fence is higher and its write stands.
  out=$(timeout 30 "$build/fenced_write" "127.0.0.1:$port" 2>&1); rc=$?
  fa=$(printf '%s\n' "$out" | sed -n 's/^A: holds the lock, fence \([0-9]*\)$/\1/p')
  fb=$(printf '%s\n' "$out" | sed -n 's/^B: holds the lock, fence \([0-9]*\)$/\1/p')
  if [ "$rc" -eq 0 ] && [ -n "$fa" ] && [ -n "$fb" ] && [ "$fb" -gt "$fa" ] &&
     printf '%s\n' "$out" | grep -q "^A: late write with fence $fa rejected$" &&
     printf '%s\n' "$out" | grep -q '^ledger: written by B$' &&
     [ "$(redis-cli -p "$port" GET example:ledger:fence)" = "$fb" ]; then
    echo "ok example fenced_write: A (fence $fa) stopped past its validity, B (fence $fb) wrote, A's late write rejected"
  else
    bad fenced_write "status $rc, $(printf '%s' "$out" | tail -c 300)"
  fi
esac

case " $examples " in *" example_stats "*)
  # The statistics in the Prometheus text format: two reports in 2 s (one
  # with --once), each line a sample, a HELP / TYPE comment or a blank, a
  # family typed before its samples, counters consistent (acquired <=
  # started, never falling, the histogram's +Inf bucket = its count =
  # the acquires won), the node a label.
  t0=$(date +%s%N)
  timeout 30 "$build/example_stats" --once "127.0.0.1:$port" >"$dir/once" 2>"$dir/err"; rc1=$?
  timeout 30 "$build/example_stats" --seconds 2 "127.0.0.1:$port" >"$dir/out" 2>>"$dir/err"; rc=$?
  why=$(python3 - "$dir/once" "$dir/out" "127.0.0.1:$port" <<'PY'
import re, sys
name = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
label = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*"'
line_re = re.compile(r'^(%s)(\{%s(?:,%s)*\})? (-?[0-9.]+(?:e[-+]?[0-9]+)?|\+Inf)$' % (name, label, label))
def reports(path):
    out, cur = [], None
    for ln in open(path).read().split('\n'):
        if ln.startswith('# at '):
            cur = []
            out.append(cur)
        elif cur is not None:
            cur.append(ln)
    return out
def check(rep):
    types, helped, values = {}, set(), {}
    for ln in rep:
        if not ln:
            continue
        m = re.match(r'^# (HELP|TYPE) (%s) (.+)$' % name, ln)
        if m:
            if m.group(1) == 'TYPE':
                if m.group(3) not in ('counter', 'gauge', 'histogram') or m.group(2) in types:
                    return 'bad TYPE line: ' + ln
                types[m.group(2)] = m.group(3)
            else:
                helped.add(m.group(2))
            continue
        m = line_re.match(ln)
        if not m:
            return 'not a sample line: ' + ln
        fam = re.sub(r'_(bucket|sum|count)$', '', m.group(1)) if types.get(re.sub(r'_(bucket|sum|count)$', '', m.group(1))) == 'histogram' else m.group(1)
        if fam not in types or fam not in helped:
            return 'a sample before its TYPE and HELP: ' + ln
        values[m.group(1) + (m.group(2) or '')] = float(m.group(3))
    v = values.get
    started, won = v('redlock_acquires_started_total'), v('redlock_acquires_total{outcome="acquired"}')
    if started is None or won is None or not 1 <= won <= started:
        return 'acquired %s, started %s' % (won, started)
    buckets = [val for key, val in values.items() if key.startswith('redlock_acquire_seconds_bucket')]
    if buckets != sorted(buckets) or v('redlock_acquire_seconds_bucket{le="+Inf"}') != v('redlock_acquire_seconds_count') != won:
        return 'the acquire histogram: buckets %s, count %s, acquired %s' % (buckets[-3:], v('redlock_acquire_seconds_count'), won)
    if v('redlock_node_connects_total{node="%s"}' % sys.argv[3]) != 1:
        return 'no node label %s with one connection' % sys.argv[3]
    return values
once, runs = reports(sys.argv[1]), reports(sys.argv[2])
if len(once) != 1 or len(runs) != 2:
    sys.exit('%d report(s) with --once, %d in 2 s' % (len(once), len(runs)))
got = [check(r) for r in once + runs]
for g in got:
    if isinstance(g, str):
        sys.exit(g)
for k, val in got[1].items():
    if k.endswith('_total') and got[2].get(k, -1) < val:
        sys.exit('counter %s fell from %s to %s' % (k, val, got[2].get(k)))
print('%d samples a report; acquires started %d then %d' % (len(got[1]), got[1]['redlock_acquires_started_total'], got[2]['redlock_acquires_started_total']))
PY
  ) && ok=1 || ok=0
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ "$ok" = 1 ] && [ "$rc1" -eq 0 ] && [ "$rc" -eq 0 ]; then
    echo "ok example example_stats: the Prometheus text format, counters consistent ($why) ($ms ms)"
  else
    bad example_stats "status $rc1 / $rc: $why $(tail -c 300 "$dir/err")"
  fi
esac

if [ $# -eq 0 ]; then
  # The shell example of a reentrant lock: its usage, then the nested run
  # enters, no key left (on $REDLOCK_NODES; and on 127.0.0.1:6379 without).
  examples/nested_run.sh --help >"$dir/out" 2>"$dir/err"; rc=$?
  if [ "$rc" -eq 0 ] && grep -q '^usage: ' "$dir/out" && grep -q 'REDLOCK_NODES' "$dir/out" && [ ! -s "$dir/err" ]; then
    echo "ok example nested_run.sh --help: the usage on stdout, status 0"
  else bad nested_run.sh "--help: status $rc, stderr '$(head -c 100 "$dir/err")'"; fi
  for p in "$port" ${EXAMPLES_NETNS:+6379}; do
    conns "$p" >/dev/null
    if [ "$p" = 6379 ]; then out=$(env -u REDLOCK_NODES timeout 30 examples/nested_run.sh "$build/redlock" 2>&1); rc=$?
    else out=$(REDLOCK_NODES="127.0.0.1:$p" timeout 30 examples/nested_run.sh "$build/redlock" 2>&1); rc=$?; fi
    if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q "^migrate: entered 'deploy'" &&
       printf '%s\n' "$out" | grep -q "^deploy: migration done" && [ "$(redis-cli -p "$p" EXISTS deploy)" = 0 ] &&
       [ "$(conns "$p")" -ge 2 ]; then
      echo "ok example nested_run.sh on 127.0.0.1:$p$([ "$p" = 6379 ] && echo ' (no nodes given)'): the nested redlock run enters at once, no key left"
    else
      bad nested_run.sh "on 127.0.0.1:$p: status $rc, $(printf '%s' "$out" | tail -c 300)"
    fi
  done

fi
exit $status
