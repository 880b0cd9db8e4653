// slice, slice_axis and slice_like: strided windows of an array, through index maps.
#include <algorithm>
#include <limits>
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>
#include <symbind/ops/tensor/slice_range.h>

namespace symbind {

namespace {

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

}  // namespace

SYMBIND_REGISTER_OP(slice)
    .set_monitor_numbered_inputs()
    .add_alias("crop")  // MXNet 1.x registers "crop" as an alias of slice (Crop is another op)
    .describe("Slices a region of the array: begin, end and step per axis (None allowed).")
    .set_params<SliceParam>()
    .set_infer_shape(InferShapeSlice)
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kSliceMap))
    .set_backward(GatherBackward(kSliceMap, true));

SYMBIND_REGISTER_OP(slice_axis)
    .set_monitor_numbered_inputs()
    .describe("Slices along a given axis: [begin, end).")
    .set_params<SliceAxisParam>()
    .set_infer_shape(InferShapeSliceAxis)
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kSliceAxisMap))
    .set_backward(GatherBackward(kSliceAxisMap, true));

SYMBIND_REGISTER_OP(slice_like)
    .describe("Slices the array like the shape of another array (from 0 on the chosen axes).")
    .set_params<SliceLikeParam>()
    .set_arguments({"data", "shape_like"})
    .set_infer_shape(InferShapeSliceLike)
    .set_infer_type(InferTypeFromData)  // shape_like may be of any dtype
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kSliceLikeMap))
    .set_backward([](const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
      GatherBackward(kSliceLikeMap, true)(ctx, attrs, a);
      ZeroWithReq(a.in_grads[1], a.req[1]);  // shape_like only lends its shape
    });

}  // namespace symbind
