#!/usr/bin/python3
"""Independent reference for symbind's mtcnn-detect: MTCNN face detection in NumPy + OpenCV DNN.

The networks are the *Caffe* release (detN.prototxt / detN.caffemodel) run by cv2.dnn, not the
MXNet files symbind uses. The Caffe weights expect transposed RGB input; the MXNet port
re-arranged them for untransposed BGR input, so (tests/goldens/mtcnn/README.md)

    MXNet(x) = Caffe(x[:, ::-1].transpose(0, 1, 3, 2))

with P-Net's spatial outputs transposed back. The cascade (pyramid, box generation, NMS,
regression, squaring, crops, landmarks) is written here again in vectorised NumPy from the
description of the MXNet port (pangyupo/mxnet_mtcnn_face_detection) and apps/mtcnn.h:

  pyramid  scales 12/min_size * factor**k while min(h, w) * scale >= 12, image resized to
           (ceil(w*s), ceil(h*s));
  P-Net    cells with face probability > t0 -> boxes round((2x+1)/s), round((2x+1+12)/s)
           (half to even), NMS 0.5 IoU per scale, NMS 0.7 IoU over all, regress, square, round;
  R-Net    24x24 crops (zero outside the image), > t1, NMS 0.7 IoU, regress, square, round;
  O-Net    48x48 crops, > t2, landmarks from the unregressed box, regress, NMS 0.7 "Min".

Resizing is the float bilinear of io/image.h written again in NumPy: OpenCV INTER_LINEAR
geometry (source = (d + 0.5) * (1 / (dst/src)) - 0.5 in double, clamped at the borders),
fraction and interpolation in float32. Images are decoded by Debian's libstb (the decoder
symbind uses, through ctypes) so that both sides see identical pixels; --decoder opencv uses
cv2.imread (libjpeg) instead, whose pixels differ by up to 3 levels.

Run from the repository root with Debian's Python (python3-opencv, python3-numpy):

    /usr/bin/python3 scripts/mtcnn_reference.py            # writes tests/goldens/mtcnn_detect/
    /usr/bin/python3 scripts/mtcnn_reference.py --check    # recompute and compare
"""
import argparse
import ctypes
import ctypes.util
import json
import math
import os
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IMAGES = ["test.jpg", "test2.jpg"]


# ---------------------------------------------------------------------------------------------
# Image decoding
def decode_stb(path):
    """BGR uint8 (H, W, 3) decoded by libstb's stbi_load_from_memory."""
    name = ctypes.util.find_library("stb") or "libstb.so"
    lib = ctypes.CDLL(name)
    lib.stbi_load_from_memory.restype = ctypes.POINTER(ctypes.c_ubyte)
    lib.stbi_load_from_memory.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                          ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.stbi_image_free.argtypes = [ctypes.c_void_p]
    data = open(path, "rb").read()
    w, h, n = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    p = lib.stbi_load_from_memory(data, len(data), ctypes.byref(w), ctypes.byref(h),
                                  ctypes.byref(n), 3)
    if not p:
        raise RuntimeError("stb_image cannot decode %s" % path)
    try:
        rgb = np.ctypeslib.as_array(p, shape=(h.value, w.value, 3)).copy()
    finally:
        lib.stbi_image_free(p)
    return rgb[:, :, ::-1]


def decode(path, decoder):
    if decoder == "stb":
        return decode_stb(path)
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise RuntimeError("OpenCV cannot decode %s" % path)
    return img


# ---------------------------------------------------------------------------------------------
# Float bilinear resize (the io/image.h spec)
def _taps(src, dst):
    scale = 1.0 / (dst / src)
    s = ((np.arange(dst, dtype=np.float64) + 0.5) * scale - 0.5).astype(np.float32)
    i0 = np.floor(s).astype(np.int64)
    frac = (s - i0.astype(np.float32)).astype(np.float32)
    low = i0 < 0
    frac[low], i0[low] = 0, 0
    high = i0 >= src - 1
    frac[high], i0[high] = 0, src - 1
    return i0, np.minimum(i0 + 1, src - 1), frac


def resize(img, width, height):
    """img: float32 (H, W, C) -> float32 (height, width, C)."""
    h, w = img.shape[:2]
    x0, x1, fx = _taps(w, width)
    y0, y1, fy = _taps(h, height)
    one = np.float32(1)
    fx = fx[None, :, None]
    fy = fy[:, None, None]
    top = (one - fx) * img[y0][:, x0] + fx * img[y0][:, x1]
    bottom = (one - fx) * img[y1][:, x0] + fx * img[y1][:, x1]
    return ((one - fy) * top + fy * bottom).astype(np.float32)


def to_net_input(patches):
    """float32 (N, H, W, 3) BGR 0..255 -> MXNet layout (N, 3, H, W) normalised."""
    x = (patches - np.float32(127.5)) * np.float32(0.0078125)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# The Caffe networks behind an MXNet-layout interface
