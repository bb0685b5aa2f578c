#!/usr/bin/env bash
# Include order: each header, implementation included, after a system header
# (<stdio.h>, <time.h>, <pthread.h>), with gcc and clang, as strict C99/C11
# and with GNU extensions. Either it compiles warning-free (-Werror) and the
# built-in clock runs, or, where the system header already hid POSIX
# (strict C without a feature macro), the first error says what to define;
# with -D_POSIX_C_SOURCE=200809L it always compiles and runs.
# The headers are checked side by side (scripts/parallel.sh).
# Usage: tests/core/compile/include_order.sh BUILD_DIR
#        tests/core/compile/include_order.sh --one HEADER BUILD_DIR
set -u
if [ "${1:-}" != --one ]; then
  exec scripts/parallel.sh "$0 --one core ${1:-build}" "$0 --one socket ${1:-build}" \
    "$0 --one hiredis ${1:-build}" "$0 --one libev ${1:-build}"
fi
h=$2
build=$3
dir="$build/include_order/$h"
mkdir -p "$dir"
warn="-Wall -Wextra -Wpedantic -Werror"
status=0
{
  case $h in
    core)    impl="#define REDLOCK_IMPLEMENTATION"; inc='#include "redlock.h"'; libs="" ;;
    socket)  impl=$'#define REDLOCK_IMPLEMENTATION\n#define REDLOCK_SOCKET_IMPLEMENTATION'; inc='#include "adapters/redlock_socket.h"'; libs="" ;;
    hiredis) impl=$'#define REDLOCK_IMPLEMENTATION\n#define REDLOCK_HIREDIS_IMPLEMENTATION'; inc='#include "adapters/redlock_hiredis.h"'; libs="-lhiredis -lpthread" ;;
    libev)   impl=$'#define REDLOCK_IMPLEMENTATION\n#define REDLOCK_LIBEV_IMPLEMENTATION'; inc='#include "adapters/redlock_libev.h"'; libs="-lhiredis -lev" ;;
  esac
  bad=""; built=0; stopped=0
  for first in stdio.h time.h pthread.h; do
    src="$dir/$h-${first%.h}.c"
    cat > "$src" <<SRC
#include <$first>
$impl
$inc
static int send_nothing(void *u, int n, const redlock_command *cmd, redlock_tag t)
{
    (void)u; (void)n; (void)cmd; (void)t;
    return REDLOCK_ERR_TRANSPORT;
}
int main(void)
{
    /* the built-in clocks: a client without clock callbacks */
    redlock_config cfg;
    redlock_callbacks cb;
    redlock_client c;
    redlock_config_init(&cfg);
    cfg.node_count = 1;
    memset(&cb, 0, sizeof cb);
    cb.send = send_nothing;
    if (redlock_client_init(&c, &cfg, &cb, NULL) != REDLOCK_OK) return 1;
    redlock_client_deinit(&c);
    return 0;
}
SRC
    for cc in gcc clang; do
      for std in c99 c11 gnu99; do
        for posix in "" "-D_POSIX_C_SOURCE=200809L"; do
          what="$cc -std=$std $posix after <$first>"
          if $cc -std=$std $posix $warn -I. -x c "$src" -o "$dir/a.out" $libs 2>"$dir/err"; then
            if "$dir/a.out"; then built=$((built + 1)); else bad="$bad; $what: built-in clock refused"; fi
          elif [ -z "$posix" ] && grep -m1 'error' "$dir/err" | grep -q '_POSIX_C_SOURCE=200809L'; then
            stopped=$((stopped + 1))
          else
            bad="$bad; $what: $(grep -m1 'error' "$dir/err" | cut -c1-200)"
          fi
        done
      done
    done
  done
  if [ -z "$bad" ]; then
    echo "ok include order $h: $built builds ran the built-in clock, $stopped stopped saying what to define"
  else
    echo "not ok include order $h${bad}"; status=1
  fi
}
exit $status
