// _sg_mkldnn_conv: MXNet 1.9.1's oneDNN fused convolution (Convolution, then optionally
// BatchNorm, an activation, a sum with another tensor and an activation after the sum), in float
// or quantized, as its symbol files hold it (docs/quantization.md).
#include <symbind/ops/subgraph/sg_mkldnn_conv.h>

#include <symbind/ops/kernels/conv_int8.h>

namespace symbind {
namespace subgraph {

SgConvParam SgConvParam::Parse(const KwArgs& kwargs) {
  SgConvParam p = Parameter<SgConvParam>::Parse(
      FlagsOf(kwargs, {{"with_relu", "with_act"}, {"with_postsum_relu", "with_postsum_act"}}));
  const InnerGraph g = ParseInnerGraph(kwargs, "_sg_mkldnn_conv");
  const InnerNode* c = g.Find({"Convolution"});
  if (!c) throw ParamError("_sg_mkldnn_conv: the nested graph has no Convolution");
  p.conv = c->attrs;
  p.conv_bias = !p.conv.param<ConvolutionParam>().no_bias;
  if (p.conv.param<ConvolutionParam>().kernel.ndim() != 2)
    throw ParamError("_sg_mkldnn_conv: only 2-D convolutions are supported here");
  const InnerNode* bn = g.Find({"BatchNorm"});
  if (p.with_bn != (bn != nullptr))
    throw ParamError(std::string("_sg_mkldnn_conv: with_bn is ") + (p.with_bn ? "true" : "false") +
                     " but the nested graph " + (bn ? "has" : "has no") + " BatchNorm");
  if (bn) {
    p.bn_eps = ParsedParam<double>(bn->attrs, "eps");
    p.fix_gamma = ParsedParam<bool>(bn->attrs, "fix_gamma");
  }
  if (p.with_bn || p.conv_bias) {  // the folded or given bias
    p.conv.dict["no_bias"] = "False";
    p.conv.op->ParseAttrs(&p.conv);
  }
  const InnerNode* sum = g.Find({"elemwise_add", "_plus", "_Plus", "add_n", "_add"});
  if (p.with_sum != (sum != nullptr))
    throw ParamError(std::string("_sg_mkldnn_conv: with_sum is ") + (p.with_sum ? "true" : "false") +
                     " but the nested graph " + (sum ? "has" : "has no") + " sum");
  for (const InnerNode& n : g.nodes) {
    if (&n == c || &n == bn || &n == sum) continue;
    const bool after_sum = sum && g.Producer(n) == sum;
    (after_sum ? p.postsum_act : p.act) = PostOp::FromNode(n);
  }
  if (p.with_act != bool(p.act) || p.with_postsum_act != bool(p.postsum_act))
    throw ParamError("_sg_mkldnn_conv: with_act / with_postsum_act do not match the activations of the nested graph");
  return p;
}

SgConvSlots::SgConvSlots(const SgConvParam& p) {
  names = {"data", "weight"};
  if (p.conv_bias) names.push_back("bias");
  if (p.with_bn) {
    gamma = names.size();
    names.insert(names.end(), {"gamma", "beta"});
  }
  if (p.with_sum) {
    sum = names.size();
    names.push_back("sum");
  }
  if (p.quantized) {
    data_min = names.size();
    names.insert(names.end(), {"data_min", "data_max"});
    if (p.with_sum) {
      sum_min = names.size();
      names.insert(names.end(), {"sum_min", "sum_max"});
    }
  }
  bias = p.conv_bias ? 2 : 0;
  mean = names.size();
  if (p.with_bn) aux = {"mean", "var"};
  count = names.size() + aux.size();
}

std::vector<size_t> SgConvSlots::FileOrder(const SgConvParam& p) const {
  std::vector<size_t> order(count);
  for (size_t k = 0; k < count; ++k) order[k] = k;
  if (!p.with_bn) return order;
  for (size_t k = gamma + 2; k < mean; ++k) order[k] = k + 2;  // after mean and var in MXNet's list
  order[mean] = gamma + 2;
  order[mean + 1] = gamma + 3;
  return order;
}

namespace {

using Slots = SgConvSlots;

void InferShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SgConvParam>();
  const Slots s(p);
  std::vector<TShape> conv_in = {(*in)[0], (*in)[1]};
  if (!p.conv.param<ConvolutionParam>().no_bias) conv_in.push_back(p.conv_bias ? (*in)[2] : TShape());
  std::vector<TShape> conv_out = {(*out)[0]};
  conv::InferShapeConv<ConvolutionParam>(p.conv, &conv_in, &conv_out);
  ShapeAssignCheck(in, 0, conv_in[0]);
  ShapeAssignCheck(in, 1, conv_in[1]);
  if (p.conv_bias) ShapeAssignCheck(in, 2, conv_in[2]);
  ShapeAssignCheck(out, 0, conv_out[0]);
  const TShape channels({p.conv.param<ConvolutionParam>().num_filter});
  if (p.with_bn)
    for (size_t k : {s.gamma, s.gamma + 1, s.mean, s.mean + 1}) ShapeAssignCheck(in, k, channels);
  if (p.with_sum) {
    ShapeAssignCheck(in, s.sum, (*out)[0]);
    ShapeAssignCheck(out, 0, (*in)[s.sum]);
  }
  if (p.quantized) {
    for (size_t k = s.data_min; k < s.data_min + (p.with_sum ? 4 : 2); ++k) ShapeAssignCheck(in, k, quant::RangeShape());
    for (size_t k = 1; k < out->size(); ++k) ShapeAssignCheck(out, k, quant::RangeShape());
  }
}

void InferType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  const auto& p = attrs.param<SgConvParam>();
  const Slots s(p);
  const int f32 = static_cast<int>(DType::kFloat32);
  for (size_t k = 0; k < in->size(); ++k) {
    if (k == 0 || (p.with_sum && k == s.sum)) continue;
    TypeAssignCheck(in, k, f32);  // weights, BatchNorm statistics, ranges
  }
  if (!p.quantized) {
    TypeAssignCheck(in, 0, f32);
    if (p.with_sum) TypeAssignCheck(in, s.sum, f32);
    TypeAssignCheck(out, 0, f32);
    return;
  }
  quant::CheckQuantizedType((*in)[0], "input 'data' of a quantized _sg_mkldnn_conv");
  if (p.with_sum) quant::CheckQuantizedType((*in)[s.sum], "input 'sum' of a quantized _sg_mkldnn_conv");
  const DType o = !p.calibrated() ? DType::kInt32 : p.uint8_output() ? DType::kUint8 : DType::kInt8;
  TypeAssignCheck(out, 0, static_cast<int>(o));
  for (size_t k = 1; k < out->size(); ++k) TypeAssignCheck(out, k, f32);
}

// The weight and bias with the BatchNorm folded in (MXNet's UpdateConvWeightBias), float; the
// weight array itself when there is no BatchNorm.
void FoldedWeights(const SgConvParam& p, const Slots& s, const std::vector<NDArray>& in, NDArray* w, NDArray* b) {
  const NDArray& weight = in[1];
  const int64_t channels = weight.shape()[0], per = weight.Size() / channels;
  if (!p.with_bn) {
    *w = weight;
    *b = p.conv_bias ? in[s.bias] : NDArray(TShape({channels}));
    return;
  }
  *w = weight.Copy();
  *b = NDArray(TShape({channels}));
  float* bias = b->fdata();
  for (int64_t c = 0; c < channels; ++c) bias[c] = p.conv_bias ? in[s.bias].fdata()[c] : 0.0f;
  const float *gamma = in[s.gamma].fdata(), *beta = in[s.gamma + 1].fdata();
  const float *mean = in[s.mean].fdata(), *var = in[s.mean + 1].fdata();
  float* wf = w->fdata();
  for (int64_t c = 0; c < channels; ++c) {
    const float alpha = (p.fix_gamma ? 1.0f : gamma[c]) / std::sqrt(var[c] + static_cast<float>(p.bn_eps));
    for (int64_t i = 0; i < per; ++i) wf[c * per + i] *= alpha;
    bias[c] = beta[c] + alpha * (bias[c] - mean[c]);
  }
}

// The arrays the folded weights come from: the weight, the bias, the BatchNorm's four.
std::vector<NDArray> WeightSources(const SgConvParam& p, const Slots& s, const std::vector<NDArray>& in) {
  std::vector<NDArray> sources{in[1]};
  if (p.conv_bias) sources.push_back(in[s.bias]);
  if (p.with_bn)
    for (size_t k : {s.gamma, s.gamma + 1, s.mean, s.mean + 1}) sources.push_back(in[k]);
  return sources;
}

void ForwardFloat(const OpContext& ctx, const SgConvParam& p, const Slots& s, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  SgWeightsState* state = NodeSgWeights(ctx);
  std::optional<SgWeightsState> local;  // a call without node state derives for itself
  SgWeightsState& forms = state ? *state : local.emplace();
  if (!state || !state->Current(WeightSources(p, s, in), 0.0f)) FoldedWeights(p, s, in, &forms.w, &forms.b);
  static const Op& convolution = OpRegistry::Global().Get("Convolution");
  OpContext plain = ctx;
  plain.state = state ? &state->inner : nullptr;  // the convolution's packed forms live with this node
  plain.output_image_stride = 0;
  const bool biased = !p.conv.param<ConvolutionParam>().no_bias;
  convolution.forward(plain, p.conv, biased ? std::vector<NDArray>{in[0], forms.w, forms.b} : std::vector<NDArray>{in[0], forms.w},
                      {OpReq::kWrite}, {out[0]});
  float* y = out[0].fdata();
  const float* sum = p.with_sum ? in[s.sum].fdata() : nullptr;
  ParallelFor(out[0].Size(), 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float v = p.act(y[i]);
      if (sum) v = p.postsum_act(v + sum[i]);
      y[i] = v;
    }
  });
}

