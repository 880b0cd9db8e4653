#!/usr/bin/env python3
"""Writes a tiny image classifier in MXNet's format through MXNet's C API (libmxnet.so):
data (1,3,224,224) -> global average pooling -> FullyConnected(3) with identity weights ->
SoftmaxOutput, so the class is the image's dominant colour plane (0 red, 1 green, 2 blue, the
plane order of MXNet's image-classification-predict example). Used by
tests/mxnet_predict_example_test.sh to run that example unchanged.

Usage: make_color_classifier.py <libmxnet.so> <prefix>   (writes <prefix>-symbol.json,
<prefix>-0000.params and synset.txt next to them)"""
import ctypes
import os
import sys

lib = ctypes.CDLL(sys.argv[1])
prefix = sys.argv[2]


def check(rc):
    if rc != 0:
        raise RuntimeError(lib.MXGetLastError and ctypes.string_at(lib.MXGetLastError()).decode())


lib.MXGetLastError.restype = ctypes.c_void_p
strs = lambda items: (ctypes.c_char_p * len(items))(*[s.encode() for s in items])


def op(name, params, inputs, sym_name):
    handle = ctypes.c_void_p()
    check(lib.NNGetOpHandle(name.encode(), ctypes.byref(handle)))
    sym = ctypes.c_void_p()
    keys, vals = list(params), list(params.values())
    check(lib.MXSymbolCreateAtomicSymbol(handle, len(keys), strs(keys), strs(vals), ctypes.byref(sym)))
    args = (ctypes.c_void_p * len(inputs))(*[i.value for i in inputs])
    check(lib.MXSymbolCompose(sym, sym_name.encode(), len(inputs), None, args))
    return sym


data = ctypes.c_void_p()
check(lib.MXSymbolCreateVariable(b"data", ctypes.byref(data)))
pool = op("Pooling", {"global_pool": "True", "kernel": "(1,1)", "pool_type": "avg"}, [data], "pool")
flat = op("Flatten", {}, [pool], "flatten")
fc = op("FullyConnected", {"num_hidden": "3"}, [flat], "fc")
softmax = op("SoftmaxOutput", {}, [fc], "softmax")
check(lib.MXSymbolSaveToFile(softmax, (prefix + "-symbol.json").encode()))


def array(shape, values):
    handle = ctypes.c_void_p()
    dims = (ctypes.c_uint32 * len(shape))(*shape)
    check(lib.MXNDArrayCreateEx(dims, len(shape), 1, 0, 0, 0, ctypes.byref(handle)))
    buf = (ctypes.c_float * len(values))(*values)
    check(lib.MXNDArraySyncCopyFromCPU(handle, buf, ctypes.c_size_t(len(values))))
    return handle


weight = array([3, 3], [0.1 if r == c else 0.0 for r in range(3) for c in range(3)])
bias = array([3], [0.0, 0.0, 0.0])
handles = (ctypes.c_void_p * 2)(weight.value, bias.value)
check(lib.MXNDArraySave((prefix + "-0000.params").encode(), 2, handles, strs(["arg:fc_weight", "arg:fc_bias"])))
with open(os.path.join(os.path.dirname(prefix), "synset.txt"), "w") as f:
    f.write("n00000000 red\nn00000001 green\nn00000002 blue\n")
