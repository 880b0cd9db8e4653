// MXNet's AdaGrad update, registered as MXNet names it (_sparse_adagrad_update, which
// mx.nd.sparse.adagrad_update calls). symbind arrays are dense, so every row is updated: with
// g = clip(rescale_grad*grad) and history updated in place,
//   history += g^2
//   weight = weight - lr * (g / sqrt(history + epsilon) + wd*weight)
// which is MXNet's sparse rule on every row (MXNet rejects wd != 0 there; the wd term is how its
// Python AdaGrad updates dense weights).
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct AdagradParam : Parameter<AdagradParam> {
  float lr, epsilon, wd, rescale_grad, clip_gradient;
  static void Declare(ParamDeclarer<AdagradParam>& d) {
    d.field("lr", &AdagradParam::lr).describe("Learning rate");
    d.field("epsilon", &AdagradParam::epsilon).set_default(1.0e-7f).describe("epsilon");
    d.field("wd", &AdagradParam::wd).set_default(0.0f).describe("weight decay");
    DeclareRescaleAndClip(d);
  }
};

void AdagradForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<AdagradParam>();
  const float* w = in[0].fdata();
  const float* grad = in[1].fdata();
  float* history = in[2].fdata();
  ApplyUpdate(out[0], req[0], "_sparse_adagrad_update", [&](int64_t i) {
    const float g = ClipGradient(p.rescale_grad * grad[i], p.clip_gradient);
    history[i] += g * g;
    return w[i] - p.lr * (g / std::sqrt(history[i] + p.epsilon) + p.wd * w[i]);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(_sparse_adagrad_update)
    .describe("Update function for AdaGrad optimizer: with g = clip(rescale_grad*grad), "
              "history += g^2; weight = weight - lr*(g/sqrt(history + epsilon) + wd*weight). "
              "Updates history in place. Dense arrays: every row is updated.")
    .set_params<AdagradParam>()
    .set_arguments({"weight", "grad", "history"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("history", "History: the sum of squared gradients (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(AdagradForward);

}  // namespace symbind
