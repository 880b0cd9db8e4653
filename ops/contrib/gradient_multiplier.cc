// _contrib_gradientmultiplier: the identity forward, the gradient scaled by `scalar` backward
// (a gradient reversal layer with a negative scalar).
#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/math_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(_contrib_gradientmultiplier)
    .describe(R"(Passes its input through unchanged, and its gradient multiplied by `scalar`: a
negative scalar makes a gradient reversal layer (domain-adversarial training).)")
    .set_params<math::ScalarParam>()
    .add_argument_doc("data", "The input array.")
    .set_infer_shape(SameShape)
    .set_forward_inplace()
    .set_dtype_generic()
    .set_forward(ForwardCopy)
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kNull) return;
      const double scalar = attrs.param<math::ScalarParam>().scalar;
      ComputeInDType("_contrib_gradientmultiplier", {a.out_grads[0]}, {a.req[0]}, {a.in_grads[0]},
                     [&](auto tag, const auto& in, const auto& req, const auto& out) {
                       using T = decltype(tag);
                       const T* g = in[0].template data<T>();
                       MapWithReq(out[0].template data<T>(), out[0].Size(), req[0],
                                  [&](int64_t i) { return static_cast<T>(g[i] * scalar); });
                     });
    });

}  // namespace symbind
