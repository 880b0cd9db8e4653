#!/usr/bin/env python3
"""Writes MXNet's standard ImageNet ResNet-50 as MXNet 1.x symbol JSON.

The graph is the one MXNet's example/image-classification/symbols/resnet.py builds for
ImageNet (pre-activation bottleneck units [3, 4, 6, 3], filter_list [64, 256, 512, 1024,
2048]) with the node naming of the model zoo's resnet-18-symbol.json (bn_data, conv0, bn0,
relu0, pooling0, stageS_unitU_{bn1,relu1,conv1,...,sc}, _plusN, bn1, relu1, pool1, flatten0,
fc1, softmax). `--depth 18` emits the basic-block ResNet-18 instead, which
bench/check_resnet_generator.py compares node by node with the shared resnet-18 file.

Usage: bench/make_resnet50_symbol.py [--depth 50|18] [OUT.json]
"""
import argparse
import json

BN_ATTRS = {"eps": "2e-05", "momentum": "0.9", "use_global_stats": "False"}
CONV_ATTRS = {"cudnn_off": "False", "cudnn_tune": "limited_workspace", "dilate": "(1,1)",
              "num_group": "1", "workspace": "512", "no_bias": "True"}


class Graph:
    """Nodes in MXNet 1.x JSON layout, appended in topological order."""

    def __init__(self):
        self.nodes = []
        self.arg_nodes = []
        self.plus_count = 0
        self.flatten_count = 0

    def variable(self, name, attrs=None):
        node = {"op": "null", "name": name, "inputs": []}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)
        self.arg_nodes.append(len(self.nodes) - 1)
        return len(self.nodes) - 1

    def op(self, op, name, attrs, inputs):
        node = {"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs]}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)
        return len(self.nodes) - 1

    def batch_norm(self, x, name, fix_gamma=False, eps=None):
        attrs = dict(BN_ATTRS, fix_gamma=str(fix_gamma))
        if eps is not None:
            attrs["eps"] = eps
        # MXNet 1.x lists the aux states as variables carrying their initialiser.
        gamma = self.variable(name + "_gamma", attrs)
        beta = self.variable(name + "_beta", attrs)
        mean = self.variable(name + "_moving_mean", dict(attrs, __init__='["zero", {}]'))
        var = self.variable(name + "_moving_var", dict(attrs, __init__='["one", {}]'))
        return self.op("BatchNorm", name, attrs, [x, gamma, beta, mean, var])

    def relu(self, x, name):
        return self.op("Activation", name, {"act_type": "relu"}, [x])

    def conv(self, x, name, filters, kernel, stride, pad):
        attrs = dict(CONV_ATTRS, kernel="(%d,%d)" % (kernel, kernel), num_filter=str(filters),
                     stride="(%d,%d)" % (stride, stride), pad="(%d,%d)" % (pad, pad))
        weight = self.variable(name + "_weight", attrs)
        return self.op("Convolution", name, attrs, [x, weight])

    def plus(self, a, b):
        name = "_plus%d" % self.plus_count
        self.plus_count += 1
        return self.op("elemwise_add", name, None, [a, b])


def residual_unit(g, x, filters, stride, dim_match, name, bottleneck):
    act1 = g.relu(g.batch_norm(x, name + "_bn1"), name + "_relu1")
    if bottleneck:
        h = g.conv(act1, name + "_conv1", filters // 4, 1, 1, 0)
        h = g.relu(g.batch_norm(h, name + "_bn2"), name + "_relu2")
        h = g.conv(h, name + "_conv2", filters // 4, 3, stride, 1)
        h = g.relu(g.batch_norm(h, name + "_bn3"), name + "_relu3")
        h = g.conv(h, name + "_conv3", filters, 1, 1, 0)
    else:
        h = g.conv(act1, name + "_conv1", filters, 3, stride, 1)
        h = g.relu(g.batch_norm(h, name + "_bn2"), name + "_relu2")
        h = g.conv(h, name + "_conv2", filters, 3, 1, 1)
    shortcut = x if dim_match else g.conv(act1, name + "_sc", filters, 1, stride, 0)
    return g.plus(h, shortcut)


def build(depth):
    if depth == 50:
        units, filter_list, bottleneck = [3, 4, 6, 3], [64, 256, 512, 1024, 2048], True
    elif depth == 18:
        units, filter_list, bottleneck = [2, 2, 2, 2], [64, 64, 128, 256, 512], False
    else:
        raise SystemExit("depth must be 18 or 50, got %d" % depth)
    g = Graph()
    data = g.variable("data")
    body = g.batch_norm(data, "bn_data", fix_gamma=True)
    body = g.conv(body, "conv0", filter_list[0], 7, 2, 3)
    body = g.relu(g.batch_norm(body, "bn0"), "relu0")
    body = g.op("Pooling", "pooling0", {"global_pool": "False", "kernel": "(3,3)", "pad": "(1,1)",
                                        "pool_type": "max", "pooling_convention": "valid",
                                        "stride": "(2,2)"}, [body])
    for stage, count in enumerate(units):
        for unit in range(count):
            stride = 1 if stage == 0 or unit > 0 else 2
            body = residual_unit(g, body, filter_list[stage + 1], stride, unit > 0,
                                 "stage%d_unit%d" % (stage + 1, unit + 1), bottleneck)
    body = g.relu(g.batch_norm(body, "bn1"), "relu1")
    return classifier_head(g, body, ("pool1", "flatten0", "fc1"), "(7,7)",
                           {"grad_scale": "1", "ignore_label": "-1", "multi_output": "False",
                            "normalization": "null", "out_grad": "False",
                            "preserve_shape": "False", "use_ignore": "False"})


def classifier_head(g, body, names, pool_kernel, softmax_attrs):
    """Global average pool, flatten, FullyConnected(1000), SoftmaxOutput; the symbol JSON."""
    pool, flatten, fc = names
    body = g.op("Pooling", pool, {"global_pool": "True", "kernel": pool_kernel, "pad": "(0,0)",
                                  "pool_type": "avg", "pooling_convention": "valid",
                                  "stride": "(1,1)"}, [body])
    body = g.op("Flatten", flatten, None, [body])
    fc_attrs = {"no_bias": "False", "num_hidden": "1000"}
    weight = g.variable(fc + "_weight", fc_attrs)
    bias = g.variable(fc + "_bias", fc_attrs)
    body = g.op("FullyConnected", fc, fc_attrs, [body, weight, bias])
    label = g.variable("softmax_label")
    out = g.op("SoftmaxOutput", "softmax", softmax_attrs, [body, label])
    return {"nodes": g.nodes, "arg_nodes": g.arg_nodes,
            "node_row_ptr": list(range(len(g.nodes) + 1)), "heads": [[out, 0, 0]],
            "attrs": {"mxnet_version": ["int", 10600]}}

def mxnet_json(graph):
    """The JSON text in the layout MXNet's own files have: one line per node field, attributes
    one per line, each node's inputs on one line. Tools that read symbol files line by line
    (ncnn's mxnet2ncnn) need exactly this."""
    def node(n):
        fields = ['      "op": %s' % json.dumps(n["op"]), '      "name": %s' % json.dumps(n["name"])]
        if n.get("attrs"):
            fields.append('      "attrs": {\n%s\n      }' % ",\n".join(
                "        %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in n["attrs"].items()))
        fields.append('      "inputs": %s' % json.dumps(n["inputs"]))
        return "    {\n%s\n    }" % ",\n".join(fields)
    parts = ['  "nodes": [\n%s\n  ]' % ",\n".join(node(n) for n in graph["nodes"])]
    parts += ["  %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in graph.items() if k != "nodes"]
    return "{\n%s\n}\n" % ",\n".join(parts)


def emit(graph, out):
    """Writes the JSON to file `out`, or to stdout when it is None."""
    text = mxnet_json(graph)
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        print(text, end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("out", nargs="?", default=None)
    a = ap.parse_args()
    emit(build(a.depth), a.out)


if __name__ == "__main__":
    main()
