#!/usr/bin/env bash
# tests/release/test_dist.sh - the release tarball and the version's copies.
#   `make dist` twice gives the same bytes; the tarball holds exactly the
#   files git tracks, under redlock-X.Y.Z/; unpacked on its own (no git) it
#   builds its tool and passes its unit tests, and its own `make dist`
#   gives the same bytes again. The version written in redlock.h is the one
#   CHANGELOG.md, the man page and debian/changelog name.
# Prints "ok" / "not ok" lines.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAKE=${MAKE:-make}
T=$(mktemp -d "${TMPDIR:-/tmp}/redlock-dist.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$ROOT" || exit 1
ok() { echo "ok dist $1"; }
nok() { echo "not ok dist $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }
V=$(scripts/version.sh) || { nok "scripts/version.sh reads no version from redlock.h"; exit 0; }
N=redlock-$V

# the version's copies
top=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -1)
[ "$top" = "$V" ] && ok "CHANGELOG.md's newest entry is $V" || nok "CHANGELOG.md's newest entry is '$top', redlock.h says $V"
grep -q "^\.TH REDLOCK 1 .*\"redlock $V\"" tools/redlock.1 && ok "the man page says redlock $V" || nok "the man page's .TH does not say redlock $V"
if [ -f debian/changelog ]; then
  dv=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
  [ "${dv%%-*}" = "$V" ] && ok "debian/changelog's version $dv is $V" || nok "debian/changelog's version is '$dv', redlock.h says $V"
fi

# twice, the same bytes
if timeout 120 $MAKE --no-print-directory -s dist DIST_DIR="$T/a" >"$T/a.log" 2>&1 &&
   timeout 120 $MAKE --no-print-directory -s dist DIST_DIR="$T/b" >"$T/b.log" 2>&1 &&
   [ -f "$T/a/$N.tar.gz" ] && [ -f "$T/b/$N.tar.gz" ]; then
  a=$(sha256sum < "$T/a/$N.tar.gz" | cut -c1-64); b=$(sha256sum < "$T/b/$N.tar.gz" | cut -c1-64)
  [ "$a" = "$b" ] && ok "make dist twice: $N.tar.gz, the same bytes (sha256 $a)" ||
    nok "make dist twice differs: $a / $b"
else nok "make dist did not make $N.tar.gz" "$T/a.log"; exit 0; fi

# exactly the tracked files
if command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files | while IFS= read -r f; do [ -f "$f" ] && echo "$N/$f"; done | LC_ALL=C sort > "$T/want"
  tar tzf "$T/a/$N.tar.gz" | LC_ALL=C sort > "$T/got"
  if cmp -s "$T/want" "$T/got"; then ok "the tarball holds the $(wc -l < "$T/got") files git tracks, under $N/"
  else diff "$T/want" "$T/got" | head -10 > "$T/diff"; nok "the tarball's files are not those git tracks" "$T/diff"; fi
else echo "skip dist: no git checkout to compare the tarball's files with"; fi

# unpacked on its own: no git, its own build, its own dist
mkdir -p "$T/u" && tar xzf "$T/a/$N.tar.gz" -C "$T/u" || { nok "the tarball does not unpack"; exit 0; }
U=$T/u/$N
if (cd "$U" && [ ! -e .git ] && timeout 300 $MAKE --no-print-directory -s tool check-unit) >"$T/u.log" 2>&1 &&
   ! grep -q '^not ok' "$T/u.log" && [ "$(grep -c '^ok' "$T/u.log")" -gt 0 ] &&
   "$U/build/redlock" --version | grep -q "^redlock $V "; then
  ok "unpacked alone (no git): builds its tool (redlock $V) and passes its unit tests ($(grep -c '^ok' "$T/u.log") ok)"
else nok "unpacked alone: make tool check-unit" "$T/u.log"; fi
if (cd "$U" && timeout 120 $MAKE --no-print-directory -s dist DIST_DIR="$T/c") >"$T/c.log" 2>&1 &&
   cmp -s "$T/a/$N.tar.gz" "$T/c/$N.tar.gz"; then
  ok "make dist in the unpacked tree gives the same bytes again"
else nok "make dist in the unpacked tree gives other bytes" "$T/c.log"; fi
exit 0