class CaffeNet:
    def __init__(self, models, name, outputs):
        self.net = cv2.dnn.readNetFromCaffe(os.path.join(models, name + ".prototxt"),
                                            os.path.join(models, name + ".caffemodel"))
        self.outputs = outputs

    def __call__(self, x):
        """x: MXNet-layout input (N, 3, H, W); returns the outputs in MXNet layout, float64."""
        self.net.setInput(np.ascontiguousarray(x[:, ::-1].transpose(0, 1, 3, 2)))
        outs = self.net.forward(self.outputs)
        return [o.transpose(0, 1, 3, 2).astype(np.float64) if o.ndim == 4 else
                o.astype(np.float64) for o in outs]


# ---------------------------------------------------------------------------------------------
# Cascade pieces
def nms(boxes, scores, threshold, use_min):
    """Indices kept, best first; among equal scores the later box wins (stable ascending sort)."""
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = np.argsort(scores, kind="stable")
    keep = []
    while order.size > 0:
        best, rest = order[-1], order[:-1]
        keep.append(best)
        iw = np.maximum(0.0, np.minimum(x2[best], x2[rest]) - np.maximum(x1[best], x1[rest]) + 1)
        ih = np.maximum(0.0, np.minimum(y2[best], y2[rest]) - np.maximum(y1[best], y1[rest]) + 1)
        inter = iw * ih
        if use_min:
            overlap = inter / np.minimum(area[best], area[rest])
        else:
            overlap = inter / (area[best] + area[rest] - inter)
        order = rest[~(overlap > threshold)]
    return np.array(keep, dtype=np.int64)


def regress(boxes, reg):
    wh = np.stack([boxes[:, 2] - boxes[:, 0] + 1, boxes[:, 3] - boxes[:, 1] + 1], axis=1)
    return boxes + reg * np.concatenate([wh, wh], axis=1)


def square(boxes):
    w = boxes[:, 2] - boxes[:, 0] + 1
    h = boxes[:, 3] - boxes[:, 1] + 1
    side = np.maximum(w, h)
    x1 = boxes[:, 0] + w * 0.5 - side * 0.5
    y1 = boxes[:, 1] + h * 0.5 - side * 0.5
    return np.stack([x1, y1, x1 + side - 1, y1 + side - 1], axis=1)


def crops(img, boxes, size):
    """(N, size, size, 3) float32: each integer box cut out (zero outside the image), resized."""
    H, W = img.shape[:2]
    out = np.zeros((len(boxes), size, size, 3), np.float32)
    for n, (x1, y1, x2, y2) in enumerate(boxes.astype(np.int64)):
        w, h = x2 - x1 + 1, y2 - y1 + 1
        if w <= 0 or h <= 0:
            continue
        patch = np.zeros((h, w, 3), np.float32)
        ax, bx = max(x1, 0), min(x2, W - 1)
        ay, by = max(y1, 0), min(y2, H - 1)
        if ax <= bx and ay <= by:
            patch[ay - y1:by - y1 + 1, ax - x1:bx - x1 + 1] = img[ay:by + 1, ax:bx + 1]
        out[n] = resize(patch, size, size)
    return out


def scales_for(h, w, min_size, factor):
    m = 12.0 / min_size
    side = min(h, w) * m
    result, k = [], 0
    while side >= 12:
        result.append(m * factor ** k)
        side *= factor
        k += 1
    return result


