// _fused_quantized_act: _contrib_dequantize, then relu / clip / leaky, then _contrib_quantize_v2
// with a calibrated range, in one pass over the levels (the Predictor's fuse_quantized_activations
// rewrite makes it; MobileNet v2's relu6 has no int8 form in MXNet's graphs).
#include <symbind/ops/nn/fused_activation_param.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace quant {
namespace {

struct FusedQuantizedActParam : FusedActivationFields, CalibRangeFields, Parameter<FusedQuantizedActParam> {
  int out_type;
  static void Declare(ParamDeclarer<FusedQuantizedActParam>& d) {
    DeclareFusedActivation(d, "_fused_quantized_act", false);
    DeclareOutType(d);
    DeclareCalibRange(d, "quantize the activation's output (required)");
  }
  DType OutDType() const { return CalibratedOutDType(out_type, *this); }
};

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<FusedQuantizedActParam>();
  if (!p.calibrated())  // the rewrite fuses calibrated quantize_v2 nodes only
    throw ParamError("_fused_quantized_act needs min_calib_range and max_calib_range");
  const DType in_type = in[0].dtype(), out_type = out[0].dtype();
  // The three ops' formulas, element by element, in one pass.
  const float step = 1.0f / QuantizeScale(in_type, RangeValue(in[1]), RangeValue(in[2]));
  const float scale = QuantizeScale(out_type, *p.min_calib_range, *p.max_calib_range);
  WithQuantizedType(in_type, [&](auto in_zero) {
    using TI = decltype(in_zero);
    WithQuantizedType(out_type, [&](auto out_zero) {
      using TO = decltype(out_zero);
      ActScaleRound(in[0].data<TI>(), in[0].Size(), step, p.activation(), scale, out[0].data<TO>());
    });
  });
  if (out_type == DType::kInt8) {
    const float r = MaxAbs(*p.min_calib_range, *p.max_calib_range);
    SetRange(out[1], out[2], -r, r);
  } else {
    SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
  }
}

}  // namespace
}  // namespace quant

// Made by the Predictor's graph rewrite (predict/graph_rewrites.h), not by models.
SYMBIND_REGISTER_OP(_fused_quantized_act)
    .describe(R"(Dequantize, an activation and quantize_v2 in one pass over int8 or uint8 levels,
with the three ops' formulas: x = q / scale_in, y = act(x) (relu, clip to [a_min, a_max] or
leaky), q_out = clamp(round_half_even(y * scale_out)) over the calibrated range, the same levels
the three nodes give. Outputs the levels and their range, as
quantize_v2 does. Inference only.)")
    .set_params<quant::FusedQuantizedActParam>()
    .set_arguments({"data", "min_range", "max_range"})
    .add_argument_doc("data", "Quantized input data (int8 or uint8).")
    .add_argument_doc("min_range", "The minimum of the input's range: float32, shape (1,).")
    .add_argument_doc("max_range", "The maximum of the input's range: float32, shape (1,).")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape(quant::InferSameShapeAndRanges)
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      TypeAssignCheck(out, 0, static_cast<int>(attrs.param<quant::FusedQuantizedActParam>().OutDType()));
      quant::InferRangeTypes(in, 1, out);
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
