#!/usr/bin/env python3
"""Writes torchvision's ResNet-18 layout (ResNet v1, post-activation basic blocks) as MXNet 1.x
symbol JSON, for the training benchmark (bench/bench_resnet_train.cc; bench/peers.py
resnet-train runs the same file in PyTorch).

torchvision.models.resnet18: conv1 7x7/2 (64, no bias), bn1, relu, maxpool 3x3/2 pad 1, four
stages of two BasicBlocks (64, 128, 256, 512 filters; the first block of stages 2-4 has
stride 2 and a 1x1/2 conv + BatchNorm downsample on the shortcut), each block
conv3x3-bn-relu-conv3x3-bn, + shortcut, relu; global average pooling, fc 1000, here followed
by a SoftmaxOutput (the cross-entropy loss head). Node names follow torchvision's module
names with '_' for '.' (layer1_0_conv1, layer2_0_downsample_0, ...). This differs from MXNet's
model-zoo ResNet-18 (bench/make_resnet50_symbol.py --depth 18: pre-activation units and a
BatchNorm on the data); FLOPs differ by under 1%.

Usage: bench/make_resnet_v1_symbol.py [--units 2,2,2,2] [OUT.json]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_resnet50_symbol import Graph, classifier_head, emit  # noqa: E402


def basic_block(g, x, filters, stride, downsample, name):
    h = g.conv(x, name + "_conv1", filters, 3, stride, 1)
    h = g.relu(g.batch_norm(h, name + "_bn1"), name + "_relu1")
    h = g.conv(h, name + "_conv2", filters, 3, 1, 1)
    h = g.batch_norm(h, name + "_bn2")
    shortcut = x
    if downsample:
        shortcut = g.conv(x, name + "_downsample_0", filters, 1, stride, 0)
        shortcut = g.batch_norm(shortcut, name + "_downsample_1")
    return g.relu(g.plus(h, shortcut), name + "_relu2")


def build(units=(2, 2, 2, 2)):
    g = Graph()
    body = g.variable("data")
    body = g.conv(body, "conv1", 64, 7, 2, 3)
    body = g.relu(g.batch_norm(body, "bn1"), "relu")
    body = g.op("Pooling", "maxpool", {"global_pool": "False", "kernel": "(3,3)", "pad": "(1,1)",
                                       "pool_type": "max", "pooling_convention": "valid",
                                       "stride": "(2,2)"}, [body])
    channels = 64
    for stage, count in enumerate(units):
        filters = 64 << stage
        for unit in range(count):
            stride = 2 if stage > 0 and unit == 0 else 1
            body = basic_block(g, body, filters, stride, stride != 1 or channels != filters,
                               "layer%d_%d" % (stage + 1, unit))
            channels = filters
    return classifier_head(g, body, ("avgpool", "flatten", "fc"), "(1,1)",
                           {"grad_scale": "1", "normalization": "batch"})

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", default="2,2,2,2")
    ap.add_argument("out", nargs="?", default=None)
    a = ap.parse_args()
    emit(build(tuple(int(u) for u in a.units.split(","))), a.out)


if __name__ == "__main__":
    main()
