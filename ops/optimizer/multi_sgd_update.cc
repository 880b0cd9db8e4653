// MXNet's fused SGD updates of several weights in one call, which MXNet's SGD optimizer uses
// when it aggregates updates: multi_sgd_update, multi_sgd_mom_update and their mixed-precision
// forms multi_mp_sgd_update / multi_mp_sgd_mom_update, with one learning rate and weight decay
// per weight (the lrs and wds tuples); and the preloaded_* forms, which take lrs and wds as two
// trailing float32 arrays instead. Inputs come per weight, in MXNet's order:
//   weight_i, grad_i [, mom_i] [, weight32_i]
// Each weight steps by SgdRule (optimizer_util.h), exactly as sgd_update / sgd_mom_update /
// mp_sgd_* would; output i is the new weight i; mom_i and weight32_i are updated in place.
#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

// The variant's input layout.
struct MultiSGDKind {
  bool momentum, mixed, preloaded;
  int Stride() const { return 2 + momentum + mixed; }
};

template <bool kMomentum, bool kPreloaded>
struct MultiSGDParam : Parameter<MultiSGDParam<kMomentum, kPreloaded>> {
  std::vector<float> lrs, wds;
  float momentum = 0.f, rescale_grad, clip_gradient;
  int num_weights;
  static void Declare(ParamDeclarer<MultiSGDParam>& d) {
    if (!kPreloaded) {
      d.field("lrs", &MultiSGDParam::lrs).describe("Learning rates.");
      d.field("wds", &MultiSGDParam::wds).describe(kWeightDecayDoc);
    }
    if (kMomentum)
      d.field("momentum", &MultiSGDParam::momentum).set_default(0.0f)
          .describe("The decay rate of momentum estimates at each epoch.");
    DeclareRescaleAndClip(d);
    d.field("num_weights", &MultiSGDParam::num_weights).set_default(1).lower_bound(1)
        .describe("Number of updated weights.");
    if (!kPreloaded) {
      d.check([](const MultiSGDParam& p) { return static_cast<int>(p.lrs.size()) == p.num_weights; },
              "lrs must hold num_weights learning rates", {"lrs", "num_weights"});
      d.check([](const MultiSGDParam& p) { return static_cast<int>(p.wds.size()) == p.num_weights; },
              "wds must hold num_weights weight decays", {"wds", "num_weights"});
    }
  }
};

template <bool kMomentum, bool kPreloaded>
int NumWeights(const NodeAttrs& a) {
  return a.param<MultiSGDParam<kMomentum, kPreloaded>>().num_weights;
}

std::vector<std::string> InputNames(MultiSGDKind kind, int n) {
  std::vector<std::string> per_weight{"weight_", "grad_"};
  if (kind.momentum) per_weight.push_back("mom_");
  if (kind.mixed) per_weight.push_back("weight32_");
  std::vector<std::string> names = PerWeightNames(per_weight, n);
  if (kind.preloaded) {
    names.push_back("lrs");
    names.push_back("wds");
  }
  return names;
}

void InferShapeMulti(MultiSGDKind kind, int n, std::vector<TShape>* in, std::vector<TShape>* out) {
  InferShapePerWeight(kind.Stride(), n, in, out);
  if (kind.preloaded) {
    ShapeAssignCheck(in, in->size() - 2, TShape({n}));
    ShapeAssignCheck(in, in->size() - 1, TShape({n}));
  }
}

// In the mixed forms mom_i, weight32_i (and the preloaded lrs, wds) are float32.
void InferTypeMixed(const NodeAttrs& attrs, MultiSGDKind kind, int n, std::vector<int>* in,
                    std::vector<int>* out) {
  const size_t stride = static_cast<size_t>(kind.Stride());
  const size_t weights_end = stride * static_cast<size_t>(n);
  InferMixedPrecisionType(attrs.op->name.c_str(), in, out,
                          [&](size_t i) { return i >= weights_end || i % stride >= 2; });
}

