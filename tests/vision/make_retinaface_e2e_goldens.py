#!/usr/bin/env python3
"""The faces an independent pipeline finds with the real RetinaFace export in
../shared/models/retinaface on ../shared/models/mtcnn/test.jpg, for tests/vision/test_retinaface.cc.

Preprocessing is OpenCV's (imread's BGR, resize INTER_LINEAR in float to fit 640 px, CHW, zero
padding to multiples of 32); the network runs once through `symbind run` (the raw heads only:
OpenCV DNN has no MXNet reader); decoding is the NumPy reference of make_retinaface_goldens.py.

  /usr/bin/python3 tests/vision/make_retinaface_e2e_goldens.py [--build build] [--shared ../shared]
"""
import argparse
import json
import os
import subprocess
import tempfile

import cv2
import numpy as np

import make_retinaface_goldens as ref

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

SETTINGS = {"base_size": 16, "ratios": [1.0], "scales": {"16": [8, 4]}, "threshold": 0.5, "nms_iou": 0.4}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    a = p.parse_args()
    image = cv2.imread(os.path.join(a.shared, "models", "mtcnn", "test.jpg"))  # BGR
    h, w = image.shape[:2]
    scale = min(1.0, 640.0 / max(h, w))
    rw, rh = int(round(w * scale)), int(round(h * scale))
    resized = cv2.resize(image.astype(np.float32), (rw, rh), interpolation=cv2.INTER_LINEAR)
    th, tw = -(-rh // 32) * 32, -(-rw // 32) * 32
    data = np.zeros((1, 3, th, tw), np.float32)
    data[0, :, :rh, :rw] = resized.transpose(2, 0, 1)
    prefix = os.path.join(a.shared, "models", "retinaface", "retina16")
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "data.npy"), data)
        subprocess.run([os.path.join(a.build, "tools", "symbind"), "run", prefix + "-symbol.json", prefix + "-0000.params",
                        "--input", "data=" + os.path.join(tmp, "data.npy"), "--all-outputs", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        outputs = {f: np.load(os.path.join(tmp, f)) for f in os.listdir(tmp) if f != "data.npy"}
    def head(name):
        return next(v for k, v in outputs.items() if name in k)
    case = dict(SETTINGS, input_width=rw, input_height=rh, image_scale=scale)
    heads = [{"stride": 16, "scores_array": head("cls_prob_reshape_stride16"),
              "boxes_array": head("bbox_pred_stride16")}]
    faces = ref.decode(case, heads)
    out = dict(SETTINGS, image="models/mtcnn/test.jpg", generator="tests/vision/make_retinaface_e2e_goldens.py",
               faces=faces)
    with open(os.path.join(REPO, "tests", "goldens", "retinaface", "test_jpg.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(len(faces), "faces", [[round(v) for v in x["box"]] + [round(x["score"], 3)] for x in faces])


if __name__ == "__main__":
    main()
