#!/usr/bin/env python3
"""Goldens for face alignment (vision/face_aligner.h), independent of symbind: the least-squares
similarity from five landmarks to ArcFace's 112x112 template solved as a linear least-squares
problem in (a, b, tx, ty) with numpy.linalg.lstsq, and the crop warped by OpenCV's warpAffine
(INTER_LINEAR, constant 0 border) from ../shared/models/mtcnn/test.jpg.

  /usr/bin/python3 tests/vision/make_face_align_goldens.py   # writes tests/goldens/face_align/
"""
import json
import os

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "goldens", "face_align")
SHARED = os.path.join(HERE, "..", "..", "..", "shared")
TEMPLATE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655],
                     [70.7299, 92.2041]])


def similarity_lstsq(src, dst):
    # u = a x - b y + tx, v = b x + a y + ty: two rows per point.
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst):
        rows.append([x, -y, 1, 0])
        rhs.append(u)
        rows.append([y, x, 0, 1])
        rhs.append(v)
    sol = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    return [float(v) for v in sol]


def main():
    os.makedirs(OUT, exist_ok=True)
    faces = json.load(open(os.path.join(HERE, "..", "goldens", "mtcnn_detect", "test.json")))["faces"]
    rng = np.random.default_rng(34)
    cases = []
    for f in faces[:3]:
        cases.append({"landmarks": f["landmarks"]})
    # Rotated, reflected-looking and tiny landmark sets.
    cases.append({"landmarks": (rng.uniform(0, 500, (5, 2))).tolist()})
    cases.append({"landmarks": (TEMPLATE[:, ::-1] * 0.01 + 3).tolist()})
    for c in cases:
        c["transform"] = similarity_lstsq(np.array(c["landmarks"]), TEMPLATE)
    image = cv2.imread(os.path.join(SHARED, "models", "mtcnn", "test.jpg"))
    a, b, tx, ty = cases[0]["transform"]
    m = np.array([[a, -b, tx], [b, a, ty]])
    crop = cv2.warpAffine(image, m, (112, 112), flags=cv2.INTER_LINEAR, borderValue=0)
    cv2.imwrite(os.path.join(OUT, "test_face0_112.png"), crop)
    json.dump({"generator": "tests/vision/make_face_align_goldens.py", "template": TEMPLATE.tolist(), "cases": cases,
               "crop": {"image": "models/mtcnn/test.jpg", "case": 0, "png": "test_face0_112.png"}},
              open(os.path.join(OUT, "align.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
