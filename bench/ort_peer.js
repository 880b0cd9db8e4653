#!/usr/bin/env node
// ONNX Runtime (npm onnxruntime-node, its bundled CPU library) as a peer for bench/run.sh, on
// the ONNX files bench/peers.py exports for the OpenCV column.
//
//   node bench/ort_peer.js MODEL.onnx --threads T [--runs R] [--batch N --size H,W]
//        [--input X.npy --expect REF.npy] [--no-spin] [--profile PREFIX]
//
// Prints "key value" lines: with --expect, rel_diff (max |ort - ref| / max |ref|) of the first
// output on X; with --runs, times_ms (every run after 2 warm-ups; input uniform in [-1, 1]),
// latency_ms (median) and latency_min_ms. Threads: intra_op_num_threads = T, one inter-op
// thread, sequential execution, all graph optimisations (ONNX Runtime's defaults otherwise:
// its pool threads spin while waiting for work; --no-spin makes them sleep, the fairer choice
// on a machine loaded by other processes, as OMP_WAIT_POLICY=PASSIVE is for PyTorch).
// --profile PREFIX: ONNX Runtime's own profiler writes PREFIX_<date>.json, one event per node
// and run ("<node>_kernel_time", dur in microseconds), to compare layers with symbind's --profile.
'use strict';
const fs = require('fs');
const path = require('path');
// The package lives in a bench-local folder (bench/run.sh installs it); ORT_NODE_MODULES names it.
const ort = require(path.join(process.env.ORT_NODE_MODULES || 'node_modules', 'onnxruntime-node'));

function parseArgs(argv) {
  const a = {threads: 2, runs: 0, batch: 1, size: [224, 224]};
  for (let i = 0; i < argv.length; ++i) {
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(argv[i] + ' needs a value');
      return argv[++i];
    };
    switch (argv[i]) {
      case '--threads': a.threads = parseInt(next(), 10); break;
      case '--runs': a.runs = parseInt(next(), 10); break;
      case '--batch': a.batch = parseInt(next(), 10); break;
      case '--size': a.size = next().split(',').map(Number); break;
      case '--input': a.input = next(); break;
      case '--expect': a.expect = next(); break;
      case '--no-spin': a.noSpin = true; break;
      case '--profile': a.profile = next(); break;
      default:
        if (argv[i].startsWith('--')) throw new Error('unknown option ' + argv[i]);
        a.model = argv[i];
    }
  }
  if (!a.model) throw new Error('usage: ort_peer.js MODEL.onnx [--threads T] [--runs R] ...');
  return a;
}

// A little-endian float32 .npy file (what NumPy's np.save writes for float32 arrays).
function loadNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True"))
    throw new Error(file + ': expected a C-order little-endian float32 array, header ' + header.trim());
  const dims = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return {dims, data};
}

function median(v) {
  const s = [...v].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const options = {intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
                   graphOptimizationLevel: 'all'};
  if (a.noSpin) options.extra = {session: {intra_op: {allow_spinning: '0'}}};
  if (a.profile) Object.assign(options, {enableProfiling: true, profileFilePrefix: a.profile});
  const session = await ort.InferenceSession.create(a.model, options);
  const inputName = session.inputNames[0];
  const outputName = session.outputNames[0];
  if (a.expect) {
    const x = loadNpy(a.input);
    const ref = loadNpy(a.expect);
    const out = (await session.run({[inputName]: new ort.Tensor('float32', x.data, x.dims)}))[outputName];
    if (out.data.length !== ref.data.length)
      throw new Error(`output has ${out.data.length} values, reference ${ref.data.length}`);
    let diff = 0, scale = 1e-30;
    for (let i = 0; i < out.data.length; ++i) {
      diff = Math.max(diff, Math.abs(out.data[i] - ref.data[i]));
      scale = Math.max(scale, Math.abs(ref.data[i]));
    }
    console.log('rel_diff ' + (diff / scale).toExponential(2));
  }
  if (a.runs > 0) {
    const dims = [a.batch, 3, a.size[0], a.size[1]];
    const values = new Float32Array(dims.reduce((p, d) => p * d, 1));
    let seed = 1;
    for (let i = 0; i < values.length; ++i) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      values[i] = (seed / 2147483648) * 2 - 1;
    }
    const feeds = {[inputName]: new ort.Tensor('float32', values, dims)};
    const times = [];
    for (let i = 0; i < a.runs + 2; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      if (i >= 2) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    console.log('times_ms ' + times.map((t) => t.toFixed(3)).join(' '));
    console.log('latency_ms ' + median(times).toFixed(3));
    console.log('latency_min_ms ' + Math.min(...times).toFixed(3));
  }
  if (a.profile) session.endProfiling();
}

main().catch((e) => {
  console.error('ort_peer.js: error: ' + e.message);
  process.exit(1);
});
