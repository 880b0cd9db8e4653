#!/bin/sh
# usage: sanitizer_canary.sh CANARY_BINARY MODE EXPECTED_REPORT
# Passes only when the canary fails (non-zero exit) and prints the expected sanitizer report.
set -u
out=$("$1" "$2" 2>&1)
status=$?
if [ "$status" -eq 0 ]; then
  echo "FAIL: '$2' exited 0: a sanitizer report would not fail the tests"; echo "$out"; exit 1
fi
if ! printf '%s\n' "$out" | grep -q -- "$3"; then
  echo "FAIL: '$2' exited $status without the report '$3'"; echo "$out"; exit 1
fi
echo "ok: '$2' reported '$3' and exited $status"
