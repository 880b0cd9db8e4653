// Joining and cutting arrays: Concat, SliceChannel (split), slice (crop), slice_axis, slice_like.
#include <algorithm>
#include <limits>

#include <symbind/core/graph.h>

#include <symbind/ops/shape_util.h>

namespace symbind {

namespace {
using shape_detail::AxisSplit;
using shape_detail::GatherBackward;
using shape_detail::GatherForward;
using shape_detail::IndexMap;
using shape_detail::NormalizeAxis;
using shape_detail::SplitAt;
using shape_detail::Strides;
using shape_detail::ZeroWithReq;

// Moves data between one array viewed as (outer, sum_i mid_i, inner) and parts viewed as
// (outer, mid_i, inner). join: parts -> whole (written or added per `req[0]`);
// otherwise whole -> each part (per `req[i]`).
void ConcatCopy(const NDArray& whole, const std::vector<NDArray>& parts, int axis, bool join,
                const std::vector<OpReq>& req) {
  AxisSplit w = SplitAt(whole.shape(), axis);
  std::vector<int64_t> offset(parts.size() + 1, 0), width(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    width[i] = parts[i].shape()[axis] * w.inner;
    offset[i + 1] = offset[i] + width[i];
  }
  int64_t row = w.mid * w.inner;
  float* big = whole.fdata();
  int64_t tasks = w.outer * static_cast<int64_t>(parts.size());
  ParallelFor(tasks, std::max<int64_t>(1, kElementwiseGrain / (row / static_cast<int64_t>(parts.size()) + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t t = b; t < e; ++t) {
                  int64_t o = t / static_cast<int64_t>(parts.size());
                  size_t i = static_cast<size_t>(t % static_cast<int64_t>(parts.size()));
                  OpReq r = join ? req[0] : req[i];
                  if (r == OpReq::kNull || width[i] == 0) continue;
                  float* whole_row = big + o * row + offset[i];
                  float* part_row = parts[i].fdata() + o * width[i];
                  float* dst = join ? whole_row : part_row;
                  const float* src = join ? part_row : whole_row;
                  if (r == OpReq::kAdd)
                    for (int64_t j = 0; j < width[i]; ++j) dst[j] += src[j];
                  else
                    std::copy(src, src + width[i], dst);
                }
              });
}

// ---------------------------------------------------------------------------------------------
// Concat
struct ConcatParam : Parameter<ConcatParam> {
  int num_args;
  int dim;
  static void Declare(ParamDeclarer<ConcatParam>& d) {
    d.field("num_args", &ConcatParam::num_args).lower_bound(1)
        .describe("Number of inputs to be concated.");
    d.field("dim", &ConcatParam::dim).set_default(1).describe("the dimension to be concated.");
  }
};

void InferShapeConcat(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ConcatParam>();
  // Everything but the concat axis agrees across inputs and output.
  TShape common;
  int axis = -1;
  auto merge = [&](const TShape& s, const std::string& what) {
    if (!s.ndim_known()) return;
    if (s.ndim() == 0) throw ShapeError("Concat: zero-dimensional arrays cannot be concatenated");
    axis = NormalizeAxis(p.dim, s.ndim(), "Concat");
    TShape t = s;
    t[axis] = -1;
    TShape merged;
    if (!UnifyShapes(common, t, &merged))
      throw ShapeError(StrCat("Concat: incompatible shape for ", what, ": expected ", common,
                              " (any size on axis ", axis, "), got ", s));
    common = merged;
  };
  for (size_t i = 0; i < in->size(); ++i) merge((*in)[i], "arg" + std::to_string(i));
  merge((*out)[0], "the output");
  if (!common.ndim_known()) return;
  int64_t total = 0;
  int unknown = -1, n_unknown = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    ShapeAssignCheck(in, i, common);
    int64_t d = (*in)[i][axis];
    if (d < 0) {
      ++n_unknown;
      unknown = static_cast<int>(i);
    } else {
      total = CheckedAdd(total, d, "Concat: total size on axis ", axis);
    }
  }
  TShape o = common;
  if (n_unknown == 0) {
    o[axis] = total;
  } else if (n_unknown == 1 && (*out)[0].ndim_known() && (*out)[0][axis] >= 0) {
    // One input's concat dim follows from the output's.
    int64_t rest = (*out)[0][axis] - total;
    if (rest < 0)
      throw ShapeError(StrCat("Concat: the output has ", (*out)[0][axis], " entries on axis ", axis,
                              " but the known inputs already have ", total));
    TShape s = (*in)[static_cast<size_t>(unknown)];
    s[axis] = rest;
    ShapeAssignCheck(in, static_cast<size_t>(unknown), s);
    o[axis] = (*out)[0][axis];
  }
  ShapeAssignCheck(out, 0, o);
}

// ---------------------------------------------------------------------------------------------
// SliceChannel
struct SliceChannelParam : Parameter<SliceChannelParam> {
  int num_outputs;
  int axis;
  bool squeeze_axis;
  static void Declare(ParamDeclarer<SliceChannelParam>& d) {
    // Bounded like every node's outputs (Graph::kMaxNodeOutputs) so that a huge count is
    // refused before any per-output name or array exists.
    d.field("num_outputs", &SliceChannelParam::num_outputs).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of splits. Note that this should evenly divide the length of the `axis`.");
    d.field("axis", &SliceChannelParam::axis).set_default(1).describe("Axis along which to split.");
    d.field("squeeze_axis", &SliceChannelParam::squeeze_axis).set_default(false)
        .describe("If true, Removes the axis with length 1 from the shapes of the output arrays. "
                  "**Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 only "
                  "along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` "
                  "only if ``input.shape[axis] == num_outputs``.");
  }
};

void InferShapeSliceChannel(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SliceChannelParam>();
  int64_t n = p.num_outputs;
  // The input shape an output shape implies.
  auto back_from = [&](const TShape& o, int axis) {
    std::vector<int64_t> back = o.dims();
    if (p.squeeze_axis) back.insert(back.begin() + axis, n);
    else if (back[axis] >= 0) back[axis] = CheckedMul(back[axis], n, "SliceChannel: input size on axis ", axis);
    return TShape(back);
  };
  if (!(*in)[0].ndim_known()) {
    // MXNet stops here; we also take the input from a known output.
    for (const TShape& s : *out) {
      if (!s.ndim_known()) continue;
      int nd = s.ndim() + (p.squeeze_axis ? 1 : 0);
      ShapeAssignCheck(in, 0, back_from(s, NormalizeAxis(p.axis, nd, "SliceChannel")));
      break;
    }
    if (!(*in)[0].ndim_known()) return;
  }
  const TShape d = (*in)[0];
  int axis = NormalizeAxis(p.axis, d.ndim(), "SliceChannel");
  if (d[axis] >= 0 && d[axis] % n != 0)
    throw ShapeError(StrCat("SliceChannel: you are trying to split the ", axis,
                            "-th axis of input tensor with shape ", d, " into num_outputs=", n,
                            " evenly sized chunks, but this is not possible because ", n,
                            " does not evenly divide ", d[axis]));
  if (p.squeeze_axis && d[axis] >= 0 && d[axis] != n)
    throw ShapeError(StrCat("SliceChannel: if squeeze_axis is True, the size of the sliced axis "
                            "must be the same as num_outputs. Input shape=", d, ", axis=", axis,
                            ", num_outputs=", n, "."));
  std::vector<int64_t> o = d.dims();
  if (o[axis] >= 0) o[axis] /= n;
  if (p.squeeze_axis) o.erase(o.begin() + axis);
  for (size_t i = 0; i < out->size(); ++i) ShapeAssignCheck(out, i, TShape(o));
  // Back to the input from the outputs (now all of one shape).
  ShapeAssignCheck(in, 0, back_from((*out)[0], axis));
}

// ---------------------------------------------------------------------------------------------
// slice, slice_axis, slice_like
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
SliceRange ComputeSliceRange(const TShape& d, const OptIntTuple& pb, const OptIntTuple& pe,
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

IndexMap SliceMap(const SliceRange& r, const TShape& in_shape, const TShape& out_shape) {
  std::vector<int64_t> st = Strides(in_shape);
  IndexMap m(out_shape);
  for (int i = 0; i < in_shape.ndim(); ++i) {
    m.base += r.begin[i] * st[i];
    m.stride[i] = st[i] * r.step[i];
  }
  return m;
}

void InferShapeSlice(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SliceParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 0, TShape(ComputeSliceRange(d, p.begin, p.end, p.step).size));
}

struct SliceAxisParam : Parameter<SliceAxisParam> {
  int axis;
  int64_t begin;
  std::optional<int64_t> end;
  static void Declare(ParamDeclarer<SliceAxisParam>& d) {
    d.field("axis", &SliceAxisParam::axis)
        .describe("Axis along which to be sliced, supports negative indexes.");
    d.field("begin", &SliceAxisParam::begin)
        .describe("The beginning index along the axis to be sliced,  supports negative indexes.");
    d.field("end", &SliceAxisParam::end)
        .describe("The ending index along the axis to be sliced,  supports negative indexes.");
  }
};

// (axis, begin, end) of slice_axis on `d`, as MXNet's GetSliceAxisParams checks them.
struct AxisRange {
  int axis;
  int64_t begin, end;
};
AxisRange SliceAxisRange(const SliceAxisParam& p, const TShape& d) {
  AxisRange r;
  r.axis = NormalizeAxis(p.axis, d.ndim(), "slice_axis");
  int64_t len = d[r.axis];
  r.begin = p.begin < 0 ? p.begin + len : p.begin;
  r.end = -1;
  if (len < 0) return r;
  if (len > 0) {
    r.end = p.end ? (*p.end < 0 ? *p.end + len : *p.end) : len;
    if (r.end > len)
      throw ShapeError(StrCat("slice_axis: invalid end=", r.end, " as axis_size is ", len));
    if (!(r.begin < r.end))
      throw ShapeError(StrCat("slice_axis: invalid begin, end: begin=", p.begin, ", end=",
                              p.end ? std::to_string(*p.end) : std::string("None"),
                              " on an axis of size ", len));
  } else {
    r.begin = r.end = 0;
  }
  if (r.begin < 0 || r.end < 0)
    throw ShapeError(StrCat("slice_axis: invalid begin=", p.begin, " on an axis of size ", len));
  return r;
}

void InferShapeSliceAxis(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  AxisRange r = SliceAxisRange(attrs.param<SliceAxisParam>(), d);
  TShape o = d;
  o[r.axis] = d[r.axis] < 0 ? -1 : r.end - r.begin;
  ShapeAssignCheck(out, 0, o);
}

IndexMap SliceAxisMap(const SliceAxisParam& p, const TShape& in_shape, const TShape& out_shape) {
  AxisRange r = SliceAxisRange(p, in_shape);
  IndexMap m(out_shape);
  std::vector<int64_t> st = Strides(in_shape);
  for (int i = 0; i < in_shape.ndim(); ++i) m.stride[i] = st[i];
  m.base = r.begin * st[r.axis];
  return m;
}

struct SliceLikeParam : Parameter<SliceLikeParam> {
  TShape axes;
  static void Declare(ParamDeclarer<SliceLikeParam>& d) {
    d.field("axes", &SliceLikeParam::axes).set_default(TShape(std::vector<int64_t>{}))
        .describe("List of axes on which input data will be sliced according to the corresponding "
                  "size of the second input. By default will slice on all axes. Negative axes are "
                  "supported.");
  }
};

void InferShapeSliceLike(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SliceLikeParam>();
  const TShape& d = (*in)[0];
  const TShape& like = (*in)[1];
  if (!d.ndim_known() || !like.ndim_known()) return;
  TShape o = d;
  std::vector<int> axes;
  if (p.axes.ndim() == 0) {
    if (d.ndim() != like.ndim())
      throw ShapeError(StrCat("slice_like: by default it slices on all axes, but ndim mismatch for "
                              "inputs: ", d.ndim(), " vs. ", like.ndim()));
    for (int i = 0; i < d.ndim(); ++i) axes.push_back(i);
  } else {
    for (int i = 0; i < p.axes.ndim(); ++i) {
      int a = NormalizeAxis(p.axes[i], d.ndim(), "slice_like");
      if (a >= like.ndim())
        throw ShapeError(StrCat("slice_like: slice axis ", a, " exceeds second input: ", like));
      axes.push_back(a);
    }
  }
  for (int a : axes) {
    if (d[a] >= 0 && like[a] > d[a])
      throw ShapeError(StrCat("slice_like: slice axis ", a, " with size ", like[a],
                              " exceeds limit of input with size ", d[a]));
    o[a] = like[a];
  }
  ShapeAssignCheck(out, 0, o);
}

// slice_like reads data starting at 0 with unit steps: the output shape says everything.
IndexMap SliceLikeMap(const TShape& in_shape, const TShape& out_shape) {
  IndexMap m(out_shape);
  std::vector<int64_t> st = Strides(in_shape);
  for (int i = 0; i < in_shape.ndim(); ++i) m.stride[i] = st[i];
  return m;
}

const auto kSliceMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  const auto& p = a.param<SliceParam>();
  return SliceMap(ComputeSliceRange(i, p.begin, p.end, p.step), i, o);
};
const auto kSliceAxisMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  return SliceAxisMap(a.param<SliceAxisParam>(), i, o);
};
const auto kSliceLikeMap = [](const NodeAttrs&, const TShape& i, const TShape& o) {
  return SliceLikeMap(i, o);
};

