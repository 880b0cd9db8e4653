#!/usr/bin/python3
"""Small .npy files written by NumPy itself, for tests/test_npy.cc (see tests/goldens/npy/README.md).

Every array's values follow a formula that the C++ test recomputes, so the test needs no NumPy.
Usage: /usr/bin/python3 scripts/make_npy_fixtures.py [--out DIR]
"""

import argparse
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "npy")


def values(dtype, shape):
    """k = 0, 1, 2, ... in C order, mapped per dtype (the C++ test uses the same formulas)."""
    k = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    if dtype in ("<f4", "<f8", "<f2"):
        return (k * 0.5 - 1.25).astype(dtype)          # exact in every float type
    if dtype == "<i4":
        return ((k - 3) * 100003).astype(dtype)        # negative and > 2^16
    if dtype == "<i8":
        return ((k - 3) * (2**40 + 7)).astype(dtype)   # beyond int32
    if dtype == "|u1":
        return ((k * 51 + 1) % 256).astype(dtype)      # 1, 52, 103, 154, 205, 0, ...
    if dtype == "|i1":
        return ((k * 51 + 1) % 256 - 128).astype(dtype)
    if dtype == "|b1":
        return (k % 3 == 0)
    raise ValueError(dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def save(name, arr, version=None):
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=version, allow_pickle=False)
        print(f"{name:24s} {arr.dtype.str} {arr.shape} fortran={np.isfortran(arr)}")

    tags = {"<f4": "f4", "<f8": "f8", "<f2": "f2", "<i4": "i4", "<i8": "i8",
            "|u1": "u1", "|i1": "i1", "|b1": "b1"}
    for dtype, tag in tags.items():
        save(f"{tag}_2x3.npy", values(dtype, (2, 3)))
    save("f4_scalar.npy", values("<f4", ()))
    save("f4_empty_0x3.npy", values("<f4", (0, 3)))
    save("f4_2x3x4.npy", values("<f4", (2, 3, 4)))
    save("u1_70000.npy", values("|u1", (70000,)))       # a long first dim: header padding
    save("f4_2x3_v2.npy", values("<f4", (2, 3)), version=(2, 0))
    save("f4_2x3_v3.npy", values("<f4", (2, 3)), version=(3, 0))
    save("f4_2x3_fortran.npy", np.asfortranarray(values("<f4", (2, 3))))
    save("f4_2x3_bigendian.npy", values("<f4", (2, 3)).astype(">f4"))


if __name__ == "__main__":
    main()
