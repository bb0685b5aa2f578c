#!/usr/bin/env bash
# Installs what the build and the tests need, when it is missing (Debian).
# Usage: scripts/deps.sh [core|all|bench]   (default all; bench: all + gnuplot)
set -u
want=${1:-all}
need=()
optional=() # a failure to install these is not fatal
have() { command -v "$1" >/dev/null 2>&1; }
hdr() { [ -e "/usr/include/$1" ]; }
have cc || need+=(gcc)
have make || need+=(make)
have valgrind || need+=(valgrind)
have patch || need+=(patch)
if [ "$want" = bench ]; then
  have gnuplot || need+=(gnuplot-nox) # make bench-transport's plot
  want=all
fi
if [ "$want" = all ]; then
  have clang || need+=(clang libclang-rt-dev) # the runtime: libFuzzer for make fuzz
  have g++ || need+=(g++)
  have redis-server || need+=(redis-server)
  have redis-cli || need+=(redis-tools)
  hdr hiredis/hiredis.h || need+=(libhiredis-dev)
  hdr ev.h || need+=(libev-dev)
  hdr openssl/ssl.h || need+=(libssl-dev) # TLS: REDLOCK_SOCKET_TLS, the tool
  have openssl || need+=(openssl)          # the TLS tests' throwaway certificates
  have pkg-config || need+=(pkg-config)
  have cmake || need+=(cmake)
  have groff || need+=(groff-base)
  have python3 || need+=(python3) # free ports in tests/shared/examples.sh, JSON checks of the tool
  # the Debian package (check-deb, which says "skip" without them)
  have dpkg-buildpackage || optional+=(dpkg-dev)
  have dh || optional+=(debhelper)
  have lintian || optional+=(lintian)
fi
# libFuzzer comes with clang's runtime package, which clang only recommends
if [ "$want" = all ] && have clang && [ "$(uname -m)" = x86_64 ] &&
   [ ! -e "$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]; then
  need+=(libclang-rt-dev)
fi
[ ${#need[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0
echo "deps: installing ${need[*]} ${optional[*]}" >&2
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || true
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
    echo "deps: apt-get install ${need[*]} failed" >&2; exit 1; }
fi
if [ ${#optional[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null 2>&1 ||
    echo "deps: apt-get install ${optional[*]} failed (their checks will say skip)" >&2
fi
exit 0
