#!/usr/bin/env python3
"""Checks bench/make_resnet50_symbol.py against MXNet's own ResNet-18 (the model zoo file in
../shared/models/symbols): with --depth 18 the generator must reproduce every op node's name,
op, parameters and inputs (by name), so the ResNet-50 it emits follows the same conventions.
Also checks that the committed bench/models/resnet-50-symbol.json is what it generates now, and
the committed MobileNet v2 / MobileFaceNet files what bench/make_mobile_symbols.py generates
and the RetinaFace one what bench/make_retinaface_symbol.py does.
Exits 1 with the first difference."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_mobile_symbols  # noqa: E402
import make_resnet50_symbol  # noqa: E402
import make_retinaface_symbol  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "../../shared/models/symbols/resnet-18-symbol.json")
COMMITTED = os.path.join(HERE, "models/resnet-50-symbol.json")


def op_nodes(graph):
    """(name, op, params, input names) per op node; aux-state inputs are dropped because the
    0.8 reference does not list them."""
    nodes = graph["nodes"]
    out = []
    for n in nodes:
        if n["op"] == "null":
            continue
        params = n.get("attrs", n.get("param", {}))
        inputs = [nodes[i[0]]["name"] for i in n["inputs"]]
        inputs = [s for s in inputs if not s.endswith(("_moving_mean", "_moving_var"))]
        op = "elemwise_add" if n["op"] == "_Plus" else n["op"]  # MXNet 1.x spells '+' so
        out.append((n["name"], op, params, inputs))
    return out


def main():
    with open(REFERENCE) as f:
        want = op_nodes(json.load(f))
    got = op_nodes(make_resnet50_symbol.build(18))
    if len(want) != len(got):
        print("op node count: reference %d, generated %d" % (len(want), len(got)))
        return 1
    for w, g in zip(want, got):
        if w != g:
            print("first difference:\n  reference %s\n  generated %s" % (w, g))
            return 1
    committed = [(COMMITTED, make_resnet50_symbol.build(50), "make_resnet50_symbol.py"),
                 (os.path.join(HERE, "models/mobilenet-v2-symbol.json"), make_mobile_symbols.mobilenet_v2(),
                  "make_mobile_symbols.py mobilenet-v2"),
                 (os.path.join(HERE, "models/mobilefacenet-symbol.json"), make_mobile_symbols.mobilefacenet(),
                  "make_mobile_symbols.py mobilefacenet"),
                 (os.path.join(HERE, "models/retinaface-mnet25-symbol.json"), make_retinaface_symbol.build(),
                  "make_retinaface_symbol.py")]
    for path, graph, command in committed:
        with open(path) as f:
            if json.load(f) != graph:
                print("%s differs from the generator's output: regenerate it with\n"
                      "  bench/%s %s" % (path, command, path))
                return 1
    print("generator reproduces resnet-18-symbol.json (%d op nodes); the committed generated symbols are current"
          % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
