// MXNet's Adam updates: adam_update, and AdamW (_adamw_update, _mp_adamw_update) which decouples
// the weight decay from the gradient step. Both keep the moving mean and variance of the
// (preprocessed) gradient, updated in place:
//   mean = beta1*mean + (1-beta1)*g;  var = beta2*var + (1-beta2)*g^2
// adam_update:  g = clip(rescale_grad*grad + wd*weight)
//               weight = weight - lr * mean / (sqrt(var) + epsilon)
// AdamW:        g = clip(rescale_grad*grad), rescale_grad read from a 1-element input array
//               weight = weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd*weight)
// AdamW skips the update (the weight is kept, the states untouched) when rescale_grad is NaN,
// infinite or 0, as MXNet's loss scaler expects. _multi_adamw_update / _multi_mp_adamw_update
// update several weights in one call, each with its lr, wd and eta, sharing one rescale_grad. The bias correction is the caller's: MXNet's
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

// AdamW's per-weight numbers.
struct AdamWRule {
  float lr, wd, eta, beta1, beta2, epsilon, clip_gradient;
};

// The rescale_grad input's value; MXNet skips the update when it is not finite or 0.
float ReadRescaleGrad(const NodeAttrs& attrs, const NDArray& scale_array) {
  if (scale_array.Size() < 1)
    throw Error(StrCat(InOperator(attrs), ": rescale_grad must hold one value, got an empty array"));
  return scale_array.fdata()[0];
}
bool SkipsUpdate(float rescale_grad) { return !std::isfinite(rescale_grad) || rescale_grad == 0.f; }

// One weight's AdamW step; `group` holds weight, grad, mean, var and with kMixed weight32.
template <bool kMixed>
void AdamWUpdate(const NodeAttrs& attrs, const AdamWRule& r, float rescale_grad, const NDArray* group,
                 OpReq req, const NDArray& out) {
  if (SkipsUpdate(rescale_grad)) {
    CopyWithReq(out, group[0], req);  // skipped: the weight stays as it is
    return;
  }
  const NDArray weight = kMixed ? group[4] : group[0];
  const NDArray grad = AsFloat32(group[1]);
  float* w = weight.fdata();
  const float* g = grad.fdata();
  float* mean = group[2].fdata();
  float* var = group[3].fdata();
  ApplyUpdate(out, req, attrs.op->name.c_str(), [&](int64_t i) {
    const float grad_i = ClipGradient(rescale_grad * g[i], r.clip_gradient);
    const float direction = AdamDirection(grad_i, r.beta1, r.beta2, r.epsilon, mean + i, var + i);
    const float updated = w[i] - r.eta * (r.lr * direction + r.wd * w[i]);
    if (kMixed) w[i] = updated;
    return updated;
  });
}

// Inputs: weight, grad, mean, var, [weight32,] rescale_grad.
template <bool kMixed>
void AdamWForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<AdamWParam>();
  const AdamWRule rule{p.lr, p.wd, p.eta, p.beta1, p.beta2, p.epsilon, p.clip_gradient};
  AdamWUpdate<kMixed>(attrs, rule, ReadRescaleGrad(attrs, in.back()), in.data(), req[0], out[0]);
}

struct MultiAdamWParam : Parameter<MultiAdamWParam> {
  std::vector<float> lrs, wds, etas;
  float beta1, beta2, epsilon, clip_gradient;
  int num_weights;
  static void Declare(ParamDeclarer<MultiAdamWParam>& d) {
    d.field("lrs", &MultiAdamWParam::lrs).describe("Learning rates");
    DeclareAdamMoments(d);
    d.field("wds", &MultiAdamWParam::wds).describe(kWeightDecayDoc);
    d.field("etas", &MultiAdamWParam::etas).describe("Learning rates schedule multiplier");
    d.field("clip_gradient", &MultiAdamWParam::clip_gradient).set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient "
                  "<= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
                  "-clip_gradient).");
    d.field("num_weights", &MultiAdamWParam::num_weights).set_default(1).lower_bound(1)
        .describe("Number of updated weights.");
    d.check([](const MultiAdamWParam& p) {
              const size_t n = static_cast<size_t>(p.num_weights);
              return p.lrs.size() == n && p.wds.size() == n && p.etas.size() == n;
            },
            "lrs, wds and etas must each hold num_weights values", {"lrs", "wds", "etas", "num_weights"});
  }
};

// Inputs per weight: weight, grad, mean, var, [weight32]; then one rescale_grad for all.
template <bool kMixed>
void MultiAdamWForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<MultiAdamWParam>();
  const float rescale_grad = ReadRescaleGrad(attrs, in.back());
  const size_t stride = kMixed ? 5 : 4;
  for (size_t k = 0; k < static_cast<size_t>(p.num_weights); ++k) {
    const AdamWRule rule{p.lrs[k], p.wds[k], p.etas[k], p.beta1, p.beta2, p.epsilon, p.clip_gradient};
    AdamWUpdate<kMixed>(attrs, rule, rescale_grad, &in[k * stride], req[k], out[k]);
  }
}

template <bool kMixed>
void RegisterMultiAdamW(Op& op) {
  const int stride = kMixed ? 5 : 4;
  auto n = [](const NodeAttrs& a) { return a.param<MultiAdamWParam>().num_weights; };
  op.describe(StrCat("Update function for ", kMixed ? "multi-precision " : "",
                     "AdamW optimizer on num_weights weights in one call, each as ",
                     kMixed ? "_mp_adamw_update" : "_adamw_update",
                     " would update it with its lr, wd and eta. Inputs per weight: weight_i, "
                     "grad_i, mean_i, var_i", kMixed ? ", weight32_i" : "",
                     "; then rescale_grad. If rescale_grad is NaN, Inf, or 0, the update is "
                     "skipped."))
      .set_params<MultiAdamWParam>()
      .set_key_var_num_args("num_weights")  // one variadic "data" input, as MXNet lists it
      .set_arguments([n](const NodeAttrs& a) {
        std::vector<std::string> per_weight{"weight_", "grad_", "mean_", "var_"};
        if (kMixed) per_weight.push_back("weight32_");
        std::vector<std::string> names = PerWeightNames(per_weight, n(a));
        names.push_back("rescale_grad");
        return names;
      })
      .set_num_outputs(n)
      .set_outputs([n](const NodeAttrs& a) { return MultiOutputNames(n(a)); })
      .set_infer_shape([n, stride](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferShapePerWeight(stride, n(a), in, out);
      })
      .set_forward(MultiAdamWForward<kMixed>);
  if (kMixed)
    op.set_dtype_generic().set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      const size_t weights_end = in->size() - 1;
      InferMixedPrecisionType("_multi_mp_adamw_update", in, out,
                              [weights_end](size_t i) { return i >= weights_end || i % 5 >= 2; });
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
  RegisterMultiAdamW<false>(reg.Register("_multi_adamw_update"));
  RegisterMultiAdamW<true>(reg.Register("_multi_mp_adamw_update"));

  mp_adamw.add_argument_doc("weight32", "Weight32: the float32 master copy (updated in place)")
      .add_argument_doc("rescale_grad", "Rescale gradient to rescale_grad * grad. If NaN, Inf, "
                                        "or 0, the update is skipped.");
}

}  // namespace symbind
