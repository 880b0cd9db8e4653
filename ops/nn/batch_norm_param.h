// BatchNorm's parameters and shapes, shared by BatchNorm, _fused_batch_norm_act and
// _contrib_quantized_batch_norm.
#pragma once
#include <optional>

#include <symbind/ops/nn/fused_activation_param.h>
#include <symbind/ops/op_util.h>

namespace symbind {

// BatchNorm's parameters; with kFused also the activation of _fused_batch_norm_act.
template <bool kFused>
struct BatchNormParams : FusedActivationFields, Parameter<BatchNormParams<kFused>> {
  using BatchNormParam = BatchNormParams<kFused>;
  double eps;
  float momentum;
  bool fix_gamma;
  bool use_global_stats;
  bool output_mean_var;
  int axis;
  bool cudnn_off;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  static void Declare(ParamDeclarer<BatchNormParam>& d) {
    d.field("eps", &BatchNormParam::eps).set_default(1e-3).lower_bound(0)
        .describe("Epsilon to prevent div 0. Must be no less than CUDNN_BN_MIN_EPSILON defined in "
                  "cudnn.h when using cudnn (usually 1e-5)");
    d.field("momentum", &BatchNormParam::momentum).set_default(0.9f)
        .describe("Momentum for moving average");
    d.field("fix_gamma", &BatchNormParam::fix_gamma).set_default(true)
        .describe("Fix gamma while training");
    d.field("use_global_stats", &BatchNormParam::use_global_stats).set_default(false)
        .describe("Whether use global moving statistics instead of local batch-norm. This will "
                  "force change batch-norm into a scale shift operator.");
    d.field("output_mean_var", &BatchNormParam::output_mean_var).set_default(false)
        .describe("Output the mean and inverse std ");
    d.field("axis", &BatchNormParam::axis).set_default(1)
        .describe("Specify which shape axis the channel is specified");
    d.field("cudnn_off", &BatchNormParam::cudnn_off).set_default(false)
        .describe("Do not select CUDNN operator, if available");
    d.field("min_calib_range", &BatchNormParam::min_calib_range).set_default(std::nullopt)
        .describe("The minimum scalar value in the form of float32 obtained through calibration "
                  "(used by quantized batch norm only; ignored here).");
    d.field("max_calib_range", &BatchNormParam::max_calib_range).set_default(std::nullopt)
        .describe("The maximum scalar value in the form of float32 obtained through calibration "
                  "(used by quantized batch norm only; ignored here).");
    if constexpr (kFused) DeclareFusedActivation(d, "_fused_batch_norm_act", false);
  }
};
using BatchNormParam = BatchNormParams<false>;
using FusedBatchNormParam = BatchNormParams<true>;

enum { kData, kGamma, kBeta, kMovingMean, kMovingVar };


namespace batch_norm {
// BatchNorm's inputs in MXNet's order.
enum Input { kData, kGamma, kBeta, kMovingMean, kMovingVar };

template <typename P>
void InferBatchNormShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<P>();
  ShapeAssignCheck(in, kData, (*out)[0]);
  const TShape& d = (*in)[kData];
  if (!d.ndim_known()) return;
  const int axis = NormalizeAxis(p.axis, d.ndim(), "BatchNorm");
  const TShape c({d[axis]});
  for (int k : {kGamma, kBeta, kMovingMean, kMovingVar}) ShapeAssignCheck(in, k, c);
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, c);
  ShapeAssignCheck(out, 2, c);
}
}  // namespace batch_norm

}  // namespace symbind
