#!/usr/bin/env python3
"""Goldens for RetinaFace decoding (vision/retinaface.h): random head outputs decoded the way
the published RetinaFace code does it (py-faster-rcnn's generate_anchors and anchors_plane,
bbox_transform_inv, RetinaFace's landmark_pred, clip_boxes, scaling by 1/im_scale, py_cpu_nms),
written here in NumPy from those descriptions. No symbind code is used. As RetinaFace's decoder,
the heads may hold 4 or 5 box values per anchor (the first 4 are the deltas) and 10 or 15
landmark values (per point: x, y, and for 15 a third value).

  /usr/bin/python3 tests/vision/make_retinaface_goldens.py   # writes tests/goldens/retinaface/decode.json
"""
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "goldens", "retinaface", "decode.json")


def generate_anchors(base_size, ratios, scales):
    base = np.array([0, 0, base_size - 1, base_size - 1], dtype=np.float64)

    def whctrs(a):
        w = a[2] - a[0] + 1
        h = a[3] - a[1] + 1
        return w, h, a[0] + 0.5 * (w - 1), a[1] + 0.5 * (h - 1)

    def mkanchors(ws, hs, x_ctr, y_ctr):
        ws = ws[:, None]
        hs = hs[:, None]
        return np.hstack((x_ctr - 0.5 * (ws - 1), y_ctr - 0.5 * (hs - 1),
                          x_ctr + 0.5 * (ws - 1), y_ctr + 0.5 * (hs - 1)))

    w, h, x_ctr, y_ctr = whctrs(base)
    size_ratios = w * h / np.array(ratios, dtype=np.float64)
    ws = np.round(np.sqrt(size_ratios))
    hs = np.round(ws * np.array(ratios, dtype=np.float64))
    ratio_anchors = mkanchors(ws, hs, x_ctr, y_ctr)
    out = []
    for a in ratio_anchors:
        w, h, x_ctr, y_ctr = whctrs(a)
        out.append(mkanchors(w * np.array(scales, dtype=np.float64), h * np.array(scales, dtype=np.float64),
                             x_ctr, y_ctr))
    return np.vstack(out)


def anchors_plane(height, width, stride, base_anchors):
    a = base_anchors.shape[0]
    all_anchors = np.zeros((height, width, a, 4))
    for ih in range(height):
        for iw in range(width):
            for k in range(a):
                all_anchors[ih, iw, k] = base_anchors[k] + np.array([iw * stride, ih * stride, iw * stride, ih * stride])
    return all_anchors.reshape((-1, 4))


def bbox_pred(boxes, deltas):
    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    ctr_x = boxes[:, 0] + 0.5 * (widths - 1.0)
    ctr_y = boxes[:, 1] + 0.5 * (heights - 1.0)
    pred_ctr_x = deltas[:, 0] * widths + ctr_x
    pred_ctr_y = deltas[:, 1] * heights + ctr_y
    pred_w = np.exp(deltas[:, 2]) * widths
    pred_h = np.exp(deltas[:, 3]) * heights
    return np.stack([pred_ctr_x - 0.5 * (pred_w - 1.0), pred_ctr_y - 0.5 * (pred_h - 1.0),
                     pred_ctr_x + 0.5 * (pred_w - 1.0), pred_ctr_y + 0.5 * (pred_h - 1.0)], axis=1)


def landmark_pred(boxes, deltas):
    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    ctr_x = boxes[:, 0] + 0.5 * (widths - 1.0)
    ctr_y = boxes[:, 1] + 0.5 * (heights - 1.0)
    pred = deltas.copy()
    pred[:, :, 0] = deltas[:, :, 0] * widths[:, None] + ctr_x[:, None]
    pred[:, :, 1] = deltas[:, :, 1] * heights[:, None] + ctr_y[:, None]
    return pred


def clip_boxes(boxes, height, width):
    boxes[:, 0::2] = np.maximum(np.minimum(boxes[:, 0::2], width - 1), 0)
    boxes[:, 1::2] = np.maximum(np.minimum(boxes[:, 1::2], height - 1), 0)
    return boxes


def nms(dets, thresh):
    x1, y1, x2, y2, scores = dets[:, 0], dets[:, 1], dets[:, 2], dets[:, 3], dets[:, 4]
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = np.argsort(scores, kind="stable")[::-1]  # ties: the later box first
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(int(i))
        xx1 = np.maximum(x1[i], x1[order[1:]])
        yy1 = np.maximum(y1[i], y1[order[1:]])
        xx2 = np.minimum(x2[i], x2[order[1:]])
        yy2 = np.minimum(y2[i], y2[order[1:]])
        inter = np.maximum(0.0, xx2 - xx1 + 1) * np.maximum(0.0, yy2 - yy1 + 1)
        ovr = inter / (areas[i] + areas[order[1:]] - inter)
        order = order[np.where(ovr <= thresh)[0] + 1]
    return keep


