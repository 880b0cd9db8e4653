// Explicit broadcasts of one array to a larger shape: broadcast_axis (alias broadcast_axes),
// broadcast_to, broadcast_like (MXNet 1.9.1's broadcast_reduce_op_value). Only dims of size 1
// stretch; ranks never change. Shapes infer forward only, as in MXNet. The gradient sums over
// the stretched axes; broadcast_like's rhs only lends its shape (zero gradient).
#include <symbind/ops/tensor/math_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using math::Dims;

struct BroadcastAxesParam : Parameter<BroadcastAxesParam> {
  TShape axis;
  TShape size;
  static void Declare(ParamDeclarer<BroadcastAxesParam>& d) {
    d.field("axis", &BroadcastAxesParam::axis).set_default(TShape(std::vector<int64_t>{}))
        .describe("The axes to perform the broadcasting.");
    d.field("size", &BroadcastAxesParam::size).set_default(TShape(std::vector<int64_t>{}))
        .describe("Target sizes of the broadcasting axes.");
  }
};

struct BroadcastToParam : Parameter<BroadcastToParam> {
  TShape shape;
  static void Declare(ParamDeclarer<BroadcastToParam>& d) {
    d.field("shape", &BroadcastToParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("The shape of the desired array. We can set the dim to zero if it's same as "
                  "the original. E.g `A = broadcast_to(B, shape=(10, 0, 0))` has the same "
                  "meaning as `A = broadcast_axis(B, axis=0, size=10)`.");
  }
};

struct BroadcastLikeParam : Parameter<BroadcastLikeParam> {
  std::optional<TShape> lhs_axes;
  std::optional<TShape> rhs_axes;
  static void Declare(ParamDeclarer<BroadcastLikeParam>& d) {
    d.field("lhs_axes", &BroadcastLikeParam::lhs_axes).set_default(std::nullopt)
        .describe("Axes to perform broadcast on in the first input array");
    d.field("rhs_axes", &BroadcastLikeParam::rhs_axes).set_default(std::nullopt)
        .describe("Axes to copy from the second input array");
  }
};

// Sets dim `axis` of `o` (from input `in`) to `size`; only a dim of 1 may stretch.
void Stretch(std::vector<int64_t>* o, const TShape& in, int axis, int64_t size, const char* op) {
  if (in[axis] != 1 && in[axis] != size)
    throw ShapeError(StrCat(op, ": cannot broadcast axis ", axis, " of size ", in[axis], " of input ",
                            in, " to size ", size, " (only axes of size 1 broadcast)"));
  (*o)[static_cast<size_t>(axis)] = size;
}

void InferShapeBroadcastAxis(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<BroadcastAxesParam>();
  const TShape& d = (*in)[0];
  if (!d.is_known()) return;
  if (p.axis.ndim() != p.size.ndim())
    throw ShapeError(StrCat("broadcast_axis: axis ", p.axis.ToStringAsWritten(), " and size ",
                            p.size.ToStringAsWritten(), " must have the same length"));
  std::vector<int64_t> o = d.dims();
  for (int i = 0; i < p.axis.ndim(); ++i) {
    int axis = NormalizeAxis(p.axis[i], d.ndim(), "broadcast_axis");
    if (d[axis] != 1)
      throw ShapeError(StrCat("broadcast_axis: broadcasting axis ", axis, " of input ", d,
                              " must have size 1"));
    Stretch(&o, d, axis, p.size[i], "broadcast_axis");
  }
  ShapeAssignCheck(out, 0, TShape(o));
}

void InferShapeBroadcastTo(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& target = attrs.param<BroadcastToParam>().shape;
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != target.ndim())
    throw ShapeError(StrCat("broadcast_to: operand of shape ", d, " cannot be broadcast to ",
                            target.ToStringAsWritten(), " (the ranks differ)"));
  std::vector<int64_t> o = d.dims();
  for (int i = 0; i < d.ndim(); ++i)
    if (target[i] != 0 && d[i] >= 0) Stretch(&o, d, i, target[i], "broadcast_to");
    else if (target[i] != 0) o[static_cast<size_t>(i)] = target[i];
  ShapeAssignCheck(out, 0, TShape(o));
}

