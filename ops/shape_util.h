// Helpers shared by the shape, slicing, indexing and spatial ops (shape_ops.cc, concat_slice.cc,
// indexing.cc, spatial_misc.cc).
#pragma once
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace symbind::shape_detail {

// Declares MXNet's dtype names on an int field: float32, float64, float16, uint8, int8, int32,
// int64 (MXNET_ADD_ALL_TYPES), plus bfloat16 and bool when `with_bool` (..._WITH_BOOL).
template <typename Field>
Field& AddDTypeEnums(Field& f, bool with_bool) {
  f.add_enum("float32", static_cast<int>(DType::kFloat32))
      .add_enum("float64", static_cast<int>(DType::kFloat64))
      .add_enum("float16", static_cast<int>(DType::kFloat16));
  if (with_bool) f.add_enum("bfloat16", static_cast<int>(DType::kBFloat16));
  f.add_enum("uint8", static_cast<int>(DType::kUint8))
      .add_enum("int8", static_cast<int>(DType::kInt8))
      .add_enum("int32", static_cast<int>(DType::kInt32))
      .add_enum("int64", static_cast<int>(DType::kInt64));
  if (with_bool) f.add_enum("bool", static_cast<int>(DType::kBool));
  return f;
}

// Maps a possibly negative axis into [0, ndim); throws ShapeError naming `op` otherwise.
inline int NormalizeAxis(int64_t axis, int ndim, const char* op) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw ShapeError(StrCat(op, ": axis ", axis, " is out of range for an input of ", ndim,
                            " dimensions (expected -", ndim, " <= axis < ", ndim, ")"));
  return static_cast<int>(a);
}

// Copies (or adds) src into dst element-wise; the shapes may differ, the sizes match.
// Writes work for any dtype (a byte copy); adds need float32.
inline void CopyWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull || dst.raw_data() == src.raw_data()) return;
  if (req != OpReq::kAdd && dst.dtype() == src.dtype()) {
    const char* s = static_cast<const char*>(src.raw_data());
    char* d = static_cast<char*>(dst.raw_data());
    int64_t bytes = static_cast<int64_t>(src.bytes());
    ParallelFor(bytes, int64_t{1} << 20, [&](int64_t b, int64_t e) {
      std::memcpy(d + b, s + b, static_cast<size_t>(e - b));
    });
    return;
  }
  const float* s = src.fdata();
  MapWithReq(dst.fdata(), dst.Size(), req, [&](int64_t i) { return s[i]; });
}

// Sets dst to zero under kWrite; leaves it alone under kAdd and kNull.
inline void ZeroWithReq(const NDArray& dst, OpReq req) {
  if (req == OpReq::kWrite || req == OpReq::kWriteInplace) dst.Fill(0.0f);
}

// The backward of ops MXNet gives a zero gradient (MakeZeroGradNodes): every input gets 0.
inline void ZeroInputGrads(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  for (size_t i = 0; i < a.in_grads.size(); ++i) ZeroWithReq(a.in_grads[i], a.req[i]);
}

// The values of an array of any dtype as double (indices, conditions).
inline std::vector<double> ValuesAsDouble(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
}

// Writes (or adds, per req) `v` into `out` converted to out's dtype: index and shape outputs
// whose dtype a parameter chooses.
inline void WriteValuesWithReq(const std::vector<double>& v, const NDArray& out, OpReq req) {
  if (req == OpReq::kNull) return;
  if (req == OpReq::kAdd) {
    std::vector<double> sum = ValuesAsDouble(out);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
    ConvertElements(sum.data(), DType::kFloat64, out.raw_data(), out.dtype(), sum.size());
    return;
  }
  ConvertElements(v.data(), DType::kFloat64, out.raw_data(), out.dtype(), v.size());
}

// Type inference of dtype_generic ops whose data still computes in float32: rejects another
// known dtype for `what` (an input or output name) with the message the graph gives others.
inline void RequireFloat32(int type, const char* op, const char* what) {
  if (type >= 0 && type != static_cast<int>(DType::kFloat32))
    throw ShapeError(StrCat(op, ": unsupported dtype for ", what, ": expected float32, got ",
                            DTypeName(static_cast<DType>(type)),
                            " (the operator computes in float32 only; Cast the input to float32)"));
}

// An index value truncated toward zero as MXNet's static_cast does, without its undefined
// behaviour: NaN and values beyond int64 saturate (NaN to the minimum, as x86 converts it).
inline int64_t TruncateIndex(double v) {
  constexpr double kLimit = 9.2e18;
  if (std::isnan(v) || v <= -kLimit) return std::numeric_limits<int64_t>::min();
  if (v >= kLimit) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

enum IndexMode { kRaise, kWrap, kClip };

// Indices into an axis of length n: values truncated to integers as MXNet's static_cast
// does, then clipped, wrapped, or (raise) checked.
inline std::vector<int64_t> ResolveIndices(const NDArray& idx, int64_t n, int mode, const char* op) {
  std::vector<double> v = ValuesAsDouble(idx);
  std::vector<int64_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t j = TruncateIndex(v[i]);
    if (mode == kWrap) {
      j %= n;
      if (j < 0) j += n;
    } else if (mode == kRaise) {
      if (j < 0 || j >= n)
        throw Error(StrCat(op, ": index ", v[i], " is out of bounds for an axis of size ", n,
                           " (mode='raise')"));
    } else {
      j = std::min(std::max<int64_t>(j, 0), n - 1);
    }
    r[i] = j;
  }
  return r;
}

