#!/bin/sh
# Prints the project's version, X.Y.Z, from the only place it is written:
# REDLOCK_VERSION_MAJOR, _MINOR and _PATCH in redlock.h. The Makefile
# (install, dist), the tests and the Debian package's check read it here.
# Usage: scripts/version.sh [path/to/redlock.h]
h=${1:-$(dirname "$0")/../redlock.h}
v=$(sed -n 's/^#define REDLOCK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9][0-9]*\)$/\1 \2/p' "$h" |
    awk '{ v[$1] = $2 } END { if (("MAJOR" in v) && ("MINOR" in v) && ("PATCH" in v)) print v["MAJOR"] "." v["MINOR"] "." v["PATCH"] }')
[ -n "$v" ] || { echo "version.sh: no REDLOCK_VERSION_MAJOR/MINOR/PATCH in $h" >&2; exit 1; }
echo "$v"
