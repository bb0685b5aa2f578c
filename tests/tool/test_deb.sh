#!/usr/bin/env bash
# tests/tool/test_deb.sh - the Debian package (debian/): built with
# dpkg-buildpackage in a scratch copy of the tree (the tree itself is never
# written), checked with lintian, unpacked with `dpkg -x` into a scratch root
# (nothing is installed on the machine), then the installed tool, its manual
# page, and consumers built through pkg-config and CMake against that root.
# Prints "ok" / "not ok" lines; "skip deb: <reason>" when the packaging tools
# are missing (scripts/deps.sh installs them).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/redlock-deb.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$ROOT" || exit 1
start=$SECONDS
VERSION=$(scripts/version.sh) || exit 1
ok() { echo "ok deb $1"; }
nok() { echo "not ok deb $1"; [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/#   /' "$2" | tail -15; }

# (debian/changelog's version against redlock.h's: check-dist; the packages'
# versions below come from it)
for tool in dpkg-buildpackage dh lintian dpkg-deb; do
  command -v $tool >/dev/null 2>&1 || { echo "skip deb: $tool not installed (scripts/deps.sh)"; exit 0; }
done

# scratch copy: the files git knows of (tracked, or new and not ignored);
# without git (an unpacked release), the tree minus build/
S=$T/redlock-$VERSION
mkdir -p "$S"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -xf - -C "$S"
else
  tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$S"
fi
# the source package (for lintian's checks of debian/), from the pristine copy
if (cd "$T" && timeout 120 dpkg-source -Zgzip -b "redlock-$VERSION") >"$T/source.log" 2>&1; then
  ok "dpkg-source -b: redlock_$VERSION.dsc (3.0 (native))"
else nok "dpkg-source -b" "$T/source.log"; exit 0; fi
# the package build runs no tests: the suite runs check-unit on its own;
# built as a packager would, without the calling make's flags or compiler
if (cd "$S" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CC DEB_BUILD_OPTIONS=nocheck \
      timeout 300 dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1; then
  ok "dpkg-buildpackage -us -uc -b (in a scratch copy)"
else nok "dpkg-buildpackage -us -uc -b" "$T/build.log"; exit 0; fi
arch=$(dpkg --print-architecture)
dev=$T/libredlock-dev_${VERSION}_all.deb
tools=$T/redlock-tools_${VERSION}_$arch.deb
changes=$T/redlock_${VERSION}_$arch.changes
[ -f "$dev" ] && [ -f "$tools" ] && [ -f "$changes" ] &&
  [ "$(dpkg-deb -f "$dev" Version)" = "$VERSION" ] && [ "$(dpkg-deb -f "$tools" Version)" = "$VERSION" ] &&
  ok "libredlock-dev_${VERSION}_all.deb and redlock-tools_${VERSION}_$arch.deb, version $VERSION" ||
  { ls "$T" | sed 's/^/#   /'; nok "the packages and their versions"; exit 0; }

# lintian reads the packages while the steps below use them (one CPU each)
timeout 300 lintian --display-info --pedantic --show-overrides "$T/redlock_$VERSION.dsc" "$changes" >"$T/lintian.raw" 2>&1 &
lint=$!

# into a scratch root, as the system would lay them out
R=$T/root
mkdir -p "$R"
dpkg -x "$dev" "$R" && dpkg -x "$tools" "$R" || { nok "dpkg -x into a scratch root"; exit 0; }
missing=
for f in usr/include/redlock.h usr/bin/redlock usr/share/man/man1/redlock.1.gz \
         usr/share/doc/libredlock-dev/copyright usr/share/doc/redlock-tools/copyright; do
  [ -f "$R/$f" ] || missing="$missing $f"
done
for f in adapters/*.h; do [ -f "$R/usr/include/redlock/$(basename "$f")" ] || missing="$missing $f"; done
for f in tools/install/*.pc.in; do f=$(basename "$f" .in); [ -f "$R/usr/share/pkgconfig/$f" ] || missing="$missing $f"; done
for f in tools/install/*.cmake.in; do f=$(basename "$f" .in); [ -f "$R/usr/share/cmake/redlock/$f" ] || missing="$missing $f"; done
[ -z "$missing" ] && ok "dpkg -x: /usr/include/redlock.h, /usr/include/redlock/*.h, every .pc and CMake file, /usr/bin/redlock, its man page" ||
  { echo "#   missing:$missing"; nok "the packages' files"; }

"$R/usr/bin/redlock" --version >"$T/version.out" 2>&1 && grep -q "^redlock $VERSION" "$T/version.out" &&
  ok "installed /usr/bin/redlock --version: $(head -1 "$T/version.out")" || nok "installed /usr/bin/redlock --version" "$T/version.out"
if command -v man >/dev/null; then
  MANPATH=$R/usr/share/man MANWIDTH=80 man redlock 2>"$T/man.err" | grep -q "redlock run" && [ ! -s "$T/man.err" ] &&
    ok "man redlock shows the packaged page" || nok "man redlock (the packaged page)" "$T/man.err"
else
  zcat "$R/usr/share/man/man1/redlock.1.gz" | grep -q '^\.TH REDLOCK 1' && ok "the packaged man page is redlock(1)" ||
    nok "the packaged man page"
fi

# pkg-config and CMake, from the unpacked root (the files find the headers
# from their own place, so the system's /usr is not involved)
mkdir -p "$T/consumers"
CC="$CC" tests/tool/consumers.sh "$R/usr" "$T/consumers" deb
# lintian: every tag it emits is shown; an error, or lintian failing, fails
wait $lint
lrc=$?
grep -v '^running with root privileges' "$T/lintian.raw" >"$T/lintian.log"
errors=$(grep -c '^E: ' "$T/lintian.log")
warnings=$(grep -c '^W: ' "$T/lintian.log")
others=$(grep -c '^[IPX]: ' "$T/lintian.log")
overridden=$(grep -c '^O: ' "$T/lintian.log") # each with its reason in debian/*lintian-overrides
sed 's/^/#   lintian: /' "$T/lintian.log"
if [ "$lrc" -eq 0 ] && [ "$errors" -eq 0 ] && ! grep -Eqv '^[EWIPXNO]:( |$)' "$T/lintian.log"; then
  ok "lintian --display-info --pedantic (source and binaries): 0 errors, $warnings warnings, $others info/pedantic/experimental, $overridden overridden"
else nok "lintian (status $lrc): $errors errors"; fi

echo "# deb: $((SECONDS - start)) s"
exit 0
