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

// act_type (none by default; prelu only where the op reads slopes), a_min, a_max, slope.
template <typename P>
void DeclareFusedActivation(ParamDeclarer<P>& d, const std::string& op, bool prelu) {
  auto& type = d.template field<int>("act_type", &P::act_type)
                   .add_enum("none", FusedActivation::kNone)
                   .add_enum("relu", FusedActivation::kRelu)
                   .add_enum("clip", FusedActivation::kClip)
                   .add_enum("leaky", FusedActivation::kLeaky);
  if (prelu) type.add_enum("prelu", FusedActivation::kPRelu);
  type.set_default(FusedActivation::kNone)
      .describe(prelu ? "The activation applied to each output: none, relu (Activation's), clip to [a_min, a_max], "
                        "leaky (LeakyReLU's, `slope`) or prelu (LeakyReLU's, one slope per filter from input gamma)."
                      : "The activation applied to each output: none, relu (Activation's), clip to [a_min, a_max] "
                        "or leaky (LeakyReLU's, `slope`).");
  d.template field<float>("a_min", &P::a_min).set_default(0.0f).describe("Lower bound of clip.");
  d.template field<float>("a_max", &P::a_max).set_default(0.0f).describe("Upper bound of clip.");
  d.template field<float>("slope", &P::slope).set_default(0.0f).describe("The slope of leaky for negative inputs.");
  d.check([](const P& p) { return p.a_min <= p.a_max; }, op + ": a_min must not exceed a_max", {"a_min", "a_max"});
}

}  // namespace symbind