// Row-major strides of `s`.
inline std::vector<int64_t> Strides(const TShape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.ndim()), 1);
  for (int i = s.ndim() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// (outer, mid, inner) of `s` around `axis`: the products before, at and after the axis.
struct AxisSplit {
  int64_t outer = 1, mid = 1, inner = 1;
};
inline AxisSplit SplitAt(const TShape& s, int axis) {
  AxisSplit r;
  for (int i = 0; i < axis; ++i) r.outer *= s[i];
  r.mid = s[axis];
  for (int i = axis + 1; i < s.ndim(); ++i) r.inner *= s[i];
  return r;
}

// Product of dims, -1 if any is unknown.
inline int64_t KnownProduct(const TShape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) {
    if (s[i] < 0) return -1;
    p = CheckedMul(p, s[i], "product of dims ", begin, " to ", end - 1, " of ", s);
  }
  return p;
}

// Type inference for ops whose output has input 0's type and whose other inputs (indices)
// may be of any type.
inline void InferTypeFromData(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  TypeAssignCheck(out, 0, (*in)[0]);
  TypeAssignCheck(in, 0, (*out)[0]);
}

// A same-shape infer function (both directions) for unary ops.
inline void SameShapeInfer(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
}

// A strided view of a source array seen through an output shape: output element with
// multi-index (i_0..i_n-1) reads source element
//   base + sum_d ((i_d / div[d]) % mod[d]) * stride[d]
// which covers transpose (stride permuted), slice (base, stride * step), tile (mod) and
// repeat (div). Strides may be negative.
struct IndexMap {
  TShape out_shape;
  std::vector<int64_t> div, mod, stride;
  int64_t base = 0;

  explicit IndexMap(const TShape& out) : out_shape(out) {
    size_t n = static_cast<size_t>(out.ndim());
    div.assign(n, 1);
    mod.assign(n, 0);  // 0: no modulus
    stride.assign(n, 0);
  }
  int64_t Source(int64_t flat) const {
    int64_t src = base;
    for (int d = out_shape.ndim() - 1; d >= 0; --d) {
      int64_t i = flat % out_shape[d];
      flat /= out_shape[d];
      i /= div[static_cast<size_t>(d)];
      if (mod[static_cast<size_t>(d)] > 0) i %= mod[static_cast<size_t>(d)];
      src += i * stride[static_cast<size_t>(d)];
    }
    return src;
  }
};

// out[k] (per req) = src[map.Source(k)].
inline void GatherWithReq(const IndexMap& map, const float* src, float* out, OpReq req) {
  MapWithReq(out, map.out_shape.Size(), req, [&](int64_t k) { return src[map.Source(k)]; });
}

// The gradient of a gather: grad_src[map.Source(k)] += grad_out[k], written or added per req.
// `injective` maps (transpose, slice) scatter in parallel; others (tile, repeat) accumulate
// serially into a buffer so the sum order is fixed.
inline void ScatterGradWithReq(const IndexMap& map, const float* grad_out, const NDArray& grad_src,
                               OpReq req, bool injective) {
  if (req == OpReq::kNull) return;
  int64_t n = map.out_shape.Size();
  float* gs = grad_src.fdata();
  if (injective) {
    ZeroWithReq(grad_src, req);
    ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) gs[map.Source(k)] += grad_out[k];
    });
    return;
  }
  std::vector<float> acc(static_cast<size_t>(grad_src.Size()), 0.0f);
  for (int64_t k = 0; k < n; ++k) acc[static_cast<size_t>(map.Source(k))] += grad_out[k];
  AssignWithReq(gs, acc.data(), grad_src.Size(), req);
}

// Forward and backward of a gather op whose index map is make_map(attrs, in_shape, out_shape).
template <typename MakeMap>
ForwardFn GatherForward(MakeMap make_map) {
  return [make_map](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    if (req[0] == OpReq::kNull || out[0].Size() == 0) return;
    IndexMap m = make_map(attrs, in[0].shape(), out[0].shape());
    GatherWithReq(m, in[0].fdata(), out[0].fdata(), req[0]);
  };
}
template <typename MakeMap>
BackwardFn GatherBackward(MakeMap make_map, bool injective) {
  return [make_map, injective](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
    if (a.req[0] == OpReq::kNull) return;
    const TShape& os = a.out_grads[0].shape();
    if (os.Size() == 0) {
      ZeroWithReq(a.in_grads[0], a.req[0]);
      return;
    }
    IndexMap m = make_map(attrs, a.inputs[0].shape(), os);
    ScatterGradWithReq(m, a.out_grads[0].fdata(), a.in_grads[0], a.req[0], injective);
  };
}

}  // namespace symbind::shape_detail
