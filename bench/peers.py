#!/usr/bin/python3
"""Peer frameworks for bench/run.sh: the same MXNet graph and weights in PyTorch eager and
OpenCV DNN (Debian python3-torch, python3-opencv).

The MXNet symbol JSON is interpreted into a torch.nn.Module (ops of the model-zoo ImageNet
nets: Convolution, BatchNorm, Activation relu, Pooling, elemwise_add/_Plus, Concat, Flatten,
FullyConnected, Dropout, LRN, SoftmaxOutput; for the mobile nets of
bench/make_mobile_symbols.py also clip and LeakyReLU prelu), which torch.onnx.export hands
to cv2.dnn.readNetFromONNX (and bench/ort_peer.js to ONNX Runtime). Subcommands (all print
"key value" lines):

  classify DIR NAME=SYMBOL[@SIZE]...
                                  per net (input SIZE x SIZE, default 224): scaled Gaussian
                                  weights written once to
                                  DIR/NAME.params (MXNet format), DIR/NAME/input.npy and the
                                  logits (SoftmaxOutput's input, or the single head of a net
                                  without one) of torch and OpenCV on it (torch.npy,
                                  opencv.npy), the ONNX files b1.onnx / b8.onnx, then batch-1
                                  latency (median and minimum) and batch-8 throughput (from
                                  the median) of both (--runs 0: files only, no timing)
  mtcnn MODELS DIR                per-network OpenCV DNN (Caffe files) latency (median and
                                  minimum); DIR/detN_*.npy
                                  inputs/outputs for comparing with symbind
  mtcnn-pipeline MODELS IMAGE     scripts/mtcnn_reference.py (NumPy + OpenCV DNN) end to end
  lenet-train                     LeNet training samples/s on Fashion-MNIST (apps/lenet.cc's net)
  resnet50-memory SYMBOL PARAMS   RSS of batch-1 inference: after import, peak (ru_maxrss),
                                  and resident after the runs
  resnet-train SYMBOL             training steps of an MXNet classifier symbol (SoftmaxOutput
                                  head; bench/make_resnet_v1_symbol.py's ResNet-18) run by
                                  MXNetNet in training mode, as bench/bench_resnet_train.cc
                                  runs it: same keys (parameters, times_ms, step_ms, ...);
                                  --profile N: then the N aten ops with the most self time
                                  in one profiled step
  gemm                            torch.mm GFLOP/s at bench_gemm.cc's shapes
  blas                            which BLAS library torch.mm runs on (the files mapped into
                                  this process after a matmul, symlinks resolved) and its
                                  GFLOP/s at 512x512x512

Thread count: --threads (default 2) for torch.set_num_threads and cv2.setNumThreads.
"""
import argparse
import gzip
import json
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------------
# MXNet .params (the V2 dense layout MXNet 1.x writes; io/ndarray_file.h describes it)
def save_params(path, named):
    with open(path, "wb") as f:
        f.write(struct.pack("<QQQ", 0x112, 0, len(named)))
        for _, a in named:
            a = np.ascontiguousarray(a, dtype="<f4")
            f.write(struct.pack("<Iii", 0xF993FAC9, 0, a.ndim))
            f.write(struct.pack("<%dq" % a.ndim, *a.shape))
            f.write(struct.pack("<iii", 1, 0, 0))  # cpu, device 0, float32
            f.write(a.tobytes())
        f.write(struct.pack("<Q", len(named)))
        for name, _ in named:
            b = name.encode()
            f.write(struct.pack("<Q", len(b)))
            f.write(b)


def load_params(path):
    """Reads what save_params writes (V2 dense float32 only)."""
    with open(path, "rb") as f:
        buf = f.read()
    magic, _, count = struct.unpack_from("<QQQ", buf, 0)
    if magic != 0x112:
        raise ValueError("%s: not an MXNet .params file" % path)
    pos, arrays = 24, []
    for i in range(count):
        amagic, stype, ndim = struct.unpack_from("<Iii", buf, pos)
        if amagic != 0xF993FAC9 or stype != 0:
            raise ValueError("%s: array %d is not V2 dense (written by another tool?)" % (path, i))
        pos += 12
        shape = struct.unpack_from("<%dq" % ndim, buf, pos)
        pos += 8 * ndim
        _, _, flag = struct.unpack_from("<iii", buf, pos)
        if flag != 0:
            raise ValueError("%s: array %d is not float32" % (path, i))
        pos += 12
        n = int(np.prod(shape))
        arrays.append(np.frombuffer(buf, "<f4", n, pos).reshape(shape).copy())
        pos += 4 * n
    (names,) = struct.unpack_from("<Q", buf, pos)
    if names != count:
        raise ValueError("%s: %d names for %d arrays" % (path, names, count))
    pos += 8
    out = {}
    for a in arrays:
        (length,) = struct.unpack_from("<Q", buf, pos)
        out[buf[pos + 8:pos + 8 + length].decode()] = a
        pos += 8 + length
    return out


