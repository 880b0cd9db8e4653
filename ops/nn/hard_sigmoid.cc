// hard_sigmoid: y = clip(alpha * x + beta, 0, 1). Forward and backward in the input's dtype
// (float16 through float32), since MXNet's test differentiates it in float16 and float64 too.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct HardSigmoidParam : Parameter<HardSigmoidParam> {
  float alpha, beta;
  static void Declare(ParamDeclarer<HardSigmoidParam>& d) {
    d.field("alpha", &HardSigmoidParam::alpha).set_default(0.2f).describe("Slope of hard sigmoid");
    d.field("beta", &HardSigmoidParam::beta).set_default(0.5f).describe("Bias of hard sigmoid.");
  }
};

SYMBIND_REGISTER_OP(hard_sigmoid)
    .set_monitor_numbered_inputs()
    .describe("Computes hard sigmoid of x element-wise: y = max(0, min(1, alpha * x + beta)).")
    .set_params<HardSigmoidParam>()
    .add_argument_doc("data", "The input array.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<HardSigmoidParam>();
      ComputeInDType("hard_sigmoid", in, req, out, [&](auto tag, const auto& in, const auto& req, const auto& out) {
        using T = decltype(tag);
        const T* x = in[0].template data<T>();
        MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) {
          T y = static_cast<T>(p.alpha * x[i] + p.beta);
          return y > T(1) ? T(1) : (y < T(0) ? T(0) : y);
        });
      });
    })
    // The gradient is alpha inside the linear part, zero where the output saturates.
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kNull) return;
      const auto& p = attrs.param<HardSigmoidParam>();
      ComputeInDType("hard_sigmoid", {a.inputs[0], a.out_grads[0]}, {a.req[0]}, {a.in_grads[0]},
                     [&](auto tag, const auto& in, const auto& req, const auto& out) {
                       using T = decltype(tag);
                       const T* x = in[0].template data<T>();
                       const T* g = in[1].template data<T>();
                       MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) {
                         T y = static_cast<T>(p.alpha * x[i] + p.beta);
                         return y > T(0) && y < T(1) ? static_cast<T>(g[i] * p.alpha) : T(0);
                       });
                     });
    });
}  // namespace

}  // namespace symbind
