#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, build-fuzz/) and runs each one for
# FUZZ_SECONDS (default 30) on its corpus: the seeds from fuzz/make_corpus.sh, what earlier
# runs added to build-fuzz/corpus/, and the committed crash inputs in fuzz/regression/<target>/.
# A crash, leak, timeout or sanitizer report fails the run; the input is left in
# build-fuzz/artifacts/<target>/. Fix the bug and commit the input to fuzz/regression/<target>/
# (tests/test_fuzz_regression.cc replays it in every normal test run).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
jobs=$(nproc 2>/dev/null || echo 2)

scripts/install-deps.sh clang libclang-rt-14-dev
start=$(date +%s)
generator=()
[ ! -f build-fuzz/CMakeCache.txt ] && command -v ninja >/dev/null && generator=(-G Ninja)
CC=clang CXX=clang++ cmake -S . -B build-fuzz "${generator[@]}" -DSYMBIND_FUZZ=ON -DSYMBIND_BUILD_TESTS=OFF \
  -DSYMBIND_BUILD_APPS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$jobs" --target fuzz_ndarray_file fuzz_symbol_json fuzz_param fuzz_model_file
echo "ci: fuzz build took $(( $(date +%s) - start )) s"

fuzz/make_corpus.sh build-fuzz/corpus
status=0
# target:seed-corpus directory made by make_corpus.sh
for pair in ndarray_file:params symbol_json:json param:param model_file:symbind; do
  target=${pair%%:*}
  corpus=build-fuzz/corpus/${pair##*:}
  artifacts=build-fuzz/artifacts/$target
  mkdir -p "$artifacts" "fuzz/regression/$target"
  start=$(date +%s)
  # New inputs go to the first directory only; fuzz/regression is read, never written.
  if ! "build-fuzz/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "fuzz/regression/$target" \
      > "build-fuzz/fuzz_$target.log" 2>&1; then
    status=1
    echo "ci: fuzz_$target FAILED; input in $artifacts/, log build-fuzz/fuzz_$target.log:" >&2
    grep -E -A30 "==ERROR|ERROR: libFuzzer|runtime error|Test unit written" "build-fuzz/fuzz_$target.log" | head -60 >&2
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz_$target.log" | grep -o '[0-9]*$' || echo '?')
  echo "ci: fuzz_$target ran $(( $(date +%s) - start )) s, $runs inputs"
done
exit $status