# ---------------------------------------------------------------------------------------------
# MXNet symbol JSON -> torch
def parse_tuple(text):
    return tuple(int(v) for v in text.strip("()[] ").split(",") if v.strip())


def is_true(text):
    return str(text).lower() in ("true", "1")


class MXNetNet(torch.nn.Module):
    """Runs an MXNet graph node by node with torch.nn.functional.

    weights: "arg:<name>" / "aux:<name>" arrays as in a .params file, or None to run once
    with zeros and record what every parameter's shape is (self.shapes). logits=True returns
    the SoftmaxOutput's input instead of the probabilities."""

    def __init__(self, symbol_path, weights=None, logits=False, trainable=False):
        super().__init__()
        with open(symbol_path) as f:
            graph = json.load(f)
        self.nodes = graph["nodes"]
        self.head = graph["heads"][0][0]
        self.logits = logits
        self.shapes = {}
        self.params = torch.nn.ParameterDict()
        # trainable: arguments get gradients, BatchNorm uses batch statistics in train().
        for key, a in (weights or {}).items():
            self.params[key.replace(":", "__")] = torch.nn.Parameter(
                torch.from_numpy(a), requires_grad=trainable and key.startswith("arg:"))

    def attrs(self, node):
        return node.get("attrs", node.get("param", {}))

    def weight(self, kind, node_name, arg, shape):
        key = "%s:%s_%s" % (kind, node_name, arg)
        if key.replace(":", "__") in self.params:
            return self.params[key.replace(":", "__")]
        self.shapes[key] = tuple(shape)
        return torch.zeros(shape)

    def forward(self, x):
        values = {}
        for i, node in enumerate(self.nodes):
            if node["op"] == "null":
                if node["name"] == "data":
                    values[i] = x
                continue
            ins = [values.get(j[0]) for j in node["inputs"]]
            values[i] = self.apply(node, ins)
            if i == self.head:
                break
        return values[self.head]

    def apply(self, node, ins):
        op, a, name, x = node["op"], self.attrs(node), node["name"], ins[0]
        if op == "Convolution":
            kernel = parse_tuple(a["kernel"])
            groups = int(a.get("num_group", "1"))
            filters = int(a["num_filter"])
            w = self.weight("arg", name, "weight", (filters, x.shape[1] // groups) + kernel)
            b = None
            if not is_true(a.get("no_bias", "False")):
                b = self.weight("arg", name, "bias", (filters,))
            return F.conv2d(x, w, b, parse_tuple(a.get("stride", "(1,1)")),
                            parse_tuple(a.get("pad", "(0,0)")), parse_tuple(a.get("dilate", "(1,1)")),
                            groups)
        if op == "BatchNorm":
            c = (x.shape[1],)
            gamma = self.weight("arg", name, "gamma", c)
            beta = self.weight("arg", name, "beta", c)
            mean = self.weight("aux", name, "moving_mean", c)
            var = self.weight("aux", name, "moving_var", c)
            if is_true(a.get("fix_gamma", "True")):  # MXNet's default: gamma treated as 1
                gamma = torch.ones(c)
            # Inference: MXNet normalises with the moving statistics whatever use_global_stats.
            # Training: batch statistics, moving ones updated with MXNet's momentum.
            momentum = 1 - float(a.get("momentum", "0.9"))
            return F.batch_norm(x, mean, var, gamma, beta, self.training, momentum, float(a.get("eps", "1e-3")))
        if op == "clip":
            return torch.clamp(x, float(a["a_min"]), float(a["a_max"]))
        if op == "LeakyReLU":
            if a.get("act_type", "leaky") != "prelu":
                raise NotImplementedError("LeakyReLU %s" % a.get("act_type", "leaky"))
            return F.prelu(x, self.weight("arg", name, "gamma", (x.shape[1],)))
        if op == "Activation":
            if a["act_type"] != "relu":
                raise NotImplementedError("Activation %s" % a["act_type"])
            return F.relu(x)
        if op == "Pooling":
            return self.pooling(x, a)
        if op in ("elemwise_add", "_Plus", "_plus"):
            return ins[0] + ins[1]
        if op == "Concat":
            return torch.cat(ins, int(a.get("dim", "1")))
        if op == "Flatten":
            return torch.flatten(x, 1)
        if op == "FullyConnected":
            x = torch.flatten(x, 1) if is_true(a.get("flatten", "True")) else x
            hidden = int(a["num_hidden"])
            w = self.weight("arg", name, "weight", (hidden, x.shape[-1]))
            b = None if is_true(a.get("no_bias", "False")) else self.weight("arg", name, "bias", (hidden,))
            return F.linear(x, w, b)
        if op == "Dropout":
            return x  # identity at inference
        if op == "LRN":
            return F.local_response_norm(x, int(a["nsize"]), float(a.get("alpha", "1e-4")),
                                         float(a.get("beta", "0.75")), float(a.get("knorm", "2")))
        if op == "SoftmaxOutput":
            return x if self.logits else torch.softmax(x, 1)
        raise NotImplementedError("op %s (node %s)" % (op, name))

    @staticmethod
    def pooling(x, a):
        max_pool = a.get("pool_type", "max") == "max"
        if is_true(a.get("global_pool", "False")):
            return F.adaptive_max_pool2d(x, 1) if max_pool else F.adaptive_avg_pool2d(x, 1)
        kernel = parse_tuple(a["kernel"])
        stride = parse_tuple(a.get("stride", "(1,1)"))
        pad = parse_tuple(a.get("pad", "(0,0)"))
        # MXNet's "full" convention rounds the output size up, like ceil_mode (the windows of
        # these nets never start in the padding, where the two would differ).
        ceil = a.get("pooling_convention", "valid") == "full"
        if max_pool:
            return F.max_pool2d(x, kernel, stride, pad, ceil_mode=ceil)
        return F.avg_pool2d(x, kernel, stride, pad, ceil_mode=ceil, count_include_pad=True)


def make_weights(symbol_path, size=224, seed=0):
    """Weights that keep activations finite: conv/fc weights N(0, 2/fan_in), biases and BN
    parameters small perturbations of the identity (so BN and fix_gamma are exercised), PReLU
    slopes near 0.25."""
    probe = MXNetNet(symbol_path).eval()  # batch statistics of one image fail on 1x1 maps
    with torch.no_grad():
        probe(torch.zeros(1, 3, size, size))
    rng = np.random.default_rng(seed)
    named = []
    for key, shape in sorted(probe.shapes.items()):
        last = key.rsplit("_", 1)[-1]
        if key.endswith("_relu_gamma"):  # PReLU slope (make_mobile_symbols.py's naming)
            a = 0.25 + 0.05 * rng.standard_normal(shape)
        elif key.endswith("_weight"):
            fan_in = int(np.prod(shape[1:]))
            a = rng.normal(0, np.sqrt(2.0 / fan_in), shape)
        elif key.endswith("_gamma"):
            a = 1 + 0.1 * rng.standard_normal(shape)
        elif key.endswith("_moving_var"):
            a = rng.uniform(0.5, 1.5, shape)
        elif last in ("bias", "beta", "mean"):
            a = 0.1 * rng.standard_normal(shape)
        else:
            raise ValueError("no initialiser for %s" % key)
        named.append((key, a.astype(np.float32)))
    return named


def load_net(symbol, params, logits=False):
    net = MXNetNet(symbol, load_params(params), logits)
    net.eval()
    return net


def export_onnx(net, batch, path, size=224):
    with torch.no_grad():
        torch.onnx.export(net, torch.zeros(batch, 3, size, size), path, opset_version=10,
                          input_names=["data"], output_names=["out"])


def opencv_net(path, threads):
    import cv2
    cv2.setNumThreads(threads)
    net = cv2.dnn.readNetFromONNX(path)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    return net


def timed_ms(fn, runs, warmup=2):
    """Milliseconds of each of `runs` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def median_ms(fn, runs, warmup=2):
    return float(np.median(timed_ms(fn, runs, warmup)))


def input_batch(batch, seed=1, size=224):
    return np.random.default_rng(seed).uniform(-1, 1, (batch, 3, size, size)).astype(np.float32)


# ---------------------------------------------------------------------------------------------
def classify(name, symbol, workdir, threads, runs, runs8, size=224):
    """Weights (written once to WORKDIR/NAME.params), the fairness check files and the timings
    of one ImageNet net; prints "NAME key value" lines."""
    out = os.path.join(workdir, name)
    os.makedirs(out, exist_ok=True)
    params = os.path.join(workdir, name + ".params")
    if not os.path.exists(params):
        save_params(params, make_weights(symbol, size))
    x = input_batch(1, size=size)
    np.save(os.path.join(out, "input.npy"), x)
    logits_net = load_net(symbol, params, logits=True)
    with torch.no_grad():
        np.save(os.path.join(out, "torch.npy"), logits_net(torch.from_numpy(x)).numpy())
    export_onnx(logits_net, 1, os.path.join(out, "logits.onnx"), size)
    cv = opencv_net(os.path.join(out, "logits.onnx"), threads)
    cv.setInput(x)
    cv_logits = cv.forward()
    np.save(os.path.join(out, "opencv.npy"), cv_logits)
    torch_logits = np.load(os.path.join(out, "torch.npy"))
    rel = np.max(np.abs(cv_logits - torch_logits)) / max(np.max(np.abs(torch_logits)), 1e-30)
    print("%s torch_opencv_rel_diff %.3g" % (name, rel))

    net = load_net(symbol, params)
    for batch, n in ((1, runs), (8, runs8)):
        onnx = os.path.join(out, "b%d.onnx" % batch)
        export_onnx(net, batch, onnx, size)
        if n <= 0:
            continue
        xb = input_batch(batch, size=size)
        tx = torch.from_numpy(xb)
        with torch.no_grad():
            times = {"torch": timed_ms(lambda: net(tx), n)}
        cv = opencv_net(onnx, threads)

        def run_cv():
            cv.setInput(xb)
            cv.forward()
        times["opencv"] = timed_ms(run_cv, n)
        for fw, t in times.items():
            if batch == 1:
                print("%s %s_latency_ms %.3f" % (name, fw, np.median(t)))
                print("%s %s_latency_min_ms %.3f" % (name, fw, np.min(t)))
            else:
                print("%s %s_b8_images_per_s %.2f" % (name, fw, 8e3 / np.median(t)))
        sys.stdout.flush()


def cmd_classify(a):
    for spec in a.nets:
        name, symbol = spec.split("=", 1)
        symbol, _, size = symbol.partition("@")
        classify(name, symbol, a.dir, a.threads, a.runs, a.runs8, int(size or 224))


MTCNN_CASES = (("det1", 1, 480, 640, ["conv4-2", "prob1"]), ("det2", 32, 24, 24, ["conv5-2", "prob1"]),
               ("det3", 16, 48, 48, ["conv6-2", "conv6-3", "prob1"]))


def cmd_mtcnn(a):
    """OpenCV DNN on the Caffe release. The MXNet port takes BGR, untransposed input: the
    Caffe nets see x[:, ::-1] transposed (scripts/mtcnn_reference.py explains)."""
    import cv2
    cv2.setNumThreads(a.threads)
    os.makedirs(a.dir, exist_ok=True)
    for name, batch, h, w, outputs in MTCNN_CASES:
        net = cv2.dnn.readNetFromCaffe(os.path.join(a.models, name + ".prototxt"),
                                       os.path.join(a.models, name + ".caffemodel"))
        x = np.random.default_rng(2).uniform(-1, 1, (batch, 3, h, w)).astype(np.float32)
        np.save(os.path.join(a.dir, name + "_input.npy"), x)
        caffe_x = np.ascontiguousarray(x[:, ::-1].transpose(0, 1, 3, 2))

        def run():
            net.setInput(caffe_x)
            return net.forward(outputs)
        for out_name, o in zip(outputs, run()):
            o = o.transpose(0, 1, 3, 2) if o.ndim == 4 else o
            np.save(os.path.join(a.dir, "%s_%s.npy" % (name, out_name)), o)
        times = timed_ms(run, a.runs)
        print("%s_opencv_ms %.3f\n%s_opencv_min_ms %.3f" % (name, np.median(times), name, np.min(times)))


def cmd_mtcnn_pipeline(a):
    import cv2
    sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
    import mtcnn_reference as ref
    cv2.setNumThreads(a.threads)
    nets = ref.load_nets(a.models)
    img = ref.decode(a.image, "stb")
    faces = [0]

    def run():
        faces[0] = len(ref.detect(img, nets)[1])
    best = min(median_ms(run, 1, warmup=0) for _ in range(a.runs))
    print("mtcnn_pipeline_opencv_ms %.3f faces %d" % (best, faces[0]))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">%dI" % ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def cmd_lenet_train(a):
    """apps/lenet.cc's LeNet and optimiser: conv5x5x20-relu-max2, conv5x5x50-relu-max2,
    fc500-relu, fc10, softmax cross-entropy (batch mean), SGD lr 0.05 momentum 0.9 wd 1e-4,
    batch 100, Xavier-uniform weights, inputs scaled to [0, 1]."""
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    images = read_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(a.data, "train-labels-idx1-ubyte.gz"))
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5),
                        nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500), nn.ReLU(),
                        nn.Linear(500, 10))
    for m in net:
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    batch = 100
    order = np.random.default_rng(0).permutation(len(images))

    def batches():
        for b in range(0, a.batches * batch, batch):
            idx = order[b % len(order):b % len(order) + batch]
            x = torch.from_numpy(images[idx].astype(np.float32) / 255.0).reshape(batch, 1, 28, 28)
            yield x, torch.from_numpy(labels[idx].astype(np.int64))

    def step(x, y):
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    warm = list(batches())
    for x, y in warm[:5]:
        step(x, y)
    t0, cpu0 = time.perf_counter(), time.process_time()
    for x, y in batches():  # the batch assembly is inside the loop as in symbind's MNISTIter
        step(x, y)
    print("lenet_train_samples_per_s %.0f" % (a.batches * batch / (time.perf_counter() - t0)))
    print("lenet_train_cpu_ms_per_batch %.2f" % ((time.process_time() - cpu0) * 1e3 / a.batches))


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def cmd_resnet50_memory(a):
    torch.set_num_threads(a.threads)
    before = max_rss_mb()
    net = load_net(a.symbol, a.params)
    x = torch.from_numpy(input_batch(1))
    with torch.no_grad():
        for _ in range(3):
            net(x)
    print("torch_rss_at_start_mb %.1f" % before)
    print("torch_peak_rss_mb %.1f" % max_rss_mb())
    print("torch_rss_after_runs_mb %.1f" % current_rss_mb())


def cmd_resnet_train(a):
    """bench_resnet_train.cc's step in PyTorch eager: the same symbol, Xavier-uniform weights
    (BatchNorm gamma 1, beta 0), data uniform in [-1, 1], random labels, cross-entropy (batch
    mean, SoftmaxOutput normalization=batch), SGD lr 0.01 momentum 0.9 wd 1e-4."""
    torch.manual_seed(0)
    probe = MXNetNet(a.symbol)
    with torch.no_grad():
        probe(torch.zeros(1, 3, a.size, a.size))
    weights = {}
    for key, shape in probe.shapes.items():
        if key.endswith("_weight"):
            w = torch.empty(shape)
            torch.nn.init.xavier_uniform_(w)
            weights[key] = w.numpy()
        else:
            fill = 1.0 if key.endswith(("_gamma", "_moving_var")) else 0.0
            weights[key] = np.full(shape, fill, np.float32)
    net = MXNetNet(a.symbol, weights, logits=True, trainable=True)
    net.train()
    params = [p for p in net.parameters() if p.requires_grad]
    print("parameters %d" % sum(p.numel() for p in params))
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.uniform(-1, 1, (a.batch, 3, a.size, a.size)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 1000, a.batch))
    times = {"step": [], "forward": [], "backward": [], "update": [], "cpu": []}
    for r in range(a.warmup + a.runs):
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        times["cpu"].append((time.process_time() - cpu0) * 1e3)
        if r >= a.warmup:
            for k, v in (("step", t3 - t0), ("forward", t1 - t0), ("backward", t2 - t1), ("update", t3 - t2)):
                times[k].append(v * 1e3)
    step = times["step"]
    print("times_ms " + " ".join("%.1f" % t for t in step))
    print("cpu_times_ms " + " ".join("%.1f" % t for t in times["cpu"][a.warmup:]))
    print("step_ms %.1f\nstep_min_ms %.1f\nsamples_per_s %.2f" % (np.median(step), np.min(step),
                                                                   a.batch * 1e3 / np.median(step)))
    for k in ("forward", "backward", "update"):
        print("%s_ms %.1f" % (k, np.median(times[k])))
    if a.profile:  # one more step under the autograd profiler: self time per aten op
        with torch.autograd.profiler.profile() as prof:
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            opt.step()
        for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:a.profile]:
            print("op %s calls %d self_ms %.1f" % (e.key, e.count, e.self_cpu_time_total / 1e3))


def cmd_gemm(a):
    """torch.mm at bench_gemm.cc's shapes (median GFLOP/s of 5 timings of ~0.2 s)."""
    torch.set_num_threads(a.threads)
    for m, n, k in ((256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (64, 3136, 576),
                    (256, 196, 2304), (1024, 196, 256), (1, 1000, 2048)):
        x, y = torch.rand(m, k) * 2 - 1, torch.rand(k, n) * 2 - 1
        torch.mm(x, y)
        t0 = time.perf_counter()
        torch.mm(x, y)
        reps = max(1, int(0.2 / max(time.perf_counter() - t0, 1e-6)))
        rates = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(reps):
                torch.mm(x, y)
            rates.append(2.0 * m * n * k * reps / (time.perf_counter() - t0) / 1e9)
        print("gemm %d %d %d %.1f" % (m, n, k, float(np.median(rates))))


def cmd_blas(a):
    """Debian's torch links libblas.so.3, an alternative that is the reference BLAS unless an
    optimised one (libopenblas0-pthread) is installed: say which one this process loaded."""
    torch.set_num_threads(a.threads)
    x = torch.rand(512, 512)
    torch.mm(x, x)
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path).lower() or "lapack" in os.path.basename(path).lower():
                libs.add(os.path.realpath(path))
    reps, t0 = 20, time.perf_counter()
    for _ in range(reps):
        torch.mm(x, x)
    gflops = 2.0 * 512 ** 3 * reps / (time.perf_counter() - t0) / 1e9
    print("torch_blas %s" % (",".join(sorted(libs)) or "none-mapped"))
    print("torch_mm_512_gflops %.1f" % gflops)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--runs8", type=int, default=4)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("classify")
    s.add_argument("dir")
    s.add_argument("nets", nargs="+", metavar="NAME=SYMBOL")
    s = sub.add_parser("mtcnn")
    s.add_argument("models")
    s.add_argument("dir")
    s = sub.add_parser("mtcnn-pipeline")
    s.add_argument("models")
    s.add_argument("image")
    s = sub.add_parser("lenet-train")
    s.add_argument("--data", default=os.environ.get("SYMBIND_FASHION_MNIST",
                                                    "/usr/share/datasets/fashion-mnist"))
    s.add_argument("--batches", type=int, default=100)
    sub.add_parser("gemm")
    sub.add_parser("blas")
    s = sub.add_parser("resnet-train")
    s.add_argument("symbol")
    s.add_argument("--batch", type=int, default=16)
    s.add_argument("--size", type=int, default=224)
    s.add_argument("--warmup", type=int, default=2)
    s.add_argument("--profile", type=int, default=0, metavar="N",
                   help="then profile one step and print the N aten ops with the most self time")
    s = sub.add_parser("resnet50-memory")
    s.add_argument("symbol")
    s.add_argument("params")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    {"classify": cmd_classify, "mtcnn": cmd_mtcnn, "mtcnn-pipeline": cmd_mtcnn_pipeline, "lenet-train": cmd_lenet_train,
     "resnet50-memory": cmd_resnet50_memory,
     "resnet-train": cmd_resnet_train, "gemm": cmd_gemm, "blas": cmd_blas}[a.cmd](a)


if __name__ == "__main__":
    main()
