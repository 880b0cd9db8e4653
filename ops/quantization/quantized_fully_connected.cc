// _contrib_quantized_fully_connected: FullyConnected on int8 or uint8 data and int8 weights,
// with int32 sums (docs/quantization.md).
#include <symbind/ops/kernels/gemm_int8.h>
#include <symbind/ops/nn/fully_connected_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  InferWithFloatShapes(InferShapeFC, attrs, attrs.param<FullyConnectedParam>().no_bias ? 2 : 3, in, out);
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const auto rows_features = FlatDims(in[0].shape(), p.flatten);
  const int64_t rows = rows_features.first, features = rows_features.second;
  const int8_t* w = in[1].data<int8_t>();
  int32_t* y = out[0].data<int32_t>();
  WithQuantizedType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    GemmInt8NT(rows, p.num_hidden, features, in[0].data<T>(), w, y);
  });
  FinishQuantizedLayer(in, p.no_bias, in[0].dtype() == DType::kUint8, rows, p.num_hidden, 1, out);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_fully_connected)
    .describe(R"(FullyConnected on quantized data: int32 sums of int8 or uint8 data times int8
weights, plus the int8 bias rescaled to the sums' units (truncated toward zero). Outputs the sums
and their range +-(R_data / 127) * (R_weight / 127) * 2^31 (R_data / 255 for uint8 data). The
parameters are FullyConnected's.)")
    .set_params<FullyConnectedParam>()
    .set_arguments([](const NodeAttrs& a) { return quant::QuantizedLayerArguments(a.param<FullyConnectedParam>().no_bias); })
    .add_argument_doc("data", "Quantized input data (int8 or uint8).")
    .add_argument_doc("weight", "Quantized weight (int8): (num_hidden, input_dim).")
    .add_argument_doc("bias", "Quantized bias (int8): (num_hidden,); absent when no_bias.")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .add_argument_doc("min_weight", "Minimum of the weight's range: float32, shape (1,).")
    .add_argument_doc("max_weight", "Maximum of the weight's range: float32, shape (1,).")
    .add_argument_doc("min_bias", "Minimum of the bias's range: float32, shape (1,).")
    .add_argument_doc("max_bias", "Maximum of the bias's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape(quant::InferShape)
    .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
      quant::InferQuantizedLayerType(a.param<FullyConnectedParam>().no_bias, in, out);
    })
    .set_dtype_generic()
    .set_mac_count(OutputWeightRowMacs)
    .set_forward(quant::Forward);

}  // namespace symbind
