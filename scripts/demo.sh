#!/usr/bin/env bash
# scripts/demo.sh - `make demo`: the redlock tool on three local redis nodes.
#
# Installs what it needs when missing (scripts/deps.sh), builds build/redlock,
# starts 3 redis-server nodes in a temp dir, runs several `redlock run`
# processes that contend for one lock and take turns (the first one holds
# it well past its TTL thanks to renewal), shows `inspect` and the busy exit
# code, then stops the nodes - also on Ctrl-C or failure. About 15 seconds.
set -u
cd "$(dirname "$0")/.." || exit 1
MAKE=${MAKE:-make}

if ! command -v redis-server >/dev/null || ! command -v cc >/dev/null || ! command -v make >/dev/null; then
  echo "demo: installing what is missing (scripts/deps.sh)"
  scripts/deps.sh all || exit 1
fi
$MAKE --no-print-directory -s build/redlock || exit 1
RL=$(pwd)/build/redlock

DIR=$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")
cleanup() {
  local p
  for p in $(jobs -p); do { kill -TERM "$p"; wait "$p"; } 2>/dev/null; done
  scripts/redis-nodes.sh stop "$DIR/nodes"
  rm -rf "$DIR"
  echo "demo: nodes stopped"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted"; exit 130' INT TERM HUP

NODES=$(scripts/redis-nodes.sh start 3 "$DIR/nodes") || { echo "demo: cannot start redis nodes"; exit 1; }
export REDLOCK_NODES=$NODES
T0=$(date +%s%3N)
export T0

# a worker: prints when it got the lock, works, prints when it is done
cat >"$DIR/work.sh" <<'EOF'
#!/bin/sh
# work.sh NAME SECONDS
t() { d=$(( $(date +%s%3N) - T0 )); printf '[+%d.%02ds]' $((d / 1000)) $((d % 1000 / 10)); }
echo "$(t) worker $1: got the lock, working for $2 s"
sleep "$2"
echo "$(t) worker $1: done"
EOF
chmod +x "$DIR/work.sh"
say() { d=$(( $(date +%s%3N) - T0 )); printf '[+%d.%02ds] %s\n' $((d / 1000)) $((d % 1000 / 10)) "$*"; }

echo "== redlock demo: 3 redis nodes at $NODES (REDLOCK_NODES)"
echo "== 4 workers contend for the lock 'demo-lock' (TTL 2 s); A works 5 s, so"
echo "   its lock must be renewed (every ~0.7 s; -v shows it), B..D wait their turn"
echo
"$RL" run -v -t 2s demo-lock -- "$DIR/work.sh" A 5 2> >(sed -u 's/^/           A: /') &
sleep 0.3
for w in B C D; do
  "$RL" run -t 2s -w 40s --retry-delay 100ms demo-lock -- "$DIR/work.sh" $w 1 &
done
sleep 0.9
say "redlock inspect demo-lock:"
"$RL" inspect demo-lock | sed 's/^/           /'
sleep 1.6
say "2.8 s in - past A's 2 s TTL - E tries: redlock run --no-wait demo-lock -- true"
"$RL" run --no-wait demo-lock -- true 2>&1 | sed 's/^/           /'
say "E's exit status: ${PIPESTATUS[0]} (75 = busy: A's lock was renewed)"
wait
echo
say "all workers done; redlock inspect demo-lock:"
"$RL" inspect demo-lock | sed 's/^/           /'
echo
say "for scripts: TOKEN=\$(redlock acquire -t 10s demo-lock) ... redlock release demo-lock \$TOKEN"
TOKEN=$("$RL" acquire -t 10s demo-lock)
say "acquired, token $TOKEN"
"$RL" release demo-lock "$TOKEN"
say "released: exit status $?"
echo
echo "== see tools/README.md for every option and exit code"
