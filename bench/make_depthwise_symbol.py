#!/usr/bin/env python3
"""Writes a MobileFaceNet-shaped MXNet symbol (112x112 input, 3x3 depthwise blocks at stride 1
and 2, 1x1 expansions and projections, residual adds, a 7x7 global depthwise layer) for timing
the depthwise convolution path. It follows MobileFaceNet's stage layout, not InsightFace's
exact graph (no BatchNorm/PReLU: those are separate passes whose cost is not the point here).

Usage: bench/make_depthwise_symbol.py OUT.json
"""
import json
import sys

nodes, arg_nodes = [], []


def variable(name):
    nodes.append({"op": "null", "name": name, "inputs": []})
    arg_nodes.append(len(nodes) - 1)
    return len(nodes) - 1


def op(kind, name, attrs, inputs):
    nodes.append({"op": kind, "name": name, "attrs": attrs, "inputs": [[i, 0, 0] for i in inputs]})
    return len(nodes) - 1


count = [0]


def conv(x, filters, kernel, stride, pad, groups=1, relu=True):
    count[0] += 1
    name = "conv%d" % count[0]
    attrs = {"kernel": "(%d,%d)" % (kernel, kernel), "stride": "(%d,%d)" % (stride, stride),
             "pad": "(%d,%d)" % (pad, pad), "num_filter": str(filters), "num_group": str(groups),
             "no_bias": "False"}
    y = op("Convolution", name, attrs, [x, variable(name + "_weight"), variable(name + "_bias")])
    return op("Activation", name + "_relu", {"act_type": "relu"}, [y]) if relu else y


def bottleneck(x, cin, cout, stride, expand, residual):
    h = conv(x, cin * expand, 1, 1, 0)
    h = conv(h, cin * expand, 3, stride, 1, groups=cin * expand)
    h = conv(h, cout, 1, 1, 0, relu=False)
    return op("elemwise_add", "add%d" % count[0], {}, [x, h]) if residual else h


x = variable("data")
x = conv(x, 64, 3, 2, 1)
x = conv(x, 64, 3, 1, 1, groups=64)
for i in range(5):
    x = bottleneck(x, 64, 64, 2 if i == 0 else 1, 2, i > 0)
x = bottleneck(x, 64, 128, 2, 4, False)
for i in range(6):
    x = bottleneck(x, 128, 128, 1, 2, True)
x = bottleneck(x, 128, 128, 2, 4, False)
for i in range(2):
    x = bottleneck(x, 128, 128, 1, 2, True)
x = conv(x, 512, 1, 1, 0)
x = conv(x, 512, 7, 1, 0, groups=512, relu=False)
x = conv(x, 128, 1, 1, 0, relu=False)
with open(sys.argv[1], "w") as f:
    json.dump({"nodes": nodes, "arg_nodes": arg_nodes, "heads": [[len(nodes) - 1, 0, 0]],
               "attrs": {"mxnet_version": ["int", 10901]}}, f)
