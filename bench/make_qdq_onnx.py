#!/usr/bin/env python3
"""Writes an int8 QDQ ONNX model (QuantizeLinear/DequantizeLinear pairs, which ONNX Runtime fuses
into QLinearConv, QLinearAdd, ...) from a float32 ONNX model and the int8 symbol JSON that
`symbind quantize` wrote for the same graph, so that ONNX Runtime runs int8 on the same scales.

Usage: bench/make_qdq_onnx.py FLOAT.onnx INT8-symbol.json OUT.onnx

FLOAT.onnx: `symbind convert SYMBOL PARAMS --fold-batch-norm -o FLOAT.onnx`, whose tensors carry
MXNet's output names (`<node>_output`), as the int8 graph's nodes refer to them.
Ranges, from MXNet's quantized graph form:
  - `<tensor>_quantize` (_contrib_quantize_v2): min/max_calib_range of its input tensor;
  - `requantize_<node>` and `quantized_<node>` with min/max_calib_range: `<node>_output`;
  - `quantized_<node>` of an activation or pooling: its input's range (relu from 0).
Activations: a range with min >= 0 is uint8 with zero point 0 and scale max / 255 (MXNet's
uint8); otherwise symmetric, scale max(|min|, |max|) / 127, as uint8 with zero point 128 (the same
levels as MXNet's int8, in the type ONNX Runtime's u8s8 kernels take). A tensor read only by a
Relu whose output has a range is left to that output (ONNX Runtime drops a Relu before a Q of
zero point 0). Weights of Conv and Gemm: int8, one symmetric scale per tensor, max |w| / 127,
as MXNet's quantized_conv takes them; biases int32 on scale input x weight.
"""
import json
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def entry_name(nodes, entry):
    node = nodes[entry[0]]
    if node["op"] == "null":
        return node["name"]
    return node["name"] + ("_output" if entry[1] == 0 else "_output%d" % entry[1])


def calibrated_ranges(symbol_json):
    nodes = json.load(open(symbol_json))["nodes"]
    ranges = {}
    # Nodes are in topological order, so an input's range is known before its readers'.
    for node in nodes:
        attrs = node.get("attrs", node.get("param", {})) or {}
        name, op = node["name"], node["op"]
        has_calib = "min_calib_range" in attrs and "max_calib_range" in attrs
        calib = (float(attrs.get("min_calib_range", 0)), float(attrs.get("max_calib_range", 0)))
        if op == "_contrib_quantize_v2" and has_calib:
            ranges[entry_name(nodes, node["inputs"][0])] = calib
        elif op == "_contrib_requantize" and has_calib and name.startswith("requantize_"):
            ranges[name[len("requantize_"):] + "_output"] = calib
        elif op.startswith("_contrib_quantized_") and name.startswith("quantized_"):
            out = name[len("quantized_"):] + "_output"
            if has_calib:
                ranges[out] = calib
            elif op in ("_contrib_quantized_act", "_contrib_quantized_pooling", "_contrib_quantized_flatten"):
                src = nodes[node["inputs"][0][0]]
                key = src["name"][len("requantize_"):] + "_output" if src["name"].startswith("requantize_") \
                    else src["name"][len("quantized_"):] + "_output" if src["name"].startswith("quantized_") \
                    else entry_name(nodes, node["inputs"][0])
                if key in ranges:
                    lo, hi = ranges[key]
                    ranges[out] = (max(lo, 0.0), hi) if op == "_contrib_quantized_act" else (lo, hi)
    return ranges


def activation_qparams(lo, hi):
    if lo >= 0:
        return max(hi, 1e-12) / 255.0, 0
    return max(abs(lo), abs(hi), 1e-12) / 127.0, 128


