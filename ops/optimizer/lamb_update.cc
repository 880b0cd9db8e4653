// MXNet's LAMB update (You et al. 2019) in two phases, between which MXNet's optimizer takes the
// norms r1 = ||weight|| and r2 = ||g||:
//   lamb_update_phase1: grad = clip(rescale_grad*grad); mean and var updated in place as Adam's;
//     g = mean_hat / (sqrt(var_hat) + epsilon) + wd*weight, where mean_hat = mean/(1 - beta1^t)
//     and var_hat = var/(1 - beta2^t) with bias_correction, else mean and var; output g.
//   lamb_update_phase2: r1 clamped to [lower_bound, upper_bound] (each bound only when >= 0);
//     weight = weight - lr * (r1/r2) * g, or weight - lr * g when r1 or r2 is 0.
// The mp_ forms read weight and grad in any floating dtype and use the float32 master copy
// weight32; phase 2 updates weight32 in place, as MXNet documents it and marks it mutable.
// _multi_lamb_update / _multi_mp_lamb_update run both phases on several weights in one call
// (MXNet's LAMB optimizer aggregating updates), r1 and r2 taken in between as above.
#include <algorithm>
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

// Phase 1 on one element: the moments updated in place, and the step direction
// mean_hat / (sqrt(var_hat) + epsilon) (wd*weight is the caller's).
struct LambMoments {
  float beta1, beta2, epsilon, rescale_grad, clip_gradient;
  float mean_scale = 1.f, var_scale = 1.f;  // 1/(1 - beta^t) with bias correction, else 1
  LambMoments(float b1, float b2, float eps, float rescale, float clip, bool bias_correction, float t)
      : beta1(b1), beta2(b2), epsilon(eps), rescale_grad(rescale), clip_gradient(clip) {
    if (bias_correction) {
      mean_scale = 1.f / (1.f - std::pow(beta1, t));
      var_scale = 1.f / (1.f - std::pow(beta2, t));
    }
  }
  float Direction(float grad, float* mean, float* var) const {
    const float g = ClipGradient(rescale_grad * grad, clip_gradient);
    *mean = beta1 * *mean + (1.f - beta1) * g;
    *var = beta2 * *var + (1.f - beta2) * g * g;
    return *mean * mean_scale / (std::sqrt(*var * var_scale) + epsilon);
  }
};

// Phase 2's learning rate: lr * r1/r2 with r1 clamped to the bounds that are >= 0; lr alone
// when r1 or r2 is 0.
inline float TrustRatioLr(float lr, float r1, float r2, float lower_bound, float upper_bound) {
  if (lower_bound >= 0) r1 = std::max(r1, lower_bound);
  if (upper_bound >= 0) r1 = std::min(r1, upper_bound);
  return r1 == 0.f || r2 == 0.f ? lr : lr * r1 / r2;
}

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
  const LambMoments moments(p.beta1, p.beta2, p.epsilon, p.rescale_grad, p.clip_gradient,
                            p.bias_correction, static_cast<float>(p.t));
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    return moments.Direction(g[i], mean + i, var + i) + p.wd * w[i];
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
  const float lr = TrustRatioLr(p.lr, in[2].fdata()[0], in[3].fdata()[0], p.lower_bound, p.upper_bound);
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

struct MultiLambParam : Parameter<MultiLambParam> {
  std::vector<float> learning_rates, wds, step_count;
  float beta1, beta2, epsilon, rescale_grad, lower_bound, upper_bound, clip_gradient;
  bool bias_correction;
  int num_tensors;
  static void Declare(ParamDeclarer<MultiLambParam>& d) {
    d.field("learning_rates", &MultiLambParam::learning_rates).describe("List of learning rates");
    d.field("beta1", &MultiLambParam::beta1).set_default(0.9f)
        .describe("Exponential decay rate for the first moment estimates.");
    d.field("beta2", &MultiLambParam::beta2).set_default(0.999f)
        .describe("Exponential decay rate for the second moment estimates.");
    d.field("epsilon", &MultiLambParam::epsilon).set_default(1e-6f)
        .describe("Small value to avoid division by 0.");
    d.field("wds", &MultiLambParam::wds).describe(StrCat("List of Weight decays.", kWeightDecayDoc));
    d.field("rescale_grad", &MultiLambParam::rescale_grad).set_default(1.0f)
        .describe("Gradient rescaling factor");
    d.field("lower_bound", &MultiLambParam::lower_bound).set_default(-1.0f)
        .describe("Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set");
    d.field("upper_bound", &MultiLambParam::upper_bound).set_default(-1.0f)
        .describe("Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set");
    d.field("clip_gradient", &MultiLambParam::clip_gradient).set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient "
                  "<= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
                  "-clip_gradient).");
    d.field("bias_correction", &MultiLambParam::bias_correction).set_default(true)
        .describe("Whether to use bias correction.");
    d.field("step_count", &MultiLambParam::step_count).describe("Step count for each tensor");
    d.field("num_tensors", &MultiLambParam::num_tensors).set_default(1).lower_bound(1)
        .describe("Number of tensors");
    d.check([](const MultiLambParam& p) {
              const size_t n = static_cast<size_t>(p.num_tensors);
              return p.learning_rates.size() == n && p.wds.size() == n && p.step_count.size() == n;
            },
            "learning_rates, wds and step_count must each hold num_tensors values",
            {"learning_rates", "wds", "step_count", "num_tensors"});
  }
};

