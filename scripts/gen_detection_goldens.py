#!/usr/bin/python3
"""Goldens for _contrib_box_nms, _contrib_ROIAlign and _contrib_DeformableConvolution from an
independent implementation: torchvision's ops.nms / ops.batched_nms, ops.roi_align (forward and
data gradient), ops.roi_pool (ROIPooling), ops.ps_roi_pool (PSROIPooling), ops.deform_conv2d (forward and every gradient, also with DCNv2's
mask), and
torch's affine_grid / grid_sample with align_corners=True and zero padding (GridGenerator,
BilinearSampler).

Usage (Debian's python3 with python3-torchvision and python3-numpy; not a virtualenv's python):
    /usr/bin/python3 scripts/gen_detection_goldens.py [--out DIR] [--check]
--check recomputes everything and compares with the files already in --out instead of writing.
The inputs come from numpy.random.RandomState(SEED), so a re-run reproduces the files.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "detection")
SEED = 20261124


def random_boxes(rng, n, extent):
    """n corner boxes [x1, y1, x2, y2] inside [0, extent], with positive sizes."""
    xy = rng.uniform(0, extent * 0.8, size=(n, 2))
    wh = rng.uniform(extent * 0.05, extent * 0.4, size=(n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float32)


def nms_cases(rng):
    out = {}
    # Class-agnostic: 64 boxes, distinct scores.
    boxes = random_boxes(rng, 64, 10.0)
    scores = rng.permutation(64).astype(np.float32) / 64.0 + 0.01
    keep = torchvision.ops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.2).numpy()
    out["nms_boxes"] = boxes
    out["nms_scores"] = scores
    out["nms_keep"] = keep.astype(np.float32)
    # Class-aware: 3 classes, per-class suppression (box_nms with id_index, force_suppress=0).
    boxes = random_boxes(rng, 64, 10.0)
    scores = rng.permutation(64).astype(np.float32) / 64.0 + 0.01
    ids = rng.randint(0, 3, size=64).astype(np.float32)
    keep = torchvision.ops.batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores),
                                       torch.from_numpy(ids).long(), 0.15).numpy()
    out["nms_class_boxes"] = boxes
    out["nms_class_scores"] = scores
    out["nms_class_ids"] = ids
    out["nms_class_keep"] = keep.astype(np.float32)
    return out


def roi_align_case(rng, name, data_shape, num_rois, pooled, scale, sampling_ratio, aligned):
    n, c, h, w = data_shape
    data = rng.uniform(-1, 1, size=data_shape).astype(np.float32)
    extent = min(h, w) / scale
    boxes = random_boxes(rng, num_rois, extent)
    # Some boxes reach past the border, to exercise the clamping rules.
    boxes[0, 2:] = [w / scale + 3.0, h / scale + 2.0]
    batch = rng.randint(0, n, size=(num_rois, 1)).astype(np.float32)
    rois = np.concatenate([batch, boxes], axis=1).astype(np.float32)
    head = rng.uniform(-1, 1, size=(num_rois, c) + pooled).astype(np.float32)
    x = torch.from_numpy(data).requires_grad_(True)
    y = torchvision.ops.roi_align(x, torch.from_numpy(rois), output_size=pooled,
                                  spatial_scale=scale, sampling_ratio=sampling_ratio,
                                  aligned=aligned)
    y.backward(torch.from_numpy(head))
    return {
        name + "_data": data,
        name + "_rois": rois,
        name + "_head": head,
        name + "_output": y.detach().numpy(),
        name + "_data_grad": x.grad.numpy(),
    }


def deform_conv_case(rng, name):
    """Grouped deformable convolution (2 groups, 2 offset groups, 3x3, pad 1, stride 2) whose
    sample points all lie inside the image, where torchvision's and MXNet's border rules agree
    (MXNet reads zero outside [0, size) and clamps the last row; torchvision blends in zeros)."""
    n, c, h, w, f, k, stride, pad, dg = 2, 4, 7, 8, 4, 3, 2, 1, 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    data = rng.uniform(-1, 1, size=(n, c, h, w)).astype(np.float32)
    weight = rng.uniform(-1, 1, size=(f, c // 2, k, k)).astype(np.float32)
    bias = rng.uniform(-1, 1, size=(f,)).astype(np.float32)
    offset = rng.uniform(-1.5, 1.5, size=(n, dg * 2 * k * k, oh, ow)).astype(np.float32)
    for g in range(dg):
        for i in range(k):
            for j in range(k):
                ch = g * 2 * k * k + 2 * (i * k + j)
                base_y = np.arange(oh)[:, None] * stride - pad + i
                base_x = np.arange(ow)[None, :] * stride - pad + j
                # keep every point in [0.05, size - 1.05], and off pixel boundaries
                y = np.clip(base_y + offset[:, ch], 0.05, h - 1.05)
                x = np.clip(base_x + offset[:, ch + 1], 0.05, w - 1.05)
                y = np.floor(y) + np.clip(y - np.floor(y), 0.1, 0.9)
                x = np.floor(x) + np.clip(x - np.floor(x), 0.1, 0.9)
                offset[:, ch] = y - base_y
                offset[:, ch + 1] = x - base_x
    head = rng.uniform(-1, 1, size=(n, f, oh, ow)).astype(np.float32)
    t = {key: torch.from_numpy(v).requires_grad_(True)
         for key, v in (("data", data), ("offset", offset), ("weight", weight), ("bias", bias))}
    y = torchvision.ops.deform_conv2d(t["data"], t["offset"], t["weight"], t["bias"],
                                      stride=stride, padding=pad)
    y.backward(torch.from_numpy(head))
    out = {name + "_" + key: v for key, v in
           (("data", data), ("offset", offset), ("weight", weight), ("bias", bias), ("head", head))}
    out[name + "_output"] = y.detach().numpy()
    for key in ("data", "offset", "weight", "bias"):
        out[name + "_" + key + "_grad"] = t[key].grad.numpy()
    return out


def modulated_deform_conv_case(rng, name):
    """ModulatedDeformableConvolution (DCNv2) = torchvision's deform_conv2d with a mask: 2 groups,
    2 offset groups, 3x3, pad 1, stride 1, sample points also across the border, where both
    blend in zeros for the pixels outside the image (points kept off pixel boundaries)."""
    n, c, h, w, f, k, stride, pad, dg = 2, 4, 6, 5, 4, 3, 1, 1, 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    data = rng.uniform(-1, 1, size=(n, c, h, w)).astype(np.float32)
    weight = rng.uniform(-1, 1, size=(f, c // 2, k, k)).astype(np.float32)
    bias = rng.uniform(-1, 1, size=(f,)).astype(np.float32)
    offset = rng.uniform(-2, 2, size=(n, dg * 2 * k * k, oh, ow)).astype(np.float32)
    offset = np.floor(offset) + 0.15 + 0.7 * rng.uniform(0, 1, size=offset.shape).astype(np.float32)
    mask = rng.uniform(0, 1, size=(n, dg * k * k, oh, ow)).astype(np.float32)
    head = rng.uniform(-1, 1, size=(n, f, oh, ow)).astype(np.float32)
    t = {key: torch.from_numpy(v).requires_grad_(True) for key, v in
         (("data", data), ("offset", offset), ("mask", mask), ("weight", weight), ("bias", bias))}
    y = torchvision.ops.deform_conv2d(t["data"], t["offset"], t["weight"], t["bias"],
                                      stride=stride, padding=pad, mask=t["mask"])
    y.backward(torch.from_numpy(head))
    out = {name + "_" + key: v for key, v in (("data", data), ("offset", offset), ("mask", mask),
                                              ("weight", weight), ("bias", bias), ("head", head))}
    out[name + "_output"] = y.detach().numpy()
    for key in ("data", "offset", "mask", "weight", "bias"):
        out[name + "_" + key + "_grad"] = t[key].grad.numpy()
    return out


def ps_roi_align_case(rng, name):
    """ROIAlign(position_sensitive=True, aligned=True) = torchvision's ps_roi_align (half-pixel
    offset, output channel c of bin (ph, pw) reads input channel (c * PH + ph) * PW + pw) for
    regions wider and taller than 0.1 pixel, where torchvision's size floor does not apply."""
    data = rng.uniform(-1, 1, size=(2, 8, 7, 9)).astype(np.float32)
    boxes = random_boxes(rng, 4, 12.0)
    batch = rng.randint(0, 2, size=(4, 1)).astype(np.float32)
    rois = np.concatenate([batch, boxes], axis=1).astype(np.float32)
    head = rng.uniform(-1, 1, size=(4, 2, 2, 2)).astype(np.float32)
    x = torch.from_numpy(data).requires_grad_(True)
    y = torchvision.ops.ps_roi_align(x, torch.from_numpy(rois), output_size=(2, 2), spatial_scale=0.6,
                                     sampling_ratio=2)
    y.backward(torch.from_numpy(head))
    return {name + "_data": data, name + "_rois": rois, name + "_head": head,
            name + "_output": y.detach().numpy(), name + "_data_grad": x.grad.numpy()}


