#!/usr/bin/python3
"""Goldens from OpenCV for _cvimresize, _cvcopyMakeBorder, _cvimdecode and _cvimread
(mx.image.imresize, copyMakeBorder, imdecode, imread), read by tests/ops/image/test_cv_image.cc;
see tests/goldens/cv_image/README.md.

MXNet 1.9.1 runs both operators as cv2.resize(src, (w, h), interpolation=interp) and
cv2.copyMakeBorder(src, top, bot, left, right, type, value=...), so Debian's python3-opencv is
the reference. The inputs are small fixed pseudo-random images, uint8 and float32, 3 channels.
Usage: /usr/bin/python3 scripts/make_cv_image_goldens.py [--out DIR]
"""

import argparse
import json
import os

import cv2
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "cv_image")

# (w, h): shrinking by non-integer and integer factors, growing, and one axis each way.
RESIZE_SIZES = [(7, 5), (6, 5), (26, 22), (20, 17), (5, 14), (1, 1)]
INTERPS = [0, 1, 2, 3]
# (top, bot, left, right, type, values)
BORDERS = [(2, 1, 3, 4, 0, [10, 20, 30]), (2, 1, 3, 4, 0, []), (3, 3, 2, 2, 1, []), (3, 3, 2, 2, 2, []),
           (3, 3, 2, 2, 3, []), (3, 3, 2, 2, 4, []), (12, 0, 0, 14, 4, [])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.RandomState(7)
    images = {"u8": rng.randint(0, 256, size=(11, 13, 3)).astype(np.uint8),
              "f32": rng.uniform(-2, 2, size=(11, 13, 3)).astype(np.float32)}
    for name, img in images.items():
        np.save(os.path.join(args.out, "input_%s.npy" % name), img)
    cases = []
    for name, img in images.items():
        for (w, h) in RESIZE_SIZES:
            for interp in INTERPS:
                stem = "resize_%s_%dx%d_i%d" % (name, w, h, interp)
                np.save(os.path.join(args.out, stem + ".npy"), cv2.resize(img, (w, h), interpolation=interp))
                cases.append({"stem": stem, "input": "input_%s.npy" % name, "op": "_cvimresize",
                              "params": {"w": str(w), "h": str(h), "interp": str(interp)}})
        for i, (top, bot, left, right, kind, values) in enumerate(BORDERS):
            stem = "border_%s_%d" % (name, i)
            padded = cv2.copyMakeBorder(img, top, bot, left, right, kind, value=values + [0] * (4 - len(values)))
            np.save(os.path.join(args.out, stem + ".npy"), padded)
            params = {"top": str(top), "bot": str(bot), "left": str(left), "right": str(right), "type": str(kind)}
            if values:
                params["values"] = "(" + ", ".join(str(v) for v in values) + ")"
            cases.append({"stem": stem, "input": "input_%s.npy" % name, "op": "_cvcopyMakeBorder", "params": params})
    # Decoding: a PNG of the uint8 input (lossless), and OpenCV's decode of a JPEG in the tree.
    cv2.imwrite(os.path.join(args.out, "input_u8.png"), images["u8"][:, :, ::-1])
    jpeg = os.path.join(REPO, "tests", "goldens", "images", "gradient-96x64.jpg")
    np.save(os.path.join(args.out, "gradient_rgb.npy"), cv2.imread(jpeg, cv2.IMREAD_COLOR)[:, :, ::-1].copy())
    np.save(os.path.join(args.out, "gradient_grey.npy"), cv2.imread(jpeg, cv2.IMREAD_GRAYSCALE)[:, :, None].copy())
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"opencv": cv2.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
