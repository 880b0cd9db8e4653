#!/usr/bin/env python3
"""Writes RetinaFace-MobileNet0.25 (InsightFace's "mnet.25" face detector) as MXNet 1.x symbol
JSON for the benchmarks, in the conventions of bench/make_resnet50_symbol.py (its Graph class).

The structure and node names follow InsightFace's released deploy symbol (built by
detection/retinaface/rcnn/symbol/symbol_mnet.py and symbol_common.py):
  - backbone: MobileNet v1 at width 0.25 as Gluon exports it, mobilenet0_conv0 .. conv26
    (no bias) each followed by mobilenet0_batchnormN (eps 1e-5) and mobilenet0_reluN: a 3x3
    stride-2 stem of 8 filters, then 13 depthwise 3x3 + pointwise 1x1 pairs (strides 2 at
    conv3, conv7, conv11, conv23). C1 = conv10 (64 channels, stride 8), C2 = conv22 (128,
    stride 16), C3 = conv26 (256, stride 32).
  - FPN of 64 channels: rf_c3_lateral (1x1) on C3; rf_c3_upsampling (nearest, scale 2),
    Crop to rf_c2_lateral's size, add, rf_c2_aggr (3x3); the same once more from rf_c2_aggr
    down to rf_c1_red_conv on C1, then rf_c1_aggr. Every FPN convolution has a bias and a
    BatchNorm (eps 2e-5) and a relu.
  - per level an SSH detection module: det_conv1 (3x3, 32, no relu) beside a context branch
    (context_conv1 3x3 16 relu; context_conv2 3x3 16; context_conv3_1 3x3 16 relu,
    context_conv3_2 3x3 16), concatenated to 64 channels and a relu.
  - per level 2 anchors: face_rpn_cls_score_strideS (1x1, 4) -> Reshape (0,2,-1,0) ->
    SoftmaxActivation(mode=channel) -> Reshape (0,4,-1,0) = face_rpn_cls_prob_reshape_strideS;
    face_rpn_bbox_pred_strideS (1x1, 8); face_rpn_landmark_pred_strideS (1x1, 20).
Heads in the released order: cls, bbox, landmark for stride 32, then 16, then 8. Weights:
bench/make_gaussian_params.py, as for the other generated nets.

Usage: bench/make_retinaface_symbol.py [OUT.json]
"""
import argparse

from make_resnet50_symbol import Graph, emit

FPN_WIDTH = 64  # int(256 * 0.25), InsightFace's F2 for mnet.25
ANCHORS = 2


class RetinaGraph(Graph):
    def conv(self, x, name, filters, kernel, stride=1, pad=None, groups=1, bias=True):
        pad = kernel // 2 if pad is None else pad
        attrs = {"kernel": "(%d,%d)" % (kernel, kernel), "stride": "(%d,%d)" % (stride, stride),
                 "pad": "(%d,%d)" % (pad, pad), "num_filter": str(filters), "num_group": str(groups),
                 "no_bias": str(not bias)}
        inputs = [x, self.variable(name + "_weight", attrs)]
        if bias:
            inputs.append(self.variable(name + "_bias", attrs))
        return self.op("Convolution", name, attrs, inputs)

    def conv_bn_act(self, x, name, filters, kernel, relu=True):
        """InsightFace's conv_act_layer: convolution with bias, BatchNorm, optional relu."""
        x = self.batch_norm(self.conv(x, name, filters, kernel), name + "_bn", eps="2e-05")
        return self.relu(x, name + "_relu") if relu else x


