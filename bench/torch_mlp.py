#!/usr/bin/env python3
"""The same MLP benchmark as bench_mlp.cc in PyTorch eager (Debian python3-torch)."""
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64),
                          torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
loss_fn = torch.nn.CrossEntropyLoss()
batch = 100
x = torch.randn(batch, 784)
y = torch.arange(batch) % 10


def step():
    opt.zero_grad()
    loss_fn(net(x), y).backward()
    opt.step()


for _ in range(20):
    step()
iters = 600
t0 = time.perf_counter()
for _ in range(iters):
    step()
train = iters * batch / (time.perf_counter() - t0)

x1 = torch.randn(1, 784)
lat = []
with torch.no_grad():
    for i in range(2100):
        a = time.perf_counter()
        torch.softmax(net(x1), dim=1)
        if i >= 100:
            lat.append((time.perf_counter() - a) * 1e6)
lat.sort()
print(f"threads {threads}")
print(f"mlp_train_samples_per_s {train:.0f}")
print(f"mlp_infer_b1_median_us {lat[len(lat) // 2]:.2f}")
