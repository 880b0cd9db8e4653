// _contrib_quantized_batch_norm: inference BatchNorm on int8 or uint8 data to int8 over a
// calibrated range, as MXNet 1.9.1's oneDNN kernel computes it (docs/quantization.md).
#include <cmath>

#include <symbind/ops/nn/batch_norm_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {
using BatchNormParam = BatchNormParams<false>;

// Inputs here: the arguments, then the moving statistics (aux states); MXNet lists those after
// beta (set_file_input_order).
enum { kData, kGamma, kBeta, kMinData, kMaxData, kMean, kVar };

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  std::vector<TShape> float_in{(*in)[kData], (*in)[kGamma], (*in)[kBeta], (*in)[kMean], (*in)[kVar]};
  std::vector<TShape> float_out{(*out)[0], TShape(), TShape()};
  batch_norm::InferBatchNormShape<BatchNormParam>(attrs, &float_in, &float_out);
  const size_t slots[] = {kData, kGamma, kBeta, kMean, kVar};
  for (size_t i = 0; i < 5; ++i) ShapeAssignCheck(in, slots[i], float_in[i]);
  ShapeAssignCheck(out, 0, float_out[0]);
  for (size_t i : {size_t{kMinData}, size_t{kMaxData}}) ShapeAssignCheck(in, i, TShape({1}));
  for (size_t i : {size_t{1}, size_t{2}}) ShapeAssignCheck(out, i, TShape({1}));
}

void InferType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  CheckQuantizedType((*in)[kData], "input 'data'");
  const int f32 = static_cast<int>(DType::kFloat32);
  for (size_t i = 1; i < in->size(); ++i) TypeAssignCheck(in, i, f32);
  TypeAssignCheck(out, 0, static_cast<int>(DType::kInt8));
  for (size_t i = 1; i < out->size(); ++i) TypeAssignCheck(out, i, f32);
}

// kRelu: _fused_quantized_batch_norm_relu, the levels then _contrib_quantized_act's relu.
template <bool kRelu>
void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<BatchNormParam>();
  if (!p.min_calib_range || !p.max_calib_range)
    throw ParamError("quantized BatchNorm needs min_calib_range and max_calib_range (MXNet's does not support "
                     "calib_mode=None either)");
  const AxisLayout l = LayoutAround(in[kData].shape(), NormalizeAxis(p.axis, in[kData].shape().ndim(), "BatchNorm"));
  const float max_abs_data = MaxAbs(RangeValue(in[kMinData]), RangeValue(in[kMaxData]));
  const float max_abs_out = MaxAbs(*p.min_calib_range, *p.max_calib_range);
  const float* gamma = in[kGamma].fdata();
  const float* beta = in[kBeta].fdata();
  const float* mean = in[kMean].fdata();
  const float* var = in[kVar].fdata();
  // MXNet's kernel folds the statistics into a scale and shift of the levels, then runs oneDNN's
  // BatchNorm with mean 0 and variance 1, which divides by sqrt(1 + eps) once more.
  const float unit_std = std::sqrt(1.0f + static_cast<float>(p.eps));
  std::vector<float> scale(static_cast<size_t>(l.n)), shift(static_cast<size_t>(l.n));
  for (int64_t c = 0; c < l.n; ++c) {
    const float invstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[c]) + p.eps));
    scale[size_t(c)] = gamma[c] * invstd * max_abs_data / max_abs_out / unit_std;
    shift[size_t(c)] = (beta[c] - mean[c] * gamma[c] * invstd) * kInt8Range / max_abs_out;
  }
  // uint8 data is first reordered to int8 levels (127.5 / 255.5), as MXNet's kernel does.
  WithQuantizedType(in[kData].dtype(), [&](auto zero) {
    using T = decltype(zero);
    ScaleShiftLevels(in[kData].data<T>(), l.outer, l.n, l.inner, kInt8Range / kUint8Range, scale.data(), shift.data(),
                     out[0].data<int8_t>(), kRelu);
  });
  SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
}

// What both ops declare: BatchNorm's parameters, MXNet's inputs and their documentation, shapes
// and types.
Op& Declare(Op& op) {
  return op.set_params<BatchNormParam>()
      .set_arguments({"data", "gamma", "beta", "min_data", "max_data"})
      .set_aux_states({"moving_mean", "moving_var"})
      .set_file_input_order([](const NodeAttrs&) { return std::vector<size_t>{0, 1, 2, 5, 6, 3, 4}; })
      .add_argument_doc("data", "Quantized input data (int8 or uint8), channels on `axis`.")
      .add_argument_doc("gamma", "Scale per channel: (channel,).")
      .add_argument_doc("beta", "Shift per channel: (channel,).")
      .add_argument_doc("min_data", "Minimum of the data's range: float32, shape (1,).")
      .add_argument_doc("max_data", "Maximum of the data's range: float32, shape (1,).")
      .add_argument_doc("moving_mean", "Moving mean per channel (aux state; MXNet lists it after beta).")
      .add_argument_doc("moving_var", "Moving variance per channel (aux state; MXNet lists it after moving_mean).")
      .set_outputs(RangeOutputs())
      .set_infer_shape(InferShape)
      .set_infer_type(InferType)
      .set_dtype_generic();
}

}  // namespace
}  // namespace quant

SYMBIND_REGISTER_OP_FAMILY(quantized_batch_norm) {
  quant::Declare(OpRegistry::Global().Register("_contrib_quantized_batch_norm"))
      .describe(R"(Inference BatchNorm on quantized data, to int8 over the calibrated range (required):
q_out = clamp(round_half_even(q * s_c + t_c)) with s_c = gamma_c / sqrt(var_c + eps) * R_data /
R_out / sqrt(1 + eps) and t_c = (beta_c - mean_c * gamma_c / sqrt(var_c + eps)) * 127.5 / R_out,
R = max(|min|, |max|), as MXNet 1.9.1's oneDNN kernel computes it (its BatchNorm of mean 0 and
variance 1 divides by sqrt(1 + eps) once more; gamma is used as given, whatever fix_gamma says;
uint8 data is first rounded to int8 levels, x * 127.5 / 255.5). Outputs the levels and the
calibrated range. Inputs in MXNet's order: data, gamma, beta, moving_mean, moving_var, min_data,
max_data. The parameters are BatchNorm's.)")
      .set_forward(quant::Forward<false>);
  // Made by the Predictor's graph rewrite (predict/graph_rewrites.h), not by models.
  quant::Declare(OpRegistry::Global().Register("_fused_quantized_batch_norm_relu"))
      .describe(R"(_contrib_quantized_batch_norm and the _contrib_quantized_act (relu) reading it in
one pass: max(0, q_out), the same levels as the two nodes (a level clamped at 0 before rounding
rounds as the rounded level clamped). Outputs the levels and the calibrated range. Inputs and
parameters as _contrib_quantized_batch_norm's. Inference only.)")
      .set_forward(quant::Forward<true>);
}

}  // namespace symbind
