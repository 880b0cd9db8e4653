#!/usr/bin/env bash
# Installs symbind from BUILD_DIR into a temporary prefix, then builds and runs a consumer
# project with find_package(symbind) and another with pkg-config.
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/symbind/core/ndarray.h"
test -f "$tmp/prefix/lib/cmake/symbind/symbindConfig.cmake"
# Only public headers are installed, and each compiles on its own (so none includes a private one).
for private in ops executor/memory_plan.h executor/task_graph.h executor/bind_memory.h io/mapped_file.h; do
  if test -e "$tmp/prefix/include/symbind/$private"; then echo "private header installed: $private"; exit 1; fi
done
tbb_cflags=$(pkg-config --cflags tbb 2>/dev/null || true)
for h in $(cd "$tmp/prefix/include" && find symbind -name '*.h' | sort); do
  echo "#include <$h>" | g++ -std=c++17 -fsyntax-only -x c++ -I"$tmp/prefix/include" $tbb_cflags - ||
    { echo "installed header does not compile on its own: $h"; exit 1; }
done
cmake -S "$src/tests/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cmake-build/consumer"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
sed -i "s|^prefix=.*|prefix=$tmp/prefix|" "$tmp/prefix/lib/pkgconfig/symbind.pc"
g++ "$src/tests/consumer/main.cc" -o "$tmp/consumer-pc" $(pkg-config --cflags --libs symbind)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer-pc"
