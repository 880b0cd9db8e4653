#!/usr/bin/env python3
"""Goldens for entropy calibration (predict/calibration.h), with NumPy alone.

Written from the published algorithm of MXNet 1.9.1's quantize_model (calib_mode='entropy'):
np.histogram over 8001 bins of [-t, t], widened batch by batch (combine_histogram), then the
Kullback-Leibler threshold search of _get_optimal_threshold / _contrib_calibrate_entropy.
Writes tests/goldens/calibration/: <case>_batch<k>.npy (float32 values), <case>_hist.npy
(int64 counts after every batch), and manifest.json (per case: batches, the histogram's
half-width, the thresholds for 255 and 511 quantized bins, min and max).
Run: /usr/bin/python3 scripts/gen_calibration_goldens.py
"""
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "goldens", "calibration")
BINS = 8001


def combine(state, arr):
    """state: (hist, t, min, max) or None; arr: float32 values of one batch."""
    lo, hi = float(arr.min()), float(arr.max())
    new_t = max(abs(lo), abs(hi))
    if state is None:
        hist, _ = np.histogram(arr, bins=BINS, range=(-new_t, new_t))
        return hist.astype(np.int64), np.float32(new_t), lo, hi
    hist, t, mn, mx = state
    if new_t <= t:
        h, _ = np.histogram(arr, bins=len(hist), range=(-t, t))
        return hist + h, t, min(mn, lo), max(mx, hi)
    step = np.float32(2 * t / len(hist))
    added = int((np.float32(new_t) - t) // step + 1)
    n = 2 * added + len(hist)
    t2 = np.float32(added * step + t)
    h, _ = np.histogram(arr, bins=n, range=(-t2, t2))
    h = h.astype(np.int64)
    h[added:n - added] += hist
    return h, t2, min(mn, lo), max(mx, hi)


def smooth(p, eps=1e-4):
    zeros = (p == 0).astype(np.float32)
    nonzeros = (p != 0).astype(np.float32)
    n0, n1 = zeros.sum(), nonzeros.sum()
    if n1 == 0:
        return None
    eps1 = np.float32(eps * n0 / n1)
    if eps1 >= 1.0:
        return None
    return (p + np.float32(eps) * zeros - eps1 * nonzeros).astype(np.float32)


def optimal_threshold(hist, edges, nq):
    hist = hist.astype(np.float32)
    nb = len(hist)
    z = nb // 2
    best, best_kl = None, np.float32(np.finfo(np.float32).max)
    for i in range(nq // 2, z + 1):
        start, stop = z - i, z + i + 1
        sliced = hist[start:stop].astype(np.int64).copy()
        sliced[0] = 0
        p = hist[start:stop].copy()
        p[0] = hist[:start + 1].sum()
        p[-1] = hist[stop - 1] + hist[stop:].sum()
        m = len(sliced) // nq
        q = np.zeros(len(sliced), np.float32)
        for j in range(nq):
            a = j * m
            b = len(sliced) if j == nq - 1 else (j + 1) * m
            total = sliced[a:b].sum()
            norm = np.count_nonzero(sliced[a:b])
            if norm:
                level = np.float32(total) / np.float32(norm)
                q[a:b] = np.where(p[a:b] != 0, level, 0)
        ps, qs = smooth(p), smooth(q)
        if ps is None or qs is None:
            kl = np.float32(np.inf)
        else:
            ps = ps / ps.sum(dtype=np.float32)
            qs = qs / qs.sum(dtype=np.float32)
            kl = np.float32(np.sum(ps * np.log(ps / qs), dtype=np.float64))
        if kl < best_kl:
            best_kl, best = kl, float(edges[stop])
    return best


def main():
    rng = np.random.default_rng(20261130)
    cases = {
        # one batch: a bell with a few far outliers, which the threshold should cut
        "gaussian_outliers": [np.concatenate([rng.normal(0, 1, 6000), [9.0, -11.0, 14.0]])],
        # relu'd activations over three batches, the range growing twice (histogram widened)
        "relu_growing": [np.maximum(rng.normal(0, s, 3000), 0) for s in (1.0, 1.1, 1.25)],
        # heavy tails (Laplace), two batches, the second within the first's range
        "laplace": [rng.laplace(0, 0.5, 4000), rng.laplace(0, 0.2, 2000)],
    }
    os.makedirs(OUT, exist_ok=True)
    manifest = {}
    for name, batches in cases.items():
        state = None
        for k, b in enumerate(batches):
            b = np.asarray(b, np.float32)
            np.save(os.path.join(OUT, f"{name}_batch{k}.npy"), b)
            state = combine(state, b)
        hist, t, mn, mx = state
        np.save(os.path.join(OUT, f"{name}_hist.npy"), hist)
        edges = np.linspace(-t, t, len(hist) + 1).astype(np.float32)
        manifest[name] = {
            "batches": len(batches),
            "threshold_of_histogram": float(t),
            "min": mn, "max": mx,
            "threshold_255": optimal_threshold(hist, edges, 255),
            "threshold_511": optimal_threshold(hist, edges, 511),
        }
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
