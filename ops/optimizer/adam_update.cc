// MXNet's Adam updates: adam_update, and AdamW (_adamw_update, _mp_adamw_update) which decouples
// the weight decay from the gradient step. Both keep the moving mean and variance of the
// (preprocessed) gradient, updated in place:
//   mean = beta1*mean + (1-beta1)*g;  var = beta2*var + (1-beta2)*g^2
// adam_update:  g = clip(rescale_grad*grad + wd*weight)
//               weight = weight - lr * mean / (sqrt(var) + epsilon)
// AdamW:        g = clip(rescale_grad*grad), rescale_grad read from a 1-element input array
//               weight = weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd*weight)
// AdamW skips the update (the weight is kept, the states untouched) when rescale_grad is NaN,
// infinite or 0, as MXNet's loss scaler expects. The bias correction is the caller's: MXNet's
// Adam optimizer folds it into lr.
#include <cmath>

#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

// The moment update shared by Adam and AdamW on one element; returns mean / (sqrt(var) + eps).
inline float AdamDirection(float g, float beta1, float beta2, float epsilon, float* mean, float* var) {
  *mean = beta1 * *mean + (1.f - beta1) * g;
  *var = beta2 * *var + (1.f - beta2) * g * g;
  return *mean / (std::sqrt(*var) + epsilon);
}

template <typename P>
void DeclareAdamMoments(ParamDeclarer<P>& d) {
  d.field("beta1", &P::beta1).set_default(0.9f)
      .describe("The decay rate for the 1st moment estimates.");
  d.field("beta2", &P::beta2).set_default(0.999f)
      .describe("The decay rate for the 2nd moment estimates.");
  d.field("epsilon", &P::epsilon).set_default(1e-8f)
      .describe("A small constant for numerical stability.");
}

struct AdamParam : Parameter<AdamParam> {
  float lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient;
  bool lazy_update;
  static void Declare(ParamDeclarer<AdamParam>& d) {
    d.field("lr", &AdamParam::lr).describe("Learning rate");
    DeclareAdamMoments(d);
    DeclareWeightDecay(d);
    DeclareRescaleAndClip(d);
    DeclareLazyUpdate(d);
  }
};

void AdamForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<AdamParam>();
  const float* w = in[0].fdata();
  const float* g = in[1].fdata();
  float* mean = in[2].fdata();
  float* var = in[3].fdata();
  ApplyUpdate(out[0], req[0], "adam_update", [&](int64_t i) {
    const float grad = ClipGradient(p.rescale_grad * g[i] + p.wd * w[i], p.clip_gradient);
    return w[i] - p.lr * AdamDirection(grad, p.beta1, p.beta2, p.epsilon, mean + i, var + i);
  });
}

struct AdamWParam : Parameter<AdamWParam> {
  float lr, beta1, beta2, epsilon, wd, eta, clip_gradient;
  static void Declare(ParamDeclarer<AdamWParam>& d) {
    d.field("lr", &AdamWParam::lr).describe("Learning rate");
    DeclareAdamMoments(d);
    DeclareWeightDecay(d);
    d.field("eta", &AdamWParam::eta).describe("Learning rate schedule multiplier");
    d.field("clip_gradient", &AdamWParam::clip_gradient).set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient "
                  "<= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
                  "-clip_gradient).");
  }
};

// Inputs: weight, grad, mean, var, [weight32,] rescale_grad.
template <bool kMixed>
void AdamWForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<AdamWParam>();
  const NDArray& scale_array = in.back();
  if (scale_array.Size() < 1)
    throw Error(StrCat(InOperator(attrs), ": rescale_grad must hold one value, got an empty array"));
  const float rescale_grad = scale_array.fdata()[0];
  if (!std::isfinite(rescale_grad) || rescale_grad == 0.f) {
    CopyWithReq(out[0], in[0], req[0]);  // skipped: the weight stays as it is
    return;
  }
  const NDArray weight = kMixed ? in[4] : in[0];
  const NDArray grad = AsFloat32(in[1]);
  float* w = weight.fdata();
  const float* g = grad.fdata();
  float* mean = in[2].fdata();
  float* var = in[3].fdata();
  ApplyUpdate(out[0], req[0], attrs.op->name.c_str(), [&](int64_t i) {
    const float grad_i = ClipGradient(rescale_grad * g[i], p.clip_gradient);
    const float direction = AdamDirection(grad_i, p.beta1, p.beta2, p.epsilon, mean + i, var + i);
    const float updated = w[i] - p.eta * (p.lr * direction + p.wd * w[i]);
    if (kMixed) w[i] = updated;
    return updated;
  });
}

// Every input but the last (rescale_grad) shares the weight's shape.
void InferShapeAdamW(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  std::vector<TShape> states(in->begin(), in->end() - 1);
  AllSameShape(attrs, &states, out);
  for (size_t i = 0; i < states.size(); ++i) ShapeAssignCheck(in, i, states[i]);
}

void DescribeAdamInputs(Op& op) {
  op.add_argument_doc("weight", "Weight")
      .add_argument_doc("grad", "Gradient")
      .add_argument_doc("mean", "Moving mean (updated in place)")
      .add_argument_doc("var", "Moving variance (updated in place)");
}

}  // namespace

SYMBIND_REGISTER_OP_FAMILY(adam_update) {
  auto& reg = OpRegistry::Global();
  Op& adam = reg.Register("adam_update")
      .describe("Update function for Adam optimizer: g = clip(rescale_grad*grad + wd*weight); "
                "mean = beta1*mean + (1-beta1)*g; var = beta2*var + (1-beta2)*g^2; "
                "weight = weight - lr*mean/(sqrt(var) + epsilon). Updates mean and var in place.")
      .set_params<AdamParam>()
      .set_arguments({"weight", "grad", "mean", "var"})
      .set_infer_shape(AllSameShape)
      .set_forward(AdamForward);
  DescribeAdamInputs(adam);

  Op& adamw = reg.Register("_adamw_update")
      .describe("Update function for AdamW optimizer: g = clip(rescale_grad*grad); "
                "mean = beta1*mean + (1-beta1)*g; var = beta2*var + (1-beta2)*g^2; "
                "weight = weight - eta*(lr*mean/(sqrt(var) + epsilon) + wd*weight). If "
                "rescale_grad is NaN, Inf, or 0, the update is skipped.")
      .set_params<AdamWParam>()
      .set_arguments({"weight", "grad", "mean", "var", "rescale_grad"})
      .set_infer_shape(InferShapeAdamW)
      .set_forward(AdamWForward<false>);
  DescribeAdamInputs(adamw);
  adamw.add_argument_doc("rescale_grad", "Rescale gradient to rescale_grad * grad. If NaN, Inf, "
                                         "or 0, the update is skipped.");

  Op& mp_adamw = reg.Register("_mp_adamw_update")
      .describe("Update function for multi-precision AdamW optimizer: _adamw_update applied to "
                "the float32 copy weight32 (updated in place), written in weight's dtype.")
      .set_params<AdamWParam>()
      .set_arguments({"weight", "grad", "mean", "var", "weight32", "rescale_grad"})
      .set_infer_shape(InferShapeAdamW)
      .set_dtype_generic()
      .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
        InferMixedPrecisionType("_mp_adamw_update", in, out, [](size_t i) { return i >= 2; });
      })
      .set_forward(AdamWForward<true>);
  DescribeAdamInputs(mp_adamw);
  mp_adamw.add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
      .add_argument_doc("rescale_grad", "Rescale gradient to rescale_grad * grad. If NaN, Inf, "
                                        "or 0, the update is skipped.");
}

}  // namespace symbind
