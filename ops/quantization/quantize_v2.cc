// _contrib_quantize_v2: float32 data to int8 or uint8, with a calibrated range or the data's
// own, as MXNet 1.9.1's CPU kernel computes it (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = attrs.param<CalibratedOutParam>();
  const int t = (*in)[0];
  if (t >= 0 && t != static_cast<int>(DType::kFloat32)) {
    CheckQuantizedType(t, "input 'data' (float32 or already quantized)");
    TypeAssignCheck(out, 0, t);  // already quantized: passed through
  } else {
    TypeAssignCheck(out, 0, static_cast<int>(p.OutDType()));
  }
  InferRangeTypes(in, 1, out);
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<CalibratedOutParam>();
  const int64_t n = in[0].Size();
  if (in[0].dtype() != DType::kFloat32) {
    // Already quantized: copied, with the calibrated range or the full range of the type.
    std::memcpy(out[0].raw_data(), in[0].raw_data(), in[0].bytes());
    if (p.calibrated()) SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
    else if (in[0].dtype() == DType::kUint8) SetRange(out[1], out[2], 0.0f, kUint8Range);
    else SetRange(out[1], out[2], -kInt8Range, kInt8Range);
    return;
  }
  const float* x = in[0].fdata();
  const auto range = p.calibrated() ? std::make_pair(*p.min_calib_range, *p.max_calib_range) : MinMax(x, n);
  const DType type = out[0].dtype();
  const float scale = QuantizeScale(type, range.first, range.second);
  WithQuantizedType(type, [&](auto zero) {
    using T = decltype(zero);
    T* q = out[0].data<T>();
    ScaleRound(x, n, scale, q);
  });
  // int8 is symmetric around zero; uint8 keeps the range it was given.
  if (type == DType::kInt8) {
    const float r = MaxAbs(range.first, range.second);
    SetRange(out[1], out[2], -r, r);
  } else {
    SetRange(out[1], out[2], range.first, range.second);
  }
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantize_v2)
    .describe(R"(Quantizes float32 data to int8 or uint8 with a symmetric scale and no zero point:
q = clamp(round_half_even(x * 127.5 / R)) for int8 and x * 255.5 / R for uint8, R = max(|min|, |max|)
of the calibrated range (min_calib_range, max_calib_range) or, without one, of the data. Outputs
the quantized data and its range (min, max): (-R, R) for int8, the range itself for uint8. Data
already int8 or uint8 passes through.)")
    .set_params<quant::CalibratedOutParam>()
    .set_arguments({"data"})
    .add_argument_doc("data", "A float32 tensor (or an int8 or uint8 one, passed through).")
    .set_outputs({"output0", "output1", "output2"})
    .set_infer_shape(quant::InferSameShapeAndRanges)
    .set_infer_type(quant::InferType)
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
