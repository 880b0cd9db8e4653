// _contrib_quantized_act: relu on int8 or uint8 data (docs/quantization.md).
#include <symbind/ops/nn/activation_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

void Forward(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  int8_t* y = out[0].data<int8_t>();
  WithQuantizedType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = in[0].data<T>();
    ReluLevels(x, in[0].Size(), y);  // int8 out, as MXNet declares it: uint8 levels above 127 saturate
  });
  SetRange(out[1], out[2], RangeValue(in[1]), RangeValue(in[2]));
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_act)
    .describe(R"(Activation (relu only) on quantized data: max(q, 0) as int8, as MXNet declares the
output (uint8 levels above 127 saturate); the range passes through. The parameters are
Activation's.)")
    .set_params<ActivationParam>()
    .set_arguments({"data", "min_data", "max_data"})
    .add_argument_doc("data", "Quantized input data (int8 or uint8).")
    .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      if (attrs.param<ActivationParam>().act_type != kRelu)
        throw ShapeError("quantized activation supports act_type 'relu' only");
      quant::InferSameShapeAndRanges(attrs, in, out);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      TypeAssignCheck(out, 0, static_cast<int>(DType::kInt8));
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