// The node's derived weights on `forms` for data of `data` (made again only when the weight
// arrays or the data's scale changed; with `keep_packed`, its packed filters too; `even_allowed`:
// OpContext::int8_even_weights).
void DeriveQuantized(SgWeightsState& forms, bool current, bool keep_packed, const SgConvParam& p, const Slots& s,
                     const std::vector<NDArray>& in, const QuantizedConvInput& data, float data_scale,
                     const conv::ConvGeom& g, bool even_allowed) {
  if (current) return;
  const auto& cp = p.conv.param<ConvolutionParam>();
  const int64_t channels = in[1].shape()[0];
  NDArray w, b;
  FoldedWeights(p, s, in, &w, &b);
  const int64_t per = w.Size() / channels;
  const bool has_bias = p.with_bn || p.conv_bias;
  forms.scales = WeightScales(w.fdata(), has_bias ? b.fdata() : nullptr, channels, per, data_scale, p.calibrated());
  // Not for int32 output: its range is MXNet's product range of 127.5 weight levels.
  const bool even_levels =
      even_allowed && p.calibrated() && quant::ConvInt8EvenWeights(data.shape[1], cp.num_filter, cp.num_group, g);
  if (even_levels)
    for (float& scale : forms.scales) scale *= 126.0f / 127.5f;
  forms.w8.resize(static_cast<size_t>(w.Size()));
  forms.b32.resize(static_cast<size_t>(channels));
  QuantizeWeights(w.fdata(), has_bias ? b.fdata() : nullptr, channels, per, forms.scales, data_scale,
                  forms.w8.data(), forms.b32.data(), even_levels);
  const auto [w_lo, w_hi] = quant::MinMax(w.fdata(), w.Size());
  forms.weight_range = quant::MaxAbs(w_lo, w_hi);
  forms.packed.clear();
  if (keep_packed && quant::ConvInt8UsesGemm(data.shape[1], cp.num_filter, cp.num_group, g))
    forms.packed = quant::PackConvInt8Weights(forms.w8.data(), data.shape[1], cp.num_filter, cp.num_group, g);
}

