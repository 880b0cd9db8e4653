// The Convolution operator (1-D, 2-D, 3-D, grouped, dilated); its kernels are in
// ops/kernels/conv.cc.
#include <string>
#include <type_traits>
#include <vector>

#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/nn/conv_util.h>
#include <symbind/ops/nn/fused_activation_param.h>
#include <symbind/ops/nn/norm_util.h>

namespace symbind {

namespace {
using namespace conv;

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

// _fused_conv_act's inputs: Convolution's, then prelu's gamma (the LeakyReLU's, still an argument),
// and the residual first or last.
std::vector<std::string> FusedConvArguments(const NodeAttrs& a) {
  const auto& p = a.param<FusedConvParam>();
  std::vector<std::string> names = DataWeightBiasArguments<FusedConvParam>(a);
  if (p.act_type == FusedActivation::kPRelu) names.push_back("gamma");
  if (p.residual == FusedConvParam::kResidualFirst) names.insert(names.begin(), "residual");
  if (p.residual == FusedConvParam::kResidualLast) names.push_back("residual");
  if (p.normalize) names.insert(names.end(), {"norm_gamma", "norm_beta"});
  return names;
}

const char* DataRankHint(int spatial) {
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

// _fused_conv_act: the convolution's shapes with its inputs moved past a first residual, and
// the residual shaped as the output (both ways, as elemwise_add).
void InferShapeConvAndResidual(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<FusedConvParam>();
  if (p.residual == FusedConvParam::kNoResidual) return InferShapeConv<FusedConvParam>(attrs, in, out);
  const size_t r = static_cast<size_t>(p.residual_input());
  std::vector<TShape> conv_in(*in);
  conv_in.erase(conv_in.begin() + static_cast<std::ptrdiff_t>(r));
  if (out->at(0).ndim() == 0 && (*in)[r].ndim() != 0) ShapeAssignCheck(out, 0, (*in)[r]);
  InferShapeConv<FusedConvParam>(attrs, &conv_in, out);
  conv_in.insert(conv_in.begin() + static_cast<std::ptrdiff_t>(r), (*out)[0]);
  for (size_t i = 0; i < in->size(); ++i)
    if (i != r) ShapeAssignCheck(in, i, conv_in[i]);
  ShapeAssignCheck(in, r, (*out)[0]);
}

// With normalize, the BatchNorm's four inputs of one value per filter follow, and output 1 has
// output 0's shape.
void InferShapeFusedConv(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<FusedConvParam>();
  if (!p.normalize) return InferShapeConvAndResidual(attrs, in, out);
  const size_t conv_inputs = static_cast<size_t>(p.conv_arguments());
  std::vector<TShape> conv_in(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(conv_inputs));
  std::vector<TShape> conv_out = {(*out)[0].ndim() != 0 ? (*out)[0] : (*out)[1]};
  InferShapeConvAndResidual(attrs, &conv_in, &conv_out);
  for (size_t i = 0; i < conv_inputs; ++i) ShapeAssignCheck(in, i, conv_in[i]);
  for (size_t i = conv_inputs; i < in->size(); ++i) ShapeAssignCheck(in, i, TShape({p.num_filter}));
  ShapeAssignCheck(out, 0, conv_out[0]);
  ShapeAssignCheck(out, 1, conv_out[0]);
}

struct ConvSetup {
  ConvDims dims;
  ConvGeom geom;
};
template <typename P>
ConvSetup Setup(const P& p, const TShape& data, const TShape& outp) {
  return {{data[0], data[1], p.num_filter, p.num_group},
          MakeGeom(data, outp, p.kernel, p.stride, p.dilate, p.pad)};
}

void ForwardConvolution(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<ConvolutionParam>();
  auto s = Setup(p, in[0].shape(), out[0].shape());
  s.dims.y_image_stride = ctx.output_image_stride;
  ConvForward(in[0].fdata(), in[1].fdata(), p.no_bias ? nullptr : in[2].fdata(), out[0].fdata(),
              s.dims, s.geom, req[0], NodeDerivedWeights(ctx, 0, in[1]));
}

void ForwardFusedConv(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FusedConvParam>();
  const size_t c = static_cast<size_t>(p.first_conv_input());
  auto s = Setup(p, in[c].shape(), out[0].shape());
  s.dims.y_image_stride = ctx.output_image_stride;
  const bool residual = p.residual != FusedConvParam::kNoResidual;
  const OpReq write = req[0] == OpReq::kWriteInplace ? OpReq::kWrite : req[0];
  NormalizedOutput normalized;
  std::vector<float> affine;  // mean, scale, shift per filter, as BatchNorm computes them
  if (p.normalize) {
    const size_t at = static_cast<size_t>(p.conv_arguments());
    const float *gamma = in[at].fdata(), *beta = in[at + 1].fdata(), *mean = in[at + 2].fdata(), *var = in[at + 3].fdata();
    const int64_t f = p.num_filter;
    affine.resize(static_cast<size_t>(3 * f));
    for (int64_t k = 0; k < f; ++k) {
      const BatchNormAffine a = InferenceBatchNorm(mean[k], var[k], gamma[k], beta[k], p.norm_eps, p.norm_fix_gamma);
      affine[static_cast<size_t>(k)] = a.mean;
      affine[static_cast<size_t>(f + k)] = a.scale;
      affine[static_cast<size_t>(2 * f + k)] = a.shift;
    }
    normalized = {out[1].fdata(), affine.data(), affine.data() + f, affine.data() + 2 * f,
                  FusedActivation{static_cast<FusedActivation::Kind>(p.norm_act_type), p.norm_a_min, p.norm_a_max,
                                  p.norm_slope}};
  }
  ConvForward(in[c].fdata(), in[c + 1].fdata(), p.no_bias ? nullptr : in[c + 2].fdata(), out[0].fdata(),
              s.dims, s.geom, residual || p.normalize ? write : req[0], NodeDerivedWeights(ctx, 0, in[c + 1]),
              p.activation(in), residual ? in[static_cast<size_t>(p.residual_input())].fdata() : nullptr, normalized);
}

void BackwardConv(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<ConvolutionParam>();
  auto s = Setup(p, a.inputs[0].shape(), a.out_grads[0].shape());
  const float* dy = a.out_grads[0].fdata();
  ConvBackwardData(dy, a.inputs[1].fdata(), a.in_grads[0].is_none() ? nullptr : a.in_grads[0].fdata(),
                   s.dims, s.geom, a.req[0]);
  ConvBackwardWeight(dy, a.inputs[0].fdata(), a.in_grads[1].is_none() ? nullptr : a.in_grads[1].fdata(),
                     s.dims, s.geom, a.req[1]);
  if (!p.no_bias)
    BiasBackward(dy, a.in_grads[2].is_none() ? nullptr : a.in_grads[2].fdata(), s.dims.batch,
                 p.num_filter, s.geom.out_size(), a.req[2]);
}
}  // namespace

SYMBIND_REGISTER_OP(Convolution)
    .describe(R"(Computes 1-D, 2-D or 3-D convolution on (N+2)-D input (NCW, NCHW or NCDHW).

out[n,i] = bias[i] + sum_j data[n,j] * weight[i,j] (cross-correlation). With
f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1 the output spatial sizes are f over each dim.
weight: (num_filter, channel/num_group, kernel...), bias: (num_filter,).
With num_group g the channels are split into g groups, each convolved with its own slice of
the filters, and the results concatenated.)")
    .set_params<ConvolutionParam>()
    .set_arguments(DataWeightBiasArguments<ConvolutionParam>)
    .add_argument_doc("data", "Input data to the convolution: (batch, channel, [depth,] height, width).")
    .add_argument_doc("weight", "Weight matrix: (num_filter, channel/num_group, kernel...).")
    .add_argument_doc("bias", "Bias parameter: (num_filter,); absent when no_bias.")
    .set_infer_shape(InferShapeConv<ConvolutionParam>)
    .set_mac_count(OutputWeightRowMacs)
    .set_forward(ForwardConvolution)
    .set_create_state(CreateDerivedWeightsState(1))
    .set_strided_output([](const NodeAttrs&) { return true; })
    .set_backward(BackwardConv);

// Made by the Predictor's FuseActivations rewrite (predict/graph_rewrites.h), not by models.
SYMBIND_REGISTER_OP(_fused_conv_act)
    .describe(R"(Convolution followed by relu, clip, leaky or prelu, computed in one pass: the
activation is applied where the convolution writes its output. Inference only; made from a
Convolution and the Activation(relu) / clip / LeakyReLU(leaky, prelu) reading it by the
Predictor's graph rewrites. Parameters: Convolution's, then act_type, a_min, a_max, slope; prelu
reads its per-filter slopes from input gamma. With residual first or last, an input of the
output's shape is added before the activation: a Convolution, the elemwise_add of it and another
node's output, and an activation after the add, in one pass.)")
    .set_params<FusedConvParam>()
    .set_arguments(FusedConvArguments)
    .set_aux_states([](const NodeAttrs& a) {
      return a.param<FusedConvParam>().normalize ? std::vector<std::string>{"norm_moving_mean", "norm_moving_var"}
                                                 : std::vector<std::string>{};
    })
    .set_outputs([](const NodeAttrs& a) {
      return a.param<FusedConvParam>().normalize ? std::vector<std::string>{"output", "normalized"}
                                                 : std::vector<std::string>{"output"};
    })
    .add_argument_doc("data", "Input data to the convolution: (batch, channel, [depth,] height, width).")
    .add_argument_doc("weight", "Weight matrix: (num_filter, channel/num_group, kernel...).")
    .add_argument_doc("bias", "Bias parameter: (num_filter,); absent when no_bias.")
    .add_argument_doc("gamma", "prelu's slopes: (num_filter,); only with act_type prelu.")
    .add_argument_doc("residual", "Added to the convolution's output: (batch, num_filter, [depth,] height, width); "
                                  "only with residual first or last.")
    .add_argument_doc("norm_gamma", "The second output's BatchNorm scale: (num_filter,); only with normalize.")
    .add_argument_doc("norm_beta", "The second output's BatchNorm shift: (num_filter,); only with normalize.")
    .add_argument_doc("norm_moving_mean", "The second output's BatchNorm moving mean (aux state): (num_filter,).")
    .add_argument_doc("norm_moving_var", "The second output's BatchNorm moving variance (aux state): (num_filter,).")
    .set_infer_shape(InferShapeFusedConv)
    .set_mac_count([](const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
      return WeightRowMacs(out[0], in[static_cast<size_t>(attrs.param<FusedConvParam>().first_conv_input()) + 1]);
    })
    .set_forward(ForwardFusedConv)
    .set_create_state(CreateDerivedWeightsState(1))
    .set_strided_output([](const NodeAttrs& attrs) {  // ConvForward writes images apart without these
      const auto& p = attrs.param<FusedConvParam>();
      return p.residual == FusedConvParam::kNoResidual && !p.normalize;
    });

}  // namespace symbind
