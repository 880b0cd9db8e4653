#!/usr/bin/env bash
# Every symbind benchmark side by side with its peers (ONNX Runtime, PyTorch eager, OpenCV DNN)
# in one run, one table per goal, with ratios. Usage:
#   bench/run.sh [--quick | --ncnn-only | --int8-only] [threads]
# (default 2 threads). --quick: only the ONNX Runtime tables (float32, and int8 with bf16 where the
# CPU has AVX512_BF16), fewer runs (a few
# minutes); --ncnn-only: only the ncnn table (needs SYMBIND_BENCH_NCNN), as many runs as --quick;
# --int8-only: only the int8 table, as many runs as --quick.
#
# Ratios are "speed vs peer": peer time / symbind time (or symbind rate / peer rate), so
# above 1 means symbind is faster. Each classification net runs with the same weights
# (scaled Gaussian, generated once into $build/bench-work/NAME.params by bench/peers.py) in
# all three frameworks, and their logits on one input are compared before timing.
# ONNX Runtime runs the ONNX files the OpenCV column uses, through node (bench/ort_peer.js,
# npm onnxruntime-node installed once into $build/bench-work/ort), interleaved with symbind:
# rounds of symbind, ONNX Runtime, symbind, ... whose times are pooled into min and median.
# Environment: SYMBIND_BENCH_BUILD (build directory, default build), SYMBIND_BENCH_RUNS
# (batch-1 repetitions, default 15; 6 with --quick), SYMBIND_BENCH_ROUNDS (interleaved rounds,
# default 3), SYMBIND_BENCH_ORT_NO_SPIN=1 (ONNX Runtime's threads sleep instead of spinning),
# SYMBIND_BENCH_TRAIN_SIZE (ResNet-18 training input size, default 224), SYMBIND_BENCH_NCNN (adds the
# ncnn table, also with --quick: the prefix of an ncnn you built and installed yourself with its
# tools, i.e. bin/mxnet2ncnn, bin/ncnnoptimize and lib/cmake/ncnn; BENCHMARKS.md says how).
# SYMBIND_GEMM_ISA=avx2 runs symbind's AVX2 kernels on an AVX-512 CPU (its int8 / fp32 ratios as
# an AVX2-only CPU would run the same code; the peers keep their own dispatch, and bf16 is left out).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 ncnn_only=0 int8_only=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
if [ "${1:-}" = --ncnn-only ]; then quick=1 ncnn_only=1; shift; fi
if [ "${1:-}" = --int8-only ]; then quick=1 int8_only=1; shift; fi
threads=${1:-2}
build=${SYMBIND_BENCH_BUILD:-build}
runs=${SYMBIND_BENCH_RUNS:-$([ $quick = 1 ] && echo 6 || echo 15)}
runs8=$(( runs / 3 > 5 ? runs / 3 : 5 ))
rounds=${SYMBIND_BENCH_ROUNDS:-3}
work=$build/bench-work
models=../shared/models
py=/usr/bin/python3
ort_version=1.30.0
# libopenblas0-pthread: Debian's torch otherwise runs on the reference BLAS (see the blas line).
# time: /usr/bin/time -v, the peak RSS of the ONNX Runtime process in the memory table.
# python3-onnx: bench/make_qdq_onnx.py writes ONNX Runtime's int8 models.
scripts/install-deps.sh python3-torch python3-opencv python3-numpy python3-onnx libopenblas0-pthread time
command -v npm >/dev/null || scripts/install-deps.sh nodejs npm
mkdir -p "$work/ort"
if [ ! -f "$work/ort/node_modules/onnxruntime-node/package.json" ] ||
   ! grep -q "\"version\": \"$ort_version\"" "$work/ort/node_modules/onnxruntime-node/package.json"; then
  # --ignore-scripts: the package carries its CPU library; its install script only fetches GPU extras.
  (cd "$work/ort" && npm install --ignore-scripts --no-audit --no-fund --silent "onnxruntime-node@$ort_version")
fi
export ORT_NODE_MODULES
ORT_NODE_MODULES=$(cd "$work/ort" && pwd)/node_modules
ncnn=${SYMBIND_BENCH_NCNN:-}
if [ $ncnn_only = 1 ] && [ -z "$ncnn" ]; then
  echo "run.sh: --ncnn-only needs SYMBIND_BENCH_NCNN=<ncnn install prefix>" >&2
  exit 2
fi
if [ -n "$ncnn" ] && { [ ! -x "$ncnn/bin/mxnet2ncnn" ] || [ ! -d "$ncnn/lib/cmake/ncnn" ]; }; then
  echo "run.sh: SYMBIND_BENCH_NCNN=$ncnn is not an ncnn install with its tools" \
       "(bin/mxnet2ncnn, lib/cmake/ncnn); see BENCHMARKS.md" >&2
  exit 2
