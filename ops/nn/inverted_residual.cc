// _fused_inverted_residual: MobileNet v2's inverted residual block as one node, made by the
// Predictor's FuseInvertedResiduals rewrite (predict/graph_rewrites.h); its kernel is in
// ops/kernels/conv_inverted_residual.cc.
#include <string>
#include <vector>

#include <symbind/ops/kernels/conv_inverted_residual.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using conv::InvertedResidualDims;

struct InvertedResidualParam : Parameter<InvertedResidualParam> {
  int64_t num_hidden, num_filter, kernel, stride, pad;
  int expand_act = FusedActivation::kNone, depthwise_act = FusedActivation::kNone;
  float expand_min = 0, expand_max = 0, expand_slope = 0, depthwise_min = 0, depthwise_max = 0, depthwise_slope = 0;
  bool residual = false;
  static void Declare(ParamDeclarer<InvertedResidualParam>& d) {
    using P = InvertedResidualParam;
    d.field("num_hidden", &P::num_hidden).lower_bound(1)
        .describe("Channels of the expansion (its num_filter; the depthwise convolution's groups).");
    d.field("num_filter", &P::num_filter).lower_bound(1).describe("Output channels (the projection's num_filter).");
    d.field("kernel", &P::kernel).lower_bound(1).describe("The depthwise convolution's square kernel size.");
    d.field("stride", &P::stride).set_default(1).lower_bound(1).describe("The depthwise convolution's stride.");
    d.field("pad", &P::pad).set_default(0).lower_bound(0).describe("The depthwise convolution's padding.");
    auto act = [&](const char* name, int P::*field, const char* of, const char* gamma) {
      d.field(name, field)
          .set_default(FusedActivation::kNone)
          .add_enum("none", FusedActivation::kNone).add_enum("relu", FusedActivation::kRelu)
          .add_enum("clip", FusedActivation::kClip).add_enum("leaky", FusedActivation::kLeaky)
          .add_enum("prelu", FusedActivation::kPRelu)
          .describe(StrCat("The activation after the ", of, ": none, relu (Activation's), clip, leaky (LeakyReLU's) "
                           "or prelu (LeakyReLU's, one slope per channel from the ", gamma, " input)."));
    };
    act("expand_act", &P::expand_act, "expansion", "expand_gamma");
    d.field("expand_min", &P::expand_min).set_default(0.0f).describe("Lower bound of the expansion's clip.");
    d.field("expand_max", &P::expand_max).set_default(0.0f).describe("Upper bound of the expansion's clip.");
    d.field("expand_slope", &P::expand_slope).set_default(0.0f).describe("The expansion's leaky slope.");
    act("depthwise_act", &P::depthwise_act, "depthwise convolution", "depthwise_gamma");
    d.field("depthwise_min", &P::depthwise_min).set_default(0.0f).describe("Lower bound of the depthwise clip.");
    d.field("depthwise_max", &P::depthwise_max).set_default(0.0f).describe("Upper bound of the depthwise clip.");
    d.field("depthwise_slope", &P::depthwise_slope).set_default(0.0f).describe("The depthwise convolution's leaky slope.");
    d.field("residual", &P::residual).set_default(false).describe("Whether the block's input is added to its output.");
  }
  bool expand_prelu() const { return expand_act == FusedActivation::kPRelu; }
  bool depthwise_prelu() const { return depthwise_act == FusedActivation::kPRelu; }
  // prelu's slopes come from the gamma inputs (null when the activation is not prelu).
  InvertedResidualDims Dims(const TShape& data, const float* expand_gamma = nullptr,
                            const float* depthwise_gamma = nullptr) const {
    return {data[0], data[1], num_hidden, num_filter, data[2], data[3], kernel, stride, pad,
            {static_cast<FusedActivation::Kind>(expand_act), expand_min, expand_max, expand_slope, expand_gamma},
            {static_cast<FusedActivation::Kind>(depthwise_act), depthwise_min, depthwise_max, depthwise_slope,
             depthwise_gamma},
            residual};
  }
};

// Where the node's inputs sit: data, the expansion's weight, bias (and prelu's gamma), the
// depthwise convolution's weight, bias (and gamma), the projection's weight and bias: each
// gamma after its convolution's bias, where the unfused graph lists it, so that the rewrite keeps
// ListArguments' order.
struct InputLayout {
  int data = 0, expand_weight = 1, expand_bias = 2, expand_gamma = -1, depthwise_weight, depthwise_bias,
      depthwise_gamma = -1, project_weight, project_bias;
  explicit InputLayout(const InvertedResidualParam& p) {
    int next = 3;
    if (p.expand_prelu()) expand_gamma = next++;
    depthwise_weight = next++;
    depthwise_bias = next++;
    if (p.depthwise_prelu()) depthwise_gamma = next++;
    project_weight = next++;
    project_bias = next++;
  }
};

