#!/usr/bin/env bash
# The example programs: built by `make examples`; each prints its usage and
# exits non-zero when asked for help, exits non-zero (within seconds) when
# no node can be reached (127.0.0.1:1 refuses connections), and exits 0
# after taking and releasing its lock on a redis-server started here (a
# free loopback port, a temp dir, no persistence; stopped by PID). The shell
# example nested_run.sh runs there too, with the redlock tool.
# Usage: tests/shared/examples.sh BUILD_DIR
set -u
build=${1:-build}
status=0
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
for ex in example_socket example_poll_loop hiredis_sync libev_async fenced_write; do
  bin="$build/$ex"
  if [ ! -x "$bin" ]; then echo "not ok example $ex: not built"; status=1; continue; fi
  timeout 10 "$bin" --help >/dev/null 2>"$build/ex.err"; rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! grep -q '^usage: ' "$build/ex.err"; then
    echo "not ok example $ex --help: status $rc, $(head -c 200 "$build/ex.err")"; status=1; continue
  fi
  timeout 20 "$bin" 127.0.0.1:1 >/dev/null 2>&1; down=$?
  if [ "$down" -eq 0 ] || [ "$down" -eq 124 ]; then
    echo "not ok example $ex with no node up: status $down"; status=1; continue
  fi
  timeout 30 "$bin" "127.0.0.1:$port" >"$build/ex.out" 2>&1; up=$?
  if [ "$up" -ne 0 ]; then
    echo "not ok example $ex on a live node: status $up, $(tail -c 300 "$build/ex.out")"; status=1; continue
  fi
  echo "ok example $ex: usage (status $rc), no node up (status $down), a live node (status 0)"
done

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
  echo "not ok example fenced_write: status $rc, $(printf '%s' "$out" | tail -c 300)"; status=1
fi

# The shell example of a reentrant lock: the nested run enters, no key left.
out=$(REDLOCK_NODES="127.0.0.1:$port" timeout 30 examples/nested_run.sh "$build/redlock" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -q "^migrate: entered 'deploy'" &&
   printf '%s\n' "$out" | grep -q "^deploy: migration done" && [ "$(redis-cli -p "$port" EXISTS deploy)" = 0 ]; then
  echo "ok example nested_run.sh: the nested redlock run enters at once, no key left"
else
  echo "not ok example nested_run.sh: status $rc, $(printf '%s' "$out" | tail -c 300)"; status=1
fi

# The README's quick start is a whole program: it must build as shown
# (`cc -std=c99 app.c -o app -pthread`, warnings as errors).
awk '/^## Quick start$/ {q = 1} q && /^```c$/ {c = 1; next} c && /^```$/ {exit} c {print}' README.md >"$build/quickstart.c"
if [ -s "$build/quickstart.c" ] &&
   cc -std=c99 -Wall -Wextra -Wpedantic -Werror -I. "$build/quickstart.c" -o "$build/quickstart" -pthread 2>"$build/quickstart.err"; then
  echo "ok README quick start builds ($(wc -l <"$build/quickstart.c") lines, -std=c99 -pthread -Werror)"
else
  echo "not ok README quick start does not build: $(head -c 300 "$build/quickstart.err")"; status=1
fi
exit $status
