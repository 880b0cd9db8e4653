// reverse (alias flip; MXNet 1.9.1's matrix_op): reverses the order of elements along the
// given axes; an axis listed twice flips back. Negative axes count from the end. The gradient
// is the reversed head gradient; shapes infer both ways.
#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>

namespace symbind {

namespace {

struct ReverseParam : Parameter<ReverseParam> {
  TShape axis;
  static void Declare(ParamDeclarer<ReverseParam>& d) {
    d.field("axis", &ReverseParam::axis).describe("The axis which to reverse elements.");
  }
};

IndexMap ReverseMap(const NodeAttrs& attrs, const TShape& in_shape, const TShape& out_shape) {
  const TShape& axes = attrs.param<ReverseParam>().axis;
  std::vector<int64_t> st = Strides(in_shape);
  std::vector<bool> flip(static_cast<size_t>(in_shape.ndim()), false);
  for (int i = 0; i < axes.ndim(); ++i) {
    int a = NormalizeAxis(axes[i], in_shape.ndim(), "reverse");
    flip[static_cast<size_t>(a)] = !flip[static_cast<size_t>(a)];
  }
  IndexMap m(out_shape);
  for (int d = 0; d < in_shape.ndim(); ++d) {
    m.stride[static_cast<size_t>(d)] = flip[static_cast<size_t>(d)] ? -st[static_cast<size_t>(d)] : st[static_cast<size_t>(d)];
    if (flip[static_cast<size_t>(d)]) m.base += (in_shape[d] - 1) * st[static_cast<size_t>(d)];
  }
  return m;
}
}  // namespace

SYMBIND_REGISTER_OP(reverse)
    .add_alias("flip")
    .describe("Reverses the order of elements along given axis while preserving array shape.")
    .set_params<ReverseParam>()
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      SameShape(attrs, in, out);
      const TShape& d = (*in)[0];
      if (d.ndim_known())  // MXNet checks the axes when it runs; checking here names the node
        for (int i = 0; i < attrs.param<ReverseParam>().axis.ndim(); ++i)
          NormalizeAxis(attrs.param<ReverseParam>().axis[i], d.ndim(), "reverse");
    })
    .set_dtype_generic()
    .set_forward(GatherForward(ReverseMap))
    .set_backward(GatherBackward(ReverseMap, true));

}  // namespace symbind
