#!/usr/bin/env python3
"""Writes scaled-Gaussian parameters for a symbol as an MXNet .params file in pure Python (no
numpy, no torch): weights N(0, 2/fan_in), BatchNorm near identity, biases small; shapes from
`symbind shapes`. Slower than bench/peers.py but needs nothing installed.

Usage: bench/make_gaussian_params.py SYMBIND_TOOL SYMBOL.json N,C,H,W OUT.params
"""
import array
import math
import random
import struct
import subprocess
import sys

tool, symbol, shape, out = sys.argv[1:5]
lines = subprocess.run([tool, "shapes", symbol, "--shape", "data=" + shape],
                       capture_output=True, text=True, check=True).stdout.splitlines()
rng = random.Random(0)
named = []
for line in lines:
    kind, name, dims = line.split()[:3]
    if kind not in ("arg", "aux") or name in ("data", "softmax_label"):
        continue
    dims = [int(d) for d in dims.strip("()").split(",") if d]
    n = math.prod(dims)
    if name.endswith("_weight"):
        std = math.sqrt(2.0 / (n // dims[0]))
        values = [rng.gauss(0, std) for _ in range(n)]
    elif name.endswith("_gamma"):
        values = [1 + 0.1 * rng.gauss(0, 1) for _ in range(n)]
    elif name.endswith("_moving_var"):
        values = [rng.uniform(0.5, 1.5) for _ in range(n)]
    else:
        values = [0.1 * rng.gauss(0, 1) for _ in range(n)]
    named.append(("%s:%s" % (kind, name), dims, array.array("f", values)))
# The V2 dense layout MXNet 1.x writes (io/ndarray_file.h describes it), as bench/peers.py.
with open(out, "wb") as f:
    f.write(struct.pack("<QQQ", 0x112, 0, len(named)))
    for _, dims, values in named:
        f.write(struct.pack("<Iii", 0xF993FAC9, 0, len(dims)))
        f.write(struct.pack("<%dq" % len(dims), *dims))
        f.write(struct.pack("<iii", 1, 0, 0))  # cpu, device 0, float32
        f.write(values.tobytes())
    f.write(struct.pack("<Q", len(named)))
    for name, _, _ in named:
        f.write(struct.pack("<Q", len(name.encode())))
        f.write(name.encode())
