// _contrib_quantized_elemwise_add: the sum of two quantized tensors (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

// int32 uncalibrated; calibrated, the inputs' type when they agree, else int8.
DType SumType(const CalibRangeParam& p, int lhs, int rhs) {
  if (!p.calibrated()) return DType::kInt32;
  return lhs == rhs ? static_cast<DType>(lhs) : DType::kInt8;
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<CalibRangeParam>();
  const float a_min = RangeValue(in[2]), a_max = RangeValue(in[3]), b_min = RangeValue(in[4]), b_max = RangeValue(in[5]);
  const float ra = MaxAbs(a_min, a_max), rb = MaxAbs(b_min, b_max);
  // Levels per unit of each input, and the output's.
  const float a_scale = QuantizeScale(in[0].dtype(), a_min, a_max), b_scale = QuantizeScale(in[1].dtype(), b_min, b_max);
  const DType type = out[0].dtype();
  float out_scale, lo, hi;
  if (p.calibrated()) {
    out_scale = QuantizeScale(type, *p.min_calib_range, *p.max_calib_range);
    lo = *p.min_calib_range;
    hi = *p.max_calib_range;
  } else {  // int32 levels over the widest sum: 2^31 stands for ra + rb
    out_scale = ra + rb == 0.0f ? 0.0f : kInt32Range / (ra + rb);
    lo = -(ra + rb);
    hi = ra + rb;
  }
  const float wa = out_scale / a_scale, wb = out_scale / b_scale;
  const int64_t n = in[0].Size();
  WithQuantizedType(in[0].dtype(), [&](auto a_zero) {
    using TA = decltype(a_zero);
    WithQuantizedType(in[1].dtype(), [&](auto b_zero) {
      using TB = decltype(b_zero);
      const TA* a = in[0].data<TA>();
      const TB* b = in[1].data<TB>();
      if (type == DType::kInt32) AddScaledLevels(a, b, n, wa, wb, out[0].data<int32_t>());
      else if (type == DType::kInt8) AddScaledLevels(a, b, n, wa, wb, out[0].data<int8_t>());
      else AddScaledLevels(a, b, n, wa, wb, out[0].data<uint8_t>());
    });
  });
  SetRange(out[1], out[2], lo, hi);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_elemwise_add)
    .describe(R"(Adds two quantized tensors of the same shape. Each is scaled from its levels to the
output's, summed in float and rounded half to even. Calibrated (min_calib_range,
max_calib_range), the output is int8 or uint8 (the inputs' type when they agree, else int8) over
the calibrated range; otherwise int32, where 2^31 stands for R_lhs + R_rhs.)")
    .set_params<quant::CalibRangeParam>()
    .set_arguments({"lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"})
    .add_argument_doc("lhs", "First quantized input (int8 or uint8).")
    .add_argument_doc("rhs", "Second quantized input (int8 or uint8), of lhs's shape.")
    .add_argument_doc("lhs_min", "Minimum of lhs's range: float32, shape (1,).")
    .add_argument_doc("lhs_max", "Maximum of lhs's range: float32, shape (1,).")
    .add_argument_doc("rhs_min", "Minimum of rhs's range: float32, shape (1,).")
    .add_argument_doc("rhs_max", "Maximum of rhs's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape(quant::InferPairShapeAndRanges)
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'lhs'");
      quant::CheckQuantizedType((*in)[1], "input 'rhs'");
      const auto& p = attrs.param<quant::CalibRangeParam>();
      if (!p.calibrated() || ((*in)[0] >= 0 && (*in)[1] >= 0))
        TypeAssignCheck(out, 0, static_cast<int>(quant::SumType(p, (*in)[0], (*in)[1])));
      quant::InferRangeTypes(in, 2, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
