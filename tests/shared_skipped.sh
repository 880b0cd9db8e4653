#!/usr/bin/env bash
# ctest entry registered when ../shared is missing: names what is missing and how many
# [shared] test cases were left out, then exits with ctest's skip code.
#   shared_skipped.sh SYMBIND_TESTS_BINARY SHARED_DIR SKIP_CODE
set -u
tests=$1 shared=$2 skip_code=$3
count=$("$tests" "[shared]" --list-test-names-only | grep -c .)
echo "skipped: $shared/models not found: $count tests need its models" \
     "(put MXNet's models there or configure with -DSYMBIND_SHARED_DIR=...)"
exit "$skip_code"
