// _contrib_quantize_asym: float32 data to uint8 with a scale and a shift (a zero point), the
// input form of MXNet 1.9.1's int8 LSTM (_contrib_quantized_rnn), as its oneDNN kernel computes
// it (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

struct QuantizeAsymParam : CalibRangeFields, Parameter<QuantizeAsymParam> {
  static void Declare(ParamDeclarer<QuantizeAsymParam>& d) {
    DeclareCalibRange(d, "quantize the input instead of its runtime range");
  }
};

void InferType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  const int t = (*in)[0], f32 = static_cast<int>(DType::kFloat32);
  if (t >= 0 && t != f32)
    throw TypeError(StrCat("input 'data' must be float32, got ", DTypeName(static_cast<DType>(t))));
  TypeAssignCheck(in, 0, f32);
  TypeAssignCheck(out, 0, static_cast<int>(DType::kUint8));
  TypeAssignCheck(out, 1, f32);
  TypeAssignCheck(out, 2, f32);
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<QuantizeAsymParam>();
  const float* x = in[0].fdata();
  const int64_t n = in[0].Size();
  const auto range = p.calibrated() ? std::make_pair(*p.min_calib_range, *p.max_calib_range) : MinMax(x, n);
  const AsymmetricLevels levels = AsymmetricLevels::Of(range.first, range.second);
  uint8_t* q = out[0].data<uint8_t>();
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) q[i] = levels.Quantize(x[i]);
  });
  out[1].data<float>()[0] = levels.scale;
  out[2].data<float>()[0] = levels.shift;
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantize_asym)
    .describe(R"(Quantizes float32 data to uint8 with a zero point: q = clamp(round_half_even(x * scale +
shift), 0, 255), scale = 255 / (max - min), shift = 255 - max * scale, over the calibrated range
(min_calib_range, max_calib_range) or, without one, the data's own. Outputs q, scale and shift
(float32 of shape (1,)): the data and parameters of _contrib_quantized_rnn.)")
    .set_params<quant::QuantizeAsymParam>()
    .set_arguments({"data"})
    .add_argument_doc("data", "A float32 tensor.")
    .set_outputs({"output", "scale", "shift"})
    .set_infer_shape(quant::InferSameShapeAndRanges)  // scale and shift: shape (1,)
    .set_infer_type(quant::InferType)
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
