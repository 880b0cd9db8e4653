// MXNet's LAMB update (You et al. 2019) in two phases, between which MXNet's optimizer takes the
// norms r1 = ||weight|| and r2 = ||g||:
//   lamb_update_phase1: grad = clip(rescale_grad*grad); mean and var updated in place as Adam's;
//     g = mean_hat / (sqrt(var_hat) + epsilon) + wd*weight, where mean_hat = mean/(1 - beta1^t)
//     and var_hat = var/(1 - beta2^t) with bias_correction, else mean and var; output g.
//   lamb_update_phase2: r1 clamped to [lower_bound, upper_bound] (each bound only when >= 0);
//     weight = weight - lr * (r1/r2) * g, or weight - lr * g when r1 or r2 is 0.
// The mp_ forms read weight and grad in any floating dtype and use the float32 master copy
// weight32; phase 2 updates weight32 in place, as MXNet documents it and marks it mutable.
#include <algorithm>
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct LambPhaseOneParam : Parameter<LambPhaseOneParam> {
  float beta1, beta2, epsilon;
  int t;
  bool bias_correction;
  float wd, rescale_grad, clip_gradient;
  static void Declare(ParamDeclarer<LambPhaseOneParam>& d) {
    d.field("beta1", &LambPhaseOneParam::beta1).set_default(0.9f)
        .describe("The decay rate for the 1st moment estimates.");
    d.field("beta2", &LambPhaseOneParam::beta2).set_default(0.999f)
        .describe("The decay rate for the 2nd moment estimates.");
    d.field("epsilon", &LambPhaseOneParam::epsilon).set_default(1e-6f)
        .describe("A small constant for numerical stability.");
    d.field("t", &LambPhaseOneParam::t).describe("Index update count.");
    d.field("bias_correction", &LambPhaseOneParam::bias_correction).set_default(true)
        .describe("Whether to use bias correction.");
    d.field("wd", &LambPhaseOneParam::wd).describe(kWeightDecayDoc);
    DeclareRescaleAndClip(d);
  }
};

// Inputs: weight, grad, mean, var, and with kMixed weight32 (which then is the weight read).
template <bool kMixed>
void LambPhaseOneForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LambPhaseOneParam>();
  const NDArray weight = kMixed ? in[4] : in[0];
  const NDArray grad = AsFloat32(in[1]);
  const float* w = weight.fdata();
  const float* g = grad.fdata();
  float* mean = in[2].fdata();
  float* var = in[3].fdata();
  // Without bias correction the moments are used as they are.
  const float mean_scale = p.bias_correction ? 1.f / (1.f - std::pow(p.beta1, static_cast<float>(p.t))) : 1.f;
  const float var_scale = p.bias_correction ? 1.f / (1.f - std::pow(p.beta2, static_cast<float>(p.t))) : 1.f;
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float grad_i = ClipGradient(p.rescale_grad * g[i], p.clip_gradient);
    mean[i] = p.beta1 * mean[i] + (1.f - p.beta1) * grad_i;
    var[i] = p.beta2 * var[i] + (1.f - p.beta2) * grad_i * grad_i;
    return mean[i] * mean_scale / (std::sqrt(var[i] * var_scale) + p.epsilon) + p.wd * w[i];
  });
}

struct LambPhaseTwoParam : Parameter<LambPhaseTwoParam> {
  float lr, lower_bound, upper_bound;
  static void Declare(ParamDeclarer<LambPhaseTwoParam>& d) {
    d.field("lr", &LambPhaseTwoParam::lr).describe("Learning rate");
    d.field("lower_bound", &LambPhaseTwoParam::lower_bound).set_default(-1.0f)
        .describe("Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set");
    d.field("upper_bound", &LambPhaseTwoParam::upper_bound).set_default(-1.0f)
        .describe("Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set");
  }
};

// Inputs: weight, g, r1, r2, and with kMixed weight32.
template <bool kMixed>
void LambPhaseTwoForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LambPhaseTwoParam>();
  if (in[2].Size() < 1 || in[3].Size() < 1)
    throw Error(StrCat(InOperator(attrs), ": r1 and r2 must each hold one value"));
  float r1 = in[2].fdata()[0];
  const float r2 = in[3].fdata()[0];
  if (p.lower_bound >= 0) r1 = std::max(r1, p.lower_bound);
  if (p.upper_bound >= 0) r1 = std::min(r1, p.upper_bound);
  const float lr = r1 == 0.f || r2 == 0.f ? p.lr : p.lr * r1 / r2;
  const NDArray weight = kMixed ? in[4] : in[0];
  float* w = weight.fdata();
  const float* g = in[1].fdata();
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float updated = w[i] - lr * g[i];
    if (kMixed) w[i] = updated;
    return updated;
  });
}

