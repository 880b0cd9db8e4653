// MXNet's optimizer update operators, which MXNet's cpp-package optimizers invoke
// imperatively (MXImperativeInvoke with the weight as output):
//   sgd_update:     weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)
//   sgd_mom_update: mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad);
//                   weight = weight + mom
// clip(g) limits g to [-clip_gradient, clip_gradient] when clip_gradient >= 0. As in MXNet,
// sgd_mom_update updates its `mom` input in place (the state MXNet's FMutateInputs names).
// Not differentiable.
#include <algorithm>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// sgd_update's parameters, and with kMomentum sgd_mom_update's (which add `momentum`).
template <bool kMomentum>
struct SGDParam : Parameter<SGDParam<kMomentum>> {
  float lr, momentum, wd, rescale_grad, clip_gradient;
  bool lazy_update;
  static void Declare(ParamDeclarer<SGDParam>& d) {
    d.field("lr", &SGDParam::lr).describe("Learning rate");
    if (kMomentum)
      d.field("momentum", &SGDParam::momentum).set_default(0.0f)
          .describe("The decay rate of momentum estimates at each epoch.");
    d.field("wd", &SGDParam::wd).set_default(0.0f)
        .describe("Weight decay augments the objective function with a regularization term "
                  "that penalizes large weights.");
    d.field("rescale_grad", &SGDParam::rescale_grad).set_default(1.0f)
        .describe("Rescale gradient to grad = rescale_grad*grad.");
    d.field("clip_gradient", &SGDParam::clip_gradient).set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient]. If "
                  "clip_gradient <= 0, gradient clipping is turned off.");
    d.field("lazy_update", &SGDParam::lazy_update).set_default(true)
        .describe("If true, lazy updates are applied if gradient's stype is row_sparse.");
  }
};


float Clipped(float g, float clip) { return clip >= 0 ? std::clamp(g, -clip, clip) : g; }

void SGDForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SGDParam<false>>();
  const float* w = in[0].fdata();
  const float* g = in[1].fdata();
  MapWithReq(out[0].fdata(), in[0].Size(), req[0], [&](int64_t i) {
    return (1.f - p.lr * p.wd) * w[i] - p.lr * Clipped(p.rescale_grad * g[i], p.clip_gradient);
  });
}

void SGDMomForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SGDParam<true>>();
  const float* w = in[0].fdata();
  const float* g = in[1].fdata();
  float* mom = in[2].fdata();  // updated in place, as MXNet does
  MapWithReq(out[0].fdata(), in[0].Size(), req[0], [&](int64_t i) {
    mom[i] = p.momentum * mom[i] - p.lr * p.wd * w[i] -
             p.lr * Clipped(p.rescale_grad * g[i], p.clip_gradient);
    return w[i] + mom[i];
  });
}

}  // namespace

SYMBIND_REGISTER_OP(sgd_update)
    .describe("Update function for Stochastic Gradient Descent (SGD) optimizer: "
              "weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad).")
    .set_params<SGDParam<false>>()
    .set_arguments({"weight", "grad"})
    .set_infer_shape(AllSameShape)
    .set_forward(SGDForward);

SYMBIND_REGISTER_OP(sgd_mom_update)
    .describe("Momentum update function for Stochastic Gradient Descent (SGD) optimizer: "
              "mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); "
              "weight = weight + mom. Updates `mom` in place.")
    .set_params<SGDParam<true>>()
    .set_arguments({"weight", "grad", "mom"})
    .set_infer_shape(AllSameShape)
    .set_forward(SGDMomForward);

}  // namespace symbind
