// Shared pieces of MXNet 1.9.1's oneDNN subgraph operators (_sg_mkldnn_conv,
// _sg_mkldnn_fully_connected), as its symbol files hold them: a node whose parameter
// "subgraphs" is the nested float graph it stands for (Convolution + BatchNorm + activation +
// sum, or FullyConnected + activation), with flags and calibrated ranges of its own.
// docs/quantization.md states the semantics.
//
//   const InnerGraph g = ParseInnerGraph(kwargs, "_sg_mkldnn_conv");
//   const InnerNode* conv = g.Find({"Convolution"});            // its NodeAttrs, parsed by the op
//   const PostOp act = PostOp::FromNode(*relu);                  // relu, leaky, clip, sigmoid, ...
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <symbind/core/parsed_param.h>
#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm_int8.h>
#include <symbind/ops/op_util.h>
#include <symbind/ops/quantization/quantization_util.h>

namespace symbind {
namespace subgraph {

// One operator node of the nested graph: its parsed attributes and which inner nodes it reads
// (-1 for a variable, i.e. an input of the outer node).
struct InnerNode {
  NodeAttrs attrs;
  std::vector<int> inputs;
  const std::string& op() const { return attrs.op->name; }
};

struct InnerGraph {
  std::vector<InnerNode> nodes;  // operator nodes, in file (topological) order
  // The first node whose op is one of `ops`, or null.
  const InnerNode* Find(const std::vector<std::string>& ops) const;
  // The node read by `n`'s first input, or null for a variable.
  const InnerNode* Producer(const InnerNode& n) const;
};

// The "subgraphs" parameter of `kwargs` (one nested graph in MXNet's JSON form) with every
// operator parsed by its own op; ParamError naming `op_name` when it is missing or malformed.
InnerGraph ParseInnerGraph(const KwArgs& kwargs, const std::string& op_name);

// `kwargs` without "subgraphs", for the flat flags; legacy names renamed (`renames`: old -> new).
KwArgs FlagsOf(const KwArgs& kwargs, const std::vector<std::pair<std::string, std::string>>& renames = {});

// An element-wise activation fused after a layer (oneDNN's eltwise post-op), in float.
struct PostOp {
  enum Kind { kNone, kRelu, kLeaky, kClip, kSigmoid, kTanh, kSoftRelu, kElu, kGelu, kAbs, kSquare, kSqrt, kExp };
  Kind kind = kNone;
  float alpha = 0, beta = 0;  // leaky / elu slope; clip's a_min, a_max
  // From an inner Activation, LeakyReLU, clip or unary op; ParamError for others.
  static PostOp FromNode(const InnerNode& n);
  float operator()(float x) const;
  // oneDNN writes these to uint8 (their results are never negative): relu, sigmoid, softrelu,
  // clip from 0, abs, square, sqrt, exp.
  bool NonNegative() const;
  explicit operator bool() const { return kind != kNone; }
};

// Per-output-channel scales of float weights `w` (channels rows of `per_channel` values), as
// MXNet's GetWeightScales: 127.5 / max|w_c|, lowered where a nonzero bias b_c would pass 2^30
// in the sums' units (b_c * data_scale * scale_c); one scale over the whole tensor when not
// `per_channel_scales`.
std::vector<float> WeightScales(const float* w, const float* bias, int64_t channels, int64_t per_channel,
                                float data_scale, bool per_channel_scales);

// W_s8 = saturate(round(w * scale_c)) and b_s32 = saturate(round(b * data_scale * scale_c));
// with `even_levels`, W_s8 = 2 * round(w * scale_c / 2) (quant::ConvInt8EvenWeights: the scales
// then at most 126 / max|w_c|).
void QuantizeWeights(const float* w, const float* bias, int64_t channels, int64_t per_channel,
                     const std::vector<float>& scales, float data_scale, int8_t* w8, int32_t* b32,
                     bool even_levels = false);

// What a fused node derives from its weight arrays (the folded float weight and bias; the int8
// weights, int32 bias and scales; the packed filters), made at its first inference call and
// again only when one of those arrays is another array or was written (ArrayStamp), or, for the
// quantized forms, when the data's scale changed. Training calls derive per call.
struct SgWeightsState : OpState {
  // Whether the forms are current for `sources` and `data_scale`; if not, records them as the
  // ones the caller is about to derive from.
  bool Current(const std::vector<NDArray>& sources, float data_scale);
  std::vector<ArrayStamp> stamps;
  float scale = 0;
  NDArray w, b;                      // folded float weight and bias
  DerivedWeightsState inner{1};      // the inner Convolution's own forms of `w`
  std::vector<float> scales;         // per output channel (quantized)
  std::vector<int8_t> w8;
  std::vector<int32_t> b32;
  float weight_range = 0;            // max |w| (the uncalibrated output range)
  std::vector<PackedInt8A> packed;   // per group, where the convolution runs GEMMs
};
inline CreateStateFn CreateSgWeightsState() {
  return [](const NodeAttrs&, const std::vector<TShape>&, const std::vector<TShape>&) {
    return std::make_unique<SgWeightsState>();
  };
}
// The node's state for an inference call; null for training calls and calls without one.
inline SgWeightsState* NodeSgWeights(const OpContext& ctx) {
  return ctx.is_train ? nullptr : dynamic_cast<SgWeightsState*>(ctx.state);
}

}  // namespace subgraph
}  // namespace symbind
