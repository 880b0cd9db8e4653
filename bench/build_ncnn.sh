#!/usr/bin/env bash
# Builds Tencent's ncnn as a benchmark peer (CPU only) and installs it, tools included.
#
#   bench/build_ncnn.sh SRC_DIR_OR_GIT_MIRROR_OR_BUILD [OUT_DIR]
#
# SRC: an ncnn source tree, or a (bare) git repository of ncnn, whose HEAD is exported into
# OUT_DIR-src first; or an ncnn you built yourself, given as its CMake build directory or as the
# path of its benchmark/benchncnn (built with tools on, ncnn's default): then nothing is built,
# its library, headers and tools are only installed into OUT_DIR. OUT_DIR (default build/bench-work/ncnn) receives the install: lib/libncnn.a,
# the CMake package (lib/cmake/ncnn), include/ncnn, and in bin/ the converter mxnet2ncnn, the
# optimiser ncnnoptimize and benchncnn. The build directory is OUT_DIR-build.
#
# Configuration: NCNN_VULKAN=OFF; tools and benchmark on; examples, tests and Python off;
# everything else ncnn's defaults, among them its runtime CPU dispatch (NCNN_RUNTIME_CPU: each
# x86 kernel compiled for SSE2/AVX/FMA/AVX-512... and chosen at run time, no -march=native) and
# OpenMP threads. ccache is the compiler launcher where installed; -j2 by default (SYMBIND_NCNN_JOBS), this
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

# install_from BUILD_DIR: the library's own install script (headers, libncnn.a, CMake package)
# and the three tools, copied by hand (ncnn does not install them).
install_from() {
  cmake -DCMAKE_INSTALL_PREFIX="$out" -P "$1/src/cmake_install.cmake" >/dev/null
  mkdir -p "$out/bin"
  local tool
  for tool in tools/mxnet/mxnet2ncnn tools/ncnnoptimize benchmark/benchncnn; do
    [ -x "$1/$tool" ] || { echo "build_ncnn.sh: $1/$tool is missing: build ncnn with NCNN_BUILD_TOOLS=ON and NCNN_BUILD_BENCHMARK=ON" >&2; exit 1; }
    install -m 755 "$1/$tool" "$out/bin/"
  done
  ls "$out"/lib*/cmake/ncnn/ncnnConfig.cmake >/dev/null 2>&1 || { echo "build_ncnn.sh: no CMake package in $out" >&2; exit 1; }
  echo "ncnn from $1 installed in $out"
}
# A build of ncnn already made (its benchncnn, or its build directory).
if [ -f "$src" ] && [ "$(basename "$src")" = benchncnn ]; then src=$(cd "$(dirname "$src")/.." && pwd); fi
if [ -f "$src/CMakeCache.txt" ] && grep -q '^CMAKE_PROJECT_NAME:STATIC=ncnn$' "$src/CMakeCache.txt"; then
  install_from "$src"
  exit 0
fi

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

# SYMBIND_NCNN_AVX2_ONLY=1: every layer compiled once, for AVX2 + FMA (no runtime dispatch, no
# AVX-512 variants): about a fifth of the objects, for a 2-core machine whose CPU has AVX2 and
# no AVX-512 (the build with dispatch compiles each x86 layer for five instruction sets).
isa=()
if [ "${SYMBIND_NCNN_AVX2_ONLY:-0}" = 1 ]; then
  isa=(-DNCNN_RUNTIME_CPU=OFF -DNCNN_AVX2=ON -DNCNN_FMA=ON -DNCNN_AVX512=OFF -DNCNN_AVXVNNI=OFF -DNCNN_XOP=OFF)
fi
# ccache as the compiler launcher where it is installed.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$src" -B "$out-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out" "${launcher[@]}" "${isa[@]}" \
  -DNCNN_VULKAN=OFF -DNCNN_BUILD_TOOLS=ON -DNCNN_BUILD_BENCHMARK=ON \
  -DNCNN_BUILD_EXAMPLES=OFF -DNCNN_BUILD_TESTS=OFF -DNCNN_PYTHON=OFF >/dev/null
# Only the library and the three tools (the other converters want protobuf or OpenCV).
cmake --build "$out-build" -j "$jobs" --target ncnn mxnet2ncnn ncnnoptimize benchncnn
install_from "$out-build"