void InferShapeBroadcastLike(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<BroadcastLikeParam>();
  const TShape& l = (*in)[0];
  const TShape& r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  std::vector<int64_t> o = l.dims();
  if (!p.lhs_axes || !p.rhs_axes) {
    if (l.ndim() != r.ndim())
      throw ShapeError(StrCat("broadcast_like: operand of shape ", l, " cannot be broadcast to ", r,
                              " (the ranks differ)"));
    for (int i = 0; i < l.ndim(); ++i)
      if (r[i] >= 0 && l[i] >= 0) Stretch(&o, l, i, r[i], "broadcast_like");
  } else {
    const TShape& la = *p.lhs_axes;
    const TShape& ra = *p.rhs_axes;
    if (la.ndim() != ra.ndim())
      throw ShapeError(StrCat("broadcast_like: lhs_axes ", la.ToStringAsWritten(), " and rhs_axes ",
                              ra.ToStringAsWritten(), " must have the same length"));
    if (la.ndim() == 0) throw ShapeError("broadcast_like: empty axes tuple is not allowed");
    for (int i = 0; i < la.ndim(); ++i) {
      int from = NormalizeAxis(la[i], l.ndim(), "broadcast_like (lhs_axes)");
      int to = NormalizeAxis(ra[i], r.ndim(), "broadcast_like (rhs_axes)");
      if (l[from] != 1)
        throw ShapeError(StrCat("broadcast_like: lhs axis ", la[i], " of ", l,
                                " must have size 1 to be broadcast to ", r[to]));
      o[static_cast<size_t>(from)] = r[to];
    }
  }
  ShapeAssignCheck(out, 0, TShape(o));
}

// Moves elements of any dtype; the backward computes in float32.
void BroadcastForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull || out[0].Size() == 0) return;
  ComputeInDType(attrs.op->name.c_str(), {in[0]}, req, out,
                 [&](auto tag, const std::vector<NDArray>& xs, const std::vector<OpReq>& r,
                     const std::vector<NDArray>& ys) {
    using T = decltype(tag);
    const T* x = xs[0].data<T>();
    T* y = ys[0].data<T>();
    const bool add = r[0] == OpReq::kAdd;
    const Dims& od = ys[0].shape().dims();
    math::ForEachBroadcast(od, xs[0].shape().dims(), od, [&](int64_t i, int64_t s, int64_t) {
      y[i] = add ? static_cast<T>(y[i] + x[s]) : x[s];
    });
  });
}

// The lhs gradient sums over the stretched axes; any other input gets zero.
void BroadcastBackward(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  for (size_t k = 1; k < a.in_grads.size(); ++k) ZeroWithReq(a.in_grads[k], a.req[k]);
  if (a.req[0] == OpReq::kNull) return;
  if (a.out_grads[0].Size() == 0) {
    ZeroWithReq(a.in_grads[0], a.req[0]);
    return;
  }
  math::SumToSmall(a.out_grads[0].fdata(), a.out_grads[0].shape().dims(), a.in_grads[0].fdata(),
                   a.inputs[0].shape().dims(), a.req[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(broadcast_axis)
    .set_monitor_numbered_inputs()
    .add_alias("broadcast_axes")
    .describe("Broadcasts the input array over particular axes: each axis in `axis` (of size 1) "
              "is stretched to the matching entry of `size`.")
    .set_params<BroadcastAxesParam>()
    .set_infer_shape(InferShapeBroadcastAxis)
    .set_dtype_generic()
    .set_forward(BroadcastForward)
    .set_backward(BroadcastBackward);

SYMBIND_REGISTER_OP(broadcast_to)
    .set_monitor_numbered_inputs()
    .describe("Broadcasts the input array to a new shape of the same rank; a 0 in `shape` keeps "
              "the input's dim.")
    .set_params<BroadcastToParam>()
    .set_infer_shape(InferShapeBroadcastTo)
    .set_dtype_generic()
    .set_forward(BroadcastForward)
    .set_backward(BroadcastBackward);

SYMBIND_REGISTER_OP(broadcast_like)
    .describe("Broadcasts lhs to the shape of rhs (same rank), or only lhs_axes to the sizes of "
              "rhs's rhs_axes. rhs gets a zero gradient.")
    .set_params<BroadcastLikeParam>()
    .set_arguments({"lhs", "rhs"})
    .set_infer_shape(InferShapeBroadcastLike)
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"rhs"})  // only its shape is read (MXNet)
    .set_dtype_generic()
    .set_forward(BroadcastForward)
    .set_backward(BroadcastBackward);

}  // namespace symbind
