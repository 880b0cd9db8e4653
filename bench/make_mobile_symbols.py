#!/usr/bin/env python3
"""Writes two depthwise-convolution nets as MXNet 1.x symbol JSON, in the conventions of
bench/make_resnet50_symbol.py (its Graph class builds the nodes):

  mobilenet-v2     MobileNet v2 1.0 for 224x224 ImageNet as MXNet's
                   example/image-classification/symbols/mobilenetv2.py builds it: inverted
                   residual units (expand 1x1, depthwise 3x3, linear project 1x1, identity add
                   when stride 1 and widths match), BatchNorm after every convolution, ReLU6 as
                   clip(0, 6), 1280-wide last conv, global average pool, 1x1 conv classifier,
                   softmax head.
  mobilefacenet    InsightFace's MobileFaceNet (fmobilefacenet.py) for 112x112 faces:
                   Conv-BN-PReLU units, depthwise residual bottlenecks, a global depthwise 7x7
                   convolution (GDC), FullyConnected 128 and a BatchNorm: the 128-d embedding
                   is the head.

Usage: bench/make_mobile_symbols.py mobilenet-v2|mobilefacenet [OUT.json]
"""
import argparse

from make_resnet50_symbol import Graph, emit


class MobileGraph(Graph):
    def conv_bn(self, x, name, filters, kernel, stride, pad, groups=1, act="relu6"):
        attrs = {"kernel": "(%d,%d)" % (kernel, kernel), "stride": "(%d,%d)" % (stride, stride),
                 "pad": "(%d,%d)" % (pad, pad), "num_filter": str(filters), "num_group": str(groups),
                 "no_bias": "True"}
        weight = self.variable(name + "_weight", attrs)
        x = self.op("Convolution", name, attrs, [x, weight])
        x = self.batch_norm(x, name + "_bn")
        if act == "relu6":
            return self.op("clip", name + "_relu6", {"a_min": "0", "a_max": "6"}, [x])
        if act == "prelu":
            gamma = self.variable(name + "_relu_gamma", {"act_type": "prelu"})
            return self.op("LeakyReLU", name + "_relu", {"act_type": "prelu"}, [x, gamma])
        return x

    def head(self, x, name, attrs_by_op):
        for op, attrs in attrs_by_op:
            x = self.op(op, name, attrs, [x])
        return x


def finish(g, out):
    return {"nodes": g.nodes, "arg_nodes": g.arg_nodes, "node_row_ptr": list(range(len(g.nodes) + 1)),
            "heads": [[out, 0, 0]], "attrs": {"mxnet_version": ["int", 10600]}}


def mobilenet_v2():
    g = MobileGraph()
    x = g.conv_bn(g.variable("data"), "conv1", 32, 3, 2, 1)
    width = 32
    # (expansion t, output channels c, units n, first stride s), as in the paper's Table 2.
    for stage, (t, c, n, s) in enumerate([(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]):
        for unit in range(n):
            stride = s if unit == 0 else 1
            name = "stage%d_unit%d" % (stage + 1, unit + 1)
            h = x
            if t != 1:
                h = g.conv_bn(h, name + "_expand", width * t, 1, 1, 0)
            h = g.conv_bn(h, name + "_dw", width * t, 3, stride, 1, groups=width * t)
            h = g.conv_bn(h, name + "_project", c, 1, 1, 0, act=None)
            x = g.plus(h, x) if stride == 1 and width == c else h
            width = c
    x = g.conv_bn(x, "conv_last", 1280, 1, 1, 0)
    x = g.op("Pooling", "pool_avg", {"global_pool": "True", "kernel": "(7,7)", "pool_type": "avg"}, [x])
    attrs = {"kernel": "(1,1)", "num_filter": "1000", "no_bias": "False"}
    x = g.op("Convolution", "fc", attrs, [x, g.variable("fc_weight", attrs), g.variable("fc_bias", attrs)])
    x = g.op("Flatten", "flatten0", None, [x])
    out = g.op("SoftmaxOutput", "softmax", {"normalization": "null"}, [x, g.variable("softmax_label")])
    return finish(g, out)


def mobilefacenet():
    g = MobileGraph()
    x = g.conv_bn(g.variable("data"), "conv_1", 64, 3, 2, 1, act="prelu")  # 56x56
    x = g.conv_bn(x, "conv_2_dw", 64, 3, 1, 1, groups=64, act="prelu")

    def depthwise_residual(x, name, out, groups, stride):
        h = g.conv_bn(x, name + "_conv_sep", groups, 1, 1, 0, act="prelu")
        h = g.conv_bn(h, name + "_conv_dw", groups, 3, stride, 1, groups=groups, act="prelu")
        return g.conv_bn(h, name + "_conv_proj", out, 1, 1, 0, act=None)

    def residual(x, name, blocks, out, groups):
        for b in range(blocks):
            x = g.plus(depthwise_residual(x, "%s_block%d" % (name, b), out, groups, 1), x)
        return x

    x = depthwise_residual(x, "dconv_23", 64, 128, 2)  # 28x28
    x = residual(x, "res_3", 4, 64, 128)
    x = depthwise_residual(x, "dconv_34", 128, 256, 2)  # 14x14
    x = residual(x, "res_4", 6, 128, 256)
    x = depthwise_residual(x, "dconv_45", 128, 512, 2)  # 7x7
    x = residual(x, "res_5", 2, 128, 256)
    x = g.conv_bn(x, "conv_6sep", 512, 1, 1, 0, act="prelu")
    x = g.conv_bn(x, "conv_6dw7_7", 512, 7, 1, 0, groups=512, act=None)  # global depthwise conv
    attrs = {"num_hidden": "128", "no_bias": "False"}
    x = g.op("FullyConnected", "pre_fc1", attrs,
             [x, g.variable("pre_fc1_weight", attrs), g.variable("pre_fc1_bias", attrs)])
    out = g.batch_norm(x, "fc1", fix_gamma=True)
    return finish(g, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=["mobilenet-v2", "mobilefacenet"])
    ap.add_argument("out", nargs="?", default=None)
    a = ap.parse_args()
    emit(mobilenet_v2() if a.net == "mobilenet-v2" else mobilefacenet(), a.out)


if __name__ == "__main__":
    main()
