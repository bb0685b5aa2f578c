#!/usr/bin/env bash
# tests/tool/test_install.sh - `make install` into a temporary PREFIX (and a
# DESTDIR), then a consumer built against the installed tree with pkg-config
# and with CMake, then `make uninstall`. Prints "ok" / "not ok" lines.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAKE=${MAKE:-make}
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/redlock-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$ROOT" || exit 1
VERSION=$(sed -n 's/.*define REDLOCK_VERSION "\([^"]*\)".*/\1/p' redlock.h)
P=$T/prefix
ok() { echo "ok install $1"; }
nok() { echo "not ok install $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }

if timeout 300 $MAKE --no-print-directory -s install PREFIX="$P" >"$T/install.log" 2>&1; then
  ok "make install PREFIX=<tmp>"
else nok "make install PREFIX=<tmp>" "$T/install.log"; exit 0; fi

missing=
for f in include/redlock.h include/redlock/redlock_socket.h bin/redlock share/man/man1/redlock.1 share/pkgconfig/redlock.pc \
         share/cmake/redlock/redlockConfig.cmake share/cmake/redlock/redlockConfigVersion.cmake; do
  [ -f "$P/$f" ] || missing="$missing $f"
done
for f in adapters/*.h; do [ -f "$P/include/redlock/$(basename "$f")" ] || missing="$missing $f"; done
[ -z "$missing" ] && ok "layout: include/redlock.h, include/redlock/*.h, bin/redlock, man1/redlock.1, redlock.pc, CMake package" ||
  { echo "#   missing:$missing"; nok "layout"; }
[ -x "$P/bin/redlock" ] && "$P/bin/redlock" --version | grep -q "^redlock $VERSION" &&
  ok "installed bin/redlock --version" || nok "installed bin/redlock --version"

if command -v man >/dev/null; then
  MANPATH=$P/share/man MANWIDTH=80 man redlock 2>"$T/man.err" | grep -q "redlock run" && [ ! -s "$T/man.err" ] &&
    ok "man redlock (MANPATH=<tmp>/share/man) shows the installed page" || nok "man redlock" "$T/man.err"
fi

# pkg-config
export PKG_CONFIG_PATH=$P/share/pkgconfig
if command -v pkg-config >/dev/null; then
  mv="$(pkg-config --modversion redlock 2>&1)"
  [ "$mv" = "$VERSION" ] && ok "pkg-config --modversion redlock = $VERSION" || { echo "#   got '$mv'"; nok "pkg-config --modversion"; }
  if $CC -std=c99 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags redlock) tests/tool/consumer/main.c \
       $(pkg-config --libs redlock) -o "$T/consumer-pc" >"$T/pc.log" 2>&1 && "$T/consumer-pc" >"$T/pc.out" &&
     grep -q "redlock $VERSION" "$T/pc.out"; then
    ok "consumer built with pkg-config against the installed tree runs"
  else nok "consumer built with pkg-config" "$T/pc.log"; fi
else
  nok "pkg-config not installed (scripts/deps.sh)"
fi

# CMake
if command -v cmake >/dev/null; then
  if timeout 120 cmake -S tests/tool/consumer -B "$T/cmake" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$(command -v $CC)" \
       -DREDLOCK_WANT="$VERSION" >"$T/cmake.log" 2>&1 &&
     timeout 120 cmake --build "$T/cmake" >>"$T/cmake.log" 2>&1 && "$T/cmake/consumer" >"$T/cmake.out" &&
     grep -q "redlock $VERSION" "$T/cmake.out"; then
    ok "consumer built with CMake find_package(redlock $VERSION) + redlock::redlock runs"
  else nok "consumer built with CMake" "$T/cmake.log"; fi
  if timeout 120 cmake -S tests/tool/consumer -B "$T/cmake-new" -DCMAKE_PREFIX_PATH="$P" -DREDLOCK_WANT=99.0 \
       >"$T/cmake-new.log" 2>&1; then
    nok "CMake: find_package(redlock 99.0) must fail (version file)"
  else ok "CMake: find_package(redlock 99.0) is refused by redlockConfigVersion.cmake"; fi
else
  nok "cmake not installed (scripts/deps.sh)"
fi

# DESTDIR: files land under DESTDIR, paths inside them name PREFIX
if timeout 300 $MAKE --no-print-directory -s install DESTDIR="$T/stage" PREFIX=/opt/redlock >"$T/destdir.log" 2>&1 &&
   [ -f "$T/stage/opt/redlock/include/redlock.h" ] && [ -x "$T/stage/opt/redlock/bin/redlock" ] &&
   grep -q '^prefix=/opt/redlock$' "$T/stage/opt/redlock/share/pkgconfig/redlock.pc" &&
   grep -q '"/opt/redlock/include"' "$T/stage/opt/redlock/share/cmake/redlock/redlockConfig.cmake"; then
  ok "make install DESTDIR=<tmp> PREFIX=/opt/redlock stages files, paths name the PREFIX"
else nok "make install DESTDIR" "$T/destdir.log"; fi

# uninstall
if timeout 300 $MAKE --no-print-directory -s uninstall PREFIX="$P" >"$T/uninstall.log" 2>&1 &&
   [ -z "$(find "$P" -type f)" ]; then
  ok "make uninstall removes every installed file"
else find "$P" -type f | sed 's/^/#   left: /'; nok "make uninstall" "$T/uninstall.log"; fi
exit 0
