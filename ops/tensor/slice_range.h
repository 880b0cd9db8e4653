// The window a slice selects (begin, end, step with None and negative entries, as MXNet
// resolves them): slice reads it, _slice_assign and _slice_assign_scalar write it.
#pragma once
#include <algorithm>
#include <limits>
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>

namespace symbind {

// slice's parameters; _slice_assign and _slice_assign_scalar take the same.
struct SliceParam : Parameter<SliceParam> {
  OptIntTuple begin, end, step;
  static void Declare(ParamDeclarer<SliceParam>& d) {
    d.field("begin", &SliceParam::begin)
        .describe("starting indices for the slice operation, supports negative indices.");
    d.field("end", &SliceParam::end)
        .describe("ending indices for the slice operation, supports negative indices.");
    d.field("step", &SliceParam::step).set_default(OptIntTuple{})
        .describe("step for the slice operation, supports negative values.");
  }
};

// Per-axis (begin, step, output size) of a slice.
struct SliceRange {
  std::vector<int64_t> begin, step, size;
};

// MXNet's GetIndexRange + SetSliceOpOutputDimSize: None picks the natural end for the step's
// direction; negative indices count from the end; out-of-range bounds are clamped.
inline SliceRange ComputeSliceRange(const TShape& d, const OptIntTuple& pb, const OptIntTuple& pe,
                                    const OptIntTuple& ps) {
  if (d.ndim() == 0) throw ShapeError("slice only works for ndim > 0");
  if (static_cast<int>(pb.size()) > d.ndim() || static_cast<int>(pe.size()) > d.ndim())
    throw ShapeError(StrCat("slice: slicing axis exceeds data dimensions: begin has ", pb.size(),
                            " entries, end ", pe.size(), ", data ", d));
  if (pb.size() != pe.size())
    throw ShapeError(StrCat("slice: begin and end must have the same length (", pb.size(), " vs ",
                            pe.size(), ")"));
  if (!ps.empty() && ps.size() != pb.size())
    throw ShapeError(StrCat("slice: step and begin must have the same length (", ps.size(), " vs ",
                            pb.size(), ")"));
  SliceRange r;
  for (int i = 0; i < d.ndim(); ++i) {
    int64_t len = d[i];
    if (static_cast<size_t>(i) >= pb.size()) {
      r.begin.push_back(0);
      r.step.push_back(1);
      r.size.push_back(len);
      continue;
    }
    int64_t s = !ps.empty() && ps[i] ? *ps[i] : 1;
    if (s == 0) throw ShapeError(StrCat("slice op step[", i, "] cannot be 0"));
    if (s == std::numeric_limits<int64_t>::min())  // -s below would overflow
      throw ShapeError(StrCat("slice op step[", i, "] ", s, " is out of range"));
    int64_t b = 0, e = 0;
    if (len > 0) {
      b = pb[i] ? *pb[i] : (s < 0 ? len - 1 : 0);
      e = pe[i] ? *pe[i] : (s < 0 ? -1 : len);
      if (b < 0) b += len;
      if (e < 0 && pe[i]) e += len;
      if (b < 0 && s > 0) b = 0;
      if (b > len - 1 && s < 0) b = len - 1;
      if (b < 0 || b > len - 1) b = -1;
      e = std::min(std::max<int64_t>(e, -1), len);
    }
    int64_t n = 0;
    if (len < 0) n = -1;
    else if (e != b && b >= 0) n = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (e < b ? (b - e - 1) / (-s) + 1 : 0);
    r.begin.push_back(std::max<int64_t>(b, 0));
    r.step.push_back(s);
    r.size.push_back(n);
  }
  return r;
}

inline IndexMap SliceMap(const SliceRange& r, const TShape& in_shape, const TShape& out_shape) {
  std::vector<int64_t> st = Strides(in_shape);
  IndexMap m(out_shape);
  for (int i = 0; i < in_shape.ndim(); ++i) {
    m.base += r.begin[i] * st[i];
    m.stride[i] = st[i] * r.step[i];
  }
  return m;
}

}  // namespace symbind
