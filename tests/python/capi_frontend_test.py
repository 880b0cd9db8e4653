"""A Python frontend over libmxnet.so through ctypes, written from MXNet's documented C API:
the calls MXNet's own Python package makes for Module-style training (SimpleBindEx64, forward,
backward, an optimizer update invoked imperatively) and Gluon-style training (a cached op under
autograd), checked against NumPy; sparse arrays built from parts and arrays shared with NumPy
through DLPack; and bad input, which must raise, never crash.

Usage: capi_frontend_test.py <path to libmxnet.so>
"""
import ctypes
import sys
import unittest

import numpy as np

LIB = None
H = ctypes.c_void_p


class MXError(Exception):
    pass


def check(rc):
    if rc != 0:
        raise MXError(LIB.MXGetLastError().decode())


def cstrs(values):
    return (ctypes.c_char_p * len(values))(*[v.encode() for v in values])


def handles(values):
    return (H * len(values))(*[v.handle if isinstance(v, Array) else v for v in values])


class Array:
    """An NDArrayHandle owned by Python, as mxnet.ndarray.NDArray holds one."""

    def __init__(self, handle):
        self.handle = handle

    @staticmethod
    def of(values):
        values = np.ascontiguousarray(values, dtype=np.float32)
        shape = (ctypes.c_int64 * values.ndim)(*values.shape)
        h = H()
        check(LIB.MXNDArrayCreateEx64(shape, values.ndim, 1, 0, 0, 0, ctypes.byref(h)))
        check(LIB.MXNDArraySyncCopyFromCPU(h, values.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(values.size)))
        return Array(h)

    def shape(self):
        ndim = ctypes.c_int()
        dims = ctypes.POINTER(ctypes.c_int64)()
        check(LIB.MXNDArrayGetShapeEx64(self.handle, ctypes.byref(ndim), ctypes.byref(dims)))
        return tuple(dims[i] for i in range(ndim.value))

    def numpy(self):
        out = np.empty(self.shape(), dtype=np.float32)
        check(LIB.MXNDArraySyncCopyToCPU(self.handle, out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(out.size)))
        return out

    def __del__(self):
        if LIB is not None and self.handle:
            LIB.MXNDArrayFree(self.handle)


def op_handle(name):
    h = H()
    check(LIB.NNGetOpHandle(name.encode(), ctypes.byref(h)))
    return h


def invoke(name, inputs, out=None, **params):
    """MXImperativeInvokeEx as mx.nd.<op>(...) calls it."""
    keys = list(params)
    vals = [str(params[k]) for k in keys]
    if out is not None:
        n = ctypes.c_int(len(out))
        outputs = ctypes.cast(handles(out), ctypes.POINTER(H))
    else:
        n = ctypes.c_int(0)
        outputs = ctypes.POINTER(H)()
    stypes = ctypes.POINTER(ctypes.c_int)()
    check(LIB.MXImperativeInvokeEx(op_handle(name), len(inputs), handles(inputs), ctypes.byref(n),
                                   ctypes.byref(outputs), len(keys), cstrs(keys), cstrs(vals), ctypes.byref(stypes)))
    if out is not None:
        return out
    return [Array(H(outputs[i])) for i in range(n.value)]


class Symbol:
    def __init__(self, handle):
        self.handle = handle

    @staticmethod
    def var(name):
        h = H()
        check(LIB.MXSymbolCreateVariable(name.encode(), ctypes.byref(h)))
        return Symbol(h)

    @staticmethod
    def op(name, node_name, inputs, **params):
        keys = list(params)
        h = H()
        check(LIB.MXSymbolCreateAtomicSymbol(op_handle(name), len(keys), cstrs(keys),
                                             cstrs([str(params[k]) for k in keys]), ctypes.byref(h)))
        names = list(inputs)
        check(LIB.NNSymbolCompose(h, node_name.encode(), len(names), cstrs(names),
                                  handles([inputs[k].handle for k in names])))
        return Symbol(h)

    def list(self, fn):
        n = ctypes.c_uint()
        arr = ctypes.POINTER(ctypes.c_char_p)()
        check(getattr(LIB, fn)(self.handle, ctypes.byref(n), ctypes.byref(arr)))
        return [arr[i].decode() for i in range(n.value)]

    def inputs(self):
        n = ctypes.c_uint()
        arr = ctypes.POINTER(ctypes.c_char_p)()
        check(LIB.NNSymbolListInputNames(self.handle, 0, ctypes.byref(n), ctypes.byref(arr)))
        return [arr[i].decode() for i in range(n.value)]

    def __del__(self):
        if LIB is not None and self.handle:
            LIB.NNSymbolFree(self.handle)


