// MobileNet v2's inverted residual block as one kernel: 1x1 expansion (+ bias, activation),
// k x k depthwise (+ bias, activation), 1x1 projection (+ bias) and, for residual blocks, + x.
// Computed a band of output rows at a time so that the expanded activations (6x the block's
// input) stay in cache instead of going through memory twice. Made by the Predictor's
// FuseInvertedResiduals rewrite (predict/graph_rewrites.h), run as _fused_inverted_residual.
#pragma once
#include <cstdint>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace conv {

struct InvertedResidualDims {
  int64_t batch, in_c, hidden_c, out_c;  // x: (batch, in_c, height, width); hidden: expanded channels
  int64_t height, width;
  int64_t kernel, stride, pad;  // the depthwise convolution's square window
  FusedActivation expand_act, depthwise_act;  // kPRelu: slopes one per hidden channel
  bool residual;  // y = projection + x (stride 1, out_c == in_c, same-size padding)
  int64_t out_height() const { return (height + 2 * pad - kernel) / stride + 1; }
  int64_t out_width() const { return (width + 2 * pad - kernel) / stride + 1; }
};

// Weights as the three convolutions take them: expand (hidden_c, in_c), depthwise (hidden_c,
// kernel, kernel), project (out_c, hidden_c); biases one per output channel, or null. The
// arrays, when given, let the packed forms of the 1x1 weights be cached across calls (as
// ConvForward's `weights`).
struct InvertedResidualWeights {
  const float *expand_w, *expand_b, *depthwise_w, *depthwise_b, *project_w, *project_b;
  const NDArray *expand = nullptr, *depthwise = nullptr, *project = nullptr;
};

// The blocks InvertedResidualForward fuses: a 3x3 or 5x5 depthwise window at stride 1 or 2
// (DepthwiseApplies), and both 1x1 convolutions on ConvForward's packed-GEMM path
// (PackedGemmApplies, given the weight arrays), whose sums the fused kernel's bands repeat bit
// for bit; ConvForward computes the others by Eigen's GEMM, in another order. (The fused
// kernel itself runs any block DepthwiseApplies to, within rounding of the unfused one.)
bool InvertedResidualFusionApplies(const InvertedResidualDims& d, const InvertedResidualWeights& w);
// Where the fused kernel beats the three layers run one after another (measured; see
// BENCHMARKS.md): what InvertedResidualForward asks.
bool InvertedResidualFusionPays(const InvertedResidualDims& d);

// y (as req says) = the block's output: InvertedResidualFused where it applies, pays and fast
// paths are on (FastPathsEnabled), else InvertedResidualUnfused.
void InvertedResidualForward(const float* x, const InvertedResidualWeights& w, float* y,
                             const InvertedResidualDims& d, OpReq req);
// The three convolutions by ConvForward into temporary arrays, then the residual add: the
// unfused graph's computation (with fast paths off, its reference paths).
void InvertedResidualUnfused(const float* x, const InvertedResidualWeights& w, float* y,
                             const InvertedResidualDims& d, OpReq req);
// Bands of output rows: the expansion of the input rows a band needs (rows shared with the
// band before are kept, not recomputed), the depthwise rows, the projection and the add, each
// band's expanded rows in a per-thread buffer. Images, and for one image a fixed number of
// parts of its rows, run in parallel. The sums are those of the unfused fast paths (the packed
// GEMM's and the depthwise kernel's, which do not depend on how columns or rows are cut), so
// the results are the same bits. Writes y (kWrite).
void InvertedResidualFused(const float* x, const InvertedResidualWeights& w, float* y,
                           const InvertedResidualDims& d);

}  // namespace conv
}  // namespace symbind
