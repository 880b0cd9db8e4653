// _contrib_quantize: MXNet's older quantization with the range given as inputs, which MXNet's
// quantize_model uses for weights (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

struct QuantizeParam : Parameter<QuantizeParam> {
  int out_type;
  static void Declare(ParamDeclarer<QuantizeParam>& d) {
    d.field("out_type", &QuantizeParam::out_type)
        .add_enum("int8", kOutInt8).add_enum("uint8", kOutUint8).set_default(kOutUint8)
        .describe("Output data type.");
  }
};

void Forward(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const float lo = RangeValue(in[1]), hi = RangeValue(in[2]), r = MaxAbs(lo, hi);
  const DType type = out[0].dtype();
  // 127 and 255 levels here (MXNet's kernel for this op), not quantize_v2's 127.5 and 255.5.
  const float scale = r == 0.0f ? 0.0f : (type == DType::kInt8 ? 127.0f : 255.0f) / r;
  const float* x = in[0].fdata();
  WithQuantizedType(type, [&](auto zero) {
    using T = decltype(zero);
    T* q = out[0].data<T>();
    ScaleRound(x, in[0].Size(), scale, q);
  });
  if (type == DType::kInt8) SetRange(out[1], out[2], -r, r);
  else SetRange(out[1], out[2], lo, hi);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantize)
    .describe(R"(Quantizes float32 data to int8 or uint8 over the range (min_range, max_range):
q = clamp(round_half_even(x * 127 / R)) for int8 and x * 255 / R for uint8, R = max(|min_range|,
|max_range|). Outputs the quantized data and its range: (-R, R) for int8, the given range for uint8.)")
    .set_params<quant::QuantizeParam>()
    .set_arguments({"data", "min_range", "max_range"})
    .add_argument_doc("data", "A float32 tensor.")
    .add_argument_doc("min_range", "The minimum of the range: float32, shape (1,).")
    .add_argument_doc("max_range", "The maximum of the range: float32, shape (1,).")
    .set_outputs({"output0", "output1", "output2"})
    .set_infer_shape(quant::InferSameShapeAndRanges)
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 0, static_cast<int>(DType::kFloat32));
      const bool int8 = attrs.param<quant::QuantizeParam>().out_type == quant::kOutInt8;
      TypeAssignCheck(out, 0, static_cast<int>(int8 ? DType::kInt8 : DType::kUint8));
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