std::vector<std::string> NumberedNames(const std::string& prefix, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}
}  // namespace

SYMBIND_REGISTER_OP(Concat)
    .add_alias("concat")
    .describe("Joins input arrays along a given axis.")
    .set_params<ConcatParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("arg", a.param<ConcatParam>().num_args); })
    .set_infer_shape(InferShapeConcat)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      int axis = NormalizeAxis(attrs.param<ConcatParam>().dim, out[0].shape().ndim(), "Concat");
      ConcatCopy(out[0], in, axis, true, req);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const NDArray& g = a.out_grads[0];
      int axis = NormalizeAxis(attrs.param<ConcatParam>().dim, g.shape().ndim(), "Concat");
      // Parts with req null are skipped; the input stands in for their width.
      std::vector<NDArray> parts;
      for (size_t i = 0; i < a.in_grads.size(); ++i)
        parts.push_back(a.req[i] == OpReq::kNull ? a.inputs[i] : a.in_grads[i]);
      ConcatCopy(g, parts, axis, false, a.req);
    });

SYMBIND_REGISTER_OP(SliceChannel)
    .add_alias("split")
    .describe("Splits an array along a particular axis into multiple sub-arrays.")
    .set_params<SliceChannelParam>()
    .set_outputs([](const NodeAttrs& a) {
      return NumberedNames("output", a.param<SliceChannelParam>().num_outputs);
    })
    .set_num_outputs([](const NodeAttrs& a) { return a.param<SliceChannelParam>().num_outputs; })
    .set_infer_shape(InferShapeSliceChannel)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<SliceChannelParam>();
      int axis = NormalizeAxis(p.axis, in[0].shape().ndim(), "SliceChannel");
      TShape part = in[0].shape();
      part[axis] /= p.num_outputs;
      std::vector<NDArray> parts;
      for (auto& o : out) parts.push_back(o.Reshape(part));
      ConcatCopy(in[0], parts, axis, false, req);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<SliceChannelParam>();
      const TShape& d = a.inputs[0].shape();
      int axis = NormalizeAxis(p.axis, d.ndim(), "SliceChannel");
      TShape part = d;
      part[axis] /= p.num_outputs;
      std::vector<NDArray> parts;
      for (auto& g : a.out_grads) parts.push_back(g.Reshape(part));
      ConcatCopy(a.in_grads[0], parts, axis, true, a.req);
    });