// The calibrated output's scale and, for the common forms, its levels as the kernels make them.
struct CalibratedLevels {
  DType type;
  float out_scale, sum_scale;
  PostOp act;       // the activation on the scaled value (a clip without a sum left to the saturation)
  bool in_kernel;   // the kernels make the levels (plain activation and sum)
};
CalibratedLevels Calibrated(const SgConvParam& p, float sum_in_scale) {
  CalibratedLevels c;
  // Levels of the calibrated output range: oneDNN's output scales per channel, then the post-ops
  // on the scaled value (a clip without a sum is left to the output type's saturation, as
  // MXNet removes that post-op), then saturate and round.
  c.type = p.uint8_output() ? DType::kUint8 : DType::kInt8;
  c.out_scale = quant::QuantizeScale(c.type, *p.min_calib_range, *p.max_calib_range);
  c.sum_scale = p.with_sum ? c.out_scale / sum_in_scale : 0.0f;
  c.act = p.act;
  if (c.act.kind == PostOp::kClip) {
    if (p.with_sum) {
      c.act.alpha *= c.out_scale;
      c.act.beta *= c.out_scale;
    } else {
      c.act.kind = PostOp::kNone;
    }
  }
  // The common forms requantize each block of sums as the GEMM finishes it, with the same bits
  // as ForwardQuantized's loop: SaturateRound((sums + b32_c) * requant_c), plus sum_scale * sum
  // with a sum (ResNet's blocks). An activation that is relu into uint8 (or a relu after the
  // sum, whose output is uint8) is the saturation at 0.
  const bool saturates = c.type == DType::kUint8;
  const bool plain_act = c.act.kind == PostOp::kNone || (c.act.kind == PostOp::kRelu && saturates && !p.with_sum);
  const bool plain_sum = !p.with_sum || !p.postsum_act || (p.postsum_act.kind == PostOp::kRelu && saturates);
  c.in_kernel = plain_act && plain_sum;
  return c;
}