fi
if [ -n "$ncnn" ]; then
  ncnn=$(cd "$ncnn" && pwd)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSYMBIND_BENCH_NCNN_DIR="$ncnn" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target ncnn_peer symbind_cli >/dev/null
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if [ $quick = 1 ]; then
  cmake --build "$build" -j "$(nproc)" --target bench_models bench_host_probe symbind_cli >/dev/null
else
  cmake --build "$build" -j "$(nproc)" --target bench_mlp bench_params_load bench_models bench_scale \
    bench_gemm bench_lenet bench_resnet_train bench_host_probe mtcnn-detect symbind_cli >/dev/null
fi
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
# cosine A.npy B.npy: the cosine similarity of two saved outputs, to 4 places.
cosine() { $py -c "import numpy as np, sys; a, b = (np.load(f).ravel().astype(np.float64) for f in sys.argv[1:3]); print('%.4f' % (a @ b / np.sqrt((a @ a) * (b @ b))))" "$1" "$2"; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') | $(lscpu | sed -n 's/^Model name: *//p') | $(nproc) cores" \
  "| $threads threads | load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(c++ --version | head -1) | PyTorch $($py -c 'import torch; print(torch.__version__)')" \
  "| OpenCV $($py -c 'import cv2; print(cv2.__version__)') | ONNX Runtime $ort_version (npm onnxruntime-node," \
  "node $(node --version))"
echo "# PyTorch's BLAS: $($py bench/peers.py --threads "$threads" blas | tr '\n' ' ')"
# The host's state at the start and the end: a shared guest's cores can run at half speed for
# minutes (bench/bench_host_probe.cc), which a ratio measured then should be read with.
echo "# host at the start: $($bin/bench_host_probe)"
[ -z "${SYMBIND_GEMM_ISA:-}" ] || echo "# SYMBIND_GEMM_ISA=$SYMBIND_GEMM_ISA: symbind runs at most those kernels; the peers keep their own dispatch"
trap 'echo; echo "# host at the end: $($bin/bench_host_probe)"' EXIT

# ---------------------------------------------------------------------------------------------
# pooled: "median min" of the times_ms lines in $1 (every run of every round).
pooled() {
  awk '$1 == "times_ms" { for (i = 2; i <= NF; ++i) print $i }' <<<"$1" | sort -g |
    awk '{ t[NR] = $1 } END { if (NR) printf "%.3f %.3f\n", t[int(NR / 2) + 1], t[1] }'
}
# paired PEER SYMBIND: the median over rounds of (the peer's median / symbind's median in that
# round), from the rounds' times_ms lines in order: pairs each round with the one run beside
# it, so a host that slows down for a while moves both sides of a ratio (pooled medians mix
# fast and slow rounds).
round_medians() {
  local line
  grep '^times_ms' <<<"$1" | while read -r line; do
    tr ' ' '\n' <<<"${line#times_ms }" | sort -g | awk '{ t[NR] = $1 } END { printf "%.6f\n", t[int(NR / 2) + 1] }'
  done
}
paired() {
  paste <(round_medians "$1") <(round_medians "$2") | awk '$2 > 0 { print $1 / $2 }' | sort -g |
    awk '{ r[NR] = $1 } END { if (NR) printf "%.2fx\n", r[int((NR + 1) / 2)]; else print "-" }'
}
ort_peer() { node bench/ort_peer.js "$@" --threads "$threads" ${SYMBIND_BENCH_ORT_NO_SPIN:+--no-spin}; }
# The ONNX Runtime table: every net interleaved with symbind (default, and without the inference
# rewrites, BatchNorm folding and activation fusion, at batch 1)
# in $rounds rounds; uses the files bench/peers.py classify wrote.
ort_table() {
  local per=$(( (runs + rounds - 1) / rounds )) per8=$(( (runs8 + rounds - 1) / rounds ))
  per8=$(( per8 < 2 ? 2 : per8 ))
  echo
  echo "## symbind vs ONNX Runtime $ort_version, $threads threads, interleaved ($rounds rounds) $(loadavg)"
  echo "Batch 1: median (min) ms of $(( per * rounds )) runs pooled over the rounds; ratios are ORT / symbind"
  echo "(above 1: symbind faster). Batch 8: images/s from the pooled median of $(( per8 * rounds )) runs."
  echo "rel diff: max |x - torch| / max |torch| of the logits, symbind / ORT. 'no rewrites': symbind"
  echo "with --no-fold --no-fuse (every BatchNorm, relu and clip run as its own node). 'paired': the"
  echo "median over the rounds of each round's ORT / symbind median (batch 1, then batch 8)."
  row net "rel diff" "symbind ms" "no rewrites ms" "ORT ms" "vs ORT" "b8 symbind img/s" "b8 ORT img/s" "b8 vs ORT" \
    "paired b1, b8"
  local spec name symbol size d s1 n1 o1 s8 o8 r
  for spec in "${peer_nets[@]}"; do
    name=${spec%%=*} symbol=${spec#*=} size=224
    if [[ $symbol == *@* ]]; then size=${symbol##*@} symbol=${symbol%@*}; fi
    local d_dir=$work/$name params=$work/$name.params
    local sb=("$bin/bench_models" --threads "$threads" "$symbol" "$params")
    # Timed on inputs uniform in [-1, 1], as ort_peer.js feeds ORT (zeros would run other values).
    local timed=("${sb[@]}" --uniform-input)
    d="$("${sb[@]}" --shape "data=1,3,$size,$size" --logits --input "data=$d_dir/input.npy" \
        --expect "$d_dir/torch.npy" | awk '$1 ~ /^rel_diff/ {print $2}')"
    d="$d/$(val "$(ort_peer "$d_dir/logits.onnx" --input "$d_dir/input.npy" --expect "$d_dir/torch.npy")" rel_diff)"
    s1= n1= o1= s8= o8=
    for r in $(seq "$rounds"); do
      s1+=$'\n'$("${timed[@]}" --shape "data=1,3,$size,$size" --runs "$per")
      n1+=$'\n'$("${timed[@]}" --shape "data=1,3,$size,$size" --runs "$per" --no-fold --no-fuse)
      o1+=$'\n'$(ort_peer "$d_dir/b1.onnx" --runs "$per" --size "$size,$size")
      s8+=$'\n'$("${timed[@]}" --shape "data=8,3,$size,$size" --runs "$per8")
      o8+=$'\n'$(ort_peer "$d_dir/b8.onnx" --runs "$per8" --batch 8 --size "$size,$size")
    done
    read -r sm smin <<<"$(pooled "$s1")"
    read -r om omin <<<"$(pooled "$o1")"
    read -r nm nmin <<<"$(pooled "$n1")"
    read -r s8m _ <<<"$(pooled "$s8")"
    read -r o8m _ <<<"$(pooled "$o8")"
    local s8r o8r
    s8r=$(awk -v t="$s8m" 'BEGIN {printf "%.1f", 8e3 / t}') o8r=$(awk -v t="$o8m" 'BEGIN {printf "%.1f", 8e3 / t}')
    row "$name $size" "$d" "$sm ($smin)" "$nm ($nmin)" "$om ($omin)" "$(faster "$om" "$sm") ($(faster "$omin" "$smin"))" \
      "$s8r" "$o8r" "$(faster "$s8r" "$o8r")" "$(paired "$o1" "$s1"), $(paired "$o8" "$s8")"
  done
}
# The int8 table: each net quantized by `symbind quantize` (naive calibration over 8 inputs
# uniform in [-1, 1], the default int8 data and oneDNN form), timed beside its float32 graph; ONNX Runtime runs
# the QDQ model bench/make_qdq_onnx.py writes from the same ranges (it fuses them into QLinearConv,
# QLinearAdd, ...) beside its float32 file. Batch 1, interleaved rounds as above.
# ncnn_model NAME SYMBOL PARAMS: $ncnn_dir/NAME.param and .bin, converted as an ncnn user would
# (mxnet2ncnn, then ncnnoptimize with fp32 weights). mxnet2ncnn takes BatchNorm's moving mean and
# variance from the node's inputs, which MXNet 0.8 files (the model zoo's resnet-18) do not list:
# it converts the same graph as MXNet 1.x saves it (make_resnet50_symbol.py --depth 18
# reproduces the zoo file node by node).
ncnn_dir=$work/ncnn-models
ncnn_model() {
  local name=$1 symbol=$2 params=$3 base=$ncnn_dir/$1 convert=$2
  mkdir -p "$ncnn_dir"
  if [ "$name" = resnet-18 ]; then
    convert=$ncnn_dir/resnet-18-mxnet1x-symbol.json
    $py bench/make_resnet50_symbol.py --depth 18 "$convert"
  fi
  { "$ncnn/bin/mxnet2ncnn" "$convert" "$params" "$base-raw.param" "$base-raw.bin" &&
    "$ncnn/bin/ncnnoptimize" "$base-raw.param" "$base-raw.bin" "$base.param" "$base.bin" 0; } >"$base-convert.log" 2>&1 ||
    { cat "$base-convert.log" >&2; return 1; }
}

# ncnn_int8 NAME SIZE CALIB.npy: $ncnn_dir/NAME-int8.param and .bin from NAME's ncnn model, by
# ncnn's own tools as its users run them: ncnn2table (its default KL calibration) over the
# calibration inputs symbind quantize read, one .npy per image, then ncnn2int8. The training
# label's Input layer that mxnet2ncnn keeps (SoftmaxOutput's softmax_label, read by nothing) is
# dropped first: ncnn2table wants a calibration list for every Input.
ncnn_int8() {
  local name=$1 size=$2 calib=$3 base=$ncnn_dir/$1
  local list=$base-calib/list.txt
  rm -rf "$base-calib" && mkdir -p "$base-calib"
  $py -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
keep = [l for l in lines[2:] if not (l.split()[0] == "Input" and l.split()[1].endswith("_label"))]
layers, blobs = map(int, lines[1].split())
drop = len(lines) - 2 - len(keep)
open(sys.argv[2], "w").write("\n".join([lines[0], "%d %d" % (layers - drop, blobs - drop)] + keep) + "\n")' \
    "$base.param" "$base-data.param"
  $py -c '
import numpy as np, sys
x = np.load(sys.argv[1]); out = sys.argv[2]
with open(out + "/list.txt", "w") as f:
    for i, a in enumerate(x):
        np.save("%s/%02d.npy" % (out, i), np.ascontiguousarray(a)); f.write("%s/%02d.npy\n" % (out, i))' "$calib" "$base-calib"
  { "$ncnn/bin/ncnn2table" "$base-data.param" "$base.bin" "$list" "$base.table" "shape=[$size,$size,3]" type=1 \
      "thread=$threads" &&
    "$ncnn/bin/ncnn2int8" "$base-data.param" "$base.bin" "$base-int8.param" "$base-int8.bin" "$base.table"; } \
    >"$base-int8.log" 2>&1 || { cat "$base-int8.log" >&2; return 1; }
}

int8_table() {
  local per=$(( (runs + rounds - 1) / rounds ))
  echo
  echo "## int8 (symbind quantize) vs float32, and vs ONNX Runtime $ort_version int8 on the same ranges," \
       "$threads threads, batch 1, interleaved ($rounds rounds) $(loadavg)"
  echo "Median (min) ms of $(( per * rounds )) runs pooled over the rounds. 'int8 / fp32': each framework's"
  echo "int8 time over its float32 time (below 1: int8 faster). 'vs ORT int8': ORT int8 / symbind int8"
  echo "(above 1: symbind faster). cos: cosine similarity of symbind's int8 and float32 outputs on the net's input"
  echo "(Gaussian weights and random calibration inputs: a check that int8 runs the same net, not an accuracy)."
  # bf16 (PredictorOptions::precision) where the CPU has AVX512_BF16: the float32 graph and weights.
  local bf16_cols=() has_bf16=0
  local isa_allows_bf16=1
  case "${SYMBIND_GEMM_ISA:-}" in avx2 | base) isa_allows_bf16=0 ;; esac
  if grep -qw avx512_bf16 /proc/cpuinfo && [ $isa_allows_bf16 = 1 ]; then
    has_bf16=1
    bf16_cols=("symbind bf16" "bf16 / fp32")
    echo "This CPU has AVX512_BF16: symbind bf16 is the float32 graph run with --bf16 (convolutions and"
    echo "FullyConnected in bfloat16, float32 sums); 'bf16 / fp32': its time over symbind fp32's."
  fi
  # int8 with even weight levels (PredictorOptions::int8_even_weights) where the int8 kernels lack
  # VNNI: an AVX2-only CPU, or SYMBIND_GEMM_ISA=avx2|avx512 on one with it.
  local even_cols=() has_even=0
  if grep -qw avx2 /proc/cpuinfo && { ! grep -qw avx512_vnni /proc/cpuinfo ||
                                      [[ "${SYMBIND_GEMM_ISA:-}" == avx2 || "${SYMBIND_GEMM_ISA:-}" == avx512 ]]; }; then
    has_even=1
    even_cols=("symbind int8 even" "even / fp32" "even cos")
    echo "The int8 kernels here lack VNNI: symbind int8 even is the int8 graph run with --int8-even-weights (7-bit"
    echo "weights in the convolutions run as GEMMs, docs/quantization.md); even cos: its output against fp32's."
  fi
  local ncnn_cols=()
  if [ -n "$ncnn" ]; then
    echo "With SYMBIND_BENCH_NCNN: ncnn fp32 and ncnn int8 (ncnn2table's KL calibration on the same inputs, then"
    echo "ncnn2int8); 'vs ncnn int8': ncnn int8 / symbind int8; ncnn cos: ncnn int8's output against symbind fp32's."
    ncnn_cols=("ncnn fp32" "ncnn int8" "ncnn int8 / fp32" "vs ncnn int8" "ncnn cos")
  fi
  row net "symbind fp32" "symbind int8" "int8 / fp32" "ORT fp32" "ORT int8" "ORT int8 / fp32" "vs ORT int8" "cos" \
    "${bf16_cols[@]}" "${even_cols[@]}" "${ncnn_cols[@]}"
  local spec name symbol size d_dir params q f1 q1 b1 e1 o1 oq1 n1 nq1 r agree even_agree ncnn_agree nb
  for spec in "${peer_nets[@]}"; do
    name=${spec%%=*} symbol=${spec#*=} size=224
    if [[ $symbol == *@* ]]; then size=${symbol##*@} symbol=${symbol%@*}; fi
    d_dir=$work/$name params=$work/$name.params q=$work/$name/int8
    $py -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(0).uniform(-1, 1, (8, 3, $size, $size)).astype(np.float32))" \
      "$d_dir/calib.npy"
    "$build/tools/symbind" quantize "$symbol" "$params" --calib "$d_dir/calib.npy" --calib-mode naive -o "$q" >/dev/null
    # The QDQ model takes its ranges from the contrib form's graph (the same calibration), whose
    # nodes name every range make_qdq_onnx.py reads.
    "$build/tools/symbind" quantize "$symbol" "$params" --calib "$d_dir/calib.npy" --calib-mode naive --form contrib \
      -o "$q-contrib" >/dev/null
    "$build/tools/symbind" convert "$symbol" "$params" --fold-batch-norm --shape "data=1,3,$size,$size" \
      -o "$d_dir/folded.onnx" >/dev/null
    $py bench/make_qdq_onnx.py "$d_dir/folded.onnx" "$q-contrib-symbol.json" "$d_dir/int8-qdq.onnx" >/dev/null
    agree=$("$build/tools/symbind" run "$symbol" "$params" --input "data=$d_dir/input.npy" --output "$d_dir/fp32-out.npy" >/dev/null &&
            "$build/tools/symbind" run "$q-symbol.json" "$q-0000.params" --input "data=$d_dir/input.npy" \
              --output "$d_dir/int8-out.npy" >/dev/null &&
            cosine "$d_dir/fp32-out.npy" "$d_dir/int8-out.npy")
    [ $has_even = 0 ] ||
      even_agree=$("$build/tools/symbind" run "$q-symbol.json" "$q-0000.params" --input "data=$d_dir/input.npy" \
                     --int8-even-weights --output "$d_dir/int8-even-out.npy" >/dev/null &&
                   cosine "$d_dir/fp32-out.npy" "$d_dir/int8-even-out.npy")
    nb=$ncnn_dir/$name
    if [ -n "$ncnn" ]; then
      ncnn_model "$name" "$symbol" "$params" && ncnn_int8 "$name" "$size" "$d_dir/calib.npy" || return 1
      # The output blob is the head's node (mxnet2ncnn names blobs after their nodes).
      local head
      head=$($py -c 'import json, sys; g = json.load(open(sys.argv[1])); print(g["nodes"][g["heads"][0][0]]["name"])' "$symbol")
      ncnn_agree=$("$bin/ncnn_peer" "$nb-int8.param" "$nb-int8.bin" --input "data=$d_dir/input.npy" \
                     --expect "$head=$d_dir/fp32-out.npy" --threads "$threads" | awk '$1 ~ /^cos_/ {print $2}')
    fi
    f1= q1= b1= e1= o1= oq1= n1= nq1=
    for r in $(seq "$rounds"); do
      f1+=$'\n'$("$bin/bench_models" --threads "$threads" "$symbol" "$params" --shape "data=1,3,$size,$size" --runs "$per" --uniform-input)
      [ $has_bf16 = 0 ] || b1+=$'\n'$("$bin/bench_models" --threads "$threads" "$symbol" "$params" --shape "data=1,3,$size,$size" \
                                      --runs "$per" --uniform-input --bf16)
      q1+=$'\n'$("$bin/bench_models" --threads "$threads" "$q-symbol.json" "$q-0000.params" --shape "data=1,3,$size,$size" \
                  --runs "$per" --uniform-input)
      [ $has_even = 0 ] || e1+=$'\n'$("$bin/bench_models" --threads "$threads" "$q-symbol.json" "$q-0000.params" \
                                      --shape "data=1,3,$size,$size" --runs "$per" --uniform-input --int8-even-weights)
      o1+=$'\n'$(ort_peer "$d_dir/b1.onnx" --runs "$per" --size "$size,$size" 2>/dev/null)
      oq1+=$'\n'$(ort_peer "$d_dir/int8-qdq.onnx" --runs "$per" --size "$size,$size" 2>/dev/null)
      if [ -n "$ncnn" ]; then
        n1+=$'\n'$("$bin/ncnn_peer" "$nb.param" "$nb.bin" --input "data=$d_dir/input.npy" --threads "$threads" --runs "$per")
        nq1+=$'\n'$("$bin/ncnn_peer" "$nb-int8.param" "$nb-int8.bin" --input "data=$d_dir/input.npy" --threads "$threads" \
                    --runs "$per")
      fi
    done
    read -r fm fmin <<<"$(pooled "$f1")"
    read -r qm qmin <<<"$(pooled "$q1")"
    read -r om omin <<<"$(pooled "$o1")"
    read -r oqm oqmin <<<"$(pooled "$oq1")"
    local bf16_row=()
    if [ $has_bf16 = 1 ]; then
      read -r bm bmin <<<"$(pooled "$b1")"
      bf16_row=("$bm ($bmin)" "$(faster "$bm" "$fm")")
    fi
    local even_row=()
    if [ $has_even = 1 ]; then
      read -r em emin <<<"$(pooled "$e1")"
      even_row=("$em ($emin)" "$(faster "$em" "$fm")" "$even_agree")
    fi
    local ncnn_row=()
    if [ -n "$ncnn" ]; then
      read -r nm nmin <<<"$(pooled "$n1")"
      read -r nqm nqmin <<<"$(pooled "$nq1")"
      ncnn_row=("$nm ($nmin)" "$nqm ($nqmin)" "$(faster "$nqm" "$nm")" "$(faster "$nqm" "$qm") ($(faster "$nqmin" "$qmin"))"
                "$ncnn_agree")
    fi
    row "$name $size" "$fm ($fmin)" "$qm ($qmin)" "$(faster "$qm" "$fm")" "$om ($omin)" "$oqm ($oqmin)" \
      "$(faster "$oqm" "$om")" "$(faster "$oqm" "$qm") ($(faster "$oqmin" "$qmin"))" "$agree" "${bf16_row[@]}" "${even_row[@]}" "${ncnn_row[@]}"
  done
}
peer_nets=(resnet-18="$models/symbols/resnet-18-symbol.json" resnet-50=bench/models/resnet-50-symbol.json
           squeezenet-1.1="$models/symbols/squeezenet_v1.1-symbol.json"
           mobilenet-v2=bench/models/mobilenet-v2-symbol.json mobilefacenet=bench/models/mobilefacenet-symbol.json@112)

# The ncnn table (SYMBIND_BENCH_NCNN): the five nets above (files of bench/peers.py classify) and
# two 640x480 detectors: RetinaFace-MobileNet0.25 (bench/models/retinaface-mnet25-symbol.json
# from bench/make_retinaface_symbol.py, Gaussian weights from bench/make_gaussian_params.py)
# and MTCNN's det1 (its released weights). Each is converted as an ncnn user would: mxnet2ncnn
# on the symbol JSON and .params, then ncnnoptimize (fp32 weights). Correctness: ncnn's outputs
# against `symbind run --all-outputs` on one input (the logits, i.e. the SoftmaxOutput's input,
# for the classifiers; every head for the detectors). Timing: $rounds interleaved rounds of
# symbind (bench_models) and ncnn (bench/ncnn_peer.cc, fp32 storage, packed layouts, $threads
# OpenMP threads under the environment's OMP_WAIT_POLICY), then ncnn once more with
# OMP_WAIT_POLICY=PASSIVE for its CPU time (spinning threads would count as work); symbind's
# CPU time is from its own runs.
ncnn_table() {
  local per=$(( (runs + rounds - 1) / rounds ))
  local nd=$ncnn_dir tool=$build/tools/symbind
  mkdir -p "$nd"
  local rf=bench/models/retinaface-mnet25-symbol.json rf_params=$nd/retinaface-mnet25-0000.params
  [ -f "$rf_params" ] || $py bench/make_gaussian_params.py "$tool" "$rf" 1,3,480,640 "$rf_params"
  $py -c 'import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(3).uniform(-1, 1, (1, 3, 480, 640)).astype(np.float32))' \
    "$nd/input-640x480.npy"
  local specs=() spec
  for spec in "${peer_nets[@]}"; do
    local name=${spec%%=*} symbol=${spec#*=} size=224
    if [[ $symbol == *@* ]]; then size=${symbol##*@} symbol=${symbol%@*}; fi
    specs+=("$name|$symbol|$work/$name.params|1,3,$size,$size|$work/$name/input.npy|logits")
  done
  specs+=("retinaface-mnet25|$rf|$rf_params|1,3,480,640|$nd/input-640x480.npy|heads"
          "mtcnn-det1|$models/mtcnn/det1-symbol.json|$models/mtcnn/det1-0001.params|1,3,480,640|$nd/input-640x480.npy|heads")
  echo
  echo "## symbind vs ncnn (master, installed at SYMBIND_BENCH_NCNN), $threads threads, interleaved ($rounds rounds) $(loadavg)"
  echo "Wall: median (min) ms of $(( per * rounds )) runs pooled over the rounds; CPU: process CPU ms per forward"
  echo "(all threads), median (min); ncnn's CPU with OMP_WAIT_POLICY=PASSIVE. Ratios ncnn / symbind (above 1:"
  echo "symbind faster). rel diff: max |ncnn - symbind| / max |symbind| over the compared outputs."
  echo "paired: the median over the rounds of each round's ncnn / symbind wall median."
  row net input "rel diff" "symbind ms" "ncnn ms" "vs ncnn" "symbind CPU ms" "ncnn CPU ms" "CPU vs ncnn" "paired"
  local name symbol params shape input what
  for spec in "${specs[@]}"; do
    IFS='|' read -r name symbol params shape input what <<<"$spec"
    local base=$nd/$name refs=$nd/$name-symbind
    ncnn_model "$name" "$symbol" "$params" || return 1
    # Blobs to compare: mxnet2ncnn names a blob after the node producing it, and ncnnoptimize
    # keeps the last name of a fused chain (conv+bn+relu is the relu's blob).
    local blobs
    blobs=$($py -c '
import json, sys
g = json.load(open(sys.argv[1])); n = g["nodes"]; heads = [n[h[0]] for h in g["heads"]]
if sys.argv[2] == "logits":
    h = heads[0]
    heads = [n[h["inputs"][0][0]]] if h["op"] == "SoftmaxOutput" else heads
print(" ".join(h["name"] for h in heads))' "$symbol" "$what")
    rm -rf "$refs" && mkdir -p "$refs"
    local outs=() expects=() b
    for b in $blobs; do outs+=("${b}_output"); expects+=(--expect "$b=$refs/${b}_output.npy"); done
    "$tool" run "$symbol" "$params" --input "data=$input" --outputs "$(IFS=,; echo "${outs[*]}")" \
      --all-outputs "$refs" --threads "$threads" >/dev/null
    local d
    d=$("$bin/ncnn_peer" "$base.param" "$base.bin" --input "data=$input" "${expects[@]}" --threads "$threads" |
        awk '$1 ~ /^rel_diff/ {print $2}' | sort -g | tail -1)
    # The same input file for both; the classifiers without their softmax in both.
    local sb=("$bin/bench_models" --threads "$threads" "$symbol" "$params" --shape "data=$shape" --input "data=$input")
    [ "$what" = heads ] || sb+=(--logits)
    local nc=("$bin/ncnn_peer" "$base.param" "$base.bin" --input "data=$input" --threads "$threads")
    for b in $blobs; do nc+=(--output "$b"); done
    local s1= n1= nc1= r
    for r in $(seq "$rounds"); do
      s1+=$'\n'$("${sb[@]}" --runs "$per")
      n1+=$'\n'$("${nc[@]}" --runs "$per")
      nc1+=$'\n'$(OMP_WAIT_POLICY=PASSIVE "${nc[@]}" --runs "$per")
    done
    local sm smin nm nmin scm scmin ncm ncmin
    read -r sm smin <<<"$(pooled "$s1")"
    read -r nm nmin <<<"$(pooled "$n1")"
    read -r scm scmin <<<"$(pooled "$(cpu "$s1")")"
    read -r ncm ncmin <<<"$(pooled "$(cpu "$nc1")")"
    row "$name" "${shape#1,3,}" "$d" "$sm ($smin)" "$nm ($nmin)" "$(faster "$nm" "$sm") ($(faster "$nmin" "$smin"))" \
      "$scm ($scmin)" "$ncm ($ncmin)" "$(faster "$ncm" "$scm") ($(faster "$ncmin" "$scmin"))" "$(paired "$n1" "$s1")"
  done
}
# cpu OUTPUT: its cpu_times_ms lines renamed times_ms, for pooled.
cpu() { grep '^cpu_times_ms' <<<"$1" | sed 's/^cpu_//'; }

if [ $quick = 1 ]; then
  $py bench/peers.py --threads "$threads" --runs 0 --runs8 0 classify "$work" "${peer_nets[@]}" >/dev/null
  [ $ncnn_only = 1 ] || [ $int8_only = 1 ] || ort_table
  [ $ncnn_only = 1 ] || int8_table
  [ -z "$ncnn" ] || [ $int8_only = 1 ] || ncnn_table
  exit 0
fi

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
  # Timed on inputs uniform in [-1, 1], as peers.py times torch and OpenCV.
  ours[$name]="$($bin/bench_models --threads "$threads" "$symbol" "$work/$name.params" --shape data=1,3,224,224 --runs "$runs" --uniform-input)
b8_$($bin/bench_models --threads "$threads" "$symbol" "$work/$name.params" --shape data=8,3,224,224 --runs "$runs8" --uniform-input | grep images_per_s)"
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

# The mobile nets have no torch/OpenCV timing above: their files only, then the ORT table.
$py bench/peers.py --threads "$threads" --runs 0 --runs8 0 classify "$work" "${peer_nets[@]:3}" >/dev/null
ort_table
int8_table
[ -z "$ncnn" ] || ncnn_table

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
# ResNet-18 (torchvision's layout), batch 16: the same symbol JSON in both, interleaved rounds of
# one process each (1 warm-up step, 2 timed steps); samples/s from the pooled median step.
r18=$work/resnet-18-v1-symbol.json train_size=${SYMBIND_BENCH_TRAIN_SIZE:-224}
$py bench/make_resnet_v1_symbol.py "$r18"
st= pt=
for r in $(seq "$rounds"); do
  st+=$'\n'$($bin/bench_resnet_train "$r18" --threads "$threads" --batch 16 --size "$train_size" --runs 2 --warmup 1)
  pt+=$'\n'$($py bench/peers.py --threads "$threads" --runs 2 resnet-train "$r18" --batch 16 --size "$train_size" --warmup 1)
done
read -r sm smin <<<"$(pooled "$st")"
read -r pm pmin <<<"$(pooled "$pt")"
a=$(awk -v t="$sm" 'BEGIN {printf "%.2f", 16e3 / t}') b=$(awk -v t="$pm" 'BEGIN {printf "%.2f", 16e3 / t}')
row "ResNet-18 b16 $train_size" "$a" "$b" "$(faster "$a" "$b")"
echo "ResNet-18: step ms median (min) of $(( 2 * rounds )) steps in $rounds interleaved rounds: symbind $sm ($smin)," \
  "pytorch $pm ($pmin); parameters $(val "$st" parameters) / $(val "$pt" parameters); first round's forward /" \
  "backward / update ms: symbind $(val "$st" forward_ms) / $(val "$st" backward_ms) / $(val "$st" update_ms)," \
  "pytorch $(val "$pt" forward_ms) / $(val "$pt" backward_ms) / $(val "$pt" update_ms)"
read -r scm scmin <<<"$(pooled "$(cpu "$st")")"
read -r pcm pcmin <<<"$(pooled "$(cpu "$pt")")"
echo "ResNet-18: process CPU ms per step (all threads; PyTorch's OpenMP wait policy ${OMP_WAIT_POLICY:-ACTIVE, spinning time counts}) median (min):" \
  "symbind $scm ($scmin), pytorch $pcm ($pcmin), pytorch / symbind $(faster "$pcmin" "$scmin") of the minimums"

# ---------------------------------------------------------------------------------------------
echo
echo "## Memory: ResNet-50 batch-1 inference (MiB) $(loadavg)"
r50=(--threads "$threads" bench/models/resnet-50-symbol.json "$work/resnet-50.params" --shape data=1,3,224,224 --memory)
plan0=$(SYMBIND_MEMORY_PLAN=0 $bin/bench_models "${r50[@]}")
plan1=$(SYMBIND_MEMORY_PLAN=1 $bin/bench_models "${r50[@]}")
compact=$(SYMBIND_MEMORY_PLAN=1 $bin/bench_models "${r50[@]}" --compact-weights)
peer=$($py bench/peers.py --threads "$threads" resnet50-memory bench/models/resnet-50-symbol.json "$work/resnet-50.params")
row process "at start" "peak RSS" "resident after" "peak - start"
for p in "plan0" "plan1" "compact"; do
  out=${!p}
  label="symbind PLAN=${p#plan}"
  [ "$p" = compact ] && label="symbind --compact-weights"
  row "$label" "$(val "$out" rss_at_start_mb)" "$(val "$out" peak_rss_mb)" "$(val "$out" rss_after_runs_mb)" \
    "$(awk -v a="$(val "$out" peak_rss_mb)" -v b="$(val "$out" rss_at_start_mb)" 'BEGIN{printf "%.1f", a-b}')"
done
row "pytorch" "$(val "$peer" torch_rss_at_start_mb)" "$(val "$peer" torch_peak_rss_mb)" "$(val "$peer" torch_rss_after_runs_mb)" \
  "$(awk -v a="$(val "$peer" torch_peak_rss_mb)" -v b="$(val "$peer" torch_rss_at_start_mb)" 'BEGIN{printf "%.1f", a-b}')"
# ONNX Runtime on the same weights (b1.onnx, written by peers.py classify above): 2 warm-up runs
# and 1 timed; the peak RSS of the whole node process from /usr/bin/time, its "at start" that
# of a node process which only loads onnxruntime-node.
max_rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}'; }
ort_peak=$(max_rss node bench/ort_peer.js "$work/resnet-50/b1.onnx" --threads "$threads" --runs 1)
ort_start=$(max_rss node -e "require('$ORT_NODE_MODULES/onnxruntime-node')")
row "onnxruntime (node)" "$ort_start" "$ort_peak" "-" "$(awk -v a="$ort_peak" -v b="$ort_start" 'BEGIN{printf "%.1f", a-b}')"
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
echo "GemmPacked (the convolutions' path: packed weights, bias in the store), hot caches:"
row "M N K" "symbind" "" "" "of peak" "shape"
while read -r _ m n k g frac what; do
  row "$m $n $k" "$g" "" "" "$frac" "$what"
done < <(grep '^packed ' <<<"$gemm")
