"""A hybridized Gluon training loop, as MXNet users write it: a small CNN on Fashion-MNIST
(Debian's dataset-fashion-mnist) with autograd, a Trainer and an accuracy metric.

    symbind-python apps/python/gluon_train.py [/usr/share/datasets/fashion-mnist] [epochs]
"""
import gzip
import os
import sys
import time

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(root, kind):
    images = read_idx(os.path.join(root, "%s-images-idx3-ubyte.gz" % kind)).astype(np.float32) / 255
    labels = read_idx(os.path.join(root, "%s-labels-idx1-ubyte.gz" % kind)).astype(np.float32)
    return images[:, np.newaxis], labels


def main(root="/usr/share/datasets/fashion-mnist", epochs=2):
    mx.random.seed(1)
    train = gluon.data.ArrayDataset(*load(root, "train"))
    test = gluon.data.ArrayDataset(*load(root, "t10k"))
    train_data = gluon.data.DataLoader(train, batch_size=64, shuffle=True)
    test_data = gluon.data.DataLoader(test, batch_size=256)

    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(16, kernel_size=5, activation="relu"),
                gluon.nn.MaxPool2D(pool_size=2, strides=2),
                gluon.nn.Conv2D(32, kernel_size=5, activation="relu"),
                gluon.nn.MaxPool2D(pool_size=2, strides=2),
                gluon.nn.Flatten(),
                gluon.nn.Dense(128, activation="relu"),
                gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})

    for epoch in range(int(epochs)):
        start, total = time.time(), 0.0
        for data, label in train_data:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            total += loss.mean().asscalar()
        metric = mx.metric.Accuracy()
        for data, label in test_data:
            metric.update([label], [net(data)])
        print("epoch %d: train loss %.4f, test accuracy %.4f, %.1f s"
              % (epoch, total / len(train_data), metric.get()[1], time.time() - start))


if __name__ == "__main__":
    main(*sys.argv[1:])