def backbone(g, x):
    """MobileNet v1 0.25; returns the stride 8, 16 and 32 feature maps (C1, C2, C3)."""
    index = [0]

    def unit(x, filters, kernel, stride, groups=1):
        i = index[0]
        index[0] += 1
        x = g.conv(x, "mobilenet0_conv%d" % i, filters, kernel, stride, groups=groups, bias=False)
        x = g.batch_norm(x, "mobilenet0_batchnorm%d" % i, eps="1e-05")
        return g.relu(x, "mobilenet0_relu%d" % i)

    x = unit(x, 8, 3, 2)
    width, taps = 8, {}
    # (pointwise filters, depthwise stride) of the 13 separable pairs of MobileNet v1.
    for filters, stride in [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1),
                            (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]:
        x = unit(x, width, 3, stride, groups=width)
        x = unit(x, filters, 1, 1)
        width = filters
        taps[index[0] - 1] = x
    return taps[10], taps[22], taps[26]


def ssh_module(g, x, name):
    conv3x3 = g.conv_bn_act(x, name + "_conv1", FPN_WIDTH // 2, 3, relu=False)
    context = g.conv_bn_act(x, name + "_context_conv1", FPN_WIDTH // 4, 3)
    conv5x5 = g.conv_bn_act(context, name + "_context_conv2", FPN_WIDTH // 4, 3, relu=False)
    conv7x7 = g.conv_bn_act(context, name + "_context_conv3_1", FPN_WIDTH // 4, 3)
    conv7x7 = g.conv_bn_act(conv7x7, name + "_context_conv3_2", FPN_WIDTH // 4, 3, relu=False)
    x = g.op("Concat", name + "_concat", {"dim": "1", "num_args": "3"}, [conv3x3, conv5x5, conv7x7])
    return g.relu(x, name + "_concat_relu")


def top_down(g, coarse, lateral, name, index):
    """Nearest 2x upsampling of the coarser level, cropped to the lateral map, added."""
    up = g.op("UpSampling", name, {"num_args": "1", "sample_type": "nearest", "scale": "2",
                                   "workspace": "512"}, [coarse])
    up = g.op("Crop", "crop%d" % index, {"num_args": "2"}, [up, lateral])
    return g.plus(lateral, up)


def heads(g, x, stride):
    def conv(name, filters):
        return g.conv(x, "face_rpn_%s_stride%d" % (name, stride), filters, 1)

    score = conv("cls_score", 2 * ANCHORS)
    score = g.op("Reshape", "face_rpn_cls_score_reshape_stride%d" % stride, {"shape": "(0, 2, -1, 0)"}, [score])
    prob = g.op("SoftmaxActivation", "face_rpn_cls_prob_stride%d" % stride, {"mode": "channel"}, [score])
    prob = g.op("Reshape", "face_rpn_cls_prob_reshape_stride%d" % stride,
                {"shape": "(0, %d, -1, 0)" % (2 * ANCHORS)}, [prob])
    return [prob, conv("bbox_pred", 4 * ANCHORS), conv("landmark_pred", 10 * ANCHORS)]


def build():
    g = RetinaGraph()
    c1, c2, c3 = backbone(g, g.variable("data"))
    p3 = g.conv_bn_act(c3, "rf_c3_lateral", FPN_WIDTH, 1)
    p2 = top_down(g, p3, g.conv_bn_act(c2, "rf_c2_lateral", FPN_WIDTH, 1), "rf_c3_upsampling", 0)
    p2 = g.conv_bn_act(p2, "rf_c2_aggr", FPN_WIDTH, 3)
    p1 = top_down(g, p2, g.conv_bn_act(c1, "rf_c1_red_conv", FPN_WIDTH, 1), "rf_c2_upsampling", 1)
    p1 = g.conv_bn_act(p1, "rf_c1_aggr", FPN_WIDTH, 3)
    outs = []
    for level, stride, p in ((3, 32, p3), (2, 16, p2), (1, 8, p1)):
        outs += heads(g, ssh_module(g, p, "rf_c%d_det" % level), stride)
    return {"nodes": g.nodes, "arg_nodes": g.arg_nodes, "node_row_ptr": list(range(len(g.nodes) + 1)),
            "heads": [[o, 0, 0] for o in outs], "attrs": {"mxnet_version": ["int", 10600]}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=None)
    emit(build(), ap.parse_args().out)


if __name__ == "__main__":
    main()
