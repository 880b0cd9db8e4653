#!/usr/bin/env bash
# The .symbind one-file format against the MXNet pair, on ResNet-50 with generated weights:
# open + bind time (`symbind run --input --bench` load_ms / bind_ms, median of RUNS processes,
# page cache warm), the time to a first result (open + bind + first forward, which makes the
# derived weights a prepacked file brings along), file size, and private memory of two
# processes serving the same model (/proc/PID/smaps_rollup while both run). Usage: bench/model_file.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-9}
cmake --build "$build" --target bench_model_file symbind_cli >/dev/null
work=$build/bench-work/model-file
mkdir -p "$work"
tool=$build/tools/symbind
prefix=$work/resnet-50
shape=data=1,3,224,224
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') | $(lscpu | sed -n 's/^Model name: *//p') | $(nproc) cores | load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/bench_model_file" bench/models/resnet-50-symbol.json "$prefix" --shape "$shape"

# The input as a file (zeros), so that bind_ms is the model's bind and not SimpleBind filling
# a --shape placeholder from N(0,1).
python3 - "$work/data.npy" <<'PY'
import sys
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }"
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(4 * 3 * 224 * 224))
PY
input=data=$work/data.npy
# The same model with the kernels' forms stored for this CPU (convert --prepack).
"$tool" convert "$prefix.symbind" -o "$prefix-prepacked.symbind" --prepack --shape "$shape" >/dev/null
model_args() {
  case $1 in
    pair) args=("$prefix-symbol.json" "$prefix-0000.params") ;;
    symbind) args=("$prefix.symbind") ;;
    prepacked) args=("$prefix-prepacked.symbind") ;;
  esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { grep -o "$1=[0-9.e+-]*" | cut -d= -f2; }
declare -A load bind first best
for form in pair symbind prepacked; do
  model_args $form
  "$tool" run "${args[@]}" --input "$input" --bench 1 >/dev/null  # warm the page cache
  out=$(for i in $(seq "$runs"); do "$tool" run "${args[@]}" --input "$input" --bench 1 | grep latency_ms; done)
  load[$form]=$(echo "$out" | field load_ms | median)
  bind[$form]=$(echo "$out" | field bind_ms | median)
  first[$form]=$(echo "$out" | field first_forward_ms | median)
  # The least disturbed process (a busy machine preempts some runs mid-load).
  best[$form]=$(echo "$out" | awk '{ l = $0; sub(/.*load_ms=/, "", l); sub(/ .*/, "", l); b = $0; sub(/.*bind_ms=/, "", b); print l + b }' | sort -g | head -1)
  echo "$form load_ms=${load[$form]} bind_ms=${bind[$form]} open_bind_ms=$(awk -v a="${load[$form]}" -v b="${bind[$form]}" 'BEGIN { print a + b }') (medians) min_open_bind_ms=${best[$form]} first_forward_ms=${first[$form]}"
done
awk -v a="${best[pair]}" -v b="${best[symbind]}" 'BEGIN { printf "min_open_bind_speedup=%.1fx\n", a / b }'
awk -v a="${load[pair]}" -v b="${bind[pair]}" -v c="${load[symbind]}" -v d="${bind[symbind]}" \
  'BEGIN { printf "open_bind_speedup=%.1fx load_speedup=%.1fx\n", (a + b) / (c + d), a / c }'
for form in symbind prepacked; do
  awk -v a="${load[pair]}" -v b="${bind[pair]}" -v f="${first[pair]}" -v c="${load[$form]}" -v d="${bind[$form]}" \
    -v g="${first[$form]}" -v name="$form" \
    'BEGIN { printf "%s first_result_speedup=%.1fx (open + bind + first forward)\n", name, (a + b + f) / (c + d + g) }'
done

# Two processes serving one model: private (not shared) and anonymous memory of each, read
# while both are in their forward loop.
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$2/smaps_rollup"; }
for form in pair symbind prepacked; do
  model_args $form
  "$tool" run "${args[@]}" --input "$input" --threads 1 --bench 400 >/dev/null & p1=$!
  "$tool" run "${args[@]}" --input "$input" --threads 1 --bench 400 >/dev/null & p2=$!
  sleep 6
  for p in $p1 $p2; do
    echo "$form pid=$p rss_kb=$(kb Rss $p) private_kb=$(( $(kb Private_Clean $p) + $(kb Private_Dirty $p) ))" \
         "anonymous_kb=$(kb Anonymous $p) shared_kb=$(( $(kb Shared_Clean $p) + $(kb Shared_Dirty $p) ))"
  done
  kill "$p1" "$p2"
  wait "$p1" "$p2" 2>/dev/null || true
done
