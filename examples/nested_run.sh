#!/bin/sh
# nested_run.sh - a reentrant lock from the shell: a deploy holds the lock
# `deploy` and calls a migration that takes `deploy` too (so that it is
# safe when run alone). `redlock run --reentrant` hands its owner id to
# COMMAND in REDLOCK_OWNER (and the lock it holds, `deploy` on these
# nodes, in REDLOCK_OWNER_SCOPE); the inner `redlock run deploy` (reentrant
# by itself there) enters at once instead of waiting for itself. Anyone
# else (another deploy, a plain `redlock run deploy` elsewhere) waits for
# the whole deploy; runs of other lock names inside take their own turns.
#
# usage: [REDLOCK_NODES=host:port,...] examples/nested_run.sh [REDLOCK]
#        (REDLOCK: the redlock tool, default `redlock` from PATH; the nodes
#        as for every example: $REDLOCK_NODES, else 127.0.0.1:6379)
set -eu
case "${1:-}" in
-h|--help) sed -n 's/^# \{0,1\}//; /^usage:/,/6379)$/p' "$0"; exit 0 ;;
-*) echo "usage: $0 [REDLOCK]   (see --help)" >&2; exit 64 ;;
esac
redlock=${1:-redlock}
export REDLOCK_NODES="${REDLOCK_NODES:-127.0.0.1:6379}"

case "${NESTED_RUN_STAGE:-deploy}" in
deploy) # the whole deploy, under the lock
    NESTED_RUN_STAGE=deploying exec "$redlock" run --reentrant -t 30s deploy -- "$0" "$redlock"
    ;;
deploying)
    echo "deploy: holding 'deploy' as owner $REDLOCK_OWNER"
    # the migration script: on its own it would take the lock itself
    NESTED_RUN_STAGE=migrating "$redlock" run --no-wait deploy -- "$0" "$redlock"
    echo "deploy: migration done, still holding 'deploy'"
    ;;
migrating)
    echo "migrate: entered 'deploy' as owner $REDLOCK_OWNER without waiting"
    ;;
esac
