"""gluon.SymbolBlock.imports on a real MXNet checkpoint, as MXNet users write it.

    symbind-python apps/python/symbolblock_imports.py ../shared/models/retinaface/retina16 0 data 1,3,64,64

Loads the symbol and its parameters into a SymbolBlock, runs it imperatively and hybridized,
and checks that both give the same outputs.
"""
import sys

import mxnet as mx
import numpy as np


def main(prefix, epoch, input_name, shape="1,3,64,64"):
    net = mx.gluon.SymbolBlock.imports("%s-symbol.json" % prefix, [input_name],
                                       "%s-%04d.params" % (prefix, int(epoch)), ctx=mx.cpu())
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, size=tuple(int(d) for d in shape.split(","))))
    eager = net(x)
    eager = eager if isinstance(eager, (list, tuple)) else [eager]
    net.hybridize(static_alloc=True, static_shape=True)
    hybrid = net(x)
    hybrid = hybrid if isinstance(hybrid, (list, tuple)) else [hybrid]
    for i, (a, b) in enumerate(zip(eager, hybrid)):
        diff = float(np.abs(a.asnumpy() - b.asnumpy()).max())
        print("output %d: shape %s, eager vs hybridized max |diff| %.2e" % (i, a.shape, diff))
        assert diff < 1e-5


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
