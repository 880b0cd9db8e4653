#!/usr/bin/env bash
# Runs every benchmark for symbind and, where installed, the same workload in PyTorch, and
# prints the ratios. Usage: bench/run.sh [threads]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target bench_mlp bench_params_load >/dev/null
echo "# $(date -u +%Y-%m-%d) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $threads threads"
ours=$(./build/bench/bench_mlp "$threads")
peer=""
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  peer=$(OMP_NUM_THREADS=$threads /usr/bin/python3 bench/torch_mlp.py "$threads")
fi
printf "%-28s %14s %14s %12s\n" metric symbind pytorch ratio
for key in mlp_train_samples_per_s mlp_infer_b1_median_us; do
  a=$(awk -v k=$key '$1==k{print $2}' <<<"$ours")
  b=$(awk -v k=$key '$1==k{print $2}' <<<"$peer")
  if [ -n "$b" ]; then
    r=$(awk -v a="$a" -v b="$b" -v k=$key 'BEGIN{ if (k ~ /_us$/) printf "%.2fx faster", b/a; else printf "%.2fx faster", a/b }')
  else
    b="-"; r="(no torch)"
  fi
  printf "%-28s %14s %14s %12s\n" "$key" "$a" "$b" "$r"
done

echo
./build/bench/bench_params_load | awk '{v[$1]=$2} END {printf "%-28s %14s GB/s  (memcpy of the same bytes: %s GB/s, ratio %.2f)\n", "params_load", v["params_load_gb_per_s"], v["memcpy_gb_per_s"], v["params_load_gb_per_s"]/v["memcpy_gb_per_s"]}'
