// Convolution's parameters and shape inference, shared by the ops that take Convolution's
// attributes: Convolution and _fused_conv_act (ops/nn/convolution.cc) and
// _contrib_quantized_conv (ops/quantization/quantized_conv.cc).
#pragma once
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <symbind/ops/nn/conv_util.h>
#include <symbind/ops/nn/fused_activation_param.h>

namespace symbind {
namespace conv {

// Convolution's parameters; with kFused also the activation of _fused_conv_act (the fields
// exist in both, Convolution declares and parses only its own).
template <bool kFused>
struct ConvParams : ConvFields, FusedActivationFields, Parameter<ConvParams<kFused>> {
  using P = ConvParams<kFused>;
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  enum Residual { kNoResidual, kResidualFirst, kResidualLast };
  int residual = kNoResidual;
  bool normalize = false;  // the second output (NormalizedOutput): BatchNorm's eps, fix_gamma, activation
  double norm_eps = 1e-3;
  bool norm_fix_gamma = true;
  int norm_act_type = FusedActivation::kNone;
  float norm_a_min = 0, norm_a_max = 0, norm_slope = 0;
  static void Declare(ParamDeclarer<P>& d) {
    const ConvFieldSpec spec = ConvolutionFieldSpec("(w,), (h, w) or (d, h, w)");
    DeclareConvWindow(d, spec);
    DeclareConvFilters(d, spec);
    DeclareConvWorkspaceAndBias(d, spec);
    DeclareCudnnAndLayout(d, spec);
    if constexpr (kFused) {
      DeclareFusedActivation(d, "_fused_conv_act", true);
      d.field("residual", &P::residual)
          .add_enum("none", kNoResidual).add_enum("first", kResidualFirst).add_enum("last", kResidualLast)
          .set_default(kNoResidual)
          .describe("A residual input added to the convolution (after the bias, before the activation), as "
                    "elemwise_add(convolution, residual) would: none, or the node's first or last input (where "
                    "the add read it, so the graph lists its arguments in the same order).");
      d.field("normalize", &P::normalize).set_default(false)
          .describe("A second output, `normalized`: output 0 normalised by a BatchNorm with its moving "
                    "statistics (inference), then norm_act_type, as that BatchNorm and activation reading output 0 "
                    "would compute it; the BatchNorm's gamma and beta are the node's last arguments, its "
                    "moving_mean and moving_var its aux states.");
      // BatchNorm's defaults: the rewrite copies only the parameters a BatchNorm node sets.
      d.field("norm_eps", &P::norm_eps).set_default(1e-3).lower_bound(0).describe("The BatchNorm's eps.");
      d.field("norm_fix_gamma", &P::norm_fix_gamma).set_default(true)
          .describe("The BatchNorm's fix_gamma: gamma held at 1.");
      DeclareActivationFields(d, "_fused_conv_act", false, "norm_", &P::norm_act_type, &P::norm_a_min, &P::norm_a_max,
                              &P::norm_slope);
    }
  }
  // MXNet's ConvolutionParamParser: fills stride/dilate/pad defaults and checks their lengths.
  static P Parse(const KwArgs& kw) {
    P p = Parameter<P>::Parse(kw);
    NormalizeSpatialParams("Convolution", &p.kernel, &p.stride, &p.dilate, &p.pad);
    CheckChannelFirstLayout("Convolution", p.layout, p.kernel.ndim());
    return p;
  }
  // Where the node's inputs sit: the convolution's (data, weight, bias) from `first_conv_input`,
  // then prelu's gamma, with the residual before or after all of them.
  int first_conv_input() const { return residual == kResidualFirst ? 1 : 0; }
  int gamma_input() const { return first_conv_input() + (no_bias ? 2 : 3); }
  int residual_input() const { return residual == kResidualFirst ? 0 : gamma_input() + (act_type == FusedActivation::kPRelu); }
  FusedActivation activation(const std::vector<NDArray>& in) const {
    return FusedActivationFields::activation(
        act_type == FusedActivation::kPRelu ? in[static_cast<size_t>(gamma_input())].fdata() : nullptr);
  }
  // The arguments before the normalized output's (gamma, beta), which the aux states follow.
  int conv_arguments() const {
    return gamma_input() + (act_type == FusedActivation::kPRelu) + (residual == kResidualLast);
  }
};
using ConvolutionParam = ConvParams<false>;
using FusedConvParam = ConvParams<true>;

inline const char* DataRankHint(int spatial) {
  switch (spatial) {
    case 1: return "3D in batch-num_filter-x";
    case 2: return "4D in batch-num_filter-y-x";
    default: return "5D in batch-num_filter-depth-y-x";
  }
}

template <typename P>
void InferShapeConv(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<P>();
  const int ns = p.kernel.ndim();
  TShape dshape = (*in)[0];
  if (!dshape.ndim_known()) return;  // MXNet infers nothing without the data's rank
  if (dshape.ndim() != ns + 2)
    throw ShapeError(StrCat("Convolution: input data should be ", DataRankHint(ns), " for a ",
                            ns, "-D kernel ", p.kernel, ", got data shape ", dshape));
  const int64_t C = dshape[1];
  if (C >= 0 && C % p.num_group != 0)
    throw ShapeError(StrCat("Convolution: input channels (", C, ") must be divisible by num_group (",
                            p.num_group, "); data shape ", dshape));
  if (p.num_filter % p.num_group != 0)
    throw ShapeError(StrCat("Convolution: num_filter (", p.num_filter,
                            ") must be divisible by num_group (", p.num_group, ")"));
  std::vector<int64_t> w = {p.num_filter, C >= 0 ? C / p.num_group : -1};
  for (int i = 0; i < ns; ++i) w.push_back(p.kernel[i]);
  ShapeAssignCheck(in, 1, TShape(w));
  if (!p.no_bias) ShapeAssignCheck(in, 2, TShape({p.num_filter}));
  if constexpr (std::is_same_v<P, FusedConvParam>)
    if (p.act_type == FusedActivation::kPRelu) ShapeAssignCheck(in, p.no_bias ? 2 : 3, TShape({p.num_filter}));

  std::vector<int64_t> o = {dshape[0], p.num_filter};
  for (int i = 0; i < ns; ++i) {
    const int64_t x = dshape[2 + i];
    const int64_t dk = DilatedKernel("Convolution", p.kernel[i], p.dilate[i], i);
    if (x < 0) {
      o.push_back(-1);
      continue;
    }
    const int64_t padded = PaddedSize("Convolution", x, p.pad[i], i);
    if (dk > padded)
      throw ShapeError(StrCat("Convolution: kernel size exceeds input: dilated kernel ", dk,
                              " (kernel ", p.kernel, ", dilate ", p.dilate, ") is larger than the "
                              "padded input ", padded, " (pad ", p.pad,
                              ") in spatial dim ", i, "; data shape ", dshape));
    o.push_back((padded - dk) / p.stride[i] + 1);
  }
  ShapeAssignCheck(out, 0, TShape(o));
  // Like MXNet: the batch always flows back from the output, and a spatial dim when its stride
  // is 1. Beyond MXNet, the channels flow back from the weight (what a tool feeding images
  // needs to know).
  const TShape& os = (*out)[0];
  dshape[0] = os[0];
  const TShape& ws = (*in)[1];
  if (dshape[1] < 0 && ws.ndim() == ns + 2 && ws[1] >= 0) dshape[1] = CheckedMul(ws[1], int64_t{p.num_group}, "Convolution: input channels from the weight");
  for (int i = 0; i < ns; ++i)
    if (os[2 + i] >= 0 && p.stride[i] == 1)
      dshape[2 + i] = CheckedAdd(os[2 + i], DilatedKernel("Convolution", p.kernel[i], p.dilate[i], i) - 1,
                                 "Convolution: input size from output in spatial dim ", i) - 2 * p.pad[i];
  ShapeAssignCheck(in, 0, dshape);
}

}  // namespace conv
}  // namespace symbind