def detect(img_bgr, nets, min_size=20.0, thresholds=(0.6, 0.7, 0.8), factor=0.709):
    """Returns boxes (N, 4), scores (N,), landmarks (N, 5, 2), all float64."""
    pnet, rnet, onet = nets
    img = img_bgr.astype(np.float32)
    H, W = img.shape[:2]
    empty = (np.zeros((0, 4)), np.zeros(0), np.zeros((0, 5, 2)))

    # P-Net over the pyramid.
    all_boxes, all_scores, all_regs = [], [], []
    for s in scales_for(H, W, min_size, factor):
        ws, hs = int(math.ceil(W * s)), int(math.ceil(H * s))
        reg, prob = pnet(to_net_input(resize(img, ws, hs)[None]))
        face = prob[0, 1]
        ys, xs = np.nonzero(face > thresholds[0])
        if ys.size == 0:
            continue
        boxes = np.stack([np.round((2 * xs + 1) / s), np.round((2 * ys + 1) / s),
                          np.round((2 * xs + 1 + 12) / s), np.round((2 * ys + 1 + 12) / s)],
                         axis=1).astype(np.float64)
        scores = face[ys, xs]
        regs = reg[0][:, ys, xs].T
        keep = nms(boxes, scores, 0.5, False)
        all_boxes.append(boxes[keep])
        all_scores.append(scores[keep])
        all_regs.append(regs[keep])
    if not all_boxes:
        return empty
    boxes, scores, regs = (np.concatenate(all_boxes), np.concatenate(all_scores),
                           np.concatenate(all_regs))
    keep = nms(boxes, scores, 0.7, False)
    boxes = np.round(square(regress(boxes[keep], regs[keep])))

    # R-Net.
    reg, prob = rnet(to_net_input(crops(img, boxes, 24)))
    ok = prob[:, 1] > thresholds[1]
    if not ok.any():
        return empty
    boxes, scores, regs = boxes[ok], prob[ok, 1], reg[ok]
    keep = nms(boxes, scores, 0.7, False)
    boxes = np.round(square(regress(boxes[keep], regs[keep])))

    # O-Net.
    points, reg, prob = onet(to_net_input(crops(img, boxes, 48)))
    ok = prob[:, 1] > thresholds[2]
    if not ok.any():
        return empty
    boxes, scores, regs, points = boxes[ok], prob[ok, 1], reg[ok], points[ok]
    w = (boxes[:, 2] - boxes[:, 0] + 1)[:, None]
    h = (boxes[:, 3] - boxes[:, 1] + 1)[:, None]
    marks = np.stack([boxes[:, 0:1] + w * points[:, 0:5], boxes[:, 1:2] + h * points[:, 5:10]],
                     axis=2)
    boxes = regress(boxes, regs)
    keep = nms(boxes, scores, 0.7, True)
    return boxes[keep], scores[keep], marks[keep]


# ---------------------------------------------------------------------------------------------
def load_nets(models):
    return (CaffeNet(models, "det1", ["conv4-2", "prob1"]),
            CaffeNet(models, "det2", ["conv5-2", "prob1"]),
            CaffeNet(models, "det3", ["conv6-3", "conv6-2", "prob1"]))


def compare(a, b):
    """Max differences between two golden dicts, each face matched to the face in `b` whose box
    is nearest (largest coordinate difference)."""
    if len(a["faces"]) != len(b["faces"]):
        return "face count %d vs %d" % (len(a["faces"]), len(b["faces"]))
    db = ds = dl = 0.0
    used = set()
    for fa in a["faces"]:
        dist = [float(np.max(np.abs(np.subtract(fa["box"], fb["box"])))) for fb in b["faces"]]
        j = int(np.argmin(dist))
        used.add(j)
        fb = b["faces"][j]
        db = max(db, dist[j])
        ds = max(ds, abs(fa["score"] - fb["score"]))
        dl = max(dl, float(np.max(np.abs(np.subtract(fa["landmarks"], fb["landmarks"])))))
    if len(used) != len(b["faces"]):
        return "face count %d vs %d distinct matches" % (len(b["faces"]), len(used))
    return "max |box| %.3g px, |score| %.3g, |landmark| %.3g px" % (db, ds, dl)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models", "mtcnn"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "mtcnn_detect"))
    ap.add_argument("--decoder", choices=["stb", "opencv"], default="stb")
    ap.add_argument("--check", action="store_true",
                    help="recompute and compare with the files in --out instead of writing")
    args = ap.parse_args()

    cv2.setNumThreads(1)
    nets = load_nets(args.models)
    settings = {"min_size": 20.0, "thresholds": [0.6, 0.7, 0.8], "factor": 0.709}
    failed = False
    for name in IMAGES:
        img = decode(os.path.join(args.models, name), args.decoder)
        start = time.time()
        boxes, scores, marks = detect(img, nets, settings["min_size"], settings["thresholds"],
                                      settings["factor"])
        ms = (time.time() - start) * 1e3
        result = {
            "image": name,
            "width": int(img.shape[1]),
            "height": int(img.shape[0]),
            "decoder": args.decoder,
            "settings": settings,
            "faces": [{"box": [float(v) for v in b], "score": float(s),
                       "landmarks": [[float(x), float(y)] for x, y in m]}
                      for b, s, m in zip(boxes, scores, marks)],
        }
        path = os.path.join(args.out, os.path.splitext(name)[0] + ".json")
        print("%s: %d faces in %.0f ms (%s decoder, OpenCV %s)" %
              (name, len(scores), ms, args.decoder, cv2.__version__))
        for b, s, m in zip(boxes, scores, marks):
            print("  face %s %.4f %s" % (" ".join("%.2f" % v for v in b), s,
                                         " ".join("%.2f %.2f" % tuple(p) for p in m)))
        if args.check:
            with open(path) as f:
                want = json.load(f)
            verdict = compare(result, want)
            print("  vs %s: %s" % (os.path.relpath(path, ROOT), verdict))
            failed |= verdict.startswith("face count")
        else:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w") as f:
                json.dump(result, f, indent=1)
                f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
