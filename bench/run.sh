#!/usr/bin/env bash
# Every symbind benchmark side by side with its peers (PyTorch eager, OpenCV DNN) in one run,
# one table per goal, with ratios. Usage: bench/run.sh [threads]   (default 2)
#
# Ratios are "speed vs peer": peer time / symbind time (or symbind rate / peer rate), so
# above 1 means symbind is faster. Each classification net runs with the same weights
# (scaled Gaussian, generated once into $build/bench-work/NAME.params by bench/peers.py) in
# all three frameworks, and their logits on one input are compared before timing.
# Environment: SYMBIND_BENCH_BUILD (build directory, default build), SYMBIND_BENCH_RUNS
# (batch-1 repetitions, default 15).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
build=${SYMBIND_BENCH_BUILD:-build}
runs=${SYMBIND_BENCH_RUNS:-15}
runs8=$(( runs / 3 > 5 ? runs / 3 : 5 ))
work=$build/bench-work
models=../shared/models
py=/usr/bin/python3
scripts/install-deps.sh python3-torch python3-opencv python3-numpy
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target bench_mlp bench_params_load bench_models bench_scale \
  bench_gemm bench_lenet mtcnn-detect >/dev/null
mkdir -p "$work"
bin=$build/bench
# Thread counts for every framework. PyTorch keeps its default OpenMP wait policy (spinning),
# which is fastest on a quiet machine; on a loaded one spinning threads are descheduled
# mid-barrier and PyTorch becomes 10-30x slower, so SYMBIND_BENCH_OMP_PASSIVE=1 makes them
# sleep instead (say so when quoting such a run).
export SYMBIND_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
if [ "${SYMBIND_BENCH_OMP_PASSIVE:-0}" = 1 ]; then export OMP_WAIT_POLICY=PASSIVE; fi
export PYTHONWARNINGS=ignore

