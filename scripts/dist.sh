#!/usr/bin/env bash
# Builds the release tarball redlock-X.Y.Z.tar.gz (X.Y.Z: scripts/version.sh)
# in OUT_DIR (default build), reproducibly: the same tree gives the same
# bytes. In a git checkout it holds the files git tracks (as they are in
# the working tree); in an unpacked tarball, the files there but build/
# and bench/out/. Every entry has the same owner (0), sorted names, the
# modes u=rwX,go=rX and one mtime: $SOURCE_DATE_EPOCH, else the last
# commit's time, else the newest file's; gzip -n leaves out name and time.
# Prints the tarball's path.
# Usage: scripts/dist.sh [OUT_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$("$root/scripts/version.sh")
name="redlock-$version"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
cd "$root"
if [ -e .git ] && command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z | tr '\0' '\n' | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done > "$list"
  epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
else
  find . -path ./build -prune -o -path ./bench/out -prune -o -type f -print | sed 's|^\./||' > "$list"
  epoch=${SOURCE_DATE_EPOCH:-$(xargs -d '\n' stat -c %Y < "$list" | sort -n | tail -1)}
fi
LC_ALL=C sort -o "$list" "$list"
[ -s "$list" ] || { echo "dist: no files" >&2; exit 1; }
tar --create --format=gnu --no-recursion --files-from="$list" --transform="s|^|$name/|" \
    --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX --mtime="@$epoch" |
  gzip -n -9 > "$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
