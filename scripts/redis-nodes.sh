#!/usr/bin/env bash
# Starts / stops / restarts local redis-server nodes for demos and tests.
#
#   scripts/redis-nodes.sh start [--volatile] N DIR [redis-server args...]
#       starts N nodes on 127.0.0.1 on free ports; waits until each answers
#       PING; writes DIR/ports and DIR/pids (one per line) and prints the
#       node list as host:port,host:port,...
#       The nodes are durable: --appendonly yes --appendfsync always, so
#       that they keep their keys across a restart and a client counts
#       their grants at once (redlock.h section 4, Restarts: a node that
#       does not keep its keys counts no grant for a lock's ttl after it
#       starts). Their data lives under /dev/shm when that is a writable
#       directory (fsync costs nothing there; DIR/data names the place),
#       else in DIR; node I's log is DIR/nodeI/redis.log either way.
#       --volatile: not durable (--appendonly no, no snapshots), as a
#       server that forgets its keys when it restarts.
#   scripts/redis-nodes.sh restart [--volatile|--durable] DIR I
#       kills node I (0-based; SIGKILL, as a crash) and starts it again on
#       its port with the arguments it was started with. Durable, it comes
#       back with its keys; --volatile: empty (its data removed, no AOF).
#       Without either, as it was started. Rewrites its line of DIR/pids.
#   scripts/redis-nodes.sh stop DIR
#       stops exactly the PIDs in DIR/pids (SIGTERM, then SIGKILL after 3 s),
#       only if they still are redis-server processes, then removes the
#       files and the nodes' data.
#
# The server is redis-server on PATH unless $REDLOCK_TEST_SERVERS lists
# binaries, ':'-separated: node I runs the I-th (cycling), so one set can
# mix server versions (scripts/servers.sh, mk/matrix.mk); a restart uses
# the node's own.
#
# Every node starts with --save '' (no RDB snapshots): a durable node's keys
# are in its AOF only. Never touches a server it did not start: it signals
# only PIDs it wrote.
set -u

die() { echo "redis-nodes: $*" >&2; exit 1; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
    port_busy "$p" || { echo "$p"; return 0; }
  done
  return 1
}

ping_node() {
  local reply
  reply=$( { exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'PING\r\n' >&3 &&
             timeout 1 head -c 1 <&3; } 2>/dev/null )
  [ "$reply" = "+" ] || [ "$reply" = "-" ]
}

is_our_redis() { # pid: still alive and a redis-server?
  if [ -d /proc/self ]; then
    tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q redis-server
  else
    kill -0 "$1" 2>/dev/null
  fi
}

stop_pid() { # pid: SIGTERM, SIGKILL after 3 s
  local pid=$1 i
  is_our_redis "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  kill -CONT "$pid" 2>/dev/null
  for i in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}

stop_all() { # dir: the nodes, their files and their data
  local dir=$1 pid
  if [ -f "$dir/pids" ]; then
    while read -r pid; do [ -n "$pid" ] && stop_pid "$pid"; done <"$dir/pids"
  fi
  # the data under /dev/shm: only a directory this script made there
  if [ -f "$dir/data" ]; then
    case $(cat "$dir/data") in /dev/shm/redlock-nodes.*) rm -rf "$(cat "$dir/data")" ;; esac
  fi
  rm -f "$dir/pids" "$dir/ports" "$dir/data" "$dir/args" "$dir/modes"
}

