#!/usr/bin/env bash
# Builds Tencent's ncnn as a benchmark peer (CPU only) and installs it, tools included.
#
#   bench/build_ncnn.sh SRC_DIR_OR_GIT_MIRROR [OUT_DIR]
#
# SRC: an ncnn source tree, or a (bare) git repository of ncnn, whose HEAD is exported into
# OUT_DIR-src first. OUT_DIR (default build/bench-work/ncnn) receives the install: lib/libncnn.a,
# the CMake package (lib/cmake/ncnn), include/ncnn, and in bin/ the converter mxnet2ncnn, the
# optimiser ncnnoptimize and benchncnn. The build directory is OUT_DIR-build.
#
# Configuration: NCNN_VULKAN=OFF; tools and benchmark on; examples, tests and Python off;
# everything else ncnn's defaults, among them its runtime CPU dispatch (NCNN_RUNTIME_CPU: each
# x86 kernel compiled for SSE2/AVX/FMA/AVX-512... and chosen at run time, no -march=native) and
# OpenMP threads. ccache is the compiler launcher; -j2 by default (SYMBIND_NCNN_JOBS), this
# machine's 2 cores being shared. ncnn's source is never copied into this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bench/build_ncnn.sh SRC_DIR_OR_GIT_MIRROR [OUT_DIR]" >&2
  exit 2
fi
src=$1
out=${2:-build/bench-work/ncnn}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${SYMBIND_NCNN_JOBS:-2}

if [ ! -f "$src/CMakeLists.txt" ]; then
  if ! git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null; then
    echo "build_ncnn.sh: $src is neither an ncnn source tree (no CMakeLists.txt) nor a git repository" >&2
    exit 1
  fi
  tree=$out-src
  commit=$(git --git-dir="$src" rev-parse HEAD)
  if [ "$(cat "$tree/.exported-commit" 2>/dev/null)" != "$commit" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    # Without examples/ (not built here): a mirror may lack its large example weights.
    git --git-dir="$src" archive HEAD -- . ':(exclude)examples' | tar -x -C "$tree"
    echo "$commit" >"$tree/.exported-commit"
  fi
  src=$tree
fi
grep -q 'project(ncnn' "$src/CMakeLists.txt" || { echo "build_ncnn.sh: $src is not ncnn's source" >&2; exit 1; }

cmake -S "$src" -B "$out-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DNCNN_VULKAN=OFF -DNCNN_BUILD_TOOLS=ON -DNCNN_BUILD_BENCHMARK=ON \
  -DNCNN_BUILD_EXAMPLES=OFF -DNCNN_BUILD_TESTS=OFF -DNCNN_PYTHON=OFF >/dev/null
# Only the library and the three tools (the other converters want protobuf or OpenCV): the
# library's own install script (headers, libncnn.a, CMake package), the tools copied by hand.
cmake --build "$out-build" -j "$jobs" --target ncnn mxnet2ncnn ncnnoptimize benchncnn
cmake -DCMAKE_INSTALL_PREFIX="$out" -P "$out-build/src/cmake_install.cmake" >/dev/null
mkdir -p "$out/bin"
install -m 755 "$out-build/tools/mxnet/mxnet2ncnn" "$out-build/tools/ncnnoptimize" \
  "$out-build/benchmark/benchncnn" "$out/bin/"
ls "$out"/lib*/cmake/ncnn/ncnnConfig.cmake >/dev/null 2>&1 || { echo "build_ncnn.sh: no CMake package in $out" >&2; exit 1; }
echo "ncnn from $src installed in $out"
