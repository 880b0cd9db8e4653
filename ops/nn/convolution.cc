// The Convolution operator (1-D, 2-D, 3-D, grouped, dilated); its kernels are in
// ops/kernels/conv.cc.
#include <string>
#include <type_traits>
#include <vector>

#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/nn/convolution_param.h>
#include <symbind/ops/nn/norm_util.h>

namespace symbind {

namespace {
using namespace conv;

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
  DerivedWeights* weights = NodeDerivedWeights(ctx, 0, in[1]);
  if (ctx.precision == Precision::kBfloat16 && req[0] != OpReq::kAdd && Bf16ConvApplies(s.dims, s.geom, weights))
    return Bf16ConvForward(in[0].fdata(), WeightsFor(in[1], weights), p.no_bias ? nullptr : in[2].fdata(), out[0].fdata(), s.dims,
                           s.geom, weights);
  ConvForward(in[0].fdata(), WeightsFor(in[1], weights), p.no_bias ? nullptr : in[2].fdata(), out[0].fdata(),
              s.dims, s.geom, req[0], weights);
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
  DerivedWeights* weights = NodeDerivedWeights(ctx, 0, in[c + 1]);
  if (ctx.precision == Precision::kBfloat16 && req[0] != OpReq::kAdd && Bf16ConvApplies(s.dims, s.geom, weights))
    return Bf16ConvForward(in[c].fdata(), WeightsFor(in[c + 1], weights), p.no_bias ? nullptr : in[c + 2].fdata(), out[0].fdata(),
                           s.dims, s.geom, weights, p.activation(in),
                           residual ? in[static_cast<size_t>(p.residual_input())].fdata() : nullptr, normalized);
  ConvForward(in[c].fdata(), WeightsFor(in[c + 1], weights), p.no_bias ? nullptr : in[c + 2].fdata(), out[0].fdata(),
              s.dims, s.geom, residual || p.normalize ? write : req[0], weights,
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
