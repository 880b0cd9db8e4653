#!/usr/bin/env bash
# Process CPU time per forward of symbind and ONNX Runtime, interleaved, net by net: the
# measure that survives a shared, overloaded machine (wall time there mostly measures waiting
# for a core). Usage (after bench/run.sh --quick has written build/bench-work):
#
#   bench/cpu_vs_ort.sh [--batch N] [--rounds R] [--baseline DIR] [NET...]
#
# NET: resnet-18 resnet-50 squeezenet-1.1 mobilenet-v2 mobilefacenet (default: all). Each round
# runs, per net, symbind (bench_conv_paths model, 2 threads: the minimum over 3 rounds of 4
# forwards), the same with the libsymbind.so.0 in DIR when --baseline is given (a previous
# build, for before/after), and ONNX Runtime (bench/ort_peer.js --no-spin, 2 threads): its
# user + system time of R1 forwards minus that of 2 (start-up and model load), divided by
# R1 - 2 (10 ms resolution: R1 is chosen for about 1.5 s of work). Prints one line per net and
# round: symbind, baseline and ORT CPU ms, and the ratio ORT / symbind (above 1: symbind uses
# less CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
batch=1 rounds=3 baseline=
while [ $# -gt 0 ]; do
  case $1 in
    --batch) batch=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    *) break ;;
  esac
done
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(resnet-18 resnet-50 squeezenet-1.1 mobilenet-v2 mobilefacenet)
build=${SYMBIND_BENCH_BUILD:-build}
work=$build/bench-work
export ORT_NODE_MODULES
ORT_NODE_MODULES=$(cd "$work/ort" && pwd)/node_modules

symbol_of() {
  case $1 in
    resnet-18) echo ../shared/models/symbols/resnet-18-symbol.json ;;
    squeezenet-1.1) echo ../shared/models/symbols/squeezenet_v1.1-symbol.json ;;
    *) echo "bench/models/$1-symbol.json" ;;
  esac
}
# symbind_cpu [LIBDIR]: the fast-path minimum of bench_conv_paths model.
symbind_cpu() {
  LD_LIBRARY_PATH=${1:-} "$build/bench/bench_conv_paths" model "$symbol" "$work/$net.params" "$shape" \
    --threads 2 --rounds 3 --runs 4 | awk '$1 == "cpu_ms_fast" {print $3}'
}
cpu_s() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
ort_cpu() {
  local onnx=$work/$net/b$([ "$batch" = 1 ] && echo 1 || echo 8).onnx runs=$1
  local args=(node bench/ort_peer.js "$onnx" --threads 2 --no-spin --batch "$batch" --size "$size,$size")
  local long short
  long=$(cpu_s "${args[@]}" --runs "$runs")
  short=$(cpu_s "${args[@]}" --runs 2)
  awk -v l="$long" -v s="$short" -v n="$runs" 'BEGIN {printf "%.2f", (l - s) * 1e3 / (n - 2)}'
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') batch $batch, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-16s %6s %12s %12s %10s %12s\n" net round "symbind ms" "baseline ms" "ORT ms" "ORT/symbind"
for net in "${nets[@]}"; do
  symbol=$(symbol_of "$net") size=224
  [ "$net" = mobilefacenet ] && size=112
  shape=$batch,3,$size,$size
  mine=$(symbind_cpu)  # also sets how many ORT forwards make ~1.5 s of CPU
  runs=$(awk -v t="$mine" 'BEGIN {r = int(1500 / t); print (r < 8 ? 8 : r > 200 ? 200 : r)}')
  for r in $(seq "$rounds"); do
    [ "$r" = 1 ] || mine=$(symbind_cpu)
    base=-
    [ -z "$baseline" ] || base=$(symbind_cpu "$baseline")
    ort=$(ort_cpu "$runs")
    printf "%-16s %6s %12s %12s %10s %12s\n" "$net" "$r" "$mine" "$base" "$ort" \
      "$(awk -v o="$ort" -v s="$mine" 'BEGIN {printf "%.2fx", o / s}')"
  done
done
