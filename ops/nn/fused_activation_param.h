// The activation parameters of ops that apply one as they write their output
// (_fused_conv_act, _fused_batch_norm_act), which the Predictor's graph rewrites make from an
// op and the Activation(relu) / clip / LeakyReLU(leaky, prelu) reading it.
//
//   struct FusedThingParam : FusedActivationFields, Parameter<FusedThingParam> {
//     static void Declare(ParamDeclarer<FusedThingParam>& d) { ...; DeclareFusedActivation(d, "_fused_thing", true); }
//   };
//   const FusedActivation act = p.activation(prelu_slopes_or_null);
#pragma once
#include <string>

#include <symbind/core/param.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

struct FusedActivationFields {
  int act_type = FusedActivation::kNone;
  float a_min = 0, a_max = 0, slope = 0;
  // prelu takes its slopes (one per channel) from `slopes`.
  FusedActivation activation(const float* slopes = nullptr) const {
    FusedActivation a{static_cast<FusedActivation::Kind>(act_type), a_min, a_max, slope};
    if (a.kind == FusedActivation::kPRelu) a.slopes = slopes;
    return a;
  }
};

template <typename T>
struct NotDeduced {
  using type = T;
};

// PREFIXact_type (none by default; prelu only where the op reads slopes), PREFIXa_min,
// PREFIXa_max, PREFIXslope, held in the given fields of P.
template <typename P>
void DeclareActivationFields(ParamDeclarer<P>& d, const std::string& op, bool prelu, const std::string& prefix,
                             typename NotDeduced<int P::*>::type type_field,
                             typename NotDeduced<float P::*>::type lo_field,
                             typename NotDeduced<float P::*>::type hi_field,
                             typename NotDeduced<float P::*>::type slope_field) {
  auto& type = d.template field<int>(prefix + "act_type", type_field)
                   .add_enum("none", FusedActivation::kNone)
                   .add_enum("relu", FusedActivation::kRelu)
                   .add_enum("clip", FusedActivation::kClip)
                   .add_enum("leaky", FusedActivation::kLeaky);
  if (prelu) type.add_enum("prelu", FusedActivation::kPRelu);
  type.set_default(FusedActivation::kNone)
      .describe(prelu ? "The activation applied to each output: none, relu (Activation's), clip to [a_min, a_max], "
                        "leaky (LeakyReLU's, `slope`) or prelu (LeakyReLU's, one slope per filter from input gamma)."
                      : "The activation applied to each " + std::string(prefix.empty() ? "" : "second ") +
                            "output: none, relu (Activation's), clip to [" + prefix + "a_min, " + prefix +
                            "a_max] or leaky (LeakyReLU's, `" + prefix + "slope`).");
  d.template field<float>(prefix + "a_min", lo_field).set_default(0.0f).allow_non_finite()
      .describe("Lower bound of clip.");
  d.template field<float>(prefix + "a_max", hi_field).set_default(0.0f).allow_non_finite()
      .describe("Upper bound of clip.");
  d.template field<float>(prefix + "slope", slope_field).set_default(0.0f).describe("The slope of leaky for negative inputs.");
  d.check([lo_field, hi_field](const P& p) { return p.*lo_field <= p.*hi_field; },
          op + ": " + prefix + "a_min must not exceed " + prefix + "a_max", {prefix + "a_min", prefix + "a_max"});
}

// The FusedActivationFields of P: act_type, a_min, a_max, slope.
template <typename P>
void DeclareFusedActivation(ParamDeclarer<P>& d, const std::string& op, bool prelu) {
  DeclareActivationFields(d, op, prelu, "", &P::act_type, &P::a_min, &P::a_max, &P::slope);
}

}  // namespace symbind
