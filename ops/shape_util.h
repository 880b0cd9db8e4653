// Helpers shared by the shape, slicing, indexing and spatial ops (shape_ops.cc, concat_slice.cc,
// indexing.cc, spatial_misc.cc).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace symbind::shape_detail {

// Maps a possibly negative axis into [0, ndim); throws ShapeError naming `op` otherwise.
inline int NormalizeAxis(int64_t axis, int ndim, const char* op) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw ShapeError(StrCat(op, ": axis ", axis, " is out of range for an input of ", ndim,
                            " dimensions (expected -", ndim, " <= axis < ", ndim, ")"));
  return static_cast<int>(a);
}

// Copies (or adds) src into dst element-wise; the shapes may differ, the sizes match.
inline void CopyWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull || dst.raw_data() == src.raw_data()) return;
  const float* s = src.fdata();
  MapWithReq(dst.fdata(), dst.Size(), req, [&](int64_t i) { return s[i]; });
}

// Sets dst to zero under kWrite; leaves it alone under kAdd and kNull.
inline void ZeroWithReq(const NDArray& dst, OpReq req) {
  if (req == OpReq::kWrite || req == OpReq::kWriteInplace) dst.Fill(0.0f);
}

// The values of an array of any dtype as double (indices, conditions).
inline std::vector<double> ValuesAsDouble(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
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
    p *= s[i];
  }
  return p;
}

// A same-shape infer function (both directions) for unary ops.
inline void SameShapeInfer(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
}

}  // namespace symbind::shape_detail
