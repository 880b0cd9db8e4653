// _fused_inverted_residual: MobileNet v2's inverted residual block as one node, made by the
// Predictor's FuseInvertedResiduals rewrite (predict/graph_rewrites.h); its kernel is in
// ops/kernels/conv_inverted_residual.cc.
#include <vector>

#include <symbind/ops/kernels/conv_inverted_residual.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using conv::InvertedResidualDims;

struct InvertedResidualParam : Parameter<InvertedResidualParam> {
  int64_t num_hidden, num_filter, kernel, stride, pad;
  int expand_act = FusedActivation::kNone, depthwise_act = FusedActivation::kNone;
  float expand_min = 0, expand_max = 0, depthwise_min = 0, depthwise_max = 0;
  bool residual = false;
  static void Declare(ParamDeclarer<InvertedResidualParam>& d) {
    using P = InvertedResidualParam;
    d.field("num_hidden", &P::num_hidden).lower_bound(1)
        .describe("Channels of the expansion (its num_filter; the depthwise convolution's groups).");
    d.field("num_filter", &P::num_filter).lower_bound(1).describe("Output channels (the projection's num_filter).");
    d.field("kernel", &P::kernel).lower_bound(1).describe("The depthwise convolution's square kernel size.");
    d.field("stride", &P::stride).set_default(1).lower_bound(1).describe("The depthwise convolution's stride.");
    d.field("pad", &P::pad).set_default(0).lower_bound(0).describe("The depthwise convolution's padding.");
    auto act = [&](const char* name, int P::*field, const char* of) {
      d.field(name, field)
          .set_default(FusedActivation::kNone)
          .add_enum("none", FusedActivation::kNone).add_enum("relu", FusedActivation::kRelu)
          .add_enum("clip", FusedActivation::kClip)
          .describe(StrCat("The activation after the ", of, ": none, relu (Activation's) or clip."));
    };
    act("expand_act", &P::expand_act, "expansion");
    d.field("expand_min", &P::expand_min).set_default(0.0f).describe("Lower bound of the expansion's clip.");
    d.field("expand_max", &P::expand_max).set_default(0.0f).describe("Upper bound of the expansion's clip.");
    act("depthwise_act", &P::depthwise_act, "depthwise convolution");
    d.field("depthwise_min", &P::depthwise_min).set_default(0.0f).describe("Lower bound of the depthwise clip.");
    d.field("depthwise_max", &P::depthwise_max).set_default(0.0f).describe("Upper bound of the depthwise clip.");
    d.field("residual", &P::residual).set_default(false).describe("Whether the block's input is added to its output.");
  }
  InvertedResidualDims Dims(const TShape& data) const {
    return {data[0], data[1], num_hidden, num_filter, data[2], data[3], kernel, stride, pad,
            {static_cast<FusedActivation::Kind>(expand_act), expand_min, expand_max},
            {static_cast<FusedActivation::Kind>(depthwise_act), depthwise_min, depthwise_max},
            residual};
  }
};

enum Input { kData, kExpandWeight, kExpandBias, kDepthwiseWeight, kDepthwiseBias, kProjectWeight, kProjectBias };

