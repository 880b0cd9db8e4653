#!/usr/bin/env bash
# Installs the Debian packages `./build.sh package` made (BUILD_DIR/packages/*.deb) with
# apt-get, then builds and runs clients against the system install the way users of the
# packages do, with no prefix, path or LD_LIBRARY_PATH:
#   - `symbind --version` and `symbind-faces --help` from symbind-tools;
#   - a CMake project with find_package(symbind) and no CMAKE_PREFIX_PATH (tests/consumer);
#   - the same program with `pkg-config symbind`;
#   - the C predict client with `cc -std=c99 -Wall -Werror ... $(pkg-config --cflags --libs mxnet)`;
#   - MXNet's cpp-package headers at -std=c++11 -Wall -Werror with -lmxnet alone.
# The packages are removed again at exit, unless KEEP_PACKAGES=1, so that a development
# machine's later test runs do not find installed copies of the libraries.
# Usage: tests/package_test.sh [BUILD_DIR]   (default build/; needs root or sudo)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
shopt -s nullglob
debs=("$build"/packages/*.deb)
[ ${#debs[@]} -gt 0 ] || { echo "no packages in $build/packages: run ./build.sh package first" >&2; exit 1; }
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
names=()
for d in "${debs[@]}"; do names+=("$(dpkg-deb -f "$d" Package)"); done
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  [ "${KEEP_PACKAGES:-0}" = 1 ] || "${sudo_cmd[@]}" apt-get purge -y -qq "${names[@]}" >/dev/null 2>&1 || true
}
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get install -y -qq --reinstall "${debs[@]}" >/dev/null
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
cd "$tmp"
set -x
symbind --version
symbind-faces --help >/dev/null
command -v symbind-python
cmake -S "$src/tests/consumer" -B cmake-build >/dev/null
cmake --build cmake-build >/dev/null
./cmake-build/consumer
# shellcheck disable=SC2046
g++ "$src/tests/consumer/main.cc" -o consumer-pc $(pkg-config --cflags --libs symbind)
./consumer-pc
libmxnet=$(pkg-config --variable=libdir mxnet)/libmxnet.so
python3 "$src/scripts/make_color_classifier.py" "$libmxnet" colors
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror "$src/tests/mxnet_client/predict_client.c" -o predict_client \
   $(pkg-config --cflags --libs mxnet) -pthread
./predict_client colors
g++ -std=c++11 -Wall -Werror "$src/tests/mxnet_cpp_own_headers.cpp" -o own_headers -lmxnet
./own_headers
set +x
echo "package_test: ${names[*]} installed and used"
