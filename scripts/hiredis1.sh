#!/usr/bin/env bash
# Fetches hiredis 1.x (Debian trixie's libhiredis-dev and libhiredis1.1.0,
# with hiredis_ssl) into build/hiredis-1/ without touching the system: a
# private apt configuration (its own sources list, lists and cache under
# build/apt-trixie/), `apt-get download`, then `dpkg -x`. Nothing is
# installed. The adapters' 1.x checks build with -I/-L into that tree and
# run with LD_LIBRARY_PATH=build/hiredis-1/lib (mk/hiredis1.mk).
# Usage: scripts/hiredis1.sh [BUILD_DIR]   (default build)
# Exit 0 when build/hiredis-1/ is ready; otherwise 1, with the reason on
# the last line of stderr.
set -u
build=${1:-build}
root="$build/hiredis-1"
apt="$build/apt-trixie"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
lib="$root/usr/lib/$multiarch"

if [ -e "$root/usr/include/hiredis/hiredis_ssl.h" ] && [ -e "$root/lib/libhiredis.so" ] && [ -e "$lib/libhiredis_ssl.so" ]; then
  exit 0
fi
fail() { echo "hiredis1: $*" >&2; exit 1; }
command -v apt-get >/dev/null 2>&1 || fail "no apt-get on this machine"
command -v dpkg >/dev/null 2>&1 || fail "no dpkg on this machine"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || fail "no Debian archive keyring ($keyring)"

mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" || fail "cannot create $apt"
apt_abs=$(cd "$apt" && pwd)
printf 'deb [signed-by=%s] http://deb.debian.org/debian trixie main\n' "$keyring" > "$apt_abs/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt_abs/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt_abs/lists" -o "Dir::Cache=$apt_abs/cache"
      -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root
      -o Acquire::Retries=2 -o Acquire::http::Timeout=30)
timeout 300 apt-get -qq "${opts[@]}" update > "$apt_abs/update.log" 2>&1 ||
  fail "apt-get update of trixie failed: $(tail -1 "$apt_abs/update.log")"
(cd "$apt_abs/debs" && rm -f ./*.deb &&
 timeout 300 apt-get -qq "${opts[@]}" download libhiredis-dev libhiredis1.1.0 > ../download.log 2>&1) ||
  fail "apt-get download failed: $(tail -1 "$apt_abs/download.log")"
rm -rf "$root"
mkdir -p "$root"
for deb in "$apt_abs"/debs/*.deb; do
  dpkg -x "$deb" "$root" || fail "dpkg -x $deb failed"
done
[ -e "$root/usr/include/hiredis/hiredis_ssl.h" ] && [ -e "$lib/libhiredis_ssl.so" ] ||
  fail "the packages have no hiredis_ssl ($(ls "$apt_abs"/debs))"
ln -sfn "usr/lib/$multiarch" "$root/lib" # one path for the makefiles, whatever the architecture
echo "hiredis1: $(ls "$apt_abs"/debs | tr '\n' ' ')unpacked into $root" >&2
