#!/usr/bin/env bash
# MXNet 1.9.1's predict-cpp/image-classification-predict.cc, unchanged, against the installed
# libmxnet.so (pkg-config mxnet) and OpenCV: it classifies a red and a blue picture with a
# colour classifier in MXNet's format (scripts/make_color_classifier.py), single-threaded and
# with 4 predictors from MXPredCreateMultiThread. Exits 77 (skipped) without OpenCV.
# Usage: mxnet_predict_example_test.sh <source dir> <build dir>
set -euo pipefail
src=$1 build=$2
if ! pkg-config --exists opencv4; then
  echo "OpenCV (libopencv-dev) not installed: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for pc in "$tmp"/prefix/lib/pkgconfig/*.pc; do sed -i "s|^prefix=.*|prefix=$tmp/prefix|" "$pc"; done
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$tmp/prefix/lib"

cd "$tmp"
g++ -O1 "$src/../shared/clients/mxnet-1.9.1/predict-cpp/image-classification-predict.cc" \
    -o image-classification-predict $(pkg-config --cflags --libs mxnet opencv4) -pthread
# The example's fixed model paths.
mkdir -p model/Inception
python3 "$src/scripts/make_color_classifier.py" "$tmp/prefix/lib/libmxnet.so" model/Inception/Inception-BN
mv model/Inception/Inception-BN-0000.params model/Inception/Inception-BN-0126.params
python3 - <<'PY'
for name, rgb in (("red.ppm", (230, 40, 30)), ("blue.ppm", (20, 60, 220))):
    with open(name, "wb") as f:
        f.write(b"P6 64 48 255\n" + bytes(rgb) * (64 * 48))
PY
./image-classification-predict red.ppm | tee red.log
grep -q "Best Result: red (id=0" red.log
grep -q "run successfully" red.log
./image-classification-predict blue.ppm 4 | tee blue.log
# The 4 predictor threads print through one std::cout without a lock, so their lines interleave
# token by token: count label tokens, not whole lines. Labels appear only in "Best Result".
labels=$(grep -v 'blue.ppm' blue.log | grep -oE '\b(red|green|blue)\b' | sort | uniq -c | tr -s ' ')
test "$labels" = " 4 blue" || { echo "expected 4 x blue, got: $labels"; exit 1; }
grep -q "run successfully" blue.log
echo "image-classification-predict classified both pictures"
