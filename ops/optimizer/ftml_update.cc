// MXNet's FTML update (Follow the Moving Leader, Zheng & Kwok 2017). With
// g = clip(rescale_grad*grad + wd*weight, clip_grad), at step t, and d, v, z updated in place:
//   v = beta2*v + (1-beta2)*g^2
//   d_t = (1 - beta1^t)/lr * (sqrt(v / (1 - beta2^t)) + epsilon)
//   z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight
//   d = d_t;  weight = -z / d_t
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct FTMLParam : Parameter<FTMLParam> {
  float lr, beta1, beta2;
  double epsilon;
  int t;
  float wd, rescale_grad, clip_grad;
  static void Declare(ParamDeclarer<FTMLParam>& d) {
    d.field("lr", &FTMLParam::lr).describe("Learning rate.");
    d.field("beta1", &FTMLParam::beta1).set_default(0.6f).set_range(0, 1)
        .describe("Generally close to 0.5.");
    d.field("beta2", &FTMLParam::beta2).set_default(0.999f).set_range(0, 1)
        .describe("Generally close to 1.");
    d.field("epsilon", &FTMLParam::epsilon).set_default(1e-8).describe("Epsilon to prevent div 0.");
    d.field("t", &FTMLParam::t).lower_bound(1).describe("Number of update.");
    DeclareWeightDecay(d);
    d.field("rescale_grad", &FTMLParam::rescale_grad).set_default(1.0f)
        .describe("Rescale gradient to grad = rescale_grad*grad.");
    d.field("clip_grad", &FTMLParam::clip_grad).set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient "
                  "<= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
                  "-clip_gradient).");
  }
};

void FTMLForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FTMLParam>();
  const float* w = in[0].fdata();
  const float* grad = in[1].fdata();
  float* d = in[2].fdata();
  float* v = in[3].fdata();
  float* z = in[4].fdata();
  const float beta1_t = std::pow(p.beta1, static_cast<float>(p.t));
  const float beta2_t = std::pow(p.beta2, static_cast<float>(p.t));
  const float epsilon = static_cast<float>(p.epsilon);
  ApplyUpdate(out[0], req[0], "ftml_update", [&](int64_t i) {
    const float g = ClipGradient(p.rescale_grad * grad[i] + p.wd * w[i], p.clip_grad);
    v[i] = p.beta2 * v[i] + (1.f - p.beta2) * g * g;
    const float d_t = (1.f - beta1_t) / p.lr * (std::sqrt(v[i] / (1.f - beta2_t)) + epsilon);
    z[i] = p.beta1 * z[i] + (1.f - p.beta1) * g - (d_t - p.beta1 * d[i]) * w[i];
    d[i] = d_t;
    return -z[i] / d_t;
  });
}

}  // namespace

SYMBIND_REGISTER_OP(ftml_update)
    .describe("The FTML optimizer described in FTML - Follow the Moving Leader in Deep Learning: "
              "with g = clip(rescale_grad*grad + wd*weight, clip_grad), v = beta2*v + (1-beta2)*g^2;"
              " d_t = (1 - beta1^t)/lr * (sqrt(v/(1 - beta2^t)) + epsilon); z = beta1*z + "
              "(1-beta1)*g - (d_t - beta1*d)*weight; d = d_t; weight = -z/d_t. Updates d, v and z "
              "in place.")
    .set_params<FTMLParam>()
    .set_arguments({"weight", "grad", "d", "v", "z"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("d", "Internal state d_t (updated in place)")
    .add_argument_doc("v", "Internal state v_t (updated in place)")
    .add_argument_doc("z", "Internal state z_t (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(FTMLForward);

}  // namespace symbind
