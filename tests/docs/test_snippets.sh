#!/usr/bin/env bash
# tests/docs/test_snippets.sh BIN - every code block of README.md and
# tools/README.md, built and, where it runs, run; so the docs cannot drift.
#
# Each fenced block is preceded by a marker, <!-- snippet: KIND -->; a block
# without one fails. KIND says what the block is and what is done with it:
#   program            a whole C program, vendored form: built beside copies
#                      of redlock.h and adapters/ by the build-vendored
#                      block's commands and run by them against three nodes
#                      started here; then in installed form (its
#                      "adapters/..." include replaced by the
#                      include-installed block's lines), built by the
#                      build-installed block's commands against
#                      `make install` into a temp prefix, and run again
#   build-vendored     shell lines (cc ..., NODES=... ./app) for the program
#   build-installed    the same against the installed tree
#   include-installed  C lines that, with an empty main(), build against the
#                      installed tree
#   program-core       a whole C program of the core: built beside redlock.h
#                      with -Wall -Wextra -Werror, run (it must exit 0)
#   fragment           C statements: compiled inside a function after the
#                      declarations in tests/docs/prelude.c
#   pkg-config         cc lines: each builds the installed-form program (it
#                      ran above)
#   cmake              CMake lines: the body of a CMakeLists.txt that builds
#                      the installed-form program with find_package(redlock)
#   tool-run           a shell script of `redlock` commands: run for real
#                      against three nodes started here (every `redlock`
#                      there is the tool under test, on those nodes; a
#                      ./script or `make TARGET` it runs is a stub that
#                      succeeds); it must end with status 0 and no usage error
#   tool-args          `redlock` command lines naming hosts that are not
#                      here: each must get past the tool's argument parser
#                      (any status but 64), bounded at 3 s
#   text, output       not code (layouts, synopses, sample output): nothing
# Indented blocks (four spaces) that are `make` command lines must name
# targets that exist (make -n).
# Prints "ok" / "not ok" lines.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MAKE=${MAKE:-make}
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/redlock-snippets.XXXXXX")
NODES_DIR=$T/nodes
cleanup() { "$ROOT/scripts/redis-nodes.sh" stop "$NODES_DIR" >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$ROOT" || exit 1
ok() { echo "ok snippets $1"; }
nok() { echo "not ok snippets $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }

# split DOC: each fenced block to $T/blocks/N.KIND (N counts across
# files), its origin in N.where; a block without a marker is reported
mkdir -p "$T/blocks"
count=0
split_doc() {
  awk -v dir="$T/blocks" -v doc="$1" -v start="$count" '
    /^<!-- snippet: [a-z-]+ -->$/ { kind = $3; markline = NR; next }
    /^```/ {
      if (!inblock) {
        inblock = 1; n++
        if (markline != NR - 1) kind = "unmarked"
        file = sprintf("%s/%03d.%s", dir, start + n, kind)
        printf "%s:%d\n", doc, NR > (file ".where")
        printf "" > file
      } else { inblock = 0; close(file); kind = "" }
      next
    }
    inblock { print >> file }
    END { print n > (dir "/count." doc_id) }
  ' doc_id="$(basename "$1")" "$1"
  count=$((count + $(cat "$T/blocks/count.$(basename "$1")")))
}
split_doc README.md
split_doc tools/README.md
blocks() { ls "$T/blocks" | grep -E "^[0-9]+\.$1\$" | sed "s|^|$T/blocks/|"; }
where() { cat "$1.where"; }

unmarked=$(blocks unmarked)
if [ -z "$unmarked" ]; then ok "every code block of README.md and tools/README.md is marked ($count blocks)"
else for b in $unmarked; do echo "#   $(where "$b"): no <!-- snippet: KIND --> marker on the line before"; done
     nok "code blocks without a marker"; fi
known="program build-vendored build-installed include-installed program-core fragment pkg-config cmake tool-run tool-args text output"
for b in "$T"/blocks/[0-9]*; do
  case "$b" in *.where) continue ;; esac
  k=${b##*.}; case " $known unmarked " in *" $k "*) ;; *) nok "$(where "$b"): unknown snippet kind '$k'" ;; esac
done

# three nodes for the blocks that run
nodes=$("$ROOT/scripts/redis-nodes.sh" start 3 "$NODES_DIR" 2>"$T/nodes.err") ||
  { nok "three redis-server nodes did not start" "$T/nodes.err"; exit 0; }

# an installed tree
P=$T/prefix
if timeout 300 $MAKE --no-print-directory -s install PREFIX="$P" >"$T/install.log" 2>&1; then :
else nok "make install PREFIX=<tmp> for the installed-form snippets" "$T/install.log"; exit 0; fi
export PKG_CONFIG_PATH=$P/share/pkgconfig

# run_lines DIR BLOCK: the block's lines as shell commands in DIR, each
# bounded; REDLOCK_NODES=... rewritten to the nodes started here
run_lines() {
  local dir=$1 b=$2 line
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    line=$(printf '%s\n' "$line" | sed -E "s/REDLOCK_NODES=[^ ]+/REDLOCK_NODES=$nodes/")
    echo "\$ $line"
    (cd "$dir" && timeout 120 bash -c "$line") || { echo "# status $?"; return 1; }
  done < "$b"
}

# the program, vendored and installed
programs=$(blocks program)
[ -n "$programs" ] || nok "no program block"
inst_include=$(blocks include-installed | head -1)
for prog in $programs; do
  w=$(where "$prog")
  V=$T/vendored; rm -rf "$V"; mkdir -p "$V"
  cp redlock.h "$V/" && cp -r adapters "$V/" && cp "$prog" "$V/app.c"
  for bv in $(blocks build-vendored); do
    if run_lines "$V" "$bv" >"$T/vendored.log" 2>&1; then
      ok "$w: the program, vendored (redlock.h + adapters/), built and run by $(where "$bv") ($(grep -c '^\$' "$T/vendored.log") commands)"
    else nok "$w: the program, vendored, by $(where "$bv")" "$T/vendored.log"; fi
  done
  I=$T/installed; rm -rf "$I"; mkdir -p "$I"
  if [ "$(grep -c '^#include "adapters/' "$prog")" = 1 ] && [ -n "$inst_include" ]; then
    awk -v inc="$inst_include" '/^#include "adapters\// { while ((getline l < inc) > 0) print l; next } { print }' \
      "$prog" > "$I/app.c"
    for bi in $(blocks build-installed); do
      if run_lines "$I" "$bi" >"$T/installed.log" 2>&1 && (cd "$I" && REDLOCK_NODES=$nodes timeout 60 ./app) >>"$T/installed.log" 2>&1; then
        ok "$w: the program, installed form ($(grep '#include' "$inst_include" | head -1 | sed 's|  */\*.*||')), built by $(where "$bi") and run"
      else nok "$w: the program, installed form, by $(where "$bi")" "$T/installed.log"; fi
    done
  else nok "$w: the program has no single #include \"adapters/...\" line to show in installed form"; fi
done
[ -f "$T/installed/app.c" ] && cp "$T/installed/app.c" "$T/app-installed.c"

for b in $(blocks include-installed); do
  { cat "$b"; printf 'int main(void) { return 0; }\n'; } > "$T/inc.c"
  if $CC -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L $(pkg-config --cflags redlock) "$T/inc.c" \
       -o "$T/inc" $(pkg-config --libs redlock) >"$T/inc.log" 2>&1; then
    ok "$(where "$b"): the installed include form builds (pkg-config redlock)"
  else nok "$(where "$b"): the installed include form" "$T/inc.log"; fi
done

for b in $(blocks program-core); do
  C=$T/core; rm -rf "$C"; mkdir -p "$C"; cp redlock.h "$C/"; cp "$b" "$C/app.c"
  if (cd "$C" && $CC -std=c99 -Wall -Wextra -Wno-unused-parameter -Werror app.c -o app && timeout 10 ./app) >"$T/core.log" 2>&1; then
    ok "$(where "$b"): the core's program builds beside redlock.h (-Wall -Wextra -Werror) and runs"
  else nok "$(where "$b"): the core's program" "$T/core.log"; fi
done

for b in $(blocks fragment); do
  { cat tests/docs/prelude.c; cat "$b"; printf "    return 0;\n}\n"; } > "$T/frag.c"
  if $CC -std=c99 -Wall -Wextra -Wno-unused -Werror -I. -c "$T/frag.c" -o "$T/frag.o" >"$T/frag.log" 2>&1; then
    ok "$(where "$b"): the fragment compiles (tests/docs/prelude.c)"
  else nok "$(where "$b"): the fragment does not compile" "$T/frag.log"; fi
done

for b in $(blocks pkg-config); do
  D=$T/pc; rm -rf "$D"; mkdir -p "$D"; cp "$T/app-installed.c" "$D/app.c" 2>/dev/null
  if [ -f "$D/app.c" ] && run_lines "$D" "$b" >"$T/pc.log" 2>&1 && [ -x "$D/app" ]; then
    ok "$(where "$b"): every line builds the installed-form program ($(grep -c '^\$' "$T/pc.log") lines)"
  else nok "$(where "$b"): the pkg-config lines" "$T/pc.log"; fi
done

for b in $(blocks cmake); do
  D=$T/cmake; rm -rf "$D"; mkdir -p "$D"; cp "$T/app-installed.c" "$D/app.c" 2>/dev/null
  { printf 'cmake_minimum_required(VERSION 3.10)\nproject(app C)\nadd_executable(app app.c)\n'
    printf 'target_compile_definitions(app PRIVATE _POSIX_C_SOURCE=200809L)\n'; cat "$b"; } > "$D/CMakeLists.txt"
  if timeout 120 cmake -S "$D" -B "$D/b" -DCMAKE_PREFIX_PATH="$P" >"$T/cmake.log" 2>&1 &&
     timeout 120 cmake --build "$D/b" >>"$T/cmake.log" 2>&1 && [ -x "$D/b/app" ]; then
    ok "$(where "$b"): the CMake lines build the installed-form program against the installed package"
  else nok "$(where "$b"): the CMake lines" "$T/cmake.log"; fi
done

# the tool's scripts, for real: `redlock` is the tool on the nodes here
for b in $(blocks tool-run); do
  D=$T/run; rm -rf "$D"; mkdir -p "$D"
  for s in $(grep -oE '\./[A-Za-z0-9_.-]+' "$b" | sort -u); do printf '#!/bin/sh\nexit 0\n' > "$D/$s"; chmod +x "$D/$s"; done
  for t in $(grep -oE '\-\- make [a-z-]+' "$b" | awk '{print $3}' | sort -u); do printf '%s:\n\t@true\n' "$t" >> "$D/Makefile"; done
  { printf 'redlock() { local a=() rc; while [ $# -gt 0 ]; do\n'
    printf '    case "$1" in -n|--nodes) shift ;; *) a+=("$1") ;; esac; shift; done\n'
    printf '  REDLOCK_NODES=%q %q "${a[@]}"; rc=$?\n' "$nodes" "$BIN"
    printf '  echo "redlock $rc" >> %q; return $rc; }\n' "$D/statuses"
    printf 'cd %q\n' "$D"; cat "$b"; } > "$D/script.sh"
  if timeout 120 bash "$D/script.sh" >"$T/run.log" 2>&1 && ! grep -q '^redlock 64$' "$D/statuses"; then
    ok "$(where "$b"): the script runs against three nodes ($(wc -l < "$D/statuses") redlock commands, statuses $(awk '{print $2}' "$D/statuses" | sort -n | uniq -c | awk '{printf "%s%sx%s", s, $1, $2; s=" "}'))"
  else cat "$D/statuses" >> "$T/run.log" 2>/dev/null; nok "$(where "$b"): the script" "$T/run.log"; fi
done

# command lines naming hosts that are not here: past the parser
for b in $(blocks tool-args); do
  n=0 bad=
  while IFS= read -r line; do
    line=${line#\$ }
    case "$line" in redlock\ *) ;; *) continue ;; esac
    line=$(printf '%s\n' "$line" | sed -E 's/[[:space:]]+#.*$//')
    eval "set -- ${line#redlock }" 2>/dev/null || { bad="$bad [$line: not a shell line]"; continue; }
    REDLOCK_NODES=127.0.0.1:1 timeout -k 1 3 "$BIN" "$@" </dev/null >/dev/null 2>"$T/args.err"; rc=$?
    n=$((n + 1))
    [ "$rc" = 64 ] && bad="$bad [$line: usage error: $(head -1 "$T/args.err")]"
  done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$b")
  if [ "$n" -gt 0 ] && [ -z "$bad" ]; then ok "$(where "$b"): $n command lines get past the tool's parser"
  else echo "#  $bad"; nok "$(where "$b"): command lines the tool refuses (or none)"; fi
done

# indented `make` lines: their targets exist
for doc in README.md tools/README.md; do
  lines=$(grep -E '^    make( |$)' "$doc" | sed -E 's/^    //; s/[[:space:]]+#.*$//' | sort -u)
  bad=
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    eval "set -- ${line#make}"
    $MAKE -n "$@" >/dev/null 2>&1 || bad="$bad [$line]"
  done <<< "$lines"
  [ -z "$bad" ] && ok "$doc: its $(printf '%s\n' "$lines" | grep -c .) make command lines name targets that exist" ||
    nok "$doc: make lines with no such target:$bad"
done
exit 0
