// _fused_quantized_act: _contrib_dequantize, then relu / clip / leaky / prelu, then _contrib_quantize_v2
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
    DeclareFusedActivation(d, "_fused_quantized_act", true);
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
      const TI* x = in[0].data<TI>();
      TO* y = out[0].data<TO>();
      if (p.act_type != FusedActivation::kPRelu) return ActScaleRound(x, in[0].Size(), step, p.activation(), scale, y);
      // prelu: each (image, channel) plane is leaky with its channel's slope (gamma of one slope,
      // or of one per channel).
      const TShape& d = in[0].shape();
      const int64_t channels = d.ndim() > 1 ? d[1] : 1, planes = d.ndim() > 0 ? d[0] * channels : 1;
      const int64_t inner = planes ? in[0].Size() / planes : 0;
      const float* gamma = in[3].fdata();
      const bool one_slope = in[3].Size() == 1;
      ParallelFor(planes, GrainFor(inner), [&](int64_t p0, int64_t p1) {
        for (int64_t plane = p0; plane < p1; ++plane) {
          FusedActivation leaky{FusedActivation::kLeaky};
          leaky.slope = gamma[one_slope ? 0 : plane % channels];
          ActScaleRound(x + plane * inner, inner, step, leaky, scale, y + plane * inner);
        }
      });
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
with the three ops' formulas: x = q / scale_in, y = act(x) (relu, clip to [a_min, a_max],
leaky, or prelu with input gamma), q_out = clamp(round_half_even(y * scale_out)) over the calibrated range, the same levels
the three nodes give. Outputs the levels and their range, as
quantize_v2 does. Inference only.)")
    .set_params<quant::FusedQuantizedActParam>()
    .set_arguments([](const NodeAttrs& a) {
      std::vector<std::string> names{"data", "min_range", "max_range"};
      if (a.param<quant::FusedQuantizedActParam>().act_type == FusedActivation::kPRelu) names.push_back("gamma");
      return names;
    })
    .add_argument_doc("data", "Quantized input data (int8 or uint8).")
    .add_argument_doc("min_range", "The minimum of the input's range: float32, shape (1,).")
    .add_argument_doc("max_range", "The maximum of the input's range: float32, shape (1,).")
    .add_argument_doc("gamma", "prelu's slopes, one per channel (axis 1) or one for all: act_type prelu only.")
    .set_outputs(quant::RangeOutputs())
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const bool prelu = attrs.param<quant::FusedQuantizedActParam>().act_type == FusedActivation::kPRelu;
      ShapeAssignCheck(out, 0, (*in)[0]);
      ShapeAssignCheck(in, 0, (*out)[0]);
      for (size_t i : {size_t{1}, size_t{2}}) ShapeAssignCheck(in, i, TShape({1}));
      for (size_t i : {size_t{1}, size_t{2}}) ShapeAssignCheck(out, i, TShape({1}));
      if (!prelu) return;
      const TShape& d = (*in)[0];
      const TShape& g = (*in)[3];
      if (d.ndim_known() && g.ndim_known() && g.Size() != 1 && !(d.ndim() > 1 && g.ndim() == 1 && g[0] == d[1]))
        throw ShapeError(StrCat("_fused_quantized_act(prelu): gamma ", g, " is neither one slope nor one per channel of ", d));
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      quant::CheckQuantizedType((*in)[0], "input 'data'");
      TypeAssignCheck(out, 0, static_cast<int>(attrs.param<quant::FusedQuantizedActParam>().OutDType()));
      quant::InferRangeTypes(in, 1, out);  // the ranges, and prelu's gamma: float32
    })
    .set_dtype_generic()
    .set_forward(quant::Forward);

}  // namespace symbind
