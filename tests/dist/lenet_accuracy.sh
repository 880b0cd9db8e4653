#!/usr/bin/env bash
# LeNet on Fashion-MNIST: 2 ranks (dist_sync, batch B each, each on its half of the training set)
# against one process on the combined batch 2B, the same number of steps and learning rate.
# The data orders differ (each rank shuffles its half), so the accuracies differ by noise:
# passes when both learned (> 0.6) and the 2-rank accuracy is at least the single-process one
# minus 0.03 (at 300 steps seeds 1 and 2 gave 0.842 vs 0.835 and 0.821 vs 0.829; at 100 steps
# the noise was +-0.03, too much to compare).   lenet_accuracy.sh MPIEXEC SYMBIND_LENET STEPS [SEED]
set -uo pipefail
mpiexec=$1 lenet=$2 steps=$3 seed=${4:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
acc() { sed -n 's/^epoch 1 test_accuracy \([0-9.]*\).*/\1/p' "$1"; }
"$lenet" train --epochs 1 --batch 100 --max-batches "$steps" --seed "$seed" --save "$tmp/one/lenet" >"$tmp/one.txt" 2>/dev/null
timeout 300 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$lenet" train --kvstore dist_sync --epochs 1 \
  --batch 50 --max-batches "$steps" --seed "$seed" --save "$tmp/two/lenet" >"$tmp/two.txt" 2>/dev/null
cat "$tmp/one.txt" "$tmp/two.txt"
one=$(acc "$tmp/one.txt") two=$(acc "$tmp/two.txt")
echo "lenet_accuracy: $steps steps of 100 samples: one process $one, 2 ranks x 50 $two"
if [ -n "$one" ] && [ -n "$two" ] && awk -v a="$one" -v b="$two" 'BEGIN { exit !(a > 0.6 && b > 0.6 && b >= a - 0.03) }'; then
  echo "lenet_accuracy: OK"; exit 0
fi
echo "lenet_accuracy: FAILED"; exit 1