# server I: node I's binary (see above)
server() {
  local list=${REDLOCK_TEST_SERVERS:-} entries
  [ -n "$list" ] || { echo redis-server; return; }
  IFS=: read -r -a entries <<<"$list"
  list=${entries[$(($1 % ${#entries[@]}))]}
  echo "${list:-redis-server}"
}

# data_dir DIR I: where node I keeps its data
data_dir() {
  if [ -f "$1/data" ]; then echo "$(cat "$1/data")/node$2"; else echo "$1/node$2"; fi
}

# launch DIR I PORT MODE ARGS...: starts node I, waits for its PING; its
# PID in $pid. Returns 1 when it did not answer (then it is killed).
launch() {
  local dir=$1 i=$2 port=$3 mode=$4 nd data
  shift 4
  nd="$dir/node$i"
  data=$(data_dir "$dir" "$i")
  mkdir -p "$nd" "$data"
  if [ "$mode" = volatile ]; then
    rm -rf "${data:?}"/* # empty: no AOF, no snapshot
    set -- --appendonly no "$@"
  else
    set -- --appendonly yes --appendfsync always "$@"
  fi
  setsid "$(server "$i")" --port "$port" --bind 127.0.0.1 --dir "$data" \
    --logfile "$nd/redis.log" --daemonize no --save '' "$@" \
    </dev/null >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    ping_node "$port" && return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null
  return 1
}

mode=
cmd=${1:-}
[ $# -gt 0 ] && shift
case "${1:-}" in
--volatile) mode=volatile; shift ;;
--durable) mode=durable; shift ;;
esac
case "$cmd" in
start)
  n=${1:-}; dir=${2:-}
  [ -n "$n" ] && [ -n "$dir" ] || die "usage: $0 start [--volatile] N DIR [redis-server args...]"
  shift 2
  [ "$n" -ge 1 ] 2>/dev/null || die "N must be a positive number"
  for i in $(seq 0 $((n - 1))); do
    command -v "$(server "$i")" >/dev/null || die "$(server "$i") not found (scripts/deps.sh, scripts/servers.sh)"
  done
  [ -f "$dir/pids" ] && die "$dir/pids exists: stop those nodes first"
  mode=${mode:-durable}
  mkdir -p "$dir" || die "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  : >"$dir/ports"; : >"$dir/pids"; : >"$dir/modes"
  : >"$dir/args"
  [ $# -eq 0 ] || printf '%q ' "$@" >"$dir/args"
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    mktemp -d /dev/shm/redlock-nodes.XXXXXX >"$dir/data" || rm -f "$dir/data"
  fi
  list=
  for i in $(seq 0 $((n - 1))); do
    ok=0
    for _ in 1 2 3 4 5; do
      port=$(free_port) || die "no free port"
      launch "$dir" "$i" "$port" "$mode" "$@" && { ok=1; break; }
    done
    [ $ok -eq 1 ] || { stop_all "$dir"; die "node $i did not start (see $dir/node$i/redis.log)"; }
    echo "$port" >>"$dir/ports"
    echo "$pid" >>"$dir/pids"
    echo "$mode" >>"$dir/modes"
    list="${list:+$list,}127.0.0.1:$port"
  done
  echo "$list"
  ;;
restart)
  dir=${1:-}; i=${2:-}
  [ -n "$dir" ] && [ -n "$i" ] || die "usage: $0 restart [--volatile|--durable] DIR I"
  [ -f "$dir/pids" ] || die "no nodes in $dir"
  dir=$(cd "$dir" && pwd)
  port=$(sed -n "$((i + 1))p" "$dir/ports" 2>/dev/null)
  old=$(sed -n "$((i + 1))p" "$dir/pids")
  [ -n "$port" ] && [ -n "$old" ] || die "no node $i in $dir"
  [ $# -le 2 ] || die "usage: $0 restart [--volatile|--durable] DIR I"
  mode=${mode:-$(sed -n "$((i + 1))p" "$dir/modes")}
  is_our_redis "$old" && kill -KILL "$old" 2>/dev/null
  for _ in $(seq 1 100); do port_busy "$port" || break; sleep 0.02; done
  eval "set -- $(cat "$dir/args")"
  launch "$dir" "$i" "$port" "$mode" "$@" || die "node $i did not restart on port $port (see $dir/node$i/redis.log)"
  sed -i "$((i + 1))s/.*/$pid/" "$dir/pids"
  sed -i "$((i + 1))s/.*/$mode/" "$dir/modes"
  ;;
stop)
  dir=${1:-}
  [ -n "$dir" ] || die "usage: $0 stop DIR"
  stop_all "$dir"
  ;;
*)
  die "usage: $0 start [--volatile] N DIR [args...] | restart [--volatile|--durable] DIR I | stop DIR"
  ;;
esac
