#!/usr/bin/python3
"""Golden inputs and outputs for the MTCNN networks (det1..det3), from an independent framework.

The goldens are what the MXNet networks (shared/models/mtcnn/detN-symbol.json + detN-0001.params)
output for fixed random inputs. They are computed by OpenCV DNN from the *Caffe* release of the
same networks (detN.prototxt + detN.caffemodel), and checked against a small NumPy interpreter of
the MXNet graphs that uses the MXNet weights. Both must agree before anything is written.

Why OpenCV needs a transformed input. The Caffe models were trained on transposed RGB images;
the MXNet port holds the same weights re-arranged for untransposed BGR input:
  * conv1 weights: input channels reversed (RGB <-> BGR) and kernels transposed (kh <-> kw);
  * every later convolution: kernels transposed;
  * the first FullyConnected after the convolutions (det2 conv4, det3 conv5): its columns
    permuted from (C, W, H) to (C, H, W) order, to match flattening untransposed feature maps;
  * PReLU slopes, biases and the last FullyConnected layers: identical.
(check_weight_relation() below verifies each of these on the files.) Convolution with a
transposed kernel of a transposed input is the transpose of the convolution; PReLU, square
max-pooling (ceil mode in both frameworks) and a softmax over channels commute with the
transpose. Hence, for an MXNet-layout input x of shape (N, 3, H, W) in BGR order:
    MXNet(x) = Caffe(x[:, ::-1].transpose(0, 1, 3, 2))
with the spatial outputs of det1 (N, C, W', H') transposed back to (N, C, H', W'). Output
channels are not permuted: the regression channels mean the same in both.

Usage (Debian's python3 with python3-opencv and python3-numpy; not a virtualenv's python):
    /usr/bin/python3 scripts/make_mtcnn_goldens.py [--models DIR] [--out DIR] [--check]
--check recomputes everything and compares with the files already in --out instead of writing.
"""

import argparse
import json
import os
import re
import struct
import sys

import cv2
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = os.path.join(os.path.dirname(REPO), "shared", "models", "mtcnn")
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "mtcnn")
SEED = 20240611
# Largest |OpenCV - NumPy reference| accepted (outputs are O(1): probabilities, box offsets).
TOLERANCE = 1e-5

# (case name, network, input shape). det1 is fully convolutional: two sizes, odd ones included
# so that ceil-mode ("full") pooling meets partial windows.
CASES = [
    ("det1_48x64", "det1", (1, 3, 48, 64)),
    ("det1_97x123", "det1", (1, 3, 97, 123)),
    ("det2_24x24", "det2", (4, 3, 24, 24)),
    ("det3_48x48", "det3", (4, 3, 48, 48)),
]


# ----------------------------------------------------------------------------------------------
# MXNet files


def load_legacy_params(path):
    """Reads an MXNet .params file in the oldest layout (no per-array magic) into {name: array}."""
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return vals

    magic, reserved, count = take("<QQQ")
    if magic != 0x112 or reserved != 0:
        raise ValueError(f"{path}: not a legacy MXNet array list (magic {magic:#x})")
    arrays = []
    for _ in range(count):
        (ndim,) = take("<I")
        dims = take(f"<{ndim}I")
        _dev_type, _dev_id, type_flag = take("<iii")
        if type_flag != 0:
            raise ValueError(f"{path}: array of type flag {type_flag}, expected 0 (float32)")
        n = int(np.prod(dims, dtype=np.int64))
        arrays.append(np.frombuffer(buf, "<f4", n, pos).reshape(dims).astype(np.float64))
        pos += 4 * n
    (num_names,) = take("<Q")
    names = []
    for _ in range(num_names):
        (length,) = take("<Q")
        names.append(buf[pos:pos + length].decode("utf-8"))
        pos += length
    if pos != len(buf) or num_names != count:
        raise ValueError(f"{path}: {len(buf) - pos} trailing bytes / {num_names} names")
    out = {}
    for name, arr in zip(names, arrays):
        kind, _, key = name.partition(":")
        if kind not in ("arg", "aux"):
            raise ValueError(f"{path}: unexpected array name {name}")
        out[key] = arr
    return out


def parse_tuple(text):
    return tuple(int(v) for v in text.strip("()[] ").split(",") if v.strip())