// The levels of a calibrated node whose kernels make them (c.in_kernel) from the derived `forms`,
// for data of `data_scale` and a sum of `sum_type` (with_sum only).
SgConvLevels LevelsOf(const CalibratedLevels& c, const SgWeightsState& forms, float data_scale,
                      std::optional<DType> sum_type) {
  SgConvLevels l;
  l.forms = &forms;
  l.requant.resize(forms.scales.size());
  for (size_t ch = 0; ch < l.requant.size(); ++ch) l.requant[ch] = c.out_scale / data_scale / forms.scales[ch];
  l.common.bias = forms.b32.data();
  l.common.out_unsigned = c.type == DType::kUint8;
  if (sum_type) {
    l.common.sum_unsigned = *sum_type == DType::kUint8;
    l.common.sum_scale = c.sum_scale;
  }
  l.out_type = c.type;
  return l;
}

void ForwardQuantized(const OpContext& ctx, const SgConvParam& p, const Slots& s, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const auto& cp = p.conv.param<ConvolutionParam>();
  const NDArray& x = in[0];
  const QuantizedConvInput data{x.shape(), x.dtype(), quant::RangeValue(in[s.data_min]),
                                quant::RangeValue(in[s.data_min + 1])};
  // uint8 data may carry a symmetric range (a relu output calibrated for int8): as in MXNet, its
  // scale is 255.5 over the larger magnitude.
  const float data_scale = quant::QuantizeScale(x.dtype(), data.min, data.max);
  const TShape& d = x.shape();
  const conv::ConvGeom g = conv::MakeGeom(d, out[0].shape(), cp.kernel, cp.stride, cp.dilate, cp.pad);
  SgWeightsState* state = NodeSgWeights(ctx);
  std::optional<SgWeightsState> local;  // a call without node state derives for itself
  SgWeightsState& forms = state ? *state : local.emplace();
  const int64_t channels = in[1].shape()[0];
  DeriveQuantized(forms, state && state->Current(WeightSources(p, s, in), data_scale), state != nullptr, p, s, in,
                  data, data_scale, g, ctx.int8_even_weights);
  const std::vector<float>& scales = forms.scales;
  const std::vector<int32_t>& b32 = forms.b32;

  const ScratchBuffer sums_buffer(out[0].shape().Size());  // int32 sums (4 bytes, as floats)
  int32_t* sums = reinterpret_cast<int32_t*>(sums_buffer.data());
  auto convolve = [&](const quant::Int8Levels* levels) {
    quant::WithQuantizedType(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      quant::ConvInt8(x.data<T>(), forms.w8.data(), sums, d[0], d[1], cp.num_filter, cp.num_group, g,
                      forms.packed.empty() ? nullptr : &forms.packed, levels);
    });
  };
  const int32_t* acc = sums;
  const int64_t pixels = g.out_size(), planes = d[0] * channels;

  float sum_in_scale = 0;
  if (p.with_sum)
    sum_in_scale = quant::QuantizeScale(in[s.sum].dtype(), quant::RangeValue(in[s.sum_min]), quant::RangeValue(in[s.sum_min + 1]));
  auto sum_at = [&](int64_t i) -> float {
    if (in[s.sum].dtype() == DType::kInt8) return in[s.sum].data<int8_t>()[i];
    return in[s.sum].data<uint8_t>()[i];
  };

  if (p.calibrated()) {
    const CalibratedLevels c = Calibrated(p, sum_in_scale);
    const DType type = c.type;
    const float out_scale = c.out_scale, sum_scale = c.sum_scale;
    const PostOp& act = c.act;
    if (c.in_kernel) {
      const SgConvLevels l =
          LevelsOf(c, forms, data_scale, p.with_sum ? std::optional<DType>(in[s.sum].dtype()) : std::nullopt);
      const quant::Int8Levels levels =
          p.with_sum ? l.At(out[0].raw_data(), pixels, in[s.sum].raw_data(), pixels) : l.At(out[0].raw_data(), pixels);
      convolve(&levels);
      quant::SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
      return;
    }
    convolve(nullptr);
    ParallelFor(planes, GrainFor(pixels), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t c = q % channels;
        const float requant = out_scale / data_scale / scales[static_cast<size_t>(c)];
        for (int64_t i = q * pixels; i < (q + 1) * pixels; ++i) {
          float v = act(requant * static_cast<float>(acc[i] + b32[static_cast<size_t>(c)]));
          if (p.with_sum) v = p.postsum_act(v + sum_scale * sum_at(i));
          if (type == DType::kUint8) out[0].data<uint8_t>()[i] = quant::SaturateRound<uint8_t>(v);
          else out[0].data<int8_t>()[i] = quant::SaturateRound<int8_t>(v);
        }
      }
    });
    quant::SetRange(out[1], out[2], *p.min_calib_range, *p.max_calib_range);
    return;
  }
  // Uncalibrated: int32 sums with the bias and post-ops on the raw values (one weight scale over
  // the tensor); the range is MXNet's product range of the data and the folded weight.
  convolve(nullptr);
  const float ws = scales[0];
  const float sum_scale = p.with_sum ? data_scale * ws / sum_in_scale : 0.0f;
  const bool exact = !p.with_sum && (p.act.kind == PostOp::kNone || p.act.kind == PostOp::kRelu);
  int32_t* y = out[0].data<int32_t>();
  ParallelFor(planes, GrainFor(pixels), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int32_t bias = b32[static_cast<size_t>(q % channels)];
      for (int64_t i = q * pixels; i < (q + 1) * pixels; ++i) {
        const int64_t a = int64_t(acc[i]) + bias;
        if (exact) {
          const int64_t v = p.act.kind == PostOp::kRelu ? std::max<int64_t>(a, 0) : a;
          y[i] = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX));
          continue;
        }
        float v = p.act.kind == PostOp::kClip ? float(a) : p.act(float(a));
        if (p.with_sum) v = p.postsum_act(v + sum_scale * sum_at(i));
        y[i] = quant::SaturateRound<int32_t>(v);
      }
    }
  });
  const float range = quant::ProductRange(forms.weight_range, quant::MaxAbs(data.min, data.max), x.dtype() == DType::kUint8);
  quant::SetRange(out[1], out[2], -range, range);
}

}  // namespace