std::vector<std::string> InvertedResidualArguments(const NodeAttrs& attrs) {
  const auto& p = attrs.param<InvertedResidualParam>();
  std::vector<std::string> names = {"data", "expand_weight", "expand_bias"};
  if (p.expand_prelu()) names.push_back("expand_gamma");
  names.insert(names.end(), {"depthwise_weight", "depthwise_bias"});
  if (p.depthwise_prelu()) names.push_back("depthwise_gamma");
  names.insert(names.end(), {"project_weight", "project_bias"});
  return names;
}

void InferShapeInvertedResidual(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<InvertedResidualParam>();
  const InputLayout at(p);
  const TShape data = (*in)[at.data];
  if (!data.ndim_known()) return;
  if (data.ndim() != 4)
    throw ShapeError(StrCat("_fused_inverted_residual: input data should be 4D in batch-channel-y-x, got data shape ", data));
  const int64_t C = data[1], hidden = p.num_hidden;
  ShapeAssignCheck(in, at.expand_weight, TShape({hidden, C, 1, 1}));
  ShapeAssignCheck(in, at.expand_bias, TShape({hidden}));
  if (p.expand_prelu()) ShapeAssignCheck(in, at.expand_gamma, TShape({hidden}));
  ShapeAssignCheck(in, at.depthwise_weight, TShape({hidden, 1, p.kernel, p.kernel}));
  ShapeAssignCheck(in, at.depthwise_bias, TShape({hidden}));
  if (p.depthwise_prelu()) ShapeAssignCheck(in, at.depthwise_gamma, TShape({hidden}));
  ShapeAssignCheck(in, at.project_weight, TShape({p.num_filter, hidden, 1, 1}));
  ShapeAssignCheck(in, at.project_bias, TShape({p.num_filter}));
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
  const InputLayout at(p);
  auto data = [&](int i) { return i < 0 ? nullptr : in[static_cast<size_t>(i)].fdata(); };
  auto derived = [&](size_t slot, int i) { return NodeDerivedWeights(ctx, slot, in[static_cast<size_t>(i)]); };
  const conv::InvertedResidualWeights w{data(at.expand_weight),    data(at.expand_bias),
                                        data(at.depthwise_weight), data(at.depthwise_bias),
                                        data(at.project_weight),   data(at.project_bias),
                                        derived(0, at.expand_weight), derived(1, at.depthwise_weight),
                                        derived(2, at.project_weight)};
  conv::InvertedResidualForward(data(at.data), w, out[0].fdata(),
                                p.Dims(in[0].shape(), data(at.expand_gamma), data(at.depthwise_gamma)), req[0]);
}

int64_t InvertedResidualMacs(const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
  const auto& p = attrs.param<InvertedResidualParam>();
  const int64_t in_plane = in[0].Size() / std::max<int64_t>(1, in[0][1]);  // batch x H x W (data is input 0)
  const int64_t out_plane = out[0].Size() / std::max<int64_t>(1, p.num_filter);
  return in_plane * p.num_hidden * in[0][1] + out_plane * p.num_hidden * (p.kernel * p.kernel + p.num_filter);
}
}  // namespace

SYMBIND_REGISTER_OP(_fused_inverted_residual)
    .describe(R"(MobileNet v2's inverted residual block in one pass: a 1x1 expansion to num_hidden
channels (+ bias, activation), a depthwise kernel x kernel convolution (+ bias, activation), a 1x1
projection to num_filter channels (+ bias) and, when residual, the block's input added. Computed a
band of output rows at a time, so that the expanded activations stay in cache. Inference only;
made by the Predictor's graph rewrite from the Convolution / _fused_conv_act nodes of a block
(their BatchNorms folded, their relu / clip / leaky / prelu fused): MobileNet v2's blocks and
MobileFaceNet's (prelu).)")
    .set_params<InvertedResidualParam>()
    .set_arguments(InvertedResidualArguments)
    .add_argument_doc("data", "Input data: (batch, channel, height, width).")
    .add_argument_doc("expand_weight", "The expansion's weight: (num_hidden, channel, 1, 1).")
    .add_argument_doc("expand_bias", "The expansion's bias: (num_hidden,).")
    .add_argument_doc("depthwise_weight", "The depthwise convolution's weight: (num_hidden, 1, kernel, kernel).")
    .add_argument_doc("depthwise_bias", "The depthwise convolution's bias: (num_hidden,).")
    .add_argument_doc("project_weight", "The projection's weight: (num_filter, num_hidden, 1, 1).")
    .add_argument_doc("project_bias", "The projection's bias: (num_filter,).")
    .add_argument_doc("expand_gamma", "With expand_act prelu: the expansion's slopes, (num_hidden,).")
    .add_argument_doc("depthwise_gamma", "With depthwise_act prelu: the depthwise convolution's slopes, (num_hidden,).")
    .set_infer_shape(InferShapeInvertedResidual)
    .set_mac_count(InvertedResidualMacs)
    .set_forward(ForwardInvertedResidual)
    .set_create_state(CreateDerivedWeightsState(3));

}  // namespace symbind
