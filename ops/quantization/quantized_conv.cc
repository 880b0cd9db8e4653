// _contrib_quantized_conv: Convolution on int8 or uint8 data and int8 weights, with int32 sums
// (docs/quantization.md).
#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/nn/convolution_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {
using conv::ConvolutionParam;

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  InferWithFloatShapes(conv::InferShapeConv<ConvolutionParam>, attrs, attrs.param<ConvolutionParam>().no_bias ? 2 : 3,
                       in, out);
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<ConvolutionParam>();
  const TShape& d = in[0].shape();
  const conv::ConvGeom g = conv::MakeGeom(d, out[0].shape(), p.kernel, p.stride, p.dilate, p.pad);
  const int8_t* w = in[1].data<int8_t>();
  // The packed filters live with the node (made again only when the weights change).
  std::shared_ptr<const std::vector<PackedInt8A>> packed;
  DerivedWeights* node_weights = ConvInt8UsesGemm(d[1], p.num_filter, p.num_group, g) ? NodeDerivedWeights(ctx, 0, in[1]) : nullptr;
  if (node_weights)
    packed = node_weights->Get<std::vector<PackedInt8A>>({d[1], p.num_filter, p.num_group, g.k_size(), GemmInt8CanReadPaddedImages(g)}, [&](const float* data) {
      return PackConvInt8Weights(reinterpret_cast<const int8_t*>(data), d[1], p.num_filter, p.num_group, g);
    });
  WithQuantizedType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    ConvInt8(in[0].data<T>(), w, out[0].data<int32_t>(), d[0], d[1], p.num_filter, p.num_group, g, packed.get());
  });
  FinishQuantizedLayer(in, p.no_bias, in[0].dtype() == DType::kUint8, d[0], p.num_filter, g.out_size(), out);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_conv)
    .describe(R"(Convolution on quantized data: int32 sums of int8 or uint8 data times int8 weights,
plus the int8 bias rescaled to the sums' units (truncated toward zero). Outputs the sums and their
range +-(R_data / 127) * (R_weight / 127) * 2^31 (R_data / 255 for uint8 data). The parameters are
Convolution's.)")
    .set_params<conv::ConvolutionParam>()
    .set_arguments([](const NodeAttrs& a) { return quant::QuantizedLayerArguments(a.param<conv::ConvolutionParam>().no_bias); })
    .add_argument_doc("data", "Quantized input data (int8 or uint8): (batch, channel, [depth,] height, width).")
    .add_argument_doc("weight", "Quantized weight (int8): (num_filter, channel/num_group, kernel...).")
    .add_argument_doc("bias", "Quantized bias (int8): (num_filter,); absent when no_bias.")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .add_argument_doc("min_weight", "Minimum of the weight's range: float32, shape (1,).")
    .add_argument_doc("max_weight", "Maximum of the weight's range: float32, shape (1,).")
    .add_argument_doc("min_bias", "Minimum of the bias's range: float32, shape (1,).")
    .add_argument_doc("max_bias", "Maximum of the bias's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape(quant::InferShape)
    .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
      quant::InferQuantizedLayerType(a.param<conv::ConvolutionParam>().no_bias, in, out);
    })
    .set_dtype_generic()
    .set_mac_count(OutputWeightRowMacs)
    .set_create_state(CreateDerivedWeightsState(1))
    .set_forward(quant::Forward);

}  // namespace symbind
