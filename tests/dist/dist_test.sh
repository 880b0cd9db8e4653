#!/usr/bin/env bash
# Runs one distributed check under mpirun on this machine and judges it:
#   dist_test.sh MPIEXEC NP EXPECT COMMAND...
# EXPECT "pass": exit 0 and one "rank R: PASS" line per rank.
# EXPECT "fail:REGEX": non-zero exit within 30 s and REGEX (grep -E) in the output.
set -uo pipefail
mpiexec=$1 np=$2 expect=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
# The outer timeout only guards CI against a hang; the checks below require far less.
timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$@" >"$out" 2>&1
rc=$?
took=$(( SECONDS - start ))
cat "$out"
echo "dist_test: mpirun -np $np exited with $rc after $took s"
case "$expect" in
  pass)
    passes=$(grep -oE 'rank [0-9]+: PASS' "$out" | wc -l)
    if [ "$rc" -eq 0 ] && [ "$passes" -eq "$np" ]; then echo "dist_test: OK"; exit 0; fi
    echo "dist_test: FAILED: want exit 0 and $np PASS lines, got exit $rc and $passes"; exit 1 ;;
  fail:*)
    regex=${expect#fail:}
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 30 ] && grep -Eq "$regex" "$out"; then
      echo "dist_test: OK (the job stopped with the expected error in $took s)"; exit 0
    fi
    echo "dist_test: FAILED: want a non-zero exit within 30 s and output matching: $regex"; exit 1 ;;
esac
echo "dist_test: unknown expectation $expect"; exit 2
