#!/usr/bin/env bash
# One entry point for a fresh machine:
#   ./build.sh demo    install dependencies, build, run the demo
#   ./build.sh test    install dependencies, build, run every test (ctest)
#   ./build.sh package install dependencies, build, make Debian packages in build/packages/
# Options after the command: --sanitize (ASan+UBSan build in build-asan/), --tsan (build-tsan/).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"  # the clone, also when called through a symlink
cmd=${1:-demo}
shift || true
build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
demo_args=()
compiler=()
for a in "$@"; do
  case "$a" in
    --sanitize)
      # clang: it compiles this build about twice as fast as GCC, and the same build then
      # serves the libFuzzer targets (.ci/fuzz.sh), which need clang (docs/ci.md).
      build_dir=build-asan; cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYMBIND_SANITIZE=ON -DSYMBIND_FUZZ=ON)
      compiler=(clang libclang-rt-14-dev)
      # Any report fails its test: ASan and LeakSanitizer exit non-zero at the first report,
      # UBSan is compiled with -fno-sanitize-recover=undefined and halts too (checked by the
      # sanitizer_canary_* tests).
      export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:check_initialization_order=1}
      export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} ;;
    --tsan) build_dir=build-tsan; cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYMBIND_TSAN=ON) ;;
    *) demo_args+=("$a") ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)

scripts/install-deps.sh "${compiler[@]}"
if [ ${#compiler[@]} -gt 0 ]; then
  export CC=clang CXX=clang++
  if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:FILEPATH=.*clang++' "$build_dir/CMakeCache.txt"; then
    echo "build.sh: $build_dir/ was configured with another compiler than clang; remove it first" >&2
    exit 2
  fi
fi
if [ "$build_dir" = build-tsan ]; then
  # TSan must see TBB's own synchronisation: an instrumented oneTBB that you build yourself
  # (docs/concurrency.md). Any report fails the test that caused it.
  if [ ! -f "${SYMBIND_TBB_TSAN:-}/lib/cmake/TBB/TBBConfig.cmake" ]; then
    echo "build.sh: --tsan needs SYMBIND_TBB_TSAN=<prefix of a oneTBB built with -DTBB_SANITIZE=thread>" \
         "(no lib/cmake/TBB/TBBConfig.cmake under '${SYMBIND_TBB_TSAN:-}'; see docs/concurrency.md)" >&2
    exit 2
  fi
  cmake_args+=(-DTBB_DIR="$SYMBIND_TBB_TSAN/lib/cmake/TBB")
  export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
fi
# Ninja overlaps work across targets (test objects compile while the library links), which
# keeps both cores of a small runner busy; an existing build directory keeps its generator.
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  cmake_args+=(-G Ninja)
fi
start=$SECONDS
cmake -S . -B "$build_dir" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs"
echo "build.sh: build in $build_dir/ took $(( SECONDS - start )) s"

case "$cmd" in
  demo)
    exec "./$build_dir/apps/symbind-lenet" "${demo_args[@]}" ;;
  test)
    cd "$build_dir"
    start=$SECONDS
    ctest --output-on-failure -j "$jobs"
    # Without ../shared the real-model tests were left out: repeat the skip entry's one line.
    ctest -R '^shared_models_skipped$' -V 2>/dev/null | grep -o 'skipped: .*' || true
    echo "build.sh: tests in $build_dir/ took $(( SECONDS - start )) s" ;;
  package)
    # One .deb per component (cmake/package.cmake); tests/package_test.sh installs and uses them.
    rm -rf "$build_dir/packages"
    (cd "$build_dir" && cpack -G DEB >/dev/null)
    ls "$build_dir"/packages/*.deb ;;
  *)
    echo "usage: ./build.sh demo|test|package [--sanitize|--tsan]" >&2
    exit 2 ;;
esac