def mlp_symbol():
    data = Symbol.var("data")
    label = Symbol.var("label")
    fc1 = Symbol.op("FullyConnected", "fc1", {"data": data}, num_hidden=16)
    act = Symbol.op("Activation", "relu1", {"data": fc1}, act_type="relu")
    fc2 = Symbol.op("FullyConnected", "fc2", {"data": act}, num_hidden=1)
    return Symbol.op("LinearRegressionOutput", "out", {"data": fc2, "label": label}), (data, label, fc1, act, fc2)


def regression_data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(n, 4)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.5, 1.0], dtype=np.float32) + 0.3).reshape(n, 1)
    return x, y


class ImportTimeCalls(unittest.TestCase):
    def test_lists_and_features(self):
        n = ctypes.c_uint()
        arr = ctypes.POINTER(ctypes.c_char_p)()
        check(LIB.MXListAllOpNames(ctypes.byref(n), ctypes.byref(arr)))
        names = {arr[i].decode() for i in range(n.value)}
        self.assertIn("Convolution", names)
        self.assertIn("_np_sum", names)

        class LibFeature(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("enabled", ctypes.c_bool)]

        feats = ctypes.POINTER(LibFeature)()
        size = ctypes.c_size_t()
        check(LIB.MXLibInfoFeatures(ctypes.byref(feats), ctypes.byref(size)))
        table = {feats[i].name.decode(): feats[i].enabled for i in range(size.value)}
        self.assertFalse(table["CUDA"])
        self.assertTrue(table["INT64_TENSOR_SIZE"])


class ModuleStyleTraining(unittest.TestCase):
    """What mx.mod.Module does: simple_bind, forward/backward, sgd_update per parameter."""

    def test_training_reduces_the_loss(self):
        sym, _keep = mlp_symbol()
        args = sym.list("MXSymbolListArguments")
        self.assertEqual(args, ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "label"])
        x, y = regression_data()
        shape_names = ["data", "label"]
        shape_data = (ctypes.c_int64 * 4)(*x.shape, *y.shape)
        shape_idx = (ctypes.c_uint32 * 3)(0, 2, 4)
        params = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
        req_names = cstrs(args)
        req_types = cstrs(["write" if a in params else "null" for a in args])
        n_args, n_aux = ctypes.c_uint(), ctypes.c_uint()
        in_args, arg_grads, aux = ctypes.POINTER(H)(), ctypes.POINTER(H)(), ctypes.POINTER(H)()
        buf_len = ctypes.c_int(-1)
        upd_names, upd_arrays = ctypes.POINTER(ctypes.c_char_p)(), ctypes.POINTER(H)()
        exe = H()
        check(LIB.MXExecutorSimpleBindEx64(
            sym.handle, 1, 0, 0, None, None, None, len(args), req_names, req_types, 2, cstrs(shape_names),
            shape_data, shape_idx, 0, None, None, 0, None, None, 0, None, ctypes.byref(buf_len), None, None,
            ctypes.byref(upd_names), ctypes.byref(upd_arrays), ctypes.byref(n_args), ctypes.byref(in_args),
            ctypes.byref(arg_grads), ctypes.byref(n_aux), ctypes.byref(aux), None, ctypes.byref(exe)))
        arrays = {a: Array(H(in_args[i])) for i, a in enumerate(args)}
        grads = {a: Array(H(arg_grads[i])) for i, a in enumerate(args) if arg_grads[i]}
        self.assertEqual(sorted(grads), sorted(params))
        rng = np.random.RandomState(1)
        for p in params:
            init = rng.normal(0, 0.3, size=arrays[p].shape()).astype(np.float32)
            check(LIB.MXNDArraySyncCopyFromCPU(arrays[p].handle, init.ctypes.data_as(ctypes.c_void_p),
                                               ctypes.c_size_t(init.size)))
        for name, values in (("data", x), ("label", y)):
            check(LIB.MXNDArraySyncCopyFromCPU(arrays[name].handle, values.ctypes.data_as(ctypes.c_void_p),
                                               ctypes.c_size_t(values.size)))

        def loss():
            check(LIB.MXExecutorForward(exe, 0))
            n = ctypes.c_uint()
            outs = ctypes.POINTER(H)()
            check(LIB.MXExecutorOutputs(exe, ctypes.byref(n), ctypes.byref(outs)))
            pred = Array(H(outs[0])).numpy()
            return float(np.mean((pred - y) ** 2))

        # The executor's gradient of the loss head matches a NumPy forward/backward of the MLP.
        check(LIB.MXExecutorForward(exe, 1))
        check(LIB.MXExecutorBackwardEx(exe, 0, None, 1))
        w1, b1, w2, b2 = (arrays[p].numpy() for p in params)
        h = np.maximum(x @ w1.T + b1, 0)
        pred = h @ w2.T + b2
        d_pred = pred - y  # LinearRegressionOutput's gradient (grad_scale 1)
        np.testing.assert_allclose(grads["fc2_weight"].numpy(), d_pred.T @ h, rtol=1e-4, atol=1e-4)
        d_h = (d_pred @ w2) * (h > 0)
        np.testing.assert_allclose(grads["fc1_weight"].numpy(), d_h.T @ x, rtol=1e-4, atol=1e-4)

        before = loss()
        for _ in range(60):
            check(LIB.MXExecutorForward(exe, 1))
            check(LIB.MXExecutorBackwardEx(exe, 0, None, 1))
            for p in params:
                invoke("sgd_update", [arrays[p], grads[p]], out=[arrays[p]], lr=0.05, wd=0.0,
                       rescale_grad=1.0 / len(x))
        after = loss()
        self.assertLess(after, before * 0.2)
        check(LIB.MXExecutorFree(exe))