def conv2d(x, w, b, stride, pad):
    """Direct convolution (cross-correlation), NCHW, float64."""
    if any(pad):
        x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    kh, kw = w.shape[2], w.shape[3]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride[0], ::stride[1]]  # (N, C, OH, OW, kh, kw)
    return np.einsum("nchwij,ocij->nohw", win, w, optimize=True) + b.reshape(1, -1, 1, 1)


def max_pool(x, kernel, stride, pad, convention):
    """Max pooling; 'full' rounds the output size up (windows may hang over the far edge)."""
    n, c, h, w = x.shape
    out = []
    for size, k, s, p in ((h, kernel[0], stride[0], pad[0]), (w, kernel[1], stride[1], pad[1])):
        span = size + 2 * p - k
        out.append(1 + (-(-span // s) if convention == "full" else span // s))
    oh, ow = out
    padded = np.full((n, c, (oh - 1) * stride[0] + kernel[0], (ow - 1) * stride[1] + kernel[1]),
                     -np.inf)
    padded[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = x
    win = np.lib.stride_tricks.sliding_window_view(padded, tuple(kernel), axis=(2, 3))
    return win[:, :, ::stride[0], ::stride[1]].max(axis=(4, 5))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def mxnet_forward(symbol_path, params, data):
    """Interprets a legacy MXNet symbol JSON with NumPy (float64). Returns the heads in order."""
    with open(symbol_path) as f:
        graph = json.load(f)
    nodes = graph["nodes"]
    values = {}
    for i, node in enumerate(nodes):
        op, name = node["op"], node["name"]
        attr = node.get("param", node.get("attrs", {}))
        ins = [values[src] for src, *_ in node["inputs"]]
        if op == "null":
            values[i] = data if name == "data" else params.get(name)
        elif op == "Convolution":
            if int(attr.get("num_group", "1")) != 1 or parse_tuple(attr.get("dilate", "(1,1)")) != (1, 1):
                raise NotImplementedError(f"{name}: grouped or dilated convolution")
            bias = ins[2] if attr.get("no_bias", "False") != "True" else np.zeros(ins[1].shape[0])
            values[i] = conv2d(ins[0], ins[1], bias, parse_tuple(attr.get("stride", "(1,1)")),
                               parse_tuple(attr.get("pad", "(0,0)")))
        elif op == "LeakyReLU":
            if attr.get("act_type") != "prelu":
                raise NotImplementedError(f"{name}: act_type {attr.get('act_type')}")
            gamma = ins[1].reshape((1, -1) + (1,) * (ins[0].ndim - 2))
            values[i] = np.where(ins[0] > 0, ins[0], gamma * ins[0])
        elif op == "Pooling":
            if attr.get("pool_type") != "max" or attr.get("global_pool", "False") == "True":
                raise NotImplementedError(f"{name}: pooling {attr}")
            values[i] = max_pool(ins[0], parse_tuple(attr["kernel"]),
                                 parse_tuple(attr.get("stride", "(1,1)")),
                                 parse_tuple(attr.get("pad", "(0,0)")),
                                 attr.get("pooling_convention", "valid"))
        elif op == "FullyConnected":
            x = ins[0].reshape(ins[0].shape[0], -1)
            values[i] = x @ ins[1].T + ins[2]
        elif op == "SoftmaxActivation":
            if attr.get("mode", "instance") == "channel":
                values[i] = softmax(ins[0], 1)
            else:  # "instance": over everything but the batch axis
                values[i] = softmax(ins[0].reshape(ins[0].shape[0], -1), 1).reshape(ins[0].shape)
        elif op == "SoftmaxOutput":
            if ins[0].ndim != 2:
                raise NotImplementedError(f"{name}: SoftmaxOutput on rank {ins[0].ndim}")
            values[i] = softmax(ins[0], 1)
        else:
            raise NotImplementedError(f"op {op} ({name})")
    names = [nodes[h[0]]["name"] + "_output" for h in graph["heads"]]
    return names, [values[h[0]] for h in graph["heads"]]


def check_conv1_by_hand(params, data):
    """conv1 of det1 with explicit loops at a few positions, against the vectorised conv2d."""
    w, b = params["conv1_weight"], params["conv1_bias"]
    full = conv2d(data, w, b, (1, 1), (0, 0))
    worst = 0.0
    for (o, y, x) in ((0, 0, 0), (3, 5, 7), (9, full.shape[2] - 1, full.shape[3] - 1), (6, 20, 1)):
        acc = b[o]
        for c in range(3):
            for i in range(3):
                for j in range(3):
                    acc += w[o, c, i, j] * data[0, c, y + i, x + j]
        worst = max(worst, abs(acc - full[0, o, y, x]))
    if worst > 1e-12:
        raise AssertionError(f"conv1 by hand differs from conv2d by {worst}")
    return full


# ----------------------------------------------------------------------------------------------
# Caffe files through OpenCV


def caffe_layer_blobs(net, name):
    return net.getLayer(net.getLayerId(name)).blobs


def check_weight_relation(net_name, caffe_net, params):
    """Verifies the weight re-arrangement described in the module docstring, exactly."""
    flattened_first_fc = True
    for layer in caffe_net.getLayerNames():
        blobs = caffe_layer_blobs(caffe_net, layer)
        if not blobs:
            continue
        key = layer.replace("-", "_").lower()
        if key + "_gamma" in params:
            assert np.array_equal(blobs[0].reshape(-1), params[key + "_gamma"]), layer
            continue
        w, b = params[key + "_weight"], params[key + "_bias"]
        cw = blobs[0].astype(np.float64)
        assert np.array_equal(blobs[1].reshape(-1), b), f"{net_name} {layer} bias"
        if cw.ndim == 4:
            expect = cw.transpose(0, 1, 3, 2)
            if key == "conv1":
                expect = expect[:, ::-1]
            last_conv_channels = cw.shape[0]
        elif flattened_first_fc:
            side = int(round((cw.shape[1] / last_conv_channels) ** 0.5))
            expect = cw.reshape(cw.shape[0], last_conv_channels, side, side)
            expect = expect.transpose(0, 1, 3, 2).reshape(cw.shape[0], -1)
            flattened_first_fc = False
        else:
            expect = cw
        assert np.array_equal(expect, w), f"{net_name} {layer}: weights not as expected"


def to_caffe_layout(data):
    """MXNet-layout (N, 3, H, W) BGR input -> what the Caffe nets expect: RGB, (N, 3, W, H)."""
    return data[:, ::-1].transpose(0, 1, 3, 2)


def opencv_forward(caffe_net, data, out_layers, spatial, transform=to_caffe_layout):
    """Runs the Caffe net on the transformed MXNet-layout input; returns MXNet-layout outputs."""
    blob = np.ascontiguousarray(transform(data), dtype=np.float32)
    caffe_net.setInput(blob)
    outs = caffe_net.forward(out_layers)
    result = []
    for out in outs:
        out = np.asarray(out, dtype=np.float32)
        if spatial:
            out = out.transpose(0, 1, 3, 2)
        result.append(np.ascontiguousarray(out))
    return result


# Caffe layer producing each MXNet head.
CAFFE_OUTPUT_LAYER = {
    "det1": {"conv4_2_output": "conv4-2", "prob1_output": "prob1"},
    "det2": {"conv5_2_output": "conv5-2", "prob1_output": "prob1"},
    "det3": {"conv6_3_output": "conv6-3", "conv6_2_output": "conv6-2", "prob1_output": "prob1"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=DEFAULT_MODELS, help="shared/models/mtcnn directory")
    parser.add_argument("--out", default=DEFAULT_OUT, help="where the .npy files go")
    parser.add_argument("--check", action="store_true",
                        help="compare with the existing files instead of writing")
    args = parser.parse_args()

    rng = np.random.RandomState(SEED)
    manifest = {"seed": SEED, "tolerance_vs_numpy_reference": TOLERANCE, "cases": []}
    report = []
    worst_check = 0.0
    for case, net_name, shape in CASES:
        symbol = os.path.join(args.models, f"{net_name}-symbol.json")
        params = load_legacy_params(os.path.join(args.models, f"{net_name}-0001.params"))
        caffe_net = cv2.dnn.readNetFromCaffe(os.path.join(args.models, f"{net_name}.prototxt"),
                                             os.path.join(args.models, f"{net_name}.caffemodel"))
        caffe_net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        caffe_net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
        check_weight_relation(net_name, caffe_net, params)

        data = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        data64 = data.astype(np.float64)
        if net_name == "det1":
            # One layer by hand: conv1 from the MXNet weights against OpenCV's conv1 (fusion off,
            # so that the in-place PReLU is not folded into it) on the transformed input.
            conv1 = check_conv1_by_hand(params, data64)
            layer_net = cv2.dnn.readNetFromCaffe(
                os.path.join(args.models, "det1.prototxt"),
                os.path.join(args.models, "det1.caffemodel"))
            layer_net.enableFusion(False)
            (cv_conv1,) = opencv_forward(layer_net, data, ["conv1"], spatial=True)
            diff = float(np.abs(cv_conv1 - conv1).max())
            scale = float(np.abs(conv1).max())
            report.append(f"{case:12s} {'conv1 (layer)':15s} shape {str(conv1.shape):16s} "
                          f"max|opencv - numpy by hand| = {diff:.3g} (values up to {scale:.3g})")
            if diff > TOLERANCE * max(1.0, scale):
                raise AssertionError(f"{case}: conv1 by hand and OpenCV differ by {diff}")
        names, reference = mxnet_forward(symbol, params, data64)
        out_layers = [CAFFE_OUTPUT_LAYER[net_name][n] for n in names]
        golden = opencv_forward(caffe_net, data, out_layers, spatial=(net_name == "det1"))

        # Negative controls: only half of the transform must NOT reproduce MXNet, or the
        # agreement above would prove nothing about the transform.
        for label, transform, spatial in (
                ("H/W swap only", lambda a: a.transpose(0, 1, 3, 2), net_name == "det1"),
                ("BGR->RGB only", lambda a: a[:, ::-1], False)):
            if net_name != "det1" and shape[2] != shape[3]:
                continue
            wrong = opencv_forward(caffe_net, data, out_layers, spatial, transform)
            d = max(float(np.abs(r - w).max()) for r, w in zip(reference, wrong))
            report.append(f"{case:12s} control: {label:15s} max diff {d:.3g} (must be large)")
            if d < 1000 * TOLERANCE:
                raise AssertionError(f"{case}: '{label}' also matches MXNet ({d})")

        files = {"data": f"{case}_data.npy"}
        arrays = {"data": data}
        entry = {"name": case, "symbol": f"{net_name}-symbol.json",
                 "params": f"{net_name}-0001.params", "input": {"data": list(shape)},
                 "outputs": []}
        for name, ref, got in zip(names, reference, golden):
            if ref.shape != got.shape:
                raise AssertionError(f"{case} {name}: OpenCV shape {got.shape}, reference {ref.shape}")
            diff = float(np.abs(ref - got.astype(np.float64)).max())
            report.append(f"{case:12s} {name:15s} shape {str(got.shape):16s} "
                          f"max|opencv - numpy reference| = {diff:.3g}")
            if diff > TOLERANCE:
                raise AssertionError(f"{case} {name}: OpenCV and the NumPy reference differ by {diff}")
            files[name] = f"{case}_{name}.npy"
            arrays[name] = got
            entry["outputs"].append({"name": name, "file": files[name], "shape": list(got.shape),
                                     "max_abs_diff_vs_numpy_reference": float(f"{diff:.3g}")})
        entry["input_file"] = files["data"]
        manifest["cases"].append(entry)

        for key, arr in arrays.items():
            path = os.path.join(args.out, files[key])
            if args.check:
                old = np.load(path)
                d = float(np.abs(old.astype(np.float64) - arr).max())
                worst_check = max(worst_check, d)
                if old.shape != arr.shape or old.dtype != np.float32 or d > TOLERANCE:
                    raise AssertionError(f"{path}: differs from a fresh run by {d}")
            else:
                os.makedirs(args.out, exist_ok=True)
                np.save(path, np.ascontiguousarray(arr, dtype=np.float32))

    print("\n".join(report))
    if args.check:
        print(f"--check: the files in {args.out} match a fresh run (max diff {worst_check:.3g})")
    else:
        text = json.dumps(manifest, indent=1)
        # Shapes on one line each.
        text = re.sub(r"\[\s+([0-9,\s]+?)\s+\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]",
                      text)
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            f.write(text + "\n")
        print(f"wrote {len(manifest['cases'])} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
