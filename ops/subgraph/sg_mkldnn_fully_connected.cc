// _sg_mkldnn_fully_connected: MXNet 1.9.1's oneDNN fused FullyConnected (optionally followed by
// an element-wise activation), in float or quantized, as its symbol files hold it
// (docs/quantization.md).
#include <symbind/ops/kernels/gemm_int8.h>
#include <symbind/ops/nn/fully_connected_param.h>
#include <symbind/ops/subgraph/sg_mkldnn_common.h>

namespace symbind {
namespace subgraph {
namespace {

struct SgFCParam : quant::CalibRangeFields, Parameter<SgFCParam> {
  bool quantized, enable_float_output, with_eltwise;
  std::optional<bool> channel_wise_quantize;
  NodeAttrs fc;  // the nested FullyConnected
  PostOp eltwise;

  static void Declare(ParamDeclarer<SgFCParam>& d) {
    d.field("quantized", &SgFCParam::quantized).set_default(false).describe("int8/uint8 data.");
    d.field("enable_float_output", &SgFCParam::enable_float_output).set_default(false)
        .describe("Quantized, with a float32 output (a dequantize fused in).");
    d.field("with_eltwise", &SgFCParam::with_eltwise).set_default(false)
        .describe("An element-wise activation follows the FullyConnected.");
    quant::DeclareCalibRange(d, "give the quantized output int8 or uint8 levels of that range (else int32 sums)");
    d.field("channel_wise_quantize", &SgFCParam::channel_wise_quantize).set_default(std::nullopt)
        .describe("Float weights quantized per output row here, instead of int8 weights with one range.");
  }

  static SgFCParam Parse(const KwArgs& kwargs) {
    SgFCParam p = Parameter<SgFCParam>::Parse(FlagsOf(kwargs, {{"with_relu", "with_eltwise"}}));
    const InnerGraph g = ParseInnerGraph(kwargs, "_sg_mkldnn_fully_connected");
    const InnerNode* fc = g.Find({"FullyConnected"});
    if (!fc) throw ParamError("_sg_mkldnn_fully_connected: the nested graph has no FullyConnected");
    p.fc = fc->attrs;
    for (const InnerNode& n : g.nodes)
      if (&n != fc) p.eltwise = PostOp::FromNode(n);
    if (p.with_eltwise != bool(p.eltwise))
      throw ParamError("_sg_mkldnn_fully_connected: with_eltwise does not match the nested graph");
    if (p.quantized && p.channel_wise() && !p.calibrated() && !p.enable_float_output)
      throw ParamError("_sg_mkldnn_fully_connected: channel-wise quantization needs min_calib_range / "
                       "max_calib_range or enable_float_output");
    return p;
  }

  bool channel_wise() const { return channel_wise_quantize.value_or(false); }
  bool no_bias() const { return fc.param<FullyConnectedParam>().no_bias; }
  bool range_outputs() const { return quantized && !enable_float_output; }
  DType output_type() const {
    if (!quantized || enable_float_output) return DType::kFloat32;
    if (!calibrated()) return DType::kInt32;
    return eltwise.NonNegative() ? DType::kUint8 : DType::kInt8;
  }
  std::vector<std::string> Arguments() const {
    std::vector<std::string> names = {"data", "weight"};
    if (!no_bias()) names.push_back("bias");
    if (!quantized) return names;
    names.insert(names.end(), {"min_data", "max_data"});
    if (channel_wise()) return names;
    names.insert(names.end(), {"min_weight", "max_weight"});
    if (!no_bias()) names.insert(names.end(), {"min_bias", "max_bias"});
    return names;
  }
};

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SgFCParam>();
  const size_t tensors = p.no_bias() ? 2 : 3;
  std::vector<TShape> fc_in(in->begin(), in->begin() + long(tensors)), fc_out = {(*out)[0]};
  InferShapeFC(p.fc, &fc_in, &fc_out);
  for (size_t k = 0; k < tensors; ++k) ShapeAssignCheck(in, k, fc_in[k]);
  ShapeAssignCheck(out, 0, fc_out[0]);
  quant::InferRangeShapes(in, tensors, out);
}

void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = attrs.param<SgFCParam>();
  const int f32 = static_cast<int>(DType::kFloat32), i8 = static_cast<int>(DType::kInt8);
  const size_t tensors = p.no_bias() ? 2 : 3;
  if (!p.quantized) {
    for (size_t k = 0; k < in->size(); ++k) TypeAssignCheck(in, k, f32);
  } else {
    quant::CheckQuantizedType((*in)[0], "input 'data' of a quantized _sg_mkldnn_fully_connected");
    for (size_t k = 1; k < tensors; ++k) TypeAssignCheck(in, k, p.channel_wise() ? f32 : i8);
    for (size_t k = tensors; k < in->size(); ++k) TypeAssignCheck(in, k, f32);
  }
  TypeAssignCheck(out, 0, static_cast<int>(p.output_type()));
  for (size_t k = 1; k < out->size(); ++k) TypeAssignCheck(out, k, f32);
}

void ForwardFloat(const OpContext& ctx, const SgFCParam& p, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  static const Op& fully_connected = OpRegistry::Global().Get("FullyConnected");
  OpContext plain = ctx;
  plain.state = nullptr;
  plain.output_image_stride = 0;
  fully_connected.forward(plain, p.fc, in, {OpReq::kWrite}, {out[0]});
  if (!p.eltwise) return;
  float* y = out[0].fdata();
  ParallelFor(out[0].Size(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) y[i] = p.eltwise(y[i]);
  });
}