std::optional<SgConvLevels> QuantizedSgConvLevels(const NodeAttrs& attrs, SgWeightsState* state,
                                                  const std::vector<NDArray>& in, const QuantizedConvInput& data,
                                                  const QuantizedConvInput* sum, const TShape& out_shape) {
  const auto& p = attrs.param<SgConvParam>();
  if (!p.quantized || !p.calibrated() || p.with_sum != (sum != nullptr)) return std::nullopt;
  const Slots s(p);
  const CalibratedLevels c = Calibrated(p, sum ? quant::QuantizeScale(sum->type, sum->min, sum->max) : 0.0f);
  if (!c.in_kernel) return std::nullopt;
  const auto& cp = p.conv.param<ConvolutionParam>();
  const float data_scale = quant::QuantizeScale(data.type, data.min, data.max);
  const conv::ConvGeom g = conv::MakeGeom(data.shape, out_shape, cp.kernel, cp.stride, cp.dilate, cp.pad);
  // Full levels: the fused kernels that ask for these run on VNNI, where even ones gain nothing.
  DeriveQuantized(*state, state->Current(WeightSources(p, s, in), data_scale), true, p, s, in, data, data_scale, g,
                  false);
  SgConvLevels l = LevelsOf(c, *state, data_scale, sum ? std::optional<DType>(sum->type) : std::nullopt);
  l.geom = g;
  return l;
}