class GluonStyleTraining(unittest.TestCase):
    """What a hybridized Gluon block does: a cached op under autograd.record(), backward,
    then an optimizer step on each parameter."""

    def test_cached_op_under_autograd(self):
        data = Symbol.var("data")
        fc1 = Symbol.op("FullyConnected", "fc1", {"data": data}, num_hidden=16)
        act = Symbol.op("Activation", "relu1", {"data": fc1}, act_type="relu")
        fc2 = Symbol.op("FullyConnected", "fc2", {"data": act}, num_hidden=1)
        inputs = fc2.inputs()
        self.assertEqual(inputs, ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"])
        op = H()
        check(LIB.MXCreateCachedOpEx(fc2.handle, 2, cstrs(["static_alloc", "static_shape"]), cstrs(["1", "1"]),
                                     ctypes.byref(op)))
        rng = np.random.RandomState(2)
        shapes = {"fc1_weight": (16, 4), "fc1_bias": (16,), "fc2_weight": (1, 16), "fc2_bias": (1,)}
        params = {k: Array.of(rng.normal(0, 0.3, size=s)) for k, s in shapes.items()}
        grads = {k: Array.of(np.zeros(s)) for k, s in shapes.items()}
        names = list(shapes)
        reqs = (ctypes.c_uint32 * 4)(1, 1, 1, 1)
        check(LIB.MXAutogradMarkVariables(4, handles([params[k] for k in names]), reqs,
                                          handles([grads[k] for k in names])))
        x, y = regression_data(seed=3)
        xs, ys = Array.of(x), Array.of(y)

        def step():
            prev = ctypes.c_int()
            check(LIB.MXAutogradSetIsRecording(1, ctypes.byref(prev)))
            check(LIB.MXAutogradSetIsTraining(1, ctypes.byref(prev)))
            n = ctypes.c_int(0)
            outs = ctypes.POINTER(H)()
            stypes = ctypes.POINTER(ctypes.c_int)()
            check(LIB.MXInvokeCachedOpEx(op, 5, handles([xs] + [params[k] for k in names]), ctypes.byref(n),
                                         ctypes.byref(outs), ctypes.byref(stypes)))
            pred = Array(H(outs[0]))
            diff = invoke("elemwise_sub", [pred, ys])[0]
            sq = invoke("square", [diff])[0]
            loss = invoke("mean", [sq])[0]
            check(LIB.MXAutogradSetIsRecording(0, ctypes.byref(prev)))
            check(LIB.MXAutogradSetIsTraining(0, ctypes.byref(prev)))
            check(LIB.MXAutogradBackwardEx(1, handles([loss]), None, 0, None, 0, 0, 1, None, None))
            for k in names:
                invoke("sgd_update", [params[k], grads[k]], out=[params[k]], lr=0.1, wd=0.0)
            return float(loss.numpy())

        # The first step's gradient matches NumPy's.
        w1, b1, w2, b2 = (params[k].numpy() for k in names)
        first = step()
        h = np.maximum(x @ w1.T + b1, 0)
        pred = h @ w2.T + b2
        self.assertAlmostEqual(first, float(np.mean((pred - y) ** 2)), places=4)
        d_pred = 2 * (pred - y) / len(x)
        np.testing.assert_allclose(grads["fc2_weight"].numpy(), d_pred.T @ h, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(grads["fc1_bias"].numpy(), ((d_pred @ w2) * (h > 0)).sum(0), rtol=1e-4,
                                   atol=1e-5)
        for _ in range(80):
            last = step()
        self.assertLess(last, first * 0.2)
        check(LIB.MXFreeCachedOp(op))


class DLTensor(ctypes.Structure):
    """DLPack's tensor, as MXNet's Python package declares it (ndarray.py)."""
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int), ("device_id", ctypes.c_int),
                ("ndim", ctypes.c_int), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class SparseAndDLPack(unittest.TestCase):
    """Sparse arrays built from parts as mx.nd.sparse.csr_matrix does, and arrays shared with
    NumPy through DLPack as mx.nd.from_numpy(zero_copy=True) shares them."""

    def test_csr_from_parts(self):
        shape = (ctypes.c_int64 * 2)(3, 4)
        aux_types = (ctypes.c_int * 2)(6, 6)
        h = H()
        check(LIB.MXNDArrayCreateSparseEx64(2, shape, 2, 1, 0, 0, 0, 2, aux_types, None, None, ctypes.byref(h)))
        csr = Array(h)
        for part, index in ((Array.of([7, 8, 9]), -1), (Array.of([0, 2, 2, 3]), 0), (Array.of([0, 2, 1]), 1)):
            check(LIB.MXNDArraySyncCopyFromNDArray(csr.handle, part.handle, index))
        stype = ctypes.c_int()
        check(LIB.MXNDArrayGetStorageType(csr.handle, ctypes.byref(stype)))
        self.assertEqual(stype.value, 2)
        dense = invoke("cast_storage", [csr], stype="default")[0].numpy()
        np.testing.assert_array_equal(dense, [[7, 0, 8, 0], [0, 0, 0, 0], [0, 9, 0, 0]])

    def test_dlpack_shares_numpy_memory(self):
        values = np.arange(6, dtype=np.float32).reshape(2, 3)
        shape = (ctypes.c_int64 * 2)(*values.shape)
        released = []
        deleter = DELETER(lambda _: released.append(True))
        managed = DLManagedTensor()
        managed.dl_tensor = DLTensor(values.ctypes.data, 1, 0, 2, 2, 32, 1, shape, None, 0)
        managed.deleter = deleter
        h = H()
        check(LIB.MXNDArrayFromDLPackEx(ctypes.byref(managed), True, ctypes.byref(h)))
        shared = Array(h)
        invoke("_mul_scalar", [shared], out=[shared], scalar=2)  # written through to NumPy's memory
        np.testing.assert_array_equal(values, np.arange(6).reshape(2, 3) * 2)
        del shared
        self.assertEqual(released, [True])  # the producer's deleter ran once the array was freed
        # Export: NumPy-free read of what symbind holds.
        a = Array.of([[1, 2], [3, 4]])
        out = ctypes.POINTER(DLManagedTensor)()
        check(LIB.MXNDArrayToDLPack(a.handle, ctypes.byref(out)))
        t = out.contents.dl_tensor
        self.assertEqual((t.ndim, t.code, t.bits, t.shape[0], t.shape[1]), (2, 2, 32, 2, 2))
        self.assertEqual([ctypes.cast(t.data, ctypes.POINTER(ctypes.c_float))[i] for i in range(4)], [1, 2, 3, 4])
        check(LIB.MXNDArrayCallDLPackDeleter(out))


class BadInput(unittest.TestCase):
    """Errors come back as -1 with a message; the interpreter survives."""

    def test_errors(self):
        a = Array.of(np.ones((2, 3)))
        with self.assertRaisesRegex(MXError, "FullyConnected"):
            invoke("FullyConnected", [a], num_hidden=2)  # weight missing
        with self.assertRaisesRegex(MXError, "num_hiden"):
            invoke("FullyConnected", [a, Array.of(np.ones((2, 3)))], num_hiden=2, no_bias=True)
        with self.assertRaisesRegex(MXError, "not supported by symbind"):
            invoke("_np_sum", [a])
        dead = H()
        check(LIB.MXNDArrayCreateNone(ctypes.byref(dead)))
        check(LIB.MXNDArrayFree(dead))
        with self.assertRaisesRegex(MXError, "not a live NDArrayHandle"):
            invoke("relu", [dead])
        with self.assertRaisesRegex(MXError, "not a live NDArrayHandle"):
            check(LIB.MXNDArrayFree(dead))
        out = H()
        with self.assertRaisesRegex(MXError, "null"):
            check(LIB.MXAutogradBackwardEx(1, handles([H()]), None, 0, None, 0, 0, 1, None, None))
        with self.assertRaisesRegex(MXError, "higher-order"):
            check(LIB.MXAutogradBackwardEx(1, handles([a]), None, 0, None, 0, 1, 1, None, None))
        with self.assertRaisesRegex(MXError, "out of range"):
            check(LIB.MXNDArrayAt64(a.handle, ctypes.c_int64(5), ctypes.byref(out)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: capi_frontend_test.py <libmxnet.so>")
    LIB = ctypes.CDLL(sys.argv.pop(1))
    LIB.MXGetLastError.restype = ctypes.c_char_p
    unittest.main(verbosity=2)
