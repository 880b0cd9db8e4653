#!/usr/bin/env bash
# Exported models in ONNX Runtime: each shared model and zoo graph is exported with
# `symbind convert ... -o X.onnx`, run by symbind (from the MXNet files) and by ONNX Runtime
# (npm onnxruntime-node, installed as bench/run.sh installs it) on one random input, and every
# output compared: max |ort - symbind| / max |symbind| <= 1e-4. Run by hand (it needs npm and
# ../shared); results go to docs/onnx.md.
#
#   tests/onnx/check_with_ort.sh [BUILD_DIR] [OPSET] [NAME...]   (defaults: build, 13, all)
# fcn32s's 134M parameters take bench/make_gaussian_params.py (pure Python) a few minutes and
# about 4 GB once; they are kept in the work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
opset=${2:-13}
only=("${@:3}")
tool=$build/tools/symbind
models=../shared/models
work=$build/onnx-ort-check
ort_version=1.30.0  # bench/run.sh's
py=/usr/bin/python3
mkdir -p "$work/ort"
if [ ! -f "$work/ort/node_modules/onnxruntime-node/package.json" ]; then
  (cd "$work/ort" && npm install --ignore-scripts --no-audit --no-fund --silent "onnxruntime-node@$ort_version")
fi
export ORT_NODE_MODULES
ORT_NODE_MODULES=$(cd "$work/ort" && pwd)/node_modules

# ONNX Runtime on X.onnx with input.npy (float32, C order): each output as OUT_DIR/<name>.npy.
ort_run() {
  node - "$1" "$2" "$3" <<'EOF'
const fs = require('fs');
const path = require('path');
const ort = require(path.join(process.env.ORT_NODE_MODULES, 'onnxruntime-node'));
const [model, input, outDir] = process.argv.slice(2);
function npyHeader(dims) {
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  while ((10 + h.length + 1) % 64) h += ' ';
  h += '\n';
  const b = Buffer.alloc(10 + h.length);
  b.write('\x93NUMPY', 0, 'latin1'); b[6] = 1; b[7] = 0; b.writeUInt16LE(h.length, 8); b.write(h, 10, 'latin1');
  return b;
}
(async () => {
  const buf = fs.readFileSync(input);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + hlen);
  const dims = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + hlen, buf.byteOffset + buf.length));
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 2, graphOptimizationLevel: 'all'});
  const out = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', data, dims)});
  for (const name of session.outputNames) {
    const t = out[name];
    fs.writeFileSync(path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'),
                     Buffer.concat([npyHeader(t.dims), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]));
  }
})().catch((e) => { console.error('onnxruntime: ' + e.message); process.exit(1); });
EOF
}

# check NAME SYMBOL PARAMS N,C,H,W
failed=0
check() {
  local name=$1 symbol=$2 params=$3 shape=$4 dir=$work/$1
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then return; fi
  mkdir -p "$dir/symbind" "$dir/ort"
  $py -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(1).uniform(-1, 1, [int(d) for d in sys.argv[2].split(',')]).astype(np.float32))" \
      "$dir/input.npy" "$shape"
  "$tool" convert "$symbol" "$params" -o "$dir/$name.onnx" --shape "data=$shape" --opset "$opset" >/dev/null
  "$tool" run "$symbol" "$params" --shape "data=$shape" --input "data=$dir/input.npy" --all-outputs "$dir/symbind" >/dev/null
  ort_run "$dir/$name.onnx" "$dir/input.npy" "$dir/ort"
  if ! $py - "$name" "$dir" <<'EOF'
import os, sys
import numpy as np
name, d = sys.argv[1:3]
worst, lines = 0.0, []
for f in sorted(os.listdir(os.path.join(d, "symbind"))):
    want = np.load(os.path.join(d, "symbind", f))
    got = np.load(os.path.join(d, "ort", f))
    rel = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)) if got.shape == want.shape else float("inf")
    worst = max(worst, rel)
    lines.append("%s %s %.2e" % (f[:-4], "x".join(map(str, want.shape)), rel))
print("%-12s %d output(s), max rel diff %.2e  [%s]" % (name, len(lines), worst, "; ".join(lines)))
sys.exit(0 if worst <= 1e-4 else 1)
EOF
  then failed=1; fi
}

gaussian() {  # a zoo graph with scaled-Gaussian parameters
  local params=$work/$1.params
  [ -f "$params" ] || $py bench/make_gaussian_params.py "$tool" "$models/symbols/$1-symbol.json" "$2" "$params"
  echo "$params"
}

echo "ONNX Runtime $ort_version vs symbind, opset $opset"
for n in 1 2 3; do
  shapes=([1]=1,3,47,61 [2]=1,3,24,24 [3]=1,3,48,48)
  check "det$n" "$models/mtcnn/det$n-symbol.json" "$models/mtcnn/det$n-0001.params" "${shapes[$n]}"
done
check retina16 "$models/retinaface/retina16-symbol.json" "$models/retinaface/retina16-0000.params" 1,3,480,640
for g in resnet-18 squeezenet_v1.1 caffenet; do
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $g "* ]]; then continue; fi
  check "$g" "$models/symbols/$g-symbol.json" "$(gaussian "$g" 1,3,224,224)" 1,3,224,224
done
if [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" fcn32s "* ]]; then
  check fcn32s "$models/symbols/fcn32s-symbol.json" "$(gaussian fcn32s 1,3,224,224)" 1,3,224,224
fi
check lenet models/lenet-fashion-mnist/lenet-symbol.json models/lenet-fashion-mnist/lenet-0008.params 1,1,28,28
exit $failed