# val OUTPUT KEY [NAME]: the value of "KEY value" (or "NAME KEY value") lines.
val() {
  if [ $# -eq 3 ]; then awk -v n="$3" -v k="$2" '$1==n && $2==k {print $3; exit}' <<<"$1"
  else awk -v k="$2" '$1==k {print $2; exit}' <<<"$1"; fi
}
# faster NUMERATOR DENOMINATOR: "1.23x" (ratio of two numbers), "-" when either is missing.
faster() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx\n", a / b }'; }
loadavg() { echo "(load average $(cut -d' ' -f1 /proc/loadavg))"; }
row() { printf "%-22s" "$1"; shift; printf " %17s" "$@"; echo; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') | $(lscpu | sed -n 's/^Model name: *//p') | $(nproc) cores" \
  "| $threads threads | load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(c++ --version | head -1) | PyTorch $($py -c 'import torch; print(torch.__version__)')" \
  "| OpenCV $($py -c 'import cv2; print(cv2.__version__)')"

# ---------------------------------------------------------------------------------------------
echo
echo "## ImageNet nets, 224x224: batch-1 latency (median ms) and batch-8 throughput (images/s) $(loadavg)"
nets=(resnet-18="$models/symbols/resnet-18-symbol.json" resnet-50=bench/models/resnet-50-symbol.json
      squeezenet-1.1="$models/symbols/squeezenet_v1.1-symbol.json" caffenet="$models/symbols/caffenet-symbol.json")
$py bench/check_resnet_generator.py  # ResNet-50's generator reproduces MXNet's ResNet-18
# Net by net, the three frameworks back to back, so that they see the same machine load.
declare -A diff ours peers
for spec in "${nets[@]}"; do
  name=${spec%%=*} symbol=${spec#*=}
  peers[$name]=$($py bench/peers.py --threads "$threads" --runs "$runs" --runs8 "$runs8" classify "$work" "$spec")
  check=$($bin/bench_models --threads "$threads" "$symbol" "$work/$name.params" --shape data=1,3,224,224 --logits \
    --input data="$work/$name/input.npy" --expect "$work/$name/torch.npy")
  diff[$name]="$(awk '$1 ~ /^rel_diff/ {print $2}' <<<"$check")/$(val "${peers[$name]}" torch_opencv_rel_diff "$name")"
  ours[$name]="$($bin/bench_models --threads "$threads" "$symbol" "$work/$name.params" --shape data=1,3,224,224 --runs "$runs")
b8_$($bin/bench_models --threads "$threads" "$symbol" "$work/$name.params" --shape data=8,3,224,224 --runs "$runs8" | grep images_per_s)"
done
echo "Same logits first: relative max |difference| (max |a-b| / max |b|) symbind-vs-torch / torch-vs-opencv."
echo "Batch-1 latency in ms, median (min) of $runs runs; ratios of the medians (and of the minimums)."
row net "rel diff" "symbind ms" "torch ms" "opencv ms" "vs torch" "vs opencv"
for spec in "${nets[@]}"; do
  n=${spec%%=*} p=${peers[${spec%%=*}]}
  s=$(val "${ours[$n]}" latency_ms) sm=$(val "${ours[$n]}" latency_min_ms)
  t=$(val "$p" torch_latency_ms "$n") tm=$(val "$p" torch_latency_min_ms "$n")
  o=$(val "$p" opencv_latency_ms "$n") om=$(val "$p" opencv_latency_min_ms "$n")
  row "$n" "${diff[$n]}" "$s ($sm)" "$t ($tm)" "$o ($om)" "$(faster "$t" "$s") ($(faster "$tm" "$sm"))" \
    "$(faster "$o" "$s") ($(faster "$om" "$sm"))"
done
echo
echo "Batch 8: images/s from the median of $runs8 runs."
row net "symbind img/s" "torch img/s" "opencv img/s" "vs torch" "vs opencv"
for spec in "${nets[@]}"; do
  n=${spec%%=*} p=${peers[${spec%%=*}]}
  s=$(val "${ours[$n]}" b8_images_per_s) t=$(val "$p" torch_b8_images_per_s "$n") o=$(val "$p" opencv_b8_images_per_s "$n")
  row "$n" "$s" "$t" "$o" "$(faster "$s" "$t")" "$(faster "$s" "$o")"
done

# ---------------------------------------------------------------------------------------------
echo
echo "## MTCNN per network (median ms): symbind on the MXNet files, OpenCV DNN on the Caffe files $(loadavg)"
mt=$models/mtcnn
peer=$($py bench/peers.py --threads "$threads" --runs "$runs" mtcnn "$mt" "$work/mtcnn")
echo "Median (min) of $runs runs; ratio of the medians (of the minimums)."
row network input "rel diff" "symbind ms" "opencv ms" "vs opencv"
for spec in det1:1,3,480,640:conv4_2=conv4-2 det2:32,3,24,24:conv5_2=conv5-2 det3:16,3,48,48:conv6_2=conv6-2; do
  IFS=: read -r net shape pair <<<"$spec"
  w=$work/mtcnn/$net
  out=$($bin/bench_models --threads "$threads" "$mt/$net-symbol.json" "$mt/$net-0001.params" --shape data="$shape" --runs "$runs" \
    --input data="${w}_input.npy" --expect prob1_output="${w}_prob1.npy" --expect "${pair%%=*}_output=${w}_${pair#*=}.npy")
  d=$(awk '$1 ~ /^rel_diff/ {print $2}' <<<"$out" | sort -g | tail -1)
  o=$(val "$peer" "${net}_opencv_ms") om=$(val "$peer" "${net}_opencv_min_ms")
  s=$(val "$out" latency_ms) sm=$(val "$out" latency_min_ms)
  row "$net" "$shape" "$d" "$s ($sm)" "$o ($om)" "$(faster "$o" "$s") ($(faster "$om" "$sm"))"
done
app=$($build/apps/mtcnn-detect "$mt" "$mt/test.jpg" --repeat 5 | tail -1)
start_ns=$(date +%s%N)
$build/apps/mtcnn-detect "$mt" "$mt/test.jpg" >/dev/null
process_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
peer=$($py bench/peers.py --threads "$threads" --runs 3 mtcnn-pipeline "$mt" "$mt/test.jpg")
app_ms=$(awk '{print $4}' <<<"$app") peer_ms=$(val "$peer" mtcnn_pipeline_opencv_ms)
echo
row pipeline "faces" "symbind ms" "reference ms" "vs reference"
row "test.jpg 1000x750" "$(awk '{print $1}' <<<"$app")/$(awk '{print $4}' <<<"$peer")" "$app_ms" "$peer_ms" "$(faster "$peer_ms" "$app_ms")"
echo "(symbind: mtcnn-detect's detection time, fastest of 5; reference: scripts/mtcnn_reference.py, NumPy + OpenCV DNN,"
echo " fastest of 3. One whole mtcnn-detect process, loading the models and decoding the image included: $process_ms ms)"

# ---------------------------------------------------------------------------------------------
echo
echo "## Training throughput (samples/s), same net, batch and optimiser $(loadavg)"
ours=$($bin/bench_mlp "$threads")
peer=$($py bench/torch_mlp.py "$threads")
lenet=$($bin/bench_lenet "$threads" 100)
lenet_peer=$($py bench/peers.py --threads "$threads" lenet-train --batches 100)
row workload symbind pytorch "vs torch"
a=$(val "$ours" mlp_train_samples_per_s) b=$(val "$peer" mlp_train_samples_per_s)
row "MLP batch 100 SGD" "$a" "$b" "$(faster "$a" "$b")"
a=$(val "$lenet" lenet_train_samples_per_s) b=$(val "$lenet_peer" lenet_train_samples_per_s)
row "LeNet F-MNIST b100" "$a" "$b" "$(faster "$a" "$b")"
a=$(val "$ours" mlp_infer_b1_median_us) b=$(val "$peer" mlp_infer_b1_median_us)
row "MLP infer b1 (us)" "$a" "$b" "$(faster "$b" "$a")"

# ---------------------------------------------------------------------------------------------
echo
echo "## Memory: ResNet-50 batch-1 inference (MiB) $(loadavg)"
r50=(--threads "$threads" bench/models/resnet-50-symbol.json "$work/resnet-50.params" --shape data=1,3,224,224 --memory)
plan0=$(SYMBIND_MEMORY_PLAN=0 $bin/bench_models "${r50[@]}")
plan1=$(SYMBIND_MEMORY_PLAN=1 $bin/bench_models "${r50[@]}")
peer=$($py bench/peers.py --threads "$threads" resnet50-memory bench/models/resnet-50-symbol.json "$work/resnet-50.params")
row process "at start" "peak RSS" "resident after" "peak - start"
for p in "plan0" "plan1"; do
  out=${!p}
  row "symbind PLAN=${p#plan}" "$(val "$out" rss_at_start_mb)" "$(val "$out" peak_rss_mb)" "$(val "$out" rss_after_runs_mb)" \
    "$(awk -v a="$(val "$out" peak_rss_mb)" -v b="$(val "$out" rss_at_start_mb)" 'BEGIN{printf "%.1f", a-b}')"
done
row "pytorch" "$(val "$peer" torch_rss_at_start_mb)" "$(val "$peer" torch_peak_rss_mb)" "$(val "$peer" torch_rss_after_runs_mb)" \
  "$(awk -v a="$(val "$peer" torch_peak_rss_mb)" -v b="$(val "$peer" torch_rss_at_start_mb)" 'BEGIN{printf "%.1f", a-b}')"
echo "weights $(val "$plan1" weights_mb) MiB; from shapes: largest op inputs+outputs $(val "$plan1" largest_activation_pair_mb) MiB," \
  "all activations without reuse $(val "$plan1" all_activations_mb) MiB; symbind peak before bind" \
  "(parameters loaded) $(val "$plan1" peak_rss_before_bind_mb) MiB"

# ---------------------------------------------------------------------------------------------
echo
echo "## Loading .params from the page cache $(loadavg)"
load=$($bin/bench_params_load "$work/params-load.params")
a=$(val "$load" params_load_gb_per_s) b=$(val "$load" memcpy_gb_per_s)
row metric "GB/s" "memcpy GB/s" "of memcpy"
row "256 MiB, 64 arrays" "$a" "$b" "$(faster "$a" "$b")"

# ---------------------------------------------------------------------------------------------
echo
echo "## Graph scale: shape inference and SimpleBind of a generated FC/relu/add ladder (goal: 10k nodes < 50 ms) $(loadavg)"
$bin/bench_scale "$threads"

# ---------------------------------------------------------------------------------------------
echo
echo "## GEMM GFLOP/s (ops/kernels/gemm.cc) vs torch.mm and the machine's peak $(loadavg)"
gemm=$($bin/bench_gemm "$threads")
peer=$($py bench/peers.py --threads "$threads" gemm)
grep -E '^(gemm_isa|cpu_mhz|peak_gflops)' <<<"$gemm"
row "M N K" "symbind" "torch.mm" "vs torch" "of peak" "shape"
while read -r _ m n k g frac what; do
  t=$(awk -v m="$m" -v n="$n" -v k="$k" '$2==m && $3==n && $4==k {print $5}' <<<"$peer")
  row "$m $n $k" "$g" "$t" "$(faster "$g" "$t")" "$frac" "$what"
done < <(grep '^gemm ' <<<"$gemm")
