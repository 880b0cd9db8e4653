#!/bin/sh
# ResNet-18's convolution gradients at batch 16, 224x224, one layer at a time, through
# bench_conv_backward (CPU ms of every gradient path, the fastest of --runs calls).
# Usage: bench/resnet18_conv_backward.sh [BUILD_DIR] [THREADS] [RUNS]
build=${1:-build} threads=${2:-2} runs=${3:-5}
# name (count in the net): N C F H W K S P
while read -r name count shape; do
  printf '%s x%s: ' "$name" "$count"
  # shellcheck disable=SC2086
  "$build/bench/bench_conv_backward" $shape --threads "$threads" --runs "$runs" | tr '\n' ' '
  echo
done <<'LAYERS'
conv1 1 16 3 64 224 224 7 2 3
layer1_3x3 4 16 64 64 56 56 3 1 1
layer2_0_conv1 1 16 64 128 56 56 3 2 1
layer2_3x3 3 16 128 128 28 28 3 1 1
layer2_downsample 1 16 64 128 56 56 1 2 0
layer3_0_conv1 1 16 128 256 28 28 3 2 1
layer3_3x3 3 16 256 256 14 14 3 1 1
layer3_downsample 1 16 128 256 28 28 1 2 0
layer4_0_conv1 1 16 256 512 14 14 3 2 1
layer4_3x3 3 16 512 512 7 7 3 1 1
layer4_downsample 1 16 256 512 14 14 1 2 0
LAYERS
