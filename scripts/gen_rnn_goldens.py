#!/usr/bin/python3
"""Goldens for symbind's RNN op from PyTorch's nn.RNN / nn.LSTM / nn.GRU (Debian's python3-torch).

For each case the script draws float32 inputs, a packed MXNet parameter vector and head gradients,
unpacks the vector into PyTorch's per-layer weights (MXNet's layout, docs/formats.md), runs
forward and backward in float64, and writes every array as .npy under tests/goldens/rnn/, with
manifest.json listing the cases. The loss is sum(output * head_output) + sum(hy * head_state)
(+ sum(cy * head_statecell) for lstm), so the gradients are those of a backward pass fed those
head gradients. The parameter gradient is packed back into MXNet's layout.

Usage: /usr/bin/python3 scripts/gen_rnn_goldens.py [--out DIR]
"""

import argparse
import json
import os

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "goldens", "rnn")

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}

# name, mode, num_layers, bidirectional, state_outputs, (T, N, C), state_size
CASES = [
    ("lstm_l2_bi", "lstm", 2, True, True, (4, 2, 3), 3),
    ("gru_l2_bi", "gru", 2, True, True, (4, 2, 3), 3),
    ("rnn_tanh_l2", "rnn_tanh", 2, False, True, (5, 2, 3), 4),
    ("rnn_relu_l1_bi", "rnn_relu", 1, True, False, (4, 3, 2), 3),
    ("lstm_l1", "lstm", 1, False, False, (6, 1, 4), 2),
    ("gru_l3", "gru", 3, False, True, (3, 2, 2), 2),
]


def packed_slices(mode, layers, dirs, input_size, hidden):
    """(layer, direction) -> slices of W_i2h, W_h2h, b_i2h, b_h2h in MXNet's packed vector."""
    gh = GATES[mode] * hidden
    out, off = {}, 0
    for layer in range(layers):
        in_size = input_size if layer == 0 else hidden * dirs
        for d in range(dirs):
            wx = (off, off + gh * in_size, (gh, in_size))
            off = wx[1]
            wh = (off, off + gh * hidden, (gh, hidden))
            off = wh[1]
            out[(layer, d)] = [wx, wh]
    for layer in range(layers):
        for d in range(dirs):
            bx = (off, off + gh, (gh,))
            off += gh
            bh = (off, off + gh, (gh,))
            off += gh
            out[(layer, d)] += [bx, bh]
    return out, off


def torch_module(mode, input_size, hidden, layers, bidirectional):
    kw = dict(input_size=input_size, hidden_size=hidden, num_layers=layers, bidirectional=bidirectional)
    if mode == "lstm":
        return torch.nn.LSTM(**kw)
    if mode == "gru":
        return torch.nn.GRU(**kw)
    return torch.nn.RNN(nonlinearity=mode[4:], **kw)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.RandomState(20261123)
    manifest = {"cases": []}
    for name, mode, layers, bidir, state_outputs, (T, N, C), H in CASES:
        dirs = 2 if bidir else 1
        slices, size = packed_slices(mode, layers, dirs, C, H)
        arrays = {
            "data": rng.uniform(-1, 1, (T, N, C)).astype(np.float32),
            "parameters": rng.uniform(-0.6, 0.6, (size,)).astype(np.float32),
            "state": rng.uniform(-1, 1, (layers * dirs, N, H)).astype(np.float32),
        }
        if mode == "lstm":
            arrays["state_cell"] = rng.uniform(-1, 1, (layers * dirs, N, H)).astype(np.float32)
        heads = {"head_output": rng.uniform(-1, 1, (T, N, dirs * H)).astype(np.float32)}
        if state_outputs:
            heads["head_state"] = rng.uniform(-1, 1, (layers * dirs, N, H)).astype(np.float32)
            if mode == "lstm":
                heads["head_statecell"] = rng.uniform(-1, 1, (layers * dirs, N, H)).astype(np.float32)

        module = torch_module(mode, C, H, layers, bidir).double()
        flat = arrays["parameters"].astype(np.float64)
        named = dict(module.named_parameters())
        for (layer, d), parts in slices.items():
            suffix = "l%d%s" % (layer, "_reverse" if d else "")
            for key, (a, b, shape) in zip(["weight_ih", "weight_hh", "bias_ih", "bias_hh"], parts):
                with torch.no_grad():
                    named["%s_%s" % (key, suffix)].copy_(torch.from_numpy(flat[a:b].reshape(shape)))
        x = torch.tensor(arrays["data"], dtype=torch.float64, requires_grad=True)
        h0 = torch.tensor(arrays["state"], dtype=torch.float64, requires_grad=True)
        if mode == "lstm":
            c0 = torch.tensor(arrays["state_cell"], dtype=torch.float64, requires_grad=True)
            y, (hy, cy) = module(x, (h0, c0))
        else:
            y, hy = module(x, h0)
        loss = (y * torch.from_numpy(heads["head_output"]).double()).sum()
        if state_outputs:
            loss = loss + (hy * torch.from_numpy(heads["head_state"]).double()).sum()
            if mode == "lstm":
                loss = loss + (cy * torch.from_numpy(heads["head_statecell"]).double()).sum()
        loss.backward()
        grad_params = np.zeros(size)
        for (layer, d), parts in slices.items():
            suffix = "l%d%s" % (layer, "_reverse" if d else "")
            for key, (a, b, _) in zip(["weight_ih", "weight_hh", "bias_ih", "bias_hh"], parts):
                grad_params[a:b] = named["%s_%s" % (key, suffix)].grad.numpy().reshape(-1)
        results = {"output": y, "state_output": hy, "grad_data": x.grad, "grad_state": h0.grad}
        if mode == "lstm":
            results["statecell_output"] = cy
            results["grad_state_cell"] = c0.grad
        results = {k: v.detach().numpy() for k, v in results.items()}
        results["grad_parameters"] = grad_params
        for key, value in list(arrays.items()) + list(heads.items()) + list(results.items()):
            np.save(os.path.join(args.out, "%s_%s.npy" % (name, key)), value.astype(np.float32))
        manifest["cases"].append({
            "name": name, "mode": mode, "num_layers": layers, "bidirectional": bidir,
            "state_outputs": state_outputs, "state_size": H, "data_shape": [T, N, C],
            "torch": torch.__version__,
        })
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