def decode(case, heads):
    props, scores_all, marks_all = [], [], []
    for head in heads:
        s = head["stride"]
        base = generate_anchors(case["base_size"], case["ratios"], case["scales"][str(s)])
        a = base.shape[0]
        cls = head["scores_array"][0]
        h, w = cls.shape[1], cls.shape[2]
        anchors = anchors_plane(h, w, s, base)
        scores = cls[a:, :, :].transpose((1, 2, 0)).reshape((-1,)).astype(np.float64)
        box_len = head["boxes_array"].shape[1] // a
        deltas = head["boxes_array"][0].transpose((1, 2, 0)).reshape((-1, box_len)).astype(np.float64)
        boxes = clip_boxes(bbox_pred(anchors, deltas), case["input_height"], case["input_width"])
        order = np.where(scores >= case["threshold"])[0]
        props.append(boxes[order])
        scores_all.append(scores[order])
        if "landmarks_array" in head:
            mark_len = head["landmarks_array"].shape[1] // a
            ld = head["landmarks_array"][0].transpose((1, 2, 0)).reshape((-1, 5, mark_len // 5)).astype(np.float64)
            marks_all.append(landmark_pred(anchors, ld)[order])
    props = np.vstack(props) / case["image_scale"]
    scores = np.concatenate(scores_all)
    marks = np.vstack(marks_all) / case["image_scale"] if marks_all else None
    keep = nms(np.hstack([props, scores[:, None]]), case["nms_iou"])
    faces = []
    for i in keep:
        f = {"box": props[i].tolist(), "score": float(scores[i])}
        if marks is not None:
            f["landmarks"] = marks[i].tolist()
        faces.append(f)
    return faces


def quantised(x, steps):
    """Multiples of 1/steps: exact in float32 and short in JSON (equal scores test NMS's ties)."""
    return (np.round(x * steps) / steps).astype(np.float32)


def make_case(rng, name, strides, scales, ratios, landmarks, input_h, input_w, image_scale, threshold, box_len=4,
              mark_len=10):
    case = {"name": name, "base_size": 16, "ratios": ratios, "scales": {str(s): scales[s] for s in strides},
            "threshold": threshold, "nms_iou": 0.4, "input_width": input_w, "input_height": input_h,
            "image_scale": image_scale}
    heads = []
    pad_h, pad_w = -(-input_h // 32) * 32, -(-input_w // 32) * 32
    for s in strides:
        a = len(scales[s]) * len(ratios)
        h, w = pad_h // s, pad_w // s
        head = {"stride": s,
                "scores_array": quantised(rng.uniform(0, 1, (1, 2 * a, h, w)), 256),
                "boxes_array": quantised(rng.standard_normal((1, box_len * a, h, w)) * 0.3, 64)}
        if landmarks:
            head["landmarks_array"] = quantised(rng.standard_normal((1, mark_len * a, h, w)) * 0.3, 64)
        heads.append(head)
    case["faces"] = decode(case, heads)
    case["heads"] = []
    for head in heads:
        out = {"stride": head["stride"]}
        for k in ("scores", "boxes", "landmarks"):
            if k + "_array" in head:
                arr = head[k + "_array"]
                out[k] = {"shape": list(arr.shape), "values": [float(v) for v in arr.ravel()]}
        case["heads"].append(out)
    return case


def main():
    rng = np.random.default_rng(34)
    cases = [
        # InsightFace's MobileNet-0.25 layout: strides 32/16/8, 2 anchors, landmark heads.
        make_case(rng, "three strides with landmarks", [32, 16, 8], {32: [32, 16], 16: [8, 4], 8: [2, 1]}, [1.0],
                  True, 60, 90, 0.75, 0.9),
        # One stride, three ratios x two scales (6 anchors, ratio-major), no landmarks.
        make_case(rng, "one stride, six anchors, no landmarks", [16], {16: [8, 4]}, [0.5, 1.0, 2.0], False, 64, 64,
                  1.0, 0.85),
        # Heads of 5 box values and 15 landmark values per anchor, as RetinaFace's decoder takes them.
        make_case(rng, "5-value boxes and 15-value landmarks", [32, 16], {32: [32, 16], 16: [8, 4]}, [1.0], True, 64,
                  96, 1.0, 0.8, box_len=5, mark_len=15),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "tests/vision/make_retinaface_goldens.py", "cases": cases}, f, separators=(",", ":"))
    for c in cases:
        print(c["name"], len(c["faces"]), "faces")


if __name__ == "__main__":
    main()
