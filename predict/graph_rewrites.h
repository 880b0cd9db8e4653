// Inference-time graph rewrites the Predictor applies at bind. They change the graph the
// executor runs and the weights it reads, never the caller's symbol or arrays: the rewritten
// graph is a copy, and every weight it changes is a new array the rewrite owns.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>

namespace symbind {

class Graph;

struct RewrittenGraph {
  Symbol symbol;                              // the same head nodes, in the same order
  std::map<std::string, NDArray> args, aux;   // the arrays the rewritten graph reads
  std::vector<std::string> folded;            // names of the nodes folded or fused away
};

// Folds each inference BatchNorm (moving statistics, as MXNet's inference forward uses them
// whatever use_global_stats says) into the Convolution or FullyConnected that feeds it:
//   W'[o] = W[o] * s[o],  b'[o] = (b[o] - mean[o]) * s[o] + beta[o],  s = gamma / sqrt(var + eps)
// (gamma = 1 under fix_gamma). A pair is folded only when the rewrite cannot change any
// visible result: the producer's output feeds nothing but the BatchNorm and is no head, its
// weight and bias feed nothing else, the BatchNorm normalises axis 1, is no head (the
// executor's outputs keep their names) and its mean/var outputs are unused, and every weight, bias, gamma, beta and moving statistic is a given array
// (`args` / `aux`, float32). The folded weight and bias are new variables named
// "<producer>_folded_weight" / "<producer>_folded_bias", read-only arrays (writing into them
// throws).
RewrittenGraph FoldBatchNorm(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux);

// Fuses each Activation(act_type=relu), clip and LeakyReLU(act_type=leaky or prelu) that reads
// a Convolution into it: the pair becomes one _fused_conv_act node (the convolution's name,
// inputs and parameters plus the activation; prelu's gamma joins as a last input, so it stays
// an argument and ListArguments keeps its order), which applies the activation where it writes
// its output, saving a pass over memory; results are bit-identical to the pair's. prelu only
// with a given gamma of one slope per filter. Only when nothing else can tell: the
// convolution's output feeds nothing but the activation and is no head, and the activation is
// no head (outputs keep their names). Likewise relu, clip and leaky (not prelu) reading a
// BatchNorm become one _fused_batch_norm_act node (the BatchNorm's name, inputs and parameters
// plus the activation; the BatchNorms FoldBatchNorm leaves, e.g. pre-activation ResNet's after
// each residual add), when its hidden mean / var outputs are unread. `fused` lists the
// activation nodes fused away; the arrays are unchanged.
RewrittenGraph FuseActivations(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                               const std::map<std::string, NDArray>& aux);

// Fuses each inverted residual block (MobileNet v2's, MobileFaceNet's; after FoldBatchNorm and FuseActivations)
// into one _fused_inverted_residual node (ops/kernels/conv_inverted_residual.h), which computes
// it a band of rows at a time: a 1x1 expansion (Convolution or _fused_conv_act, one group, a
// bias), a 3x3 or 5x5 depthwise convolution (num_group == num_filter == the expansion's filters,
// stride 1 or 2, no dilation, a bias) reading it, a 1x1 Convolution (one group, a bias, no
// activation) reading that and, when the projection's output is read by nothing but an
// elemwise_add with the block's input, that add. The expansion's and the depthwise output must
// feed nothing else and be no heads; the last node (the add, else the projection) keeps its name,
// so it may be a head. The activations may be relu, clip, leaky or prelu (MobileFaceNet's). The
// new node's inputs are the block input and the weights, biases (and prelu gammas) in the order
// the graph listed them, so ListArguments is unchanged. Results are the bits of the
// unfused graph. `folded` lists the nodes fused away; the arrays are unchanged.
RewrittenGraph FuseInvertedResiduals(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                                     const std::map<std::string, NDArray>& aux);

// Fuses each residual add into the Convolution feeding it: elemwise_add (or add_n of two) of a
// Convolution's output and any other entry, and a relu / clip / leaky LeakyReLU reading only
// the sum, become one _fused_conv_act node with that entry as its `residual` input, which adds it
// where the convolution writes its output (after the bias, before the activation): one or two
// passes over memory less per residual block (ResNet's). Run after FuseActivations and
// FuseInvertedResiduals (whose blocks take MobileNet v2's adds). Only when nothing else can tell:
// the convolution's output feeds nothing but the add and is no head; the activation joins only
// when the sum feeds nothing else and is no head. The last node (the activation, else the add)
// keeps its name, so it may be a head. The residual stays where the add read it (the node's
// first or last input), so ListArguments keeps its order. Then a BatchNorm (or
// _fused_batch_norm_act) reading such a sum, which others read too (pre-activation ResNet's next
// unit: its bn1 and its shortcut), becomes the fused node's second output, made per image while
// the sum is in cache (its gamma and beta join the node's arguments, its moving statistics the
// aux states; its hidden outputs unread, channels on axis 1; only when no argument or aux state
// moves in the depth-first order, else none). Results are the bits of the unfused graph (but for
// which NaN's payload a sum of two NaNs keeps). `folded` lists the nodes fused away; the arrays
// are unchanged.
RewrittenGraph FuseResidualAdds(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                                const std::map<std::string, NDArray>& aux);

// The graph the passes rewrite in place: the manager's own copy of the caller's symbol (the
// caller's nodes are never touched), the arrays it reads, and an index of it that is built once
// and again only after a pass changed the graph.
class RewriteState {
 public:
  RewriteState(const Symbol& symbol, std::map<std::string, NDArray> args, std::map<std::string, NDArray> aux);
  ~RewriteState();
  Symbol symbol;
  std::map<std::string, NDArray> args, aux;
  const Graph& graph();
  const std::vector<int>& uses();      // per entry of graph(): how often op inputs and heads read it
  const std::set<uint32_t>& heads();   // the entries of graph() that are heads
  void Changed();                      // the graph was rewired: the next graph() indexes it again

