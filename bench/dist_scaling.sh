#!/usr/bin/env bash
# Data-parallel training throughput with KVStore dist_sync on this machine, and the allreduce
# bandwidth against plain MPI_Allreduce. Run from the source tree after building (Release):
#   bench/dist_scaling.sh [build-dir]
# Each rank trains on --batch 100 (weak scaling: the global batch grows with the ranks) for 100
# steps; samples/s counts all ranks. THREADS is SYMBIND_NUM_THREADS per rank.
set -euo pipefail
build=${1:-build}
mpirun=(mpirun --allow-run-as-root --oversubscribe)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') | $(nproc) cores | load average $(cut -d' ' -f1-3 /proc/loadavg) | $(mpirun --version | head -1)"
echo "| app | ranks | threads/rank | samples/s |"
echo "| --- | --- | --- | --- |"
run() {  # app ranks threads extra-args...
  local app=$1 np=$2 threads=$3
  shift 3
  local sps
  if [ "$np" = 0 ]; then
    sps=$(SYMBIND_NUM_THREADS=$threads "$@" 2>/dev/null | sed -n 's/.*samples_per_s \([0-9]*\).*/\1/p' | tail -1)
    np="1 (no KVStore)"
  else
    sps=$("${mpirun[@]}" -np "$np" -x SYMBIND_NUM_THREADS="$threads" "$@" --kvstore dist_sync 2>/dev/null |
          sed -n 's/.*samples_per_s \([0-9]*\).*/\1/p' | tail -1)
  fi
  echo "| $app | $np | $threads | $sps |"
}
lenet=("$build/apps/symbind-lenet" train --epochs 1 --batch 100 --max-batches 100 --save "$tmp/lenet")
mlp=("$build/apps/symbind-mlp" --epochs 1 --batch 100 --max-batches 300)
for app in lenet mlp; do
  declare -n cmd=$app
  run "$app" 0 2 "${cmd[@]}"
  run "$app" 1 2 "${cmd[@]}"
  run "$app" 2 1 "${cmd[@]}"
  run "$app" 2 2 "${cmd[@]}"
  run "$app" 3 1 "${cmd[@]}"
done
for np in 2 3; do
  echo
  echo "allreduce, $np ranks (bus bandwidth GB/s; ratio = KVStore / MPI):"
  "${mpirun[@]}" -np "$np" "$build/bench/bench_allreduce"
done
