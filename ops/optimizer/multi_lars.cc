// multi_lars: the LARS learning rates (You et al. 2017) of several weights from their sums of
// squares, as MXNet's LARS optimizer computes them:
//   lr_i * eta * |w_i| / (|g_i| * rescale_grad + wd_i * |w_i| + eps)  when |w_i| > 0 and |g_i| > 0
//   lr_i                                                              otherwise
// where |w_i| = sqrt(weights_sum_sq_i) and |g_i| = sqrt(grads_sum_sq_i).
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct LARSParam : Parameter<LARSParam> {
  float eta, eps, rescale_grad;
  static void Declare(ParamDeclarer<LARSParam>& d) {
    d.field("eta", &LARSParam::eta).describe("LARS eta");
    d.field("eps", &LARSParam::eps).describe("LARS eps");
    d.field("rescale_grad", &LARSParam::rescale_grad).set_default(1.0f)
        .describe("Gradient rescaling factor");
  }
};

void MultiLARSForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LARSParam>();
  const float* lrs = in[0].fdata();
  const float* w_sum_sq = in[1].fdata();
  const float* g_sum_sq = in[2].fdata();
  const float* wds = in[3].fdata();
  MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) {
    const float w_norm = std::sqrt(w_sum_sq[i]);
    if (!(w_norm > 0.f && g_sum_sq[i] > 0.f)) return lrs[i];
    return lrs[i] * p.eta * w_norm / (std::sqrt(g_sum_sq[i]) * p.rescale_grad + wds[i] * w_norm + p.eps);
  });
}

}  // namespace

SYMBIND_REGISTER_OP(multi_lars)
    .describe("Compute the LARS coefficients of multiple weights and grads from their sums of "
              "square: lrs*eta*|w| / (|g|*rescale_grad + wds*|w| + eps) where |w| > 0 and |g| > 0, "
              "else lrs.")
    .set_params<LARSParam>()
    .set_arguments({"lrs", "weights_sum_sq", "grads_sum_sq", "wds"})
    .add_argument_doc("lrs", "Learning rates to scale by LARS coefficient")
    .add_argument_doc("weights_sum_sq", "sum of square of weights arrays")
    .add_argument_doc("grads_sum_sq", "sum of square of gradients arrays")
    .add_argument_doc("wds", "weight decays")
    .set_infer_shape(AllSameShape)
    .set_forward(MultiLARSForward);

}  // namespace symbind