def main():
    float_onnx, symbol_json, out = sys.argv[1:4]
    model = onnx.load(float_onnx)
    graph = model.graph
    ranges = calibrated_ranges(symbol_json)
    inits = {t.name: t for t in graph.initializer}
    readers = {}
    for node in graph.node:
        for i in node.input:
            readers.setdefault(i, []).append(node)
    outputs = {o.name for o in graph.output}

    def only_read_by_ranged_relu(tensor):
        r = readers.get(tensor, [])
        return len(r) == 1 and r[0].op_type == "Relu" and r[0].output[0] in ranges and tensor not in outputs

    quantized = {}  # tensor -> (scale, zero point)
    new_nodes, new_inits = [], []
    for tensor, (lo, hi) in ranges.items():
        if tensor in inits or tensor not in readers or only_read_by_ranged_relu(tensor):
            continue
        scale, zp = activation_qparams(lo, hi)
        quantized[tensor] = (scale, zp)
        s, z = tensor + "_qdq_scale", tensor + "_qdq_zero_point"
        new_inits += [numpy_helper.from_array(np.array(scale, np.float32), s),
                      numpy_helper.from_array(np.array(zp, np.uint8), z)]
        new_nodes.append((tensor, [helper.make_node("QuantizeLinear", [tensor, s, z], [tensor + "_q"]),
                                   helper.make_node("DequantizeLinear", [tensor + "_q", s, z], [tensor + "_dq"])]))
    for node in graph.node:
        for k, i in enumerate(node.input):
            if i in quantized:
                node.input[k] = i + "_dq"

    # Weights and biases of Conv / Gemm whose data input is quantized.
    weight_nodes = []
    for node in graph.node:
        if node.op_type not in ("Conv", "Gemm") or len(node.input) < 2:
            continue
        x = node.input[0][:-3] if node.input[0].endswith("_dq") else None
        if x not in quantized or node.input[1] not in inits:
            continue
        if node.op_type == "Gemm" and any(a.name == "transA" and a.i for a in node.attribute):
            continue
        w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        w_scale = max(float(np.abs(w).max()), 1e-12) / 127.0
        wq = np.clip(np.round(w / w_scale), -127, 127).astype(np.int8)
        wn = node.input[1] + "_int8"
        new_inits += [numpy_helper.from_array(wq, wn),
                      numpy_helper.from_array(np.array(w_scale, np.float32), wn + "_scale"),
                      numpy_helper.from_array(np.array(0, np.int8), wn + "_zero_point")]
        weight_nodes.append(helper.make_node("DequantizeLinear", [wn, wn + "_scale", wn + "_zero_point"], [wn + "_dq"]))
        node.input[1] = wn + "_dq"
        if len(node.input) > 2 and node.input[2] in inits:
            b = numpy_helper.to_array(inits[node.input[2]]).astype(np.float64)
            b_scale = quantized[x][0] * w_scale
            bn = node.input[2] + "_int32"
            new_inits += [numpy_helper.from_array(np.round(b / b_scale).astype(np.int32), bn),
                          numpy_helper.from_array(np.array(b_scale, np.float32), bn + "_scale"),
                          numpy_helper.from_array(np.array(0, np.int32), bn + "_zero_point")]
            weight_nodes.append(helper.make_node("DequantizeLinear", [bn, bn + "_scale", bn + "_zero_point"],
                                                 [bn + "_dq"]))
            node.input[2] = bn + "_dq"

    # Each Q/DQ pair right after its tensor's producer (graph inputs first), keeping the order topological.
    after = dict(new_nodes)
    ordered = list(weight_nodes)
    for i in graph.input:
        ordered += after.pop(i.name, [])
    for node in graph.node:
        ordered.append(node)
        for o in node.output:
            ordered += after.pop(o, [])
    del graph.node[:]
    graph.node.extend(ordered)
    graph.initializer.extend(new_inits)
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    kept = [t for t in graph.initializer if t.name in used]  # the float weights now quantized go
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print("%s: %d activations and %d weights quantized" % (out, len(quantized), len(weight_nodes)))


if __name__ == "__main__":
    main()