// The int8 weights, int32 bias and scales of a quantized node for data of `data_scale`:
// channel-wise from the float weight, or tensor-wise from the int8 weight and bias as given.
void DeriveQuantizedWeights(const SgFCParam& p, const std::vector<NDArray>& in, size_t tensors, int64_t hidden,
                            int64_t features, float data_scale, SgWeightsState* forms) {
  std::vector<int8_t>& w8 = forms->w8;
  std::vector<int32_t>& b32 = forms->b32;
  std::vector<float>& scales = forms->scales;
  float& weight_range = forms->weight_range;
  w8.assign(static_cast<size_t>(hidden * features), 0);
  b32.assign(static_cast<size_t>(hidden), 0);
  weight_range = 0;
  if (p.channel_wise()) {
    const float* bias = p.no_bias() ? nullptr : in[2].fdata();
    scales = WeightScales(in[1].fdata(), bias, hidden, features, data_scale, true);
    QuantizeWeights(in[1].fdata(), bias, hidden, features, scales, data_scale, w8.data(), b32.data());
  } else {
    // int8 weights and bias as given, with their ranges (MXNet's tensor-wise path): the bias
    // goes to the sums' units, and where it would pass 2^30 there, the weights are scaled down.
    const float w_min = quant::RangeValue(in[tensors + 2]), w_max = quant::RangeValue(in[tensors + 3]);
    weight_range = quant::MaxAbs(w_min, w_max);
    float ws = quant::QuantizeScale(DType::kInt8, w_min, w_max);
    std::copy(in[1].data<int8_t>(), in[1].data<int8_t>() + w8.size(), w8.begin());
    if (!p.no_bias()) {
      const float b_min = quant::RangeValue(in[tensors + 4]), b_max = quant::RangeValue(in[tensors + 5]);
      const float bs = quant::QuantizeScale(DType::kInt8, b_min, b_max);
      float r = data_scale * ws / bs;
      const float r_max = 1073741823.0f / quant::MaxAbs(b_min, b_max) / bs;
      if (r > r_max) {
        const float wr = r_max * bs / data_scale / ws;
        r = r_max;
        for (int8_t& v : w8) v = static_cast<int8_t>(std::round(v * wr));
        ws *= wr;
      }
      for (int64_t c = 0; c < hidden; ++c)
        b32[static_cast<size_t>(c)] = static_cast<int32_t>(std::round(in[2].data<int8_t>()[c] * r));
    }
    scales.assign(static_cast<size_t>(hidden), ws);
  }
}

