#!/usr/bin/env bash
# MXNet 1.9.1's own cpp-package, unchanged, against symbind's installed libmxnet.so:
#  1. install symbind into a temporary prefix;
#  2. run MXNet's generator OpWrapperGenerator.py on the installed libmxnet.so (op.h);
#  3. compile the examples mlp_cpu, lenet, mlp_csv, test_score against MXNet's headers with
#     `pkg-config --cflags --libs mxnet`;
#     and against symbind's own mxnet-cpp headers (the same pkg-config line, MXNet's headers
#     not on the path), and tests/mxnet_cpp_own_headers.cpp, which it also runs;
#  4. run mlp_cpu on Fashion-MNIST (>= 80% test accuracy in its last epoch) and test_score to
#     its own pass condition (exit 0 at >= 0.8).
# Usage: mxnet_cpp_package_test.sh <source dir> <build dir>
set -euo pipefail
src=$1 build=$2
clients=$src/../shared/clients/mxnet-1.9.1
fashion=${SYMBIND_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT
echo "work dir: $tmp"

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for pc in "$tmp"/prefix/lib/pkgconfig/*.pc; do sed -i "s|^prefix=.*|prefix=$tmp/prefix|" "$pc"; done
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$tmp/prefix/lib"

cp -r "$clients/cpp-package" "$tmp/cpp-package"
(cd "$tmp/cpp-package/scripts" && python3 OpWrapperGenerator.py "$tmp/prefix/lib/libmxnet.so")
test -s "$tmp/cpp-package/include/mxnet-cpp/op.h"
echo "op.h: $(grep -c '^inline Symbol' "$tmp/cpp-package/include/mxnet-cpp/op.h") functions"

cd "$tmp/cpp-package/example"
for ex in mlp_cpu lenet mlp_csv test_score; do
  g++ -O1 -w -I../include "$ex.cpp" -o "$ex" $(pkg-config --cflags --libs mxnet)
  echo "compiled $ex"
done

for ex in mlp_cpu lenet mlp_csv test_score; do
  g++ -O0 -w "$ex.cpp" -o "$ex-own-headers" $(pkg-config --cflags --libs mxnet)
  echo "compiled $ex against symbind's mxnet-cpp headers"
done
# Shape's constructors, dmlc::Error, GetHandle, OpMap, contrib.h, model.h, shape.h, op_util.h.
g++ -O0 -Wall -Werror "$src/tests/mxnet_cpp_own_headers.cpp" -o own-headers $(pkg-config --cflags --libs mxnet)
./own-headers

mkdir -p data/mnist_data
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  gunzip -c "$fashion/$f.gz" > "data/mnist_data/$f"
done

./mlp_cpu 2>&1 | tee mlp_cpu.log | tail -3
# The last epoch's validation accuracy, e.g. "Epoch: 9 ... Accuracy: 0.8512".
acc=$(grep -o 'Accuracy: [0-9.]*' mlp_cpu.log | tail -1 | cut -d' ' -f2)
echo "mlp_cpu final accuracy: $acc"
python3 -c "import sys; sys.exit(0 if float('$acc') >= 0.80 else 1)"

./test_score 0.80 2>&1 | tail -2
echo "test_score passed"
