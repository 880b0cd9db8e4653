#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan; in $FUZZ_BUILD_DIR, default build-fuzz/) and
# runs each one for FUZZ_SECONDS (default 30) on its corpus: the seeds from fuzz/make_corpus.sh,
# what earlier runs added to <build>/corpus/, and the committed crash inputs in
# fuzz/regression/<target>/.
# A crash, leak, timeout or sanitizer report fails the run; the input is left in
# <build>/artifacts/<target>/. Fix the bug and commit the input to fuzz/regression/<target>/
# (tests/test_fuzz_regression.cc replays it in every normal test run).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
jobs=$(nproc 2>/dev/null || echo 2)
# FUZZ_BUILD_DIR: a build configured with SYMBIND_FUZZ=ON is used as it is (.ci/run passes the
# sanitizer build, build-asan/, which builds the targets beside the tests); otherwise a build
# for fuzzing alone is configured there (default build-fuzz/).
dir=${FUZZ_BUILD_DIR:-build-fuzz}

scripts/install-deps.sh clang libclang-rt-14-dev
start=$(date +%s)
if ! grep -q '^SYMBIND_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" 2>/dev/null; then
  generator=()
  [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null && generator=(-G Ninja)
  CC=clang CXX=clang++ cmake -S . -B "$dir" "${generator[@]}" -DSYMBIND_FUZZ=ON -DSYMBIND_BUILD_TESTS=OFF \
    -DSYMBIND_BUILD_APPS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$dir" -j "$jobs" --target fuzz_ndarray_file fuzz_symbol_json fuzz_param fuzz_model_file
echo "ci: fuzz build took $(( $(date +%s) - start )) s"

fuzz/make_corpus.sh "$dir/corpus"
status=0
# target:seed-corpus directory made by make_corpus.sh
for pair in ndarray_file:params symbol_json:json param:param model_file:symbind; do
  target=${pair%%:*}
  corpus=$dir/corpus/${pair##*:}
  artifacts=$dir/artifacts/$target
  mkdir -p "$artifacts" "fuzz/regression/$target"
  start=$(date +%s)
  # New inputs go to the first directory only; fuzz/regression is read, never written.
  if ! "$dir/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "fuzz/regression/$target" \
      > "$dir/fuzz_$target.log" 2>&1; then
    status=1
    echo "ci: fuzz_$target FAILED; input in $artifacts/, log $dir/fuzz_$target.log:" >&2
    grep -E -A30 "==ERROR|ERROR: libFuzzer|runtime error|Test unit written" "$dir/fuzz_$target.log" | head -60 >&2
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/fuzz_$target.log" | grep -o '[0-9]*$' || echo '?')
  echo "ci: fuzz_$target ran $(( $(date +%s) - start )) s, $runs inputs"
done
exit $status
