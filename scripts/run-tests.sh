#!/usr/bin/env bash
# Runs each check target given on the command line through make, shows its
# output, and counts TAP-style "ok" / "not ok" lines across all of them.
# A check that exits non-zero without reporting a failure counts as one.
# Ends with the single line "N passed, N failed".
set -u
make=${MAKE:-make}
pass=0 fail=0
for t in "$@"; do
  echo "== $t"
  start=$SECONDS
  out=$(mktemp)
  $make --no-print-directory -s "$t" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  p=$(grep -c '^ok ' "$out")
  f=$(grep -c '^not ok ' "$out")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok $t exited with status $rc"
    f=1
  fi
  pass=$((pass + p)); fail=$((fail + f))
  echo "== $t: $((SECONDS - start)) s"
  rm -f "$out"
done
echo "all checks: $SECONDS s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
