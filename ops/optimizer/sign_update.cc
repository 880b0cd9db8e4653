// MXNet's sign-based updates (Bernstein et al. 2018), which step by the sign of the gradient:
//   signsgd_update: weight = (1 - lr*wd)*weight - lr*sign(grad)   (clip_gradient has no effect)
//   signum_update:  mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad))
//                   weight = (1 - lr*wd_lh)*weight + lr*sign(mom)
// signum_update updates mom in place.
#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

inline float Sign(float x) { return static_cast<float>((x > 0) - (x < 0)); }

// signsgd_update's parameters, and with kMomentum signum_update's (momentum, wd_lh).
template <bool kMomentum>
struct SignParam : Parameter<SignParam<kMomentum>> {
  float lr, momentum = 0.f, wd, rescale_grad, clip_gradient, wd_lh = 0.f;
  static void Declare(ParamDeclarer<SignParam>& d) {
    d.field("lr", &SignParam::lr).describe("Learning rate");
    if (kMomentum)
      d.field("momentum", &SignParam::momentum).set_default(0.0f)
          .describe("The decay rate of momentum estimates at each epoch.");
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
    if (kMomentum)
      d.field("wd_lh", &SignParam::wd_lh).set_default(0.0f)
          .describe("The amount of weight decay that does not go into gradient/momentum "
                    "calculations otherwise do weight decay algorithmically only.");
  }
};

void SignSGDForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SignParam<false>>();
  const float* w = in[0].fdata();
  const float* g = in[1].fdata();
  ApplyUpdate(out[0], req[0], "signsgd_update",
              [&](int64_t i) { return (1.f - p.lr * p.wd) * w[i] - p.lr * Sign(g[i]); });
}

void SignumForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SignParam<true>>();
  const float* w = in[0].fdata();
  const float* g = in[1].fdata();
  float* mom = in[2].fdata();
  ApplyUpdate(out[0], req[0], "signum_update", [&](int64_t i) {
    mom[i] = p.momentum * mom[i] -
             (1.f - p.momentum) * (p.wd * w[i] + ClipGradient(p.rescale_grad * g[i], p.clip_gradient));
    return (1.f - p.lr * p.wd_lh) * w[i] + p.lr * Sign(mom[i]);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(signsgd_update)
    .describe("Update function for SignSGD optimizer: weight = (1 - lr*wd)*weight - "
              "lr*sign(grad). clip_gradient has no effect.")
    .set_params<SignParam<false>>()
    .set_arguments({"weight", "grad"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .set_infer_shape(AllSameShape)
    .set_forward(SignSGDForward);

SYMBIND_REGISTER_OP(signum_update)
    .describe("SIGN momentUM (Signum) optimizer: mom = momentum*mom - (1-momentum)*(wd*weight + "
              "clip(rescale_grad*grad)); weight = (1 - lr*wd_lh)*weight + lr*sign(mom). Updates "
              "mom in place.")
    .set_params<SignParam<true>>()
    .set_arguments({"weight", "grad", "mom"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mom", "Momentum (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(SignumForward);

}  // namespace symbind
