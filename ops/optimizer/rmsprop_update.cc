// MXNet's RMSProp updates, with the gradient g = clip(rescale_grad*grad + wd*weight) and the
// states updated in place:
//   rmsprop_update (Tieleman & Hinton):  n = (1-gamma1)*g^2 + gamma1*n
//                                        weight = weight - lr * g / sqrt(n + epsilon)
//   rmspropalex_update (Graves 2013):    n = (1-gamma1)*g^2 + gamma1*n
//                                        g_avg = (1-gamma1)*g + gamma1*g_avg   (input `g`)
//                                        delta = gamma2*delta - lr * g / sqrt(n - g_avg^2 + epsilon)
//                                        weight = weight + delta
// The new weight is clipped to [-clip_weights, clip_weights] when clip_weights >= 0.
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

// rmsprop_update's parameters, and with kAlex rmspropalex_update's (which add gamma2).
template <bool kAlex>
struct RMSPropParam : Parameter<RMSPropParam<kAlex>> {
  float lr, gamma1, gamma2 = 0.f, epsilon, wd, rescale_grad, clip_gradient, clip_weights;
  static void Declare(ParamDeclarer<RMSPropParam>& d) {
    d.field("lr", &RMSPropParam::lr).describe("Learning rate");
    d.field("gamma1", &RMSPropParam::gamma1).set_default(0.95f).describe("Decay rate.");
    if (kAlex) d.field("gamma2", &RMSPropParam::gamma2).set_default(0.9f).describe("Decay rate.");
    d.field("epsilon", &RMSPropParam::epsilon).set_default(1e-8f)
        .describe("A small constant for numerical stability.");
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
    d.field("clip_weights", &RMSPropParam::clip_weights).set_default(-1.0f)
        .describe("Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, "
                  "weight clipping is turned off. weights = max(min(weights, clip_weights), "
                  "-clip_weights).");
  }
};

// Inputs: weight, grad, n, and with kAlex g, delta.
template <bool kAlex>
void RMSPropForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<RMSPropParam<kAlex>>();
  const float* w = in[0].fdata();
  const float* grad = in[1].fdata();
  float* n = in[2].fdata();
  float* g_avg = kAlex ? in[3].fdata() : nullptr;
  float* delta = kAlex ? in[4].fdata() : nullptr;
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float g = ClipGradient(p.rescale_grad * grad[i] + p.wd * w[i], p.clip_gradient);
    n[i] = (1.f - p.gamma1) * g * g + p.gamma1 * n[i];
    float updated;
    if (kAlex) {
      g_avg[i] = (1.f - p.gamma1) * g + p.gamma1 * g_avg[i];
      delta[i] = p.gamma2 * delta[i] - p.lr * g / std::sqrt(n[i] - g_avg[i] * g_avg[i] + p.epsilon);
      updated = w[i] + delta[i];
    } else {
      updated = w[i] - p.lr * g / std::sqrt(n[i] + p.epsilon);
    }
    return ClipGradient(updated, p.clip_weights);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(rmsprop_update)
    .describe("Update function for RMSProp optimizer: g = clip(rescale_grad*grad + wd*weight); "
              "n = (1-gamma1)*g^2 + gamma1*n; weight = weight - lr*g/sqrt(n + epsilon), clipped "
              "to clip_weights when >= 0. Updates n in place.")
    .set_params<RMSPropParam<false>>()
    .set_arguments({"weight", "grad", "n"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("n", "n: the moving mean of squared gradients (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(RMSPropForward<false>);

SYMBIND_REGISTER_OP(rmspropalex_update)
    .describe("Update function for RMSPropAlex optimizer (Graves 2013): g = clip(rescale_grad*grad "
              "+ wd*weight); n = (1-gamma1)*g^2 + gamma1*n; g_avg = (1-gamma1)*g + gamma1*g_avg; "
              "delta = gamma2*delta - lr*g/sqrt(n - g_avg^2 + epsilon); weight = weight + delta, "
              "clipped to clip_weights when >= 0. Updates n, g and delta in place.")
    .set_params<RMSPropParam<true>>()
    .set_arguments({"weight", "grad", "n", "g", "delta"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("n", "n: the moving mean of squared gradients (updated in place)")
    .add_argument_doc("g", "g: the moving mean of gradients (updated in place)")
    .add_argument_doc("delta", "delta: the last step (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(RMSPropForward<true>);

}  // namespace symbind