void ForwardQuantized(const OpContext& ctx, const SgFCParam& p, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const auto& fp = p.fc.param<FullyConnectedParam>();
  const NDArray& x = in[0];
  const auto dims = FlatDims(x.shape(), fp.flatten);  // named: lambdas below capture them
  const int64_t rows = dims.first, features = dims.second;
  const int64_t hidden = fp.num_hidden;
  const size_t tensors = p.no_bias() ? 2 : 3;
  const float d_min = quant::RangeValue(in[tensors]), d_max = quant::RangeValue(in[tensors + 1]);
  const float data_scale = quant::QuantizeScale(x.dtype(), d_min, d_max);

  SgWeightsState* state = NodeSgWeights(ctx);
  std::optional<SgWeightsState> local;  // a call without node state derives for itself
  SgWeightsState& forms = state ? *state : local.emplace();
  // Derived from the weight, the bias and (tensor-wise) their ranges, and the data's scale.
  std::vector<NDArray> sources(in.begin() + 1, in.begin() + static_cast<std::ptrdiff_t>(tensors));
  if (!p.channel_wise()) sources.insert(sources.end(), in.begin() + static_cast<std::ptrdiff_t>(tensors) + 2, in.end());
  if (!state || !state->Current(sources, data_scale))
    DeriveQuantizedWeights(p, in, tensors, hidden, features, data_scale, &forms);
  const std::vector<int8_t>& w8 = forms.w8;
  const std::vector<int32_t>& b32 = forms.b32;
  const std::vector<float>& scales = forms.scales;
  const float weight_range = forms.weight_range;
  NDArray sums(TShape({rows, hidden}), DType::kInt32);
  quant::WithQuantizedType(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    GemmInt8NT(rows, hidden, features, x.data<T>(), w8.data(), sums.data<int32_t>());
  });
  const int32_t* acc = sums.data<int32_t>();
  const DType type = p.output_type();
  const float out_scale = p.calibrated() && type != DType::kFloat32 && type != DType::kInt32
                              ? quant::QuantizeScale(type, *p.min_calib_range, *p.max_calib_range)
                              : 1.0f;
  ParallelFor(rows, GrainFor(hidden), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = 0; c < hidden; ++c) {
        const int64_t i = r * hidden + c;
        const int64_t a = int64_t(acc[i]) + b32[static_cast<size_t>(c)];
        if (type == DType::kInt32) {
          if (!p.eltwise || p.eltwise.kind == PostOp::kRelu) {
            const int64_t v = p.eltwise ? std::max<int64_t>(a, 0) : a;
            out[0].data<int32_t>()[i] = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX));
          } else {
            out[0].data<int32_t>()[i] = quant::SaturateRound<int32_t>(p.eltwise(float(a)));
          }
          continue;
        }
        // oneDNN's output scale per row, in MXNet's order: without an eltwise the output levels'
        // scale folded in; with one, the activation on the float value, scaled after.
        const float ws = scales[static_cast<size_t>(c)];
        float value;
        if (type != DType::kFloat32 && !p.eltwise) value = (out_scale / data_scale / ws) * float(a);
        else value = p.eltwise((1.0f / data_scale / ws) * float(a)) * out_scale;
        if (type == DType::kFloat32) out[0].fdata()[i] = value;
        else if (type == DType::kUint8) out[0].data<uint8_t>()[i] = quant::SaturateRound<uint8_t>(value);
        else out[0].data<int8_t>()[i] = quant::SaturateRound<int8_t>(value);
      }
  });
  if (!p.range_outputs()) return;
  if (p.calibrated()) {
    quant::SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
  } else {
    const float range = quant::ProductRange(weight_range, quant::MaxAbs(d_min, d_max), x.dtype() == DType::kUint8);
    quant::SetRange(out[1], out[2], -range, range);
  }
}

void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SgFCParam>();
  if (p.quantized) ForwardQuantized(ctx, p, in, out);
  else ForwardFloat(ctx, p, in, out);
}

}  // namespace
}  // namespace subgraph

SYMBIND_REGISTER_OP(_sg_mkldnn_fully_connected)
    .describe(R"(MXNet's oneDNN fused FullyConnected, as MXNet 1.9.1's symbol files hold it: the
parameter "subgraphs" is the nested float graph (FullyConnected, then optionally an element-wise
activation). Quantized: int8 or uint8 data with its range and, tensor-wise (the default), int8
weight and bias with their ranges (the bias rescaled to the sums' units, rounded half away from
zero); channel-wise, float weights quantized per output row. Output: float32 with
enable_float_output; int8 (uint8 after a never-negative activation) at min_calib_range /
max_calib_range; else int32 sums with MXNet's product range.)")
    .set_params<subgraph::SgFCParam>()
    .set_arguments([](const NodeAttrs& a) { return a.param<subgraph::SgFCParam>().Arguments(); })
    .add_argument_doc("data", "Input data: float32, or int8 / uint8 when quantized.")
    .add_argument_doc("weight", "Weight: float32, or int8 when quantized tensor-wise.")
    .add_argument_doc("bias", "Bias: float32, or int8 when quantized tensor-wise; absent with no_bias.")
    .add_argument_doc("min_data", "Minimum of the data's range (quantized).")
    .add_argument_doc("max_data", "Maximum of the data's range (quantized).")
    .add_argument_doc("min_weight", "Minimum of the int8 weight's range (quantized tensor-wise).")
    .add_argument_doc("max_weight", "Maximum of the int8 weight's range (quantized tensor-wise).")
    .add_argument_doc("min_bias", "Minimum of the int8 bias's range (quantized tensor-wise).")
    .add_argument_doc("max_bias", "Maximum of the int8 bias's range (quantized tensor-wise).")
    .set_outputs([](const NodeAttrs& a) {
      if (a.param<subgraph::SgFCParam>().range_outputs())
        return std::vector<std::string>{"output", "min_output", "max_output"};
      return std::vector<std::string>{"output"};
    })
    .set_infer_shape(subgraph::InferShape)
    .set_infer_type(subgraph::InferType)
    .set_dtype_generic()
    .set_create_state(subgraph::CreateSgWeightsState())
    .set_forward(subgraph::Forward);

}  // namespace symbind
