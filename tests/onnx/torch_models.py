#!/usr/bin/env python3
"""PyTorch-exported ONNX models imported by symbind, compared with PyTorch's own outputs.

    tests/onnx/torch_models.py SYMBIND_BINARY WORKDIR [--opset N]

Builds ResNet-50, MobileNet v2 and SqueezeNet 1.1 as torchvision defines them (written out here:
torchvision itself need not be installed) with random weights and random BatchNorm statistics,
exports each with torch.onnx.export (Debian's python3-torch), runs the .onnx file with
`symbind run` on one random input and compares with the PyTorch output: max |symbind - torch| /
max |torch| <= 1e-4. Prints one line per net; exits 1 when any net differs more.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn


def conv_bn(cin, cout, k, stride=1, groups=1, relu6=False, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6(inplace=True) if relu6 else nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride=1):
        super().__init__()
        cout = planes * self.expansion
        self.body = nn.Sequential(conv_bn(cin, planes, 1), conv_bn(planes, planes, 3, stride),
                                  conv_bn(planes, cout, 1, act=False))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = conv_bn(cin, cout, 1, stride, act=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        return self.relu(self.body(x) + identity)


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                  nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for b in range(blocks):
                layers.append(Bottleneck(cin, planes, stride if b == 0 else 1))
                cin = planes * Bottleneck.expansion
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [conv_bn(cin, hidden, 1, relu6=True)]
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, relu6=True), conv_bn(hidden, cout, 1, act=False)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        layers = [conv_bn(3, 32, 3, 2, relu6=True)]
        cin = 32
        for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                           (6, 160, 3, 2), (6, 320, 1, 1)):
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 1280, 1, relu6=True))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


class Fire(nn.Module):
    def __init__(self, cin, squeeze, e1, e3):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU(inplace=True))
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, e1, 1), nn.ReLU(inplace=True))
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, e3, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.e1(x), self.e3(x)], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        pool = lambda: nn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2), nn.ReLU(inplace=True), pool(), Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
            pool(), Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool(), Fire(256, 48, 192, 192),
            Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(512, classes, 1), nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def randomize(net, seed):
    """Random weights at a trained net's scale, and random BatchNorm statistics."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=g))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(1 + 0.1 * torch.rand(m.running_var.shape, generator=g))
    return net.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("symbind")
    ap.add_argument("workdir")
    ap.add_argument("--opset", type=int, default=13)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    worst_ok = True
    for i, (name, cls) in enumerate((("resnet50", ResNet50), ("mobilenet_v2", MobileNetV2),
                                     ("squeezenet1_1", SqueezeNet11))):
        net = randomize(cls(), seed=i)
        x = torch.rand(1, 3, 224, 224, generator=torch.Generator().manual_seed(100 + i)) * 2 - 1
        with torch.no_grad():
            want = net(x).numpy()
        model = os.path.join(a.workdir, "%s-opset%d.onnx" % (name, a.opset))
        torch.onnx.export(net, x, model, opset_version=a.opset, input_names=["data"], output_names=["logits"])
        np.save(os.path.join(a.workdir, "input.npy"), x.numpy())
        got_path = os.path.join(a.workdir, name + "-symbind.npy")
        subprocess.run([a.symbind, "run", model, "--input", "data=" + os.path.join(a.workdir, "input.npy"),
                        "--output", got_path], check=True, stdout=subprocess.DEVNULL)
        got = np.load(got_path)
        rel = float(np.abs(got - want).max() / np.abs(want).max())
        ok = got.shape == want.shape and rel <= 1e-4
        worst_ok = worst_ok and ok
        print("%-14s opset %d  output %s  max|symbind-torch|/max|torch| = %.2e  %s" %
              (name, a.opset, "x".join(map(str, want.shape)), rel, "ok" if ok else "DIFFERS"))
    sys.exit(0 if worst_ok else 1)


if __name__ == "__main__":
    main()
