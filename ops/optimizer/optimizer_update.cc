// MXNet's SGD update operators, which MXNet's optimizers invoke imperatively
// (MXImperativeInvoke with the weight as output):
//   sgd_update:     weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)
//   sgd_mom_update: mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad);
//                   weight = weight + mom
// and their mixed-precision forms mp_sgd_update / mp_sgd_mom_update, which step the float32
// master copy `weight32` and write it, converted, as the (float16) weight. The rule is SgdRule
// (optimizer_util.h); states are updated in place.
#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

// sgd_update's parameters, and with kMomentum sgd_mom_update's (which add `momentum`).
template <bool kMomentum>
struct SGDParam : Parameter<SGDParam<kMomentum>> {
  float lr, momentum = 0.f, wd, rescale_grad, clip_gradient;
  bool lazy_update;
  static void Declare(ParamDeclarer<SGDParam>& d) {
    d.field("lr", &SGDParam::lr).lower_bound(0).describe("Learning rate");
    if (kMomentum)
      d.field("momentum", &SGDParam::momentum).set_default(0.0f).set_range(0, 1)
          .describe("The decay rate of momentum estimates at each epoch.");
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
    DeclareLazyUpdate(d);
  }
  SgdRule Rule() const { return {lr, wd, momentum, rescale_grad, clip_gradient}; }
};

// Inputs: weight, grad, then mom when kMomentum, then weight32 when kMixed.
template <bool kMomentum, bool kMixed>
void SGDForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const SgdRule rule = attrs.param<SGDParam<kMomentum>>().Rule();
  const NDArray weight = kMixed ? in[kMomentum ? 3 : 2] : in[0];
  const NDArray grad = AsFloat32(in[1]);
  float* w = weight.fdata();
  const float* g = grad.fdata();
  float* mom = kMomentum ? in[2].fdata() : nullptr;
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float updated = rule.Step(w[i], g[i], mom ? mom + i : nullptr);
    if (kMixed) w[i] = updated;
    return updated;
  });
}

// weight32 (and mom) are float32; weight, grad and the output share one floating type.
void InferTypeMixedSGD(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  InferMixedPrecisionType(attrs.op->name.c_str(), in, out, [](size_t i) { return i >= 2; });
}

}  // namespace

SYMBIND_REGISTER_OP(sgd_update)
    .set_monitor_numbered_inputs()
    .describe("Update function for Stochastic Gradient Descent (SGD) optimizer: "
              "weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad).")
    .set_params<SGDParam<false>>()
    .set_arguments({"weight", "grad"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .set_infer_shape(AllSameShape)
    .set_forward(SGDForward<false, false>);

SYMBIND_REGISTER_OP(sgd_mom_update)
    .describe("Momentum update function for Stochastic Gradient Descent (SGD) optimizer: "
              "mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); "
              "weight = weight + mom. Updates `mom` in place.")
    .set_params<SGDParam<true>>()
    .set_arguments({"weight", "grad", "mom"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mom", "Momentum (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(SGDForward<true, false>);

SYMBIND_REGISTER_OP(mp_sgd_update)
    .describe("Updater function for multi-precision sgd optimizer: sgd_update applied to the "
              "float32 copy weight32 (updated in place), written to the output in weight's dtype.")
    .set_params<SGDParam<false>>()
    .set_arguments({"weight", "grad", "weight32"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "gradient")
    .add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_infer_type(InferTypeMixedSGD)
    .set_dtype_generic()
    .set_forward(SGDForward<false, true>);

SYMBIND_REGISTER_OP(mp_sgd_mom_update)
    .describe("Updater function for multi-precision sgd optimizer: sgd_mom_update applied to "
              "the float32 copy weight32; mom and weight32 are updated in place.")
    .set_params<SGDParam<true>>()
    .set_arguments({"weight", "grad", "mom", "weight32"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mom", "Momentum, float32 (updated in place)")
    .add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_infer_type(InferTypeMixedSGD)
    .set_dtype_generic()
    .set_forward(SGDForward<true, true>);

}  // namespace symbind