namespace {
void Forward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const auto& p = attrs.param<SgConvParam>();
  const Slots s(p);
  if (p.quantized) ForwardQuantized(ctx, p, s, in, out);
  else ForwardFloat(ctx, p, s, in, out);
}

}  // namespace
}  // namespace subgraph

SYMBIND_REGISTER_OP(_sg_mkldnn_conv)
    .describe(R"(MXNet's oneDNN fused convolution, as MXNet 1.9.1's symbol files hold it: the
parameter "subgraphs" is the nested float graph (Convolution, then optionally BatchNorm, an
activation, elemwise_add of input 'sum', an activation after the sum), whose nodes give the
parameters. The BatchNorm folds into the weight and bias (W * gamma / sqrt(var + eps)). Quantized:
int8 or uint8 data with its range; the folded float weights quantized per output channel
(127.5 / max|w_c|; with PredictorOptions::int8_even_weights, calibrated layers that run as a
GEMM on CPUs with AVX2 but not AVX512-VNNI take even levels, 2 * round(w * 63 / max|w_c|)); int32
sums; with min_calib_range / max_calib_range, int8 output (uint8 when
the last activation is never negative) at that range, else int32 sums with MXNet's product range.)")
    .set_params<subgraph::SgConvParam>()
    .set_arguments([](const NodeAttrs& a) { return subgraph::Slots(a.param<subgraph::SgConvParam>()).names; })
    .set_aux_states([](const NodeAttrs& a) { return subgraph::Slots(a.param<subgraph::SgConvParam>()).aux; })
    .set_file_input_order([](const NodeAttrs& a) {
      const auto& p = a.param<subgraph::SgConvParam>();
      return subgraph::Slots(p).FileOrder(p);
    })
    .add_argument_doc("data", "Input data: float32, or int8 / uint8 when quantized.")
    .add_argument_doc("weight", "Convolution weight (float32).")
    .add_argument_doc("bias", "Convolution bias (float32); absent when the inner Convolution has no_bias.")
    .add_argument_doc("gamma", "BatchNorm gamma (with_bn).")
    .add_argument_doc("beta", "BatchNorm beta (with_bn).")
    .add_argument_doc("sum", "The tensor added after the convolution (with_sum): float32, or int8 / uint8 when quantized.")
    .add_argument_doc("data_min", "Minimum of the data's range (quantized).")
    .add_argument_doc("data_max", "Maximum of the data's range (quantized).")
    .add_argument_doc("sum_min", "Minimum of the sum's range (quantized, with_sum).")
    .add_argument_doc("sum_max", "Maximum of the sum's range (quantized, with_sum).")
    .add_argument_doc("mean", "BatchNorm moving mean (with_bn; MXNet lists it after beta).")
    .add_argument_doc("var", "BatchNorm moving variance (with_bn; MXNet lists it after mean).")
    .set_outputs([](const NodeAttrs& a) {
      if (a.param<subgraph::SgConvParam>().quantized) return std::vector<std::string>{"output", "output_min", "output_max"};
      return std::vector<std::string>{"output"};
    })
    .set_infer_shape(subgraph::InferShape)
    .set_infer_type(subgraph::InferType)
    .set_dtype_generic()
    .set_create_state(subgraph::CreateSgWeightsState())
    .set_forward(subgraph::Forward);

}  // namespace symbind