def roi_pool_case(rng, name):
    """ROIPooling = torchvision's roi_pool (both Fast R-CNN's rounding and bin rules)."""
    data = rng.uniform(-1, 1, size=(2, 3, 9, 11)).astype(np.float32)
    boxes = random_boxes(rng, 6, 14.0)
    boxes[0] = [-3.0, -2.0, 30.0, 25.0]  # past every border
    batch = rng.randint(0, 2, size=(6, 1)).astype(np.float32)
    rois = np.concatenate([batch, boxes], axis=1).astype(np.float32)
    head = rng.uniform(-1, 1, size=(6, 3, 3, 2)).astype(np.float32)
    x = torch.from_numpy(data).requires_grad_(True)
    y = torchvision.ops.roi_pool(x, torch.from_numpy(rois), output_size=(3, 2), spatial_scale=0.7)
    y.backward(torch.from_numpy(head))
    return {name + "_data": data, name + "_rois": rois, name + "_head": head,
            name + "_output": y.detach().numpy(), name + "_data_grad": x.grad.numpy()}


def ps_roi_pool_case(rng, name, scale, pooled, output_dim):
    """PSROIPooling(group_size=pooled_size) = torchvision's ps_roi_pool for rois whose scaled
    corners are integers. MXNet rounds the corners before scaling and makes the far corner
    inclusive (+1) and starts bins at floor(ph * bin + start); torchvision rounds after scaling,
    adds nothing and starts them at floor(ph * bin) + round(start): both agree when start and
    (end + 1) * scale are integers, torchvision taking end + 1 as its far corner. torchvision
    clips bins to size - 1 (it never reads the last row and column), MXNet to size: the regions
    end before the last row and column, and reach past the top and left borders only. Regions
    are 1 pixel or more, where neither size floor applies."""
    step = int(round(1 / scale))
    c, h, w = output_dim * pooled * pooled, 9, 11
    data = rng.uniform(-1, 1, size=(2, c, h, w)).astype(np.float32)
    rows = []
    for _ in range(6):
        x1, y1 = rng.randint(-2, w - 2), rng.randint(-2, h - 2)
        x2 = x1 + rng.randint(1, w - x1)  # feature coordinates: the far end at most w - 1
        y2 = y1 + rng.randint(1, h - y1)
        rows.append([rng.randint(0, 2), x1 * step, y1 * step, x2 * step - 1, y2 * step - 1])
    rows[0] = [1, -2 * step, -step, (w - 1) * step - 1, (h - 1) * step - 1]  # past the top left
    rois = np.array(rows, dtype=np.float32)
    tv_rois = rois.copy()
    tv_rois[:, 3:] += 1.0
    head = rng.uniform(-1, 1, size=(6, output_dim, pooled, pooled)).astype(np.float32)
    x = torch.from_numpy(data).requires_grad_(True)
    y = torchvision.ops.ps_roi_pool(x, torch.from_numpy(tv_rois), output_size=pooled, spatial_scale=scale)
    y.backward(torch.from_numpy(head))
    return {name + "_data": data, name + "_rois": rois, name + "_head": head,
            name + "_output": y.detach().numpy(), name + "_data_grad": x.grad.numpy()}