SYMBIND_REGISTER_OP(slice)
    .add_alias("crop")  // MXNet 1.x registers "crop" as an alias of slice (Crop is another op)
    .describe("Slices a region of the array: begin, end and step per axis (None allowed).")
    .set_params<SliceParam>()
    .set_infer_shape(InferShapeSlice)
    .set_forward(GatherForward(kSliceMap))
    .set_backward(GatherBackward(kSliceMap, true));

SYMBIND_REGISTER_OP(slice_axis)
    .describe("Slices along a given axis: [begin, end).")
    .set_params<SliceAxisParam>()
    .set_infer_shape(InferShapeSliceAxis)
    .set_forward(GatherForward(kSliceAxisMap))
    .set_backward(GatherBackward(kSliceAxisMap, true));

SYMBIND_REGISTER_OP(slice_like)
    .describe("Slices the array like the shape of another array (from 0 on the chosen axes).")
    .set_params<SliceLikeParam>()
    .set_arguments({"data", "shape_like"})
    .set_infer_shape(InferShapeSliceLike)
    .set_forward(GatherForward(kSliceLikeMap))
    .set_backward([](const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
      GatherBackward(kSliceLikeMap, true)(ctx, attrs, a);
      ZeroWithReq(a.in_grads[1], a.req[1]);  // shape_like only lends its shape
    });

}  // namespace symbind
