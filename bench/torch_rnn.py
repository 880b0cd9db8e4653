#!/usr/bin/env python3
"""The same RNN benchmark as bench_rnn.cc in PyTorch eager (Debian python3-torch)."""
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
T, N, C, H, L = 35, 32, 128, 256, 2


def median_ms(reps, f):
    f()
    ms = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        ms.append((time.perf_counter() - a) * 1e3)
    ms.sort()
    return ms[len(ms) // 2]


print(f"threads {threads}")
for mode, cls in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)):
    net = cls(C, H, num_layers=L, bidirectional=True)
    x = torch.rand(T, N, C) * 2 - 1
    h0 = torch.rand(2 * L, N, H) - 0.5
    state = (h0, torch.rand(2 * L, N, H) - 0.5) if mode == "lstm" else h0

    def infer():
        with torch.no_grad():
            net(x, state)

    xg = x.clone().requires_grad_()

    def train():
        y, _ = net(xg, state)
        y.sum().backward()

    print(f"rnn_{mode}_infer_ms {median_ms(20, infer):.2f}")
    print(f"rnn_{mode}_train_ms {median_ms(10, train):.2f}")