def sampler_case(rng, name):
    """GridGenerator(affine) = affine_grid(align_corners=True); BilinearSampler = grid_sample
    (bilinear, zeros, align_corners=True) with MXNet's (N, 2, H, W) grid layout."""
    data = rng.uniform(-1, 1, size=(2, 3, 6, 7)).astype(np.float32)
    theta = (np.array([[0.9, 0.2, 0.1, -0.15, 1.1, -0.2], [1.4, -0.3, 0.3, 0.25, 0.6, 0.5]]) +
             rng.uniform(-0.05, 0.05, size=(2, 6))).astype(np.float32)
    t_theta = torch.from_numpy(theta).requires_grad_(True)
    grid = F.affine_grid(t_theta.view(2, 2, 3), (2, 3, 5, 4), align_corners=True)  # (N, H, W, 2)
    # A second, free grid (MXNet layout) with points outside the image too.
    free = rng.uniform(-1.3, 1.3, size=(2, 2, 5, 4)).astype(np.float32)
    t_data = torch.from_numpy(data).requires_grad_(True)
    t_free = torch.from_numpy(free).requires_grad_(True)
    out = F.grid_sample(t_data, t_free.permute(0, 2, 3, 1), mode="bilinear", padding_mode="zeros",
                        align_corners=True)
    head = rng.uniform(-1, 1, size=out.shape).astype(np.float32)
    out.backward(torch.from_numpy(head))
    grid_head = rng.uniform(-1, 1, size=(2, 2, 5, 4)).astype(np.float32)
    grid.permute(0, 3, 1, 2).backward(torch.from_numpy(grid_head))
    return {
        name + "_theta": theta,
        name + "_affine_grid": grid.detach().permute(0, 3, 1, 2).numpy().copy(),
        name + "_grid_head": grid_head,
        name + "_theta_grad": t_theta.grad.numpy(),
        name + "_data": data,
        name + "_grid": free,
        name + "_head": head,
        name + "_output": out.detach().numpy(),
        name + "_data_grad": t_data.grad.numpy(),
        name + "_grid_grad": t_free.grad.numpy(),
    }


