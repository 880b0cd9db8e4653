"""Module inference on a real MXNet checkpoint, written as MXNet users write it.

    symbind-python apps/python/module_inference.py ../shared/models/retinaface/retina16 0 image.jpg

Runs the checkpoint's symbol and parameters with mx.mod.Module on a 640x480 input (pixels as
OpenCV reads them, BGR, 0-255) and prints each output's name, shape and range.
"""
import sys

import mxnet as mx
import numpy as np


def load_image(path, height=480, width=640):
    try:
        from PIL import Image
        img = np.asarray(Image.open(path).convert("RGB").resize((width, height)), dtype=np.float32)[:, :, ::-1]
    except ImportError:  # no Pillow: a synthetic image of the right shape
        img = np.random.RandomState(0).uniform(0, 255, size=(height, width, 3)).astype(np.float32)
    return img.transpose(2, 0, 1)[np.newaxis]


def main(prefix, epoch, image):
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, int(epoch))
    mod = mx.mod.Module(symbol=sym, data_names=["data"], label_names=None, context=mx.cpu())
    data = load_image(image)
    mod.bind(for_training=False, data_shapes=[("data", data.shape)])
    mod.set_params(arg_params, aux_params, allow_missing=False)
    mod.forward(mx.io.DataBatch([mx.nd.array(data)]), is_train=False)
    for name, out in zip(sym.list_outputs(), mod.get_outputs()):
        values = out.asnumpy()
        print("%-40s %-18s min %.4f max %.4f" % (name, values.shape, values.min(), values.max()))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
