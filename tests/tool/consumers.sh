#!/usr/bin/env bash
# tests/tool/consumers.sh - the programs of tests/tool/consumer/ built against
# an installed redlock tree, through pkg-config and through CMake, and run.
# Shared by tests/tool/test_install.sh (make install) and
# tests/tool/test_deb.sh (the Debian packages unpacked).
# Usage: tests/tool/consumers.sh PREFIX WORKDIR LABEL
#   PREFIX   the tree holding include/, share/pkgconfig/, share/cmake/
#   WORKDIR  an empty scratch directory
#   LABEL    the word after "ok" / "not ok" in each line
set -u
P=$1 W=$2 L=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
cd "$ROOT" || exit 1
VERSION=$(scripts/version.sh) || exit 1
C=tests/tool/consumer
ok() { echo "ok $L $1"; }
nok() { echo "not ok $L $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }
hide() { sed "s|$P|<prefix>|g"; } # the scratch path, shortened in the lines

# pkg-config: the headers come from PREFIX, not from the system
export PKG_CONFIG_PATH=$P/share/pkgconfig
if command -v pkg-config >/dev/null; then
  mv=$(pkg-config --modversion redlock 2>&1)
  inc=$(pkg-config --variable=includedir redlock 2>&1)
  [ "$mv" = "$VERSION" ] && [ "$(cd "$inc" 2>/dev/null && pwd)" = "$(cd "$P/include" && pwd)" ] &&
    ok "pkg-config redlock: version $VERSION, headers in <prefix>/include" ||
    nok "pkg-config redlock: version '$mv' (want $VERSION), includedir '$inc'"
  # name  source    what its output must say
  while read -r pc src says; do
    flags="$(pkg-config --cflags --libs "$pc" 2>&1)"
    if $CC -std=c99 -Wall -Wextra -Wpedantic -Werror -D_POSIX_C_SOURCE=200809L $(pkg-config --cflags "$pc" 2>/dev/null) \
         "$C/$src" $(pkg-config --libs "$pc" 2>/dev/null) -o "$W/pc-$pc" >"$W/pc-$pc.log" 2>&1 &&
       "$W/pc-$pc" >"$W/pc-$pc.out" 2>&1 && grep -q "redlock $VERSION${says:+ $says}" "$W/pc-$pc.out"; then
      ok "consumer built with pkg-config $pc ($(echo $flags | hide)) runs"
    else echo "#   flags: $flags"; nok "consumer built with pkg-config $pc" "$W/pc-$pc.log"; fi
  done <<EOF
redlock main.c
redlock-tls tls.c  with TLS
redlock-hiredis hiredis.c
redlock-libev libev.c
EOF
else nok "pkg-config not installed (scripts/deps.sh)"; fi

# CMake: every target, the headers from PREFIX
if command -v cmake >/dev/null; then
  if timeout 120 cmake -S "$C" -B "$W/cmake" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$(command -v "$CC")" \
       -DREDLOCK_WANT="$VERSION" >"$W/cmake.log" 2>&1 &&
     timeout 120 cmake --build "$W/cmake" >>"$W/cmake.log" 2>&1 &&
     grep -q -- "-I$P/include\|-isystem $P/include" "$W/cmake/CMakeFiles/consumer.dir/flags.make" &&
     "$W/cmake/consumer" >"$W/cmake.out" && grep -q "redlock $VERSION" "$W/cmake.out" &&
     "$W/cmake/consumer-socket" >/dev/null && "$W/cmake/consumer-tls" | grep -q "with TLS" &&
     "$W/cmake/consumer-hiredis" >/dev/null && "$W/cmake/consumer-libev" >/dev/null; then
    ok "consumers built with CMake find_package(redlock $VERSION) + redlock::redlock, ::socket, ::socket_tls, ::hiredis, ::libev run"
  else nok "consumers built with CMake" "$W/cmake.log"; fi
else nok "cmake not installed (scripts/deps.sh)"; fi
exit 0
