// DLPack exchange (MXNDArrayToDLPack, MXNDArrayFromDLPackEx): arrays shared without a copy
// with NumPy (mx.nd.from_numpy), PyTorch and other DLPack frameworks. The structures are
// Debian's dlpack/dlpack.h; MXNet 1.9 passes the same layout (its DLContext is DLDevice).
#include <dlpack/dlpack.h>

#include <memory>
#include <vector>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

// An exported array: the DLPack view and what keeps its bytes and shape alive.
struct ExportedArray {
  DLManagedTensor tensor{};
  NDArray array;
  std::vector<int64_t> shape;
};

void DeleteExported(DLManagedTensor* t) { delete static_cast<ExportedArray*>(t->manager_ctx); }

DLDataType ToDLType(DType t) {
  switch (t) {
    case DType::kFloat32: return {kDLFloat, 32, 1};
    case DType::kFloat64: return {kDLFloat, 64, 1};
    case DType::kFloat16: return {kDLFloat, 16, 1};
    case DType::kBFloat16: return {kDLBfloat, 16, 1};
    case DType::kUint8: return {kDLUInt, 8, 1};
    case DType::kInt8: return {kDLInt, 8, 1};
    case DType::kInt32: return {kDLInt, 32, 1};
    case DType::kInt64: return {kDLInt, 64, 1};
    case DType::kBool: return {kDLUInt, 1, 1};
    default: throw TypeError(StrCat("DLPack: dtype ", DTypeName(t), " has no DLPack type"));
  }
}

DType FromDLType(const DLDataType& t) {
  if (t.lanes != 1) throw TypeError(StrCat("DLPack: vector types (lanes ", t.lanes, ") are not supported"));
  const int code = t.code, bits = t.bits;
  if (code == kDLFloat && bits == 32) return DType::kFloat32;
  if (code == kDLFloat && bits == 64) return DType::kFloat64;
  if (code == kDLFloat && bits == 16) return DType::kFloat16;
  if (code == kDLBfloat && bits == 16) return DType::kBFloat16;
  if (code == kDLUInt && bits == 8) return DType::kUint8;
  if (code == kDLUInt && bits == 1) return DType::kBool;
  if (code == kDLInt && bits == 8) return DType::kInt8;
  if (code == kDLInt && bits == 32) return DType::kInt32;
  if (code == kDLInt && bits == 64) return DType::kInt64;
  throw TypeError(StrCat("DLPack: type code ", code, " with ", bits, " bits is not supported"));
}

// The tensor's shape, checked: dims non-negative and, when strides are given, row-major compact.
TShape CheckedShape(const DLTensor& t) {
  if (t.ndim < 0 || t.ndim > 32) throw ShapeError(StrCat("DLPack: ndim ", t.ndim, " is out of range"));
  if (t.ndim > 0) NotNull(t.shape, "dl_tensor.shape");
  std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
  for (int64_t d : dims)
    if (d < 0) throw ShapeError(StrCat("DLPack: negative dimension ", d));
  if (t.strides) {
    int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (dims[i] > 1 && t.strides[i] != expected)
        throw ShapeError("DLPack: only compact row-major tensors can be shared (strides given)");
      expected *= dims[i];
    }
  }
  return TShape(dims);
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXNDArrayToDLPack(NDArrayHandle handle, DLManagedTensorHandle* out) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    NotNull(out, "out");
    if (a.is_none()) throw Error("DLPack: the array is empty (none)");
    auto exported = std::make_unique<ExportedArray>();
    exported->array = a;
    for (int i = 0; i < a.shape().ndim(); ++i) exported->shape.push_back(a.shape()[i]);
    DLTensor& t = exported->tensor.dl_tensor;
    t.data = const_cast<void*>(a.raw_data());
    a.storage()->SetWritesUnseen();  // the other framework may write them
    t.device = {kDLCPU, a.ctx().dev_id};
    t.ndim = a.shape().ndim();
    t.dtype = ToDLType(a.dtype());
    t.shape = exported->shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    exported->tensor.manager_ctx = exported.get();
    exported->tensor.deleter = DeleteExported;
    *out = &exported.release()->tensor;
  });
}

int MXNDArrayFromDLPackEx(DLManagedTensorHandle dlpack, const bool transient_handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    auto* given = static_cast<DLManagedTensor*>(NotNull(dlpack, "dlpack"));
    NotNull(out, "out");
    const DLTensor& t = given->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
      throw Error(StrCat("DLPack: device type ", static_cast<int>(t.device.device_type),
                         " is not CPU memory; symbind computes on the CPU only"));
    const TShape shape = CheckedShape(t);
    const DType dtype = FromDLType(t.dtype);
    const size_t bytes = static_cast<size_t>(shape.Size()) * DTypeSize(dtype);
    if (bytes > 0) NotNull(t.data, "dl_tensor.data");
    // A transient handle (a struct on the caller's stack) is copied; either way the producer's
    // deleter runs once, when the last array sharing the bytes is gone.
    DLManagedTensor* owned = transient_handle ? new DLManagedTensor(*given) : given;
    std::shared_ptr<void> owner(owned, [transient_handle](void* p) {
      auto* m = static_cast<DLManagedTensor*>(p);
      if (m->deleter) m->deleter(m);
      if (transient_handle) delete m;
    });
    void* data = static_cast<char*>(t.data) + t.byte_offset;
    const Context ctx = t.device.device_type == kDLCUDAHost ? Context{Context::kCPUPinned, t.device.device_id}
                                                             : Context::CPU(t.device.device_id);
    *out = NewArray(NDArray::View(Storage::Borrowed(data, bytes, std::move(owner)), 0, shape, dtype, ctx));
  });
}

int MXNDArrayFromDLPack(DLManagedTensorHandle dlpack, NDArrayHandle* out) {
  return MXNDArrayFromDLPackEx(dlpack, false, out);
}

int MXNDArrayCallDLPackDeleter(DLManagedTensorHandle dlpack) {
  return Guarded(__func__, [&] {
    if (!dlpack) return;  // as MXNet: nothing to delete
    auto* m = static_cast<DLManagedTensor*>(dlpack);
    if (m->deleter) m->deleter(m);
  });
}
