// NDArray functions of MXNet's C API beyond the cpp-package's set: 64-bit shapes, views,
// raw bytes (pickling), shallow copies and storage types. Every array is dense here; the
// sparse functions fail with an error naming the storage type.
#include <mxnet/c_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include <symbind/executor/autograd.h>
#include <symbind/executor/invoke.h>
#include <symbind/io/ndarray_file.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

int64_t CheckedIndex(const NDArray& a, int64_t idx) {
  if (a.is_none()) throw Error("the array is empty (none)");
  if (a.shape().ndim() == 0) throw ShapeError("cannot index a 0-dimensional array");
  const int64_t n = a.shape()[0];
  if (idx < 0 || idx >= n)
    throw ShapeError(StrCat("index ", idx, " out of range for axis 0 of size ", n, " (shape ",
                            a.shape().ToString(), ")"));
  return idx;
}

// One step of a view: the operator MXNet records for it, and the view it gives.
struct ViewStep {
  const char* op;
  KwArgs params;
  NDArray result;
};

// The handle of a view of `src_handle`'s array made by `steps` (the last one's result). While
// autograd records, each step is on the tape as the operator MXNet records for it (Reshape for
// reshape, slice_axis for slices and indexing), so gradients flow through views as through
// the operators.
NDArrayHandle ViewOut(void* src_handle, const std::vector<ViewStep>& steps) {
  NDArrayBox* src = FromHandle<NDArrayBox>(src_handle, "handle");
  auto* out = static_cast<NDArrayBox*>(NewArray(steps.back().result));
  if (!autograd::IsRecording() || !src->autograd) return out;
  NDArray input = src->array;
  autograd::EntryPtr entry = src->autograd;
  for (const ViewStep& step : steps) {
    InvokedCall call;
    call.attrs.op = &OpRegistry::Global().Get(step.op);
    call.attrs.name = step.op;
    call.attrs.dict = step.params;
    call.attrs.op->ParseAttrs(&call.attrs);
    call.inputs = {input};
    call.input_source = {0};
    call.outputs = {step.result};
    InvokeOptions options;
    options.is_train = autograd::IsTraining();
    entry = autograd::RecordOp(call, {entry}, options)[0];
    input = step.result;
  }
  out->autograd = entry;
  return out;
}

KwArgs SliceAxis0(int64_t begin, int64_t end) {
  return {{"axis", "0"}, {"begin", std::to_string(begin)}, {"end", std::to_string(end)}};
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXNDArrayCreateEx64(const int64_t* shape, int ndim, int dev_type, int dev_id, int, int dtype,
                        NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewArray(NewDense(ShapeFrom64(shape, ndim), dev_type, dev_id, dtype));
  });
}

int MXNDArrayGetShapeEx64(NDArrayHandle handle, int* out_dim, const int64_t** out_pdata) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    NotNull(out_dim, "out_dim");
    NotNull(out_pdata, "out_pdata");
    Ret().shape64 = a.is_none() ? std::vector<int64_t>() : a.shape().dims();
    *out_dim = a.is_none() ? -1 : static_cast<int>(Ret().shape64.size());
    *out_pdata = Ret().shape64.data();
  });
}

namespace symbind {
namespace capi {

NDArrayHandle SliceView(void* handle, int64_t begin, int64_t end) {
  const NDArray& a = ArrayOf(handle);
  if (a.is_none() || a.shape().ndim() == 0) throw ShapeError("cannot slice an empty or 0-dimensional array");
  if (begin < 0 || end < begin || end > a.shape()[0])
    throw ShapeError(StrCat("slice [", begin, ", ", end, ") out of range for axis 0 of size ", a.shape()[0]));
  return ViewOut(handle, {{"slice_axis", SliceAxis0(begin, end), a.Slice(begin, end)}});
}

NDArrayHandle ReshapeView(void* handle, std::vector<int64_t> target, bool reverse) {
  const NDArray& a = ArrayOf(handle);
  std::vector<int64_t> from = a.shape().dims();
  if (reverse) {
    std::reverse(from.begin(), from.end());
    std::reverse(target.begin(), target.end());
  }
  TShape shape;
  try {
    shape = ResolveReshape(TShape(from), target);
  } catch (const ShapeError& e) {
    throw PythonError("ValueError", e.what());
  }
  std::vector<int64_t> r = shape.dims();
  if (reverse) std::reverse(r.begin(), r.end());
  const TShape reshaped(r);
  return ViewOut(handle, {{"Reshape", {{"shape", reshaped.ToString()}}, a.Reshape(reshaped)}});
}

}  // namespace capi
}  // namespace symbind

int MXNDArraySlice64(NDArrayHandle handle, int64_t slice_begin, int64_t slice_end, NDArrayHandle* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = SliceView(handle, slice_begin, slice_end); });
}

int MXNDArrayAt64(NDArrayHandle handle, int64_t idx, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    const NDArray& a = ArrayOf(handle);
    const int64_t i = CheckedIndex(a, idx);
    // Element i of a 1-D array is shape (1,) in MXNet's legacy shapes, a scalar in numpy's.
    std::vector<ViewStep> steps{{"slice_axis", SliceAxis0(i, i + 1), a.Slice(i, i + 1)}};
    if (a.shape().ndim() > 1 || NumpyShapeSemantics()) {
      NDArray element = a.At(i);
      steps.push_back({"Reshape", {{"shape", element.shape().ToString()}}, element});
    }
    *out = ViewOut(handle, steps);
  });
}
int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle* out) {
  return MXNDArrayAt64(handle, static_cast<int64_t>(idx), out);
}

// MXNet's reshape codes (0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split one);
// `reverse` reads both shapes from the right. A target of another size is a ValueError, as in
// MXNet (and NumPy).
int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t* dims, bool reverse, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    if (ndim < 0) throw Error(StrCat("ndim is negative (", ndim, ")"));
    if (ndim > 0) NotNull(dims, "dims");
    *out = ReshapeView(handle, std::vector<int64_t>(dims, dims + ndim), reverse);
  });
}

// One array as bytes (pickling): MXNet's single-array layout, no list header.
int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t* out_size, const char** out_buf) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    NotNull(out_size, "out_size");
    NotNull(out_buf, "out_buf");
    Ret().text = SaveNDArrayToString(a, NumpyShapeSemantics());
    *out_size = Ret().text.size();
    *out_buf = Ret().text.data();
  });
}
int MXNDArrayLoadFromRawBytes(const void* buf, size_t size, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(buf, "buf");
    NotNull(out, "out");
    *out = NewArray(LoadNDArrayFromBuffer(buf, size));
  });
}

int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = FromHandle<NDArrayBox>(src, "src");
    NotNull(out, "out");
    NDArrayBox* copy = static_cast<NDArrayBox*>(NewArray(box->array, box->stype));
    copy->autograd = box->autograd;
    copy->aux_types = box->aux_types;
    copy->grad_stype = box->grad_stype;
    *out = copy;
  });
}