 private:
  std::unique_ptr<Graph> graph_;
  std::vector<int> uses_;
  std::set<uint32_t> heads_;
};

// The rewrites as passes, in the one list the Predictor's manager runs in order: each pass's
// preconditions include the earlier passes' results (FuseInvertedResiduals takes the blocks whose
// activations FuseActivations fused; FuseResidualAdds leaves MobileNet v2's adds to the blocks).
// A pass rewrites `state` and returns the nodes it folded or fused away.
using GraphPassFn = std::vector<std::string> (*)(RewriteState* state);
struct GraphPass {
  const char* name;  // as PredictorOptions::disabled_passes names it
  GraphPassFn run;
};
// fold_batch_norm, fuse_activations, fuse_inverted_residuals, fuse_residual_adds,
// fuse_quantized_activations (int8 graphs: a calibrated quantize_v2 of relu / clip / leaky / prelu of a
// dequantize as one _fused_quantized_act, and a quantized relu of a quantized BatchNorm as one
// _fused_quantized_batch_norm_relu, the same levels), fuse_quantized_inverted_residuals (int8
// graphs: a quantized _sg_mkldnn_conv expansion, depthwise layer and projection as one
// _fused_quantized_inverted_residual, the same levels, where its band path runs on this CPU), in
// that order.
const std::vector<GraphPass>& GraphPasses();

// What RunGraphPasses made: the last pass's graph and arrays, and the nodes each pass folded or
// fused away, by pass name.
struct PassesResult {
  Symbol symbol;
  std::map<std::string, NDArray> args, aux;
  std::map<std::string, std::vector<std::string>> rewritten;
};
// Runs every pass of GraphPasses() that `disabled` does not name, in order, on one copy of the
// graph. Throws Error for a name in `disabled` that is no pass, listing the passes.
PassesResult RunGraphPasses(const Symbol& symbol, std::map<std::string, NDArray> args,
                            std::map<std::string, NDArray> aux, const std::set<std::string>& disabled);

}  // namespace symbind
