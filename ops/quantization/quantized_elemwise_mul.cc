// _contrib_quantized_elemwise_mul: the element-wise product of two int8 tensors, as MXNet
// 1.9.1's CPU kernel computes it (docs/quantization.md).
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

struct QuantizedMulParam : CalibRangeFields, Parameter<QuantizedMulParam> {
  bool enable_float_output;
  static void Declare(ParamDeclarer<QuantizedMulParam>& d) {
    DeclareCalibRange(d, "requantize the int32 output to int8");
    d.field("enable_float_output", &QuantizedMulParam::enable_float_output).set_default(false)
        .describe("Whether to enable float32 output");
  }
  // float32 with enable_float_output, else int8 when calibrated, else int32.
  DType OutDType() const {
    return enable_float_output ? DType::kFloat32 : calibrated() ? DType::kInt8 : DType::kInt32;
  }
};

// MXNet's cast of the scaled product: toward zero; past the type's range (where MXNet's cast is
// undefined) it saturates.
template <typename T>
T TruncateTo(float v) {
  if (std::isnan(v)) return T(0);
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<QuantizedMulParam>();
  const float a_scale = kInt8Range / MaxAbs(RangeValue(in[2]), RangeValue(in[3]));
  const float b_scale = kInt8Range / MaxAbs(RangeValue(in[4]), RangeValue(in[5]));
  const int8_t* a = in[0].data<int8_t>();
  const int8_t* b = in[1].data<int8_t>();
  const int64_t n = in[0].Size();
  if (p.enable_float_output) {
    const float scale = static_cast<float>(1.0 / a_scale / b_scale);
    float* y = out[0].fdata();
    ParallelFor(n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = static_cast<float>(int32_t{a[i]} * int32_t{b[i]}) * scale;
    });
    return;
  }
  if (p.calibrated()) {
    const float scale = kInt8Range / MaxAbs(*p.min_calib_range, *p.max_calib_range) / a_scale / b_scale;
    int8_t* y = out[0].data<int8_t>();
    ParallelFor(n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = TruncateTo<int8_t>(static_cast<float>(int32_t{a[i]} * int32_t{b[i]}) * scale);
    });
    SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
    return;
  }
  int32_t* y = out[0].data<int32_t>();
  ParallelFor(n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) y[i] = int32_t{a[i]} * int32_t{b[i]};
  });
  const float range = ProductRange(MaxAbs(RangeValue(in[2]), RangeValue(in[3])), MaxAbs(RangeValue(in[4]), RangeValue(in[5])),
                                   false);
  SetRange(out[1], out[2], -range, range);
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP(_contrib_quantized_elemwise_mul)
    .describe(R"(The element-wise product of two int8 tensors of one shape, as MXNet 1.9.1's CPU
kernel computes it, with S = 127.5 / R for each input's range R = max(|min|, |max|): with
enable_float_output, float32 a * b / (S_lhs * S_rhs) (one output); calibrated (min_calib_range,
max_calib_range), int8 a * b * (127.5 / R_out) / S_lhs / S_rhs truncated toward zero (saturating
past int8, where MXNet's cast is undefined) over the calibrated range; otherwise the int32
product with the range +-(R_lhs / 127) * (R_rhs / 127) * 2^31.)")
    .set_params<quant::QuantizedMulParam>()
    .set_arguments({"lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"})
    .add_argument_doc("lhs", "First quantized input (int8).")
    .add_argument_doc("rhs", "Second quantized input (int8), of lhs's shape.")
    .add_argument_doc("lhs_min", "Minimum of lhs's range: float32, shape (1,).")
    .add_argument_doc("lhs_max", "Maximum of lhs's range: float32, shape (1,).")
    .add_argument_doc("rhs_min", "Minimum of rhs's range: float32, shape (1,).")
    .add_argument_doc("rhs_max", "Maximum of rhs's range: float32, shape (1,).")
    .set_outputs([](const NodeAttrs& a) {
      if (a.param<quant::QuantizedMulParam>().enable_float_output) return std::vector<std::string>{"output"};
      return quant::RangeOutputs();
    })
    .set_infer_shape(quant::InferPairShapeAndRanges)
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      for (size_t i = 0; i < 2; ++i) TypeAssignCheck(in, i, static_cast<int>(DType::kInt8));
      TypeAssignCheck(out, 0, static_cast<int>(attrs.param<quant::QuantizedMulParam>().OutDType()));
      quant::InferRangeTypes(in, 2, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