double SumOfSquares(const float* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

// Inputs per tensor: weight, grad, mean, var, and with kMixed weight32.
template <bool kMixed>
void MultiLambForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<MultiLambParam>();
  const int stride = kMixed ? 5 : 4;
  for (int k = 0; k < p.num_tensors; ++k) {
    const NDArray* group = &in[static_cast<size_t>(k * stride)];
    const NDArray weight = kMixed ? group[4] : group[0];
    const NDArray grad = AsFloat32(group[1]);
    float* w = weight.fdata();
    const float* gr = grad.fdata();
    float* mean = group[2].fdata();
    float* var = group[3].fdata();
    const int64_t n = weight.Size();
    const LambMoments moments(p.beta1, p.beta2, p.epsilon, p.rescale_grad, p.clip_gradient,
                              p.bias_correction, p.step_count[k]);
    std::vector<float> g(static_cast<size_t>(n));
    ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) g[i] = moments.Direction(gr[i], mean + i, var + i) + p.wds[k] * w[i];
    });
    // r1 is the norm of the weight as stored (MXNet's: float16 for _multi_mp_lamb_update).
    const NDArray stored = AsFloat32(group[0]);
    const float r1 = static_cast<float>(std::sqrt(SumOfSquares(stored.fdata(), n)));
    const float r2 = static_cast<float>(std::sqrt(SumOfSquares(g.data(), n)));
    const float lr = TrustRatioLr(p.learning_rates[k], r1, r2, p.lower_bound, p.upper_bound);
    ApplyUpdate(out[k], req[k], attrs.op->name.c_str(), [&](int64_t i) {
      const float updated = w[i] - lr * g[i];
      if (kMixed) w[i] = updated;
      return updated;
    });
  }
}

template <bool kMixed>
void RegisterMultiLamb(Op& op) {
  const int stride = kMixed ? 5 : 4;
  auto n = [](const NodeAttrs& a) { return a.param<MultiLambParam>().num_tensors; };
  op.describe(StrCat("Compute the LAMB coefficients of multiple weights and grads",
                     kMixed ? " with Mix Precision" : "",
                     ": for each tensor, lamb_update_phase1 with its step_count and wd, r1 = "
                     "||weight||, r2 = ||g||, then lamb_update_phase2 with its learning rate. "
                     "Inputs per tensor: weight_i, grad_i, mean_i, var_i",
                     kMixed ? ", weight32_i" : "",
                     "; output i is the new weight i; the states are updated in place."))
      .set_params<MultiLambParam>()
      .set_key_var_num_args("num_tensors")  // one variadic "data" input, as MXNet lists it
      .set_arguments([n](const NodeAttrs& a) {
        std::vector<std::string> per_weight{"weight_", "grad_", "mean_", "var_"};
        if (kMixed) per_weight.push_back("weight32_");
        return PerWeightNames(per_weight, n(a));
      })
      .set_num_outputs(n)
      .set_outputs([n](const NodeAttrs& a) { return MultiOutputNames(n(a)); })
      .set_infer_shape([n, stride](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferShapePerWeight(stride, n(a), in, out);
      })
      .set_forward(MultiLambForward<kMixed>);
  if (kMixed)
    op.set_dtype_generic().set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      InferMixedPrecisionType("_multi_mp_lamb_update", in, out, [](size_t i) { return i % 5 >= 2; });
    });
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

SYMBIND_REGISTER_OP_FAMILY(multi_lamb) {
  RegisterMultiLamb<false>(OpRegistry::Global().Register("_multi_lamb_update"));
  RegisterMultiLamb<true>(OpRegistry::Global().Register("_multi_mp_lamb_update"));
}

}  // namespace symbind
