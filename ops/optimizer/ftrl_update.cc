// MXNet's FTRL-Proximal update (McMahan et al. 2013). With g = clip(rescale_grad*grad), and
// z and n updated in place:
//   z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr
//   n += g^2
//   weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)  where |z| > lamda1, else 0
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct FtrlParam : Parameter<FtrlParam> {
  float lr, lamda1, beta, wd, rescale_grad, clip_gradient;
  static void Declare(ParamDeclarer<FtrlParam>& d) {
    d.field("lr", &FtrlParam::lr).describe("Learning rate");
    d.field("lamda1", &FtrlParam::lamda1).set_default(0.01f)
        .describe("The L1 regularization coefficient.");
    d.field("beta", &FtrlParam::beta).set_default(1.0f).describe("Per-Coordinate Learning Rate beta.");
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
  }
};

void FtrlForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FtrlParam>();
  const float* w = in[0].fdata();
  const float* grad = in[1].fdata();
  float* z = in[2].fdata();
  float* n = in[3].fdata();
  ApplyUpdate(out[0], req[0], "ftrl_update", [&](int64_t i) {
    const float g = ClipGradient(p.rescale_grad * grad[i], p.clip_gradient);
    z[i] += g - (std::sqrt(n[i] + g * g) - std::sqrt(n[i])) * w[i] / p.lr;
    n[i] += g * g;
    if (!(std::abs(z[i]) > p.lamda1)) return 0.f;
    const float sign_z = static_cast<float>((z[i] > 0) - (z[i] < 0));
    return (sign_z * p.lamda1 - z[i]) / ((p.beta + std::sqrt(n[i])) / p.lr + p.wd);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(ftrl_update)
    .describe("Update function for Ftrl optimizer: with g = clip(rescale_grad*grad), "
              "z += g - (sqrt(n + g^2) - sqrt(n))*weight/lr; n += g^2; weight = (sign(z)*lamda1 - z)"
              " / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1). Updates z and n in place.")
    .set_params<FtrlParam>()
    .set_arguments({"weight", "grad", "z", "n"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("z", "z (updated in place)")
    .add_argument_doc("n", "Square of grad (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(FtrlForward);

}  // namespace symbind