template <bool kMomentum, bool kPreloaded>
void MultiSGDForward(MultiSGDKind kind, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<MultiSGDParam<kMomentum, kPreloaded>>();
  const int stride = kind.Stride();
  std::vector<float> lrs = p.lrs, wds = p.wds;
  if (kPreloaded) {
    lrs = in[in.size() - 2].ToVector();
    wds = in[in.size() - 1].ToVector();
  }
  for (int k = 0; k < p.num_weights; ++k) {
    const SgdRule rule{lrs[k], wds[k], p.momentum, p.rescale_grad, p.clip_gradient};
    const NDArray* group = &in[static_cast<size_t>(k * stride)];
    const NDArray weight = kind.mixed ? group[stride - 1] : group[0];
    const NDArray grad = AsFloat32(group[1]);
    float* w = weight.fdata();
    const float* g = grad.fdata();
    float* mom = kind.momentum ? group[2].fdata() : nullptr;
    ApplyUpdate(out[k], req[k], attrs.op->name.c_str(), [&](int64_t i) {
      const float updated = rule.Step(w[i], g[i], mom ? mom + i : nullptr);
      if (kind.mixed) w[i] = updated;
      return updated;
    });
  }
}

template <bool kMomentum, bool kMixed, bool kPreloaded>
void RegisterMultiSGD(Op& op, const std::string& what) {
  const MultiSGDKind kind{kMomentum, kMixed, kPreloaded};
  auto n = NumWeights<kMomentum, kPreloaded>;
  op.describe(StrCat(what, " of num_weights weights in one call, each as ",
                     kMixed ? "mp_" : "", kMomentum ? "sgd_mom_update" : "sgd_update",
                     " would update it", kPreloaded ? ", with lrs and wds given as float32 arrays" : "",
                     ". Inputs per weight: weight_i, grad_i",
                     kMomentum ? ", mom_i" : "", kMixed ? ", weight32_i" : "",
                     kPreloaded ? "; then lrs and wds" : "",
                     ". Output i is the new weight i; the states are updated in place."))
      .set_params<MultiSGDParam<kMomentum, kPreloaded>>()
      .set_key_var_num_args("num_weights")  // one variadic "data" input, as MXNet lists it
      .set_arguments([kind, n](const NodeAttrs& a) { return InputNames(kind, n(a)); })
      .set_num_outputs(n)
      .set_outputs([n](const NodeAttrs& a) { return MultiOutputNames(n(a)); })
      .set_infer_shape([kind, n](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferShapeMulti(kind, n(a), in, out);
      })
      .set_forward([kind](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>& in,
                          const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        MultiSGDForward<kMomentum, kPreloaded>(kind, a, in, req, out);
      });
  if (kMixed)
    op.set_dtype_generic().set_infer_type(
        [kind, n](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
          InferTypeMixed(a, kind, n(a), in, out);
        });
}

}  // namespace

SYMBIND_REGISTER_OP_FAMILY(multi_sgd) {
  auto& reg = OpRegistry::Global();
  RegisterMultiSGD<false, false, false>(reg.Register("multi_sgd_update"), "SGD update");
  RegisterMultiSGD<true, false, false>(reg.Register("multi_sgd_mom_update"), "Momentum SGD update");
  RegisterMultiSGD<false, true, false>(reg.Register("multi_mp_sgd_update"),
                                       "Multi-precision SGD update");
  RegisterMultiSGD<true, true, false>(reg.Register("multi_mp_sgd_mom_update"),
                                      "Multi-precision momentum SGD update");
  RegisterMultiSGD<false, false, true>(reg.Register("preloaded_multi_sgd_update"), "SGD update");
  RegisterMultiSGD<true, false, true>(reg.Register("preloaded_multi_sgd_mom_update"),
                                      "Momentum SGD update");
  RegisterMultiSGD<false, true, true>(reg.Register("preloaded_multi_mp_sgd_update"),
                                      "Multi-precision SGD update");
  RegisterMultiSGD<true, true, true>(reg.Register("preloaded_multi_mp_sgd_mom_update"),
                                     "Multi-precision momentum SGD update");
}

}  // namespace symbind
