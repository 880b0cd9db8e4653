// _contrib_requantize: the int32 sums of a quantized convolution or FullyConnected to int8 or
// uint8 (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<CalibratedOutParam>();
  const int32_t* x = in[0].data<int32_t>();
  const int64_t n = in[0].Size();
  const float r_in = MaxAbs(RangeValue(in[1]), RangeValue(in[2]));
  float target;  // the float value that maps to the output's extreme level
  if (p.calibrated()) {
    target = MaxAbs(*p.min_calib_range, *p.max_calib_range);
  } else {
    const auto range = MinMax(x, n);
    target = MaxAbs(static_cast<float>(range.first), static_cast<float>(range.second)) * r_in / kInt32Range;
  }
  const DType type = out[0].dtype();
  // 127 and 255 levels (MXNet's requantize), not quantize_v2's 127.5 and 255.5.
  const float scale = target == 0.0f ? 0.0f : (r_in / kInt32Range) * ((type == DType::kInt8 ? 127.0f : 255.0f) / target);
  WithQuantizedType(type, [&](auto zero) {
    using T = decltype(zero);
    T* q = out[0].data<T>();
    ScaleRound(x, n, scale, q);
  });
  SetRange(out[1], out[2], type == DType::kInt8 ? -target : 0.0f, target);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_requantize)
    .describe(R"(Requantizes int32 data (a quantized convolution's or FullyConnected's sums, where q
stands for q * R_in / 2^31 with R_in = max(|min_range|, |max_range|)) to int8 or uint8 over the
calibrated range (min_calib_range, max_calib_range), or without one over the data's own:
q8 = clamp(round_half_even(q * (R_in / 2^31) * 127 / T)) (255 for uint8), T = max(|min|, |max|)
of that range. Outputs the data and its range: (-T, T) for int8, (0, T) for uint8.)")
    .set_params<quant::CalibratedOutParam>()
    .set_arguments({"data", "min_range", "max_range"})
    .add_argument_doc("data", "An int32 tensor.")
    .add_argument_doc("min_range", "The float value of int32's minimum: float32, shape (1,).")
    .add_argument_doc("max_range", "The float value of int32's maximum: float32, shape (1,).")
    .set_outputs({"output0", "output1", "output2"})
    .set_infer_shape(quant::InferSameShapeAndRanges)
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 0, static_cast<int>(DType::kInt32));
      TypeAssignCheck(out, 0, static_cast<int>(attrs.param<quant::CalibratedOutParam>().OutDType()));
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
