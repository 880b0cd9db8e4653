// _contrib_dequantize: int8 or uint8 data back to float32 (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

struct DequantizeParam : Parameter<DequantizeParam> {
  int out_type;
  static void Declare(ParamDeclarer<DequantizeParam>& d) {
    d.field("out_type", &DequantizeParam::out_type).add_enum("float32", 0).set_default(0)
        .describe("Output data type.");
  }
};

void Forward(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const DType type = in[0].dtype();
  const float step = 1.0f / QuantizeScale(type, RangeValue(in[1]), RangeValue(in[2]));
  float* y = out[0].fdata();
  WithQuantizedType(type, [&](auto zero) {
    using T = decltype(zero);
    const T* q = in[0].data<T>();
    ParallelFor(in[0].Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(q[i]) * step;
    });
  });
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_dequantize)
    .describe(R"(Dequantizes int8 or uint8 data to float32: x = q * R / 127.5 for int8 and
q * R / 255.5 for uint8, R = max(|min_range|, |max_range|), as quantize_v2 scaled it.)")
    .set_params<quant::DequantizeParam>()
    .set_arguments({"data", "min_range", "max_range"})
    .add_argument_doc("data", "An int8 or uint8 tensor.")
    .add_argument_doc("min_range", "The minimum of the data's range: float32, shape (1,).")
    .add_argument_doc("max_range", "The maximum of the data's range: float32, shape (1,).")
    .set_infer_shape(quant::InferSameShapeAndRanges)
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
