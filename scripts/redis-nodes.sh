#!/usr/bin/env bash
# Starts / stops local redis-server nodes for demos and manual tests.
#
#   scripts/redis-nodes.sh start N DIR [extra redis-server args...]
#       starts N nodes on 127.0.0.1 on free ports, each in DIR/nodeI with
#       --save '' --appendonly no; waits until each answers PING; writes
#       DIR/ports and DIR/pids (one per line) and prints the node list
#       as host:port,host:port,...
#   scripts/redis-nodes.sh stop DIR
#       stops exactly the PIDs in DIR/pids (SIGTERM, then SIGKILL after 3 s),
#       only if they still are redis-server processes, then removes the files.
#
# Never touches a server it did not start: it signals only PIDs it wrote.
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
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q redis-server
  else
    kill -0 "$1" 2>/dev/null
  fi
}

stop_pids() { # dir
  local dir=$1 pid i
  [ -f "$dir/pids" ] || return 0
  while read -r pid; do
    [ -n "$pid" ] || continue
    is_our_redis "$pid" || continue
    kill -TERM "$pid" 2>/dev/null
    kill -CONT "$pid" 2>/dev/null
    for i in $(seq 1 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  done <"$dir/pids"
  rm -f "$dir/pids" "$dir/ports"
}

cmd=${1:-}
case "$cmd" in
start)
  n=${2:-}; dir=${3:-}
  [ -n "$n" ] && [ -n "$dir" ] || die "usage: $0 start N DIR [redis-server args...]"
  shift 3
  command -v redis-server >/dev/null || die "redis-server not found (scripts/deps.sh)"
  [ "$n" -ge 1 ] 2>/dev/null || die "N must be a positive number"
  [ -f "$dir/pids" ] && die "$dir/pids exists: stop those nodes first"
  mkdir -p "$dir" || die "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  : >"$dir/ports"; : >"$dir/pids"
  list=
  for i in $(seq 0 $((n - 1))); do
    nd="$dir/node$i"
    mkdir -p "$nd"
    ok=0
    for try in 1 2 3 4 5; do
      port=$(free_port) || die "no free port"
      setsid redis-server --port "$port" --bind 127.0.0.1 --dir "$nd" \
        --logfile "$nd/redis.log" --daemonize no --save '' --appendonly no "$@" \
        </dev/null >/dev/null 2>&1 &
      pid=$!
      for w in $(seq 1 100); do
        if ! kill -0 "$pid" 2>/dev/null; then break; fi
        if ping_node "$port"; then ok=1; break; fi
        sleep 0.05
      done
      [ $ok -eq 1 ] && break
      kill -KILL "$pid" 2>/dev/null
    done
    [ $ok -eq 1 ] || { stop_pids "$dir"; die "node $i did not start (see $nd/redis.log)"; }
    echo "$port" >>"$dir/ports"
    echo "$pid" >>"$dir/pids"
    list="${list:+$list,}127.0.0.1:$port"
  done
  echo "$list"
  ;;
stop)
  dir=${2:-}
  [ -n "$dir" ] || die "usage: $0 stop DIR"
  stop_pids "$dir"
  ;;
*)
  die "usage: $0 start N DIR [args...] | stop DIR"
  ;;
esac
