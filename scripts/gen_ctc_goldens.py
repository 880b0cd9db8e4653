#!/usr/bin/python3
"""Goldens for symbind's CTCLoss from PyTorch's torch.nn.functional.ctc_loss (Debian's python3-torch).

For each case the script draws float32 activations (T, N, C), labels in MXNet's padded layout,
optional data and label lengths and a head gradient, computes in float64 the per-sequence loss
ctc_loss(log_softmax(data), ..., reduction='none') and the gradient of sum(loss * head) with
respect to the activations, and writes every array as .npy under tests/goldens/ctc/ with
manifest.json listing the cases and the CTCLoss parameters to use.

Usage: /usr/bin/python3 scripts/gen_ctc_goldens.py [--out DIR]
"""

import argparse
import json
import os

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "ctc")

# name, (T, N, C), max label length, blank_label, use_data_lengths, use_label_lengths, seed
CASES = [
    ("blank_first_padded", (6, 3, 5), 3, "first", False, False, 1),
    ("blank_last_lengths", (7, 4, 4), 3, "last", True, True, 2),
    ("blank_first_data_lengths", (8, 2, 6), 4, "first", True, False, 3),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest = {"cases": []}
    for name, (T, N, C), L, blank_label, use_dl, use_ll, seed in CASES:
        rng = np.random.RandomState(seed)
        blank = 0 if blank_label == "first" else C - 1
        padding = 0 if blank_label == "first" else -1
        first_class = 1 if blank_label == "first" else 0
        data = rng.uniform(-2, 2, (T, N, C)).astype(np.float32)
        data_lengths = rng.randint(T - 2, T + 1, N) if use_dl else np.full(N, T)
        label = np.full((N, L), padding, dtype=np.float32)
        label_lengths = np.zeros(N, dtype=np.int64)
        for n in range(N):
            # Short enough for data_lengths[n] frames even with repeats; repeats are drawn too.
            k = rng.randint(1, min(L, (data_lengths[n] + 1) // 2) + 1)
            label[n, :k] = rng.randint(first_class, first_class + C - 1, k)
            if k > 1 and n == 0:
                label[n, 1] = label[n, 0]
            label_lengths[n] = k
        head = rng.uniform(0.5, 1.5, N).astype(np.float32)

        x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        log_probs = torch.log_softmax(x, dim=2)
        targets = torch.tensor(np.concatenate([label[n, :label_lengths[n]] for n in range(N)]).astype(np.int64))
        loss = torch.nn.functional.ctc_loss(log_probs, targets, torch.tensor(data_lengths, dtype=torch.int64),
                                            torch.tensor(label_lengths), blank=blank, reduction="none")
        (loss * torch.from_numpy(head).double()).sum().backward()
        arrays = {"data": data, "label": label, "head": head, "loss": loss.detach().numpy(), "grad": x.grad.numpy()}
        if use_dl:
            arrays["data_lengths"] = data_lengths
        if use_ll:
            arrays["label_lengths"] = label_lengths
        for key, value in arrays.items():
            np.save(os.path.join(args.out, "%s_%s.npy" % (name, key)), np.asarray(value).astype(np.float32))
        manifest["cases"].append({"name": name, "blank_label": blank_label, "use_data_lengths": use_dl,
                                  "use_label_lengths": use_ll, "torch": torch.__version__})
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