void InferShapeInvertedResidual(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<InvertedResidualParam>();
  const TShape data = (*in)[kData];
  if (!data.ndim_known()) return;
  if (data.ndim() != 4)
    throw ShapeError(StrCat("_fused_inverted_residual: input data should be 4D in batch-channel-y-x, got data shape ", data));
  const int64_t C = data[1], hidden = p.num_hidden;
  ShapeAssignCheck(in, kExpandWeight, TShape({hidden, C, 1, 1}));
  ShapeAssignCheck(in, kExpandBias, TShape({hidden}));
  ShapeAssignCheck(in, kDepthwiseWeight, TShape({hidden, 1, p.kernel, p.kernel}));
  ShapeAssignCheck(in, kDepthwiseBias, TShape({hidden}));
  ShapeAssignCheck(in, kProjectWeight, TShape({p.num_filter, hidden, 1, 1}));
  ShapeAssignCheck(in, kProjectBias, TShape({p.num_filter}));
  std::vector<int64_t> o = {data[0], p.num_filter};
  for (int i = 2; i < 4; ++i) {
    const int64_t padded = data[i] + 2 * p.pad;
    if (data[i] >= 0 && padded < p.kernel)
      throw ShapeError(StrCat("_fused_inverted_residual: kernel ", p.kernel, " exceeds the padded input ", padded,
                              " (pad ", p.pad, "); data shape ", data));
    o.push_back(data[i] < 0 ? -1 : (padded - p.kernel) / p.stride + 1);
  }
  const TShape output(o);
  if (p.residual && data.is_known() && output != data)
    throw ShapeError(StrCat("_fused_inverted_residual: a residual block's output ", output,
                            " must have its input's shape ", data));
  ShapeAssignCheck(out, 0, output);
}

void ForwardInvertedResidual(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<InvertedResidualParam>();
  auto array = [&](Input i) { return ctx.is_train ? nullptr : &in[i]; };
  const conv::InvertedResidualWeights w{in[kExpandWeight].fdata(),    in[kExpandBias].fdata(),
                                        in[kDepthwiseWeight].fdata(), in[kDepthwiseBias].fdata(),
                                        in[kProjectWeight].fdata(),   in[kProjectBias].fdata(),
                                        array(kExpandWeight),         array(kDepthwiseWeight),
                                        array(kProjectWeight)};
  conv::InvertedResidualForward(in[kData].fdata(), w, out[0].fdata(), p.Dims(in[kData].shape()), req[0]);
}

int64_t InvertedResidualMacs(const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
  const auto& p = attrs.param<InvertedResidualParam>();
  const int64_t in_plane = in[kData].Size() / std::max<int64_t>(1, in[kData][1]);  // batch x H x W
  const int64_t out_plane = out[0].Size() / std::max<int64_t>(1, p.num_filter);
  return in_plane * p.num_hidden * in[kData][1] + out_plane * p.num_hidden * (p.kernel * p.kernel + p.num_filter);
}
}  // namespace

SYMBIND_REGISTER_OP(_fused_inverted_residual)
    .describe(R"(MobileNet v2's inverted residual block in one pass: a 1x1 expansion to num_hidden
channels (+ bias, activation), a depthwise kernel x kernel convolution (+ bias, activation), a 1x1
projection to num_filter channels (+ bias) and, when residual, the block's input added. Computed a
band of output rows at a time, so that the expanded activations stay in cache. Inference only;
made by the Predictor's graph rewrite from the Convolution / _fused_conv_act nodes of a block
(their BatchNorms folded, their relu / clip fused).)")
    .set_params<InvertedResidualParam>()
    .set_arguments({"data", "expand_weight", "expand_bias", "depthwise_weight", "depthwise_bias", "project_weight",
                    "project_bias"})
    .add_argument_doc("data", "Input data: (batch, channel, height, width).")
    .add_argument_doc("expand_weight", "The expansion's weight: (num_hidden, channel, 1, 1).")
    .add_argument_doc("expand_bias", "The expansion's bias: (num_hidden,).")
    .add_argument_doc("depthwise_weight", "The depthwise convolution's weight: (num_hidden, 1, kernel, kernel).")
    .add_argument_doc("depthwise_bias", "The depthwise convolution's bias: (num_hidden,).")
    .add_argument_doc("project_weight", "The projection's weight: (num_filter, num_hidden, 1, 1).")
    .add_argument_doc("project_bias", "The projection's bias: (num_filter,).")
    .set_infer_shape(InferShapeInvertedResidual)
    .set_mac_count(InvertedResidualMacs)
    .set_forward(ForwardInvertedResidual);

}  // namespace symbind
