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
VERSION=$(scripts/version.sh)
P=$T/prefix
ok() { echo "ok install $1"; }
nok() { echo "not ok install $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }

if timeout 300 $MAKE --no-print-directory -s install PREFIX="$P" >"$T/install.log" 2>&1; then
  ok "make install PREFIX=<tmp>"
else nok "make install PREFIX=<tmp>" "$T/install.log"; exit 0; fi

missing=
for f in include/redlock.h include/redlock/redlock_socket.h bin/redlock share/man/man1/redlock.1 share/pkgconfig/redlock.pc share/pkgconfig/redlock-tls.pc \
         share/pkgconfig/redlock-hiredis.pc share/pkgconfig/redlock-libev.pc \
         share/cmake/redlock/redlockConfig.cmake share/cmake/redlock/redlockConfigVersion.cmake; do
  [ -f "$P/$f" ] || missing="$missing $f"
done
for f in adapters/*.h; do [ -f "$P/include/redlock/$(basename "$f")" ] || missing="$missing $f"; done
[ -z "$missing" ] && ok "layout: include/redlock.h, include/redlock/*.h, bin/redlock, man1/redlock.1, redlock{,-tls,-hiredis,-libev}.pc, CMake package" ||
  { echo "#   missing:$missing"; nok "layout"; }
[ -x "$P/bin/redlock" ] && "$P/bin/redlock" --version | grep -q "^redlock $VERSION" &&
  ok "installed bin/redlock --version" || nok "installed bin/redlock --version"

if command -v man >/dev/null; then
  MANPATH=$P/share/man MANWIDTH=80 man redlock 2>"$T/man.err" | grep -q "redlock run" && [ ! -s "$T/man.err" ] &&
    ok "man redlock (MANPATH=<tmp>/share/man) shows the installed page" || nok "man redlock" "$T/man.err"
fi

# pkg-config and CMake: the consumers against the installed tree
mkdir -p "$T/consumers"
CC="$CC" tests/tool/consumers.sh "$P" "$T/consumers" install

# CMake's version file
if command -v cmake >/dev/null; then
  # 0.x: a minor version may break the API, so 0.1 does not satisfy 0.0 or 0.2
  major_minor=$(echo "$VERSION" | cut -d. -f1-2)
  older_minor="$(echo "$VERSION" | cut -d. -f1).$(( $(echo "$VERSION" | cut -d. -f2) - 1 ))"
  if timeout 120 cmake -S tests/tool/consumer -B "$T/cmake-mm" -DCMAKE_PREFIX_PATH="$P" -DREDLOCK_WANT="$major_minor" \
       >"$T/cmake-mm.log" 2>&1; then ok "CMake: find_package(redlock $major_minor) is satisfied by $VERSION"
  else nok "CMake: find_package(redlock $major_minor)" "$T/cmake-mm.log"; fi
  case "$VERSION" in
    0.*) if [ "${older_minor#*.}" -ge 0 ] 2>/dev/null && timeout 120 cmake -S tests/tool/consumer -B "$T/cmake-old" \
              -DCMAKE_PREFIX_PATH="$P" -DREDLOCK_WANT="$older_minor" >"$T/cmake-old.log" 2>&1; then
           nok "CMake: find_package(redlock $older_minor) must fail for $VERSION (0.x: minor versions break)"
         else ok "CMake: find_package(redlock $older_minor) is refused by $VERSION (0.x: same minor needed)"; fi ;;
  esac
  if timeout 120 cmake -S tests/tool/consumer -B "$T/cmake-new" -DCMAKE_PREFIX_PATH="$P" -DREDLOCK_WANT=99.0 \
       >"$T/cmake-new.log" 2>&1; then
    nok "CMake: find_package(redlock 99.0) must fail (version file)"
  else ok "CMake: find_package(redlock 99.0) is refused by redlockConfigVersion.cmake"; fi
fi

# relocatable: the installed tree moved elsewhere still works, with
# pkg-config and with CMake (no absolute path in the package files)
cp -a "$P" "$T/moved"
if ! grep -rq "$P" "$T/moved/share/pkgconfig" "$T/moved/share/cmake" &&
   [ "$(PKG_CONFIG_PATH=$T/moved/share/pkgconfig pkg-config --variable=includedir redlock 2>/dev/null)" = "$T/moved/share/pkgconfig/../../include" ] &&
   $CC -std=c99 -D_POSIX_C_SOURCE=200809L $(PKG_CONFIG_PATH=$T/moved/share/pkgconfig pkg-config --cflags redlock) \
       tests/tool/consumer/main.c -o "$T/consumer-moved" >"$T/moved.log" 2>&1 &&
   timeout 120 cmake -S tests/tool/consumer -B "$T/cmake-moved" -DCMAKE_PREFIX_PATH="$T/moved" >>"$T/moved.log" 2>&1 &&
   timeout 120 cmake --build "$T/cmake-moved" >>"$T/moved.log" 2>&1 &&
   grep -q "$T/moved" "$T/cmake-moved/CMakeFiles/consumer.dir/flags.make"; then
  ok "relocatable: the installed tree moved to another directory builds with pkg-config and CMake"
else nok "relocatable" "$T/moved.log"; fi

# DESTDIR: files land under DESTDIR; nothing in them names the staging dir
if timeout 300 $MAKE --no-print-directory -s install DESTDIR="$T/stage" PREFIX=/opt/redlock >"$T/destdir.log" 2>&1 &&
   [ -f "$T/stage/opt/redlock/include/redlock.h" ] && [ -x "$T/stage/opt/redlock/bin/redlock" ] &&
   [ -f "$T/stage/opt/redlock/share/pkgconfig/redlock-libev.pc" ] &&
   ! grep -rq "$T/stage" "$T/stage/opt/redlock/share"; then
  ok "make install DESTDIR=<tmp> PREFIX=/opt/redlock stages files, none names the staging dir"
else nok "make install DESTDIR" "$T/destdir.log"; fi

# uninstall
if timeout 300 $MAKE --no-print-directory -s uninstall PREFIX="$P" >"$T/uninstall.log" 2>&1 &&
   [ -z "$(find "$P" -type f)" ]; then
  ok "make uninstall removes every installed file"
else find "$P" -type f | sed 's/^/#   left: /'; nok "make uninstall" "$T/uninstall.log"; fi
exit 0
