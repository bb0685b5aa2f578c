#!/usr/bin/env bash
# Fetches the servers of the test matrix (mk/matrix.mk) into
# build/servers/<name>/ without touching the system, as scripts/hiredis1.sh
# does for hiredis 1.x: a private apt configuration per Debian suite (its
# own sources list, lists and cache under build/apt-<suite>/),
# `apt-get download`, then `dpkg -x`. Nothing is installed.
#   redis6   Redis 6.0 from Debian bullseye, with the libraries of bullseye
#            it links to (bookworm has no libssl1.1)
#   valkey8  Valkey 8.0 from Debian bookworm-backports (bookworm's libraries)
# Each gets build/servers/<name>/bin/redis-server, a wrapper that runs the
# server with its own libraries under the name redis-server (the tests'
# node starters look for "redis-server" in /proc/PID/cmdline before they
# signal a PID), so `.../bin/redis-server --version` works like the real one.
# (Redis 7.0 is Debian 12's own redis-server on PATH, from scripts/deps.sh.)
# Usage: scripts/servers.sh [BUILD_DIR] [NAME...]  (default build, all names)
# Prints "NAME PATH-TO-redis-server" for each server that is ready, and
# "skip matrix NAME: REASON" for each that is not; exits 1 if any is not.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(redis6 valkey8)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# apt_for SUITE LINE...: the options of a private apt for those sources
# lines (in $opts), its lists updated once per SUITE.
apt_for() {
  local suite=$1 dir line
  shift
  dir=$(mkdir -p "$build/apt-$suite/lists/partial" "$build/apt-$suite/cache/archives/partial" &&
        cd "$build/apt-$suite" && pwd) || { reason="cannot create $build/apt-$suite"; return 1; }
  : > "$dir/sources.list"
  : > "$dir/status" # what the system has installed must not pick the versions
  for line in "$@"; do
    printf 'deb [signed-by=%s] http://deb.debian.org/debian %s\n' "$keyring" "$line" >> "$dir/sources.list"
  done
  opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
        -o "Dir::State::status=$dir/status"
        -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root
        -o Acquire::Retries=2 -o Acquire::http::Timeout=30)
  aptdir=$dir
  [ -e "$dir/updated" ] && return 0
  # (apt-get update may exit 0 with nothing fetched: the lists tell)
  timeout 300 apt-get -qq "${opts[@]}" update > "$dir/update.log" 2>&1
  ls "$dir"/lists/*_Packages* >/dev/null 2>&1 ||
    { reason="apt-get update of $suite failed: $(grep -m1 -E '^(E|W):' "$dir/update.log" || tail -1 "$dir/update.log")"; return 1; }
  touch "$dir/updated"
}

# fetch NAME BINARY PACKAGE...: downloads the packages into their own
# directory (a name's packages only) and unpacks them into build/servers/NAME.
fetch() {
  local name=$1 binary=$2 root="$build/servers/$1" debs deb
  shift 2
  debs="$aptdir/debs-$name"
  rm -rf "$debs" && mkdir -p "$debs" || { reason="cannot create $debs"; return 1; }
  (cd "$debs" && timeout 300 apt-get -qq "${opts[@]}" download "$@" > ../download-$name.log 2>&1) ||
    { reason="apt-get download $* failed: $(tail -1 "$aptdir/download-$name.log")"; return 1; }
  rm -rf "$root" && mkdir -p "$root/bin" || { reason="cannot create $root"; return 1; }
  for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$root" || { reason="dpkg -x $deb failed"; return 1; }
  done
  [ -x "$root/usr/bin/$binary" ] || { reason="no usr/bin/$binary in $(ls "$debs" | tr '\n' ' ')"; return 1; }
  wrap "$root" "$binary"
}

# wrap ROOT BINARY: ROOT/bin/redis-server. The server binary is the
# check-rdb tool under another name in Debian, and a server tells which
# it is by argv[0]: bash's exec -a keeps "redis-server" there (and so in
# /proc/PID/cmdline). Paths absolute: the tests run it from other
# directories.
wrap() {
  local root abs multiarch
  root=$(cd "$1" && pwd)
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  abs=$(readlink -f "$root/usr/bin/$2")
  cat > "$root/bin/redis-server" <<EOF
#!/bin/bash
LD_LIBRARY_PATH=$root/usr/lib/$multiarch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec -a "\$0" $abs "\$@"
EOF
  chmod +x "$root/bin/redis-server"
}

# ready NAME PREFIX: the wrapper runs and reports the expected server.
ready() {
  local out
  [ -x "$build/servers/$1/bin/redis-server" ] || return 1
  out=$("$build/servers/$1/bin/redis-server" --version 2>&1) || { reason="--version failed: $out"; return 1; }
  case $out in "$2"*) return 0 ;; esac
  reason="--version says: $out"
  return 1
}

status=0
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 || missing="no apt-get or dpkg on this machine"
[ -r "$keyring" ] || missing="no Debian archive keyring ($keyring)"
for name in "${names[@]}"; do
  reason=
  case $name in
  redis6)  want="Redis server v=6.0." ;;
  valkey8) want="Valkey server v=8.0." ;;
  *) echo "skip matrix $name: no such server (redis6, valkey8)"; status=1; continue ;;
  esac
  if ! ready "$name" "$want"; then
    reason=${missing:-}
    if [ -z "$reason" ]; then
      case $name in
      redis6)
        apt_for bullseye "bullseye main" &&
          fetch redis6 redis-server redis-server redis-tools libssl1.1 liblua5.1-0 \
            libjemalloc2 liblzf1 lua-bitop lua-cjson ;;
      valkey8)
        apt_for bookworm-backports "bookworm main" "bookworm-backports main" &&
          fetch valkey8 valkey-server valkey-server valkey-tools ;;
      esac
      [ -z "$reason" ] && ready "$name" "$want"
    fi
  fi
  if [ -z "$reason" ] && [ -x "$build/servers/$name/bin/redis-server" ]; then
    echo "$name $build/servers/$name/bin/redis-server"
  else
    echo "skip matrix $name: ${reason:-not ready}"
    status=1
  fi
done
exit $status