def compute():
    rng = np.random.RandomState(SEED)
    out = nms_cases(rng)
    out.update(roi_align_case(rng, "roialign_adaptive", (2, 3, 9, 11), 6, (3, 2), 0.5, -1, False))
    out.update(roi_align_case(rng, "roialign_aligned", (2, 3, 8, 8), 5, (2, 3), 0.25, 2, True))
    out.update(deform_conv_case(rng, "deformconv"))
    out.update(roi_pool_case(rng, "roipool"))
    out.update(sampler_case(rng, "sampler"))
    out.update(ps_roi_align_case(rng, "psroialign"))
    out.update(modulated_deform_conv_case(rng, "mdeformconv"))
    out.update(ps_roi_pool_case(rng, "psroipool_half", 0.5, 3, 2))
    out.update(ps_roi_pool_case(rng, "psroipool_one", 1.0, 2, 3))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    arrays = compute()
    if args.check:
        bad = 0
        for name, value in arrays.items():
            old = np.load(os.path.join(args.out, name + ".npy"))
            diff = float(np.max(np.abs(old - value))) if value.size else 0.0
            print(f"{name:28s} {str(value.shape):16s} max diff {diff:.3g}")
            bad += diff > 0
        sys.exit(1 if bad else 0)
    os.makedirs(args.out, exist_ok=True)
    for name, value in arrays.items():
        np.save(os.path.join(args.out, name + ".npy"), value)
        print(f"wrote {name}.npy {value.shape}")
    print("torch", torch.__version__, "torchvision", torchvision.__version__, "numpy", np.__version__)


if __name__ == "__main__":
    main()
