#!/usr/bin/env bash
# Installs the Debian packages symbind needs to build, test and run its demos.
# Idempotent: packages already present are skipped. Needs root (or sudo) on Debian 12.
set -euo pipefail
# python3 + NumPy: the ctypes frontend test; OpenCV: image tests; Graphviz: the README's
# `symbind dot ... | dot -Tpng` (ctest docs_commands); ONNX and protobuf: libsymbind_onnx, ONNX's
# node tests (libonnx-testdata) for its tests.
packages=(build-essential cmake ninja-build pkg-config libboost-graph-dev libeigen3-dev libtbb-dev catch2
          zlib1g-dev libdlpack-dev nlohmann-json3-dev libstb-dev libcli11-dev flatbuffers-compiler
          libflatbuffers-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin
          python3 python3-numpy libopencv-dev graphviz libonnx-dev libprotobuf-dev libonnx-testdata "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