// weight, g (and weight32) share a shape, the output too; r1 and r2 hold one value each.
void InferShapeLambPhaseTwo(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  std::vector<TShape> same{(*in)[0], (*in)[1]};
  if (in->size() == 5) same.push_back((*in)[4]);
  AllSameShape(attrs, &same, out);
  ShapeAssignCheck(in, 0, same[0]);
  ShapeAssignCheck(in, 1, same[1]);
  if (in->size() == 5) ShapeAssignCheck(in, 4, same[2]);
  ShapeAssignCheck(in, 2, TShape({1}));
  ShapeAssignCheck(in, 3, TShape({1}));
}

const char* const kPhaseOneDoc =
    "Phase I of lamb update: grad = clip(rescale_grad*grad); mean = beta1*mean + (1-beta1)*grad; "
    "var = beta2*var + (1-beta2)*grad^2; with bias_correction g = mean/(1-beta1^t) / "
    "(sqrt(var/(1-beta2^t)) + epsilon) + wd*weight, else g = mean/(sqrt(var) + epsilon) + "
    "wd*weight. Returns g; updates mean and var in place.";
const char* const kPhaseTwoDoc =
    "Phase II of lamb update: r1 = max(r1, lower_bound) if lower_bound >= 0; r1 = min(r1, "
    "upper_bound) if upper_bound >= 0; lr = lr*r1/r2 unless r1 or r2 is 0; weight = weight - lr*g.";

}  // namespace

SYMBIND_REGISTER_OP(lamb_update_phase1)
    .describe(kPhaseOneDoc)
    .set_params<LambPhaseOneParam>()
    .set_arguments({"weight", "grad", "mean", "var"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mean", "Moving mean (updated in place)")
    .add_argument_doc("var", "Moving variance (updated in place)")
    .set_infer_shape(AllSameShape)
    .set_forward(LambPhaseOneForward<false>);

SYMBIND_REGISTER_OP(lamb_update_phase2)
    .describe(kPhaseTwoDoc)
    .set_params<LambPhaseTwoParam>()
    .set_arguments({"weight", "g", "r1", "r2"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("g", "Output of lamb_update_phase 1")
    .add_argument_doc("r1", "r1: the norm of the weight, shape (1,)")
    .add_argument_doc("r2", "r2: the norm of g, shape (1,)")
    .set_infer_shape(InferShapeLambPhaseTwo)
    .set_forward(LambPhaseTwoForward<false>);

SYMBIND_REGISTER_OP(mp_lamb_update_phase1)
    .describe(StrCat("Mixed Precision version of ", kPhaseOneDoc,
                     " The weight read is the float32 copy weight32; g is float32."))
    .set_params<LambPhaseOneParam>()
    .set_arguments({"weight", "grad", "mean", "var", "weight32"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("grad", "Gradient")
    .add_argument_doc("mean", "Moving mean (updated in place)")
    .add_argument_doc("var", "Moving variance (updated in place)")
    .add_argument_doc("weight32", "Weight32: the float32 master copy")
    .set_infer_shape(AllSameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      // weight and grad share a floating type; the states and g are float32.
      std::vector<int> low{(*in)[0], (*in)[1]}, none;
      InferMixedPrecisionType("mp_lamb_update_phase1", &low, &none, [](size_t) { return false; });
      TypeAssignCheck(in, 0, low[0]);
      TypeAssignCheck(in, 1, low[1]);
      for (size_t i = 2; i < in->size(); ++i) TypeAssignCheck(in, i, static_cast<int>(DType::kFloat32));
      TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
    })
    .set_forward(LambPhaseOneForward<true>);

SYMBIND_REGISTER_OP(mp_lamb_update_phase2)
    .describe(StrCat("Mixed Precision version of ", kPhaseTwoDoc,
                     " The step is taken on weight32 (updated in place), written in weight's dtype."))
    .set_params<LambPhaseTwoParam>()
    .set_arguments({"weight", "g", "r1", "r2", "weight32"})
    .add_argument_doc("weight", "Weight")
    .add_argument_doc("g", "Output of mp_lamb_update_phase 1")
    .add_argument_doc("r1", "r1: the norm of the weight, shape (1,)")
    .add_argument_doc("r2", "r2: the norm of g, shape (1,)")
    .add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
    .set_infer_shape(InferShapeLambPhaseTwo)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      InferMixedPrecisionType("mp_lamb_update_phase2", in, out, [](size_t i) { return i >= 1; });
    })
    .set_forward(LambPhaseTwoForward<true>);

}  // namespace symbind
