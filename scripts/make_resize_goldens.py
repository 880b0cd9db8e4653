#!/usr/bin/python3
"""Goldens from PyTorch for _contrib_BilinearResize2D and _contrib_AdaptiveAvgPooling2D
(tests/ops/nn/test_resize_goldens.cc; see tests/goldens/resize/README.md).

MXNet 1.9.1's CPU kernels for both ops follow PyTorch's definitions (bilinear source index
with align_corners on or off, negative source clamped to 0; adaptive bins
[floor(o*I/O), ceil((o+1)*I/O))), so torch.nn.functional.interpolate(mode='bilinear') and
adaptive_avg_pool2d are an independent reference. For each case the script stores the output
and the input gradient for a fixed head gradient.
Usage: /usr/bin/python3 scripts/make_resize_goldens.py [--out DIR]   (Debian's python3-torch)
"""

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "resize")

# (file stem, op, size, align_corners)
CASES = [
    ("bilinear_11x9_align", "bilinear", (11, 9), True),
    ("bilinear_11x9_noalign", "bilinear", (11, 9), False),
    ("bilinear_3x2_align", "bilinear", (3, 2), True),
    ("bilinear_3x2_noalign", "bilinear", (3, 2), False),
    ("bilinear_1x4_align", "bilinear", (1, 4), True),
    ("bilinear_14x3_noalign", "bilinear", (14, 3), False),
    ("adaptive_4x2", "adaptive", (4, 2), None),
    ("adaptive_3x3", "adaptive", (3, 3), None),
    ("adaptive_10x8", "adaptive", (10, 8), None),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    gen = torch.Generator().manual_seed(15)
    x = torch.randn(2, 3, 7, 5, generator=gen, dtype=torch.float64)
    np.save(os.path.join(args.out, "input.npy"), x.numpy().astype(np.float32))
    for stem, op, size, align in CASES:
        xi = x.clone().requires_grad_(True)
        if op == "bilinear":
            y = F.interpolate(xi, size=size, mode="bilinear", align_corners=align)
        else:
            y = F.adaptive_avg_pool2d(xi, size)
        head = torch.randn(y.shape, generator=gen, dtype=torch.float64)
        (y * head).sum().backward()
        for suffix, t in (("out", y.detach()), ("head", head), ("grad", xi.grad)):
            np.save(os.path.join(args.out, f"{stem}_{suffix}.npy"), t.numpy().astype(np.float32))
    print(f"wrote {len(CASES)} cases to {args.out}")


if __name__ == "__main__":
    main()
