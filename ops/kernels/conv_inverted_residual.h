// MobileNet v2's inverted residual block as one kernel: 1x1 expansion (+ bias, activation),
// k x k depthwise (+ bias, activation), 1x1 projection (+ bias) and, for residual blocks, + x.
// Computed a band of output rows at a time so that the expanded activations (6x the block's
// input) stay in cache instead of going through memory twice. Made by the Predictor's
// FuseInvertedResiduals rewrite (predict/graph_rewrites.h), run as _fused_inverted_residual.
#pragma once
#include <cstdint>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/ops/kernels/derived_weights.h>
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
// node's DerivedWeights of each, when given, keep their packed forms across calls (as
// ConvForward's `weights`).
struct InvertedResidualWeights {
  const float *expand_w, *expand_b, *depthwise_w, *depthwise_b, *project_w, *project_b;
  DerivedWeights *expand = nullptr, *depthwise = nullptr, *project = nullptr;
};

// The blocks InvertedResidualForward fuses: a 3x3 or 5x5 depthwise window at stride 1 or 2
// (DepthwiseApplies), and both 1x1 convolutions on ConvForward's packed-GEMM path
// (PackedGemmApplies, given the weight arrays), whose sums the fused kernel's bands repeat bit
// for bit; ConvForward computes the others by Eigen's GEMM, in another order. (The fused
// kernel itself runs any block DepthwiseApplies to, within rounding of the unfused one.)
bool InvertedResidualFusionApplies(const InvertedResidualDims& d, const InvertedResidualWeights& w);
// Where the fused kernel beats the three layers run one after another: what
// InvertedResidualForward asks.
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
// the results are the same bits. Writes y (kWrite). InvertedResidualFusedChannelsLast where it
// pays, else InvertedResidualFusedPlanes.
void InvertedResidualFused(const float* x, const InvertedResidualWeights& w, float* y,
                           const InvertedResidualDims& d);
// The bands with the expanded rows as planes (one per hidden channel), each through the
// whole-layer kernels: GemmPackedSerial and the depthwise plane kernel.
void InvertedResidualFusedPlanes(const float* x, const InvertedResidualWeights& w, float* y,
                                 const InvertedResidualDims& d);
// The bands with the expanded rows channels-last (each pixel's hidden channels together;
// conv_inverted_residual_channels_last.cc): the expansion stores whole vectors of channels, the
// depthwise window runs over 8 channels per vector (no lane idle on a 7x7 plane, no shuffle at
// stride 2), the projection broadcasts each pixel's channels in order (GemmPackedTallBt). On
// the AVX2 kernels (GemmIsa() "avx2"), for hidden_c a multiple of 8 and 3x3 or 5x5 windows.
bool InvertedResidualChannelsLastApplies(const InvertedResidualDims& d);
// Where it applies and beats the planes (and, for one image, the unfused layers).
bool InvertedResidualChannelsLastPays(const InvertedResidualDims& d);
void InvertedResidualFusedChannelsLast(const float* x, const InvertedResidualWeights& w, float* y,
                                       const InvertedResidualDims& d);

// How InvertedResidualFused cuts the output rows: bands of `band` rows, whose expanded input
// rows (`buffer_rows` of them at most) take about 1 MB (256 KB channels-last); for one image on
// several threads, `parts` runs of `part_rows` rows in parallel (each recomputes the kernel -
// stride expanded rows it shares with the part before). A function of the problem and the
// usable thread count (UsableThreads); the bits depend on neither.
struct InvertedResidualBands {
  int64_t band, buffer_rows, parts, part_rows;
};
InvertedResidualBands PlanInvertedResidualBands(const InvertedResidualDims& d, bool channels_last);

// One band: output rows [o0, o1) of image `image`, whose windows read the expanded image rows
// [lo, hi). The first `kept` of those the band before already expanded; they sit `shift` rows
// into the band's buffer, to be moved to its front. Rows [lo + kept, hi) are to be expanded.
struct InvertedResidualBand {
  int64_t image, o0, o1, lo, hi, kept, shift;
};
// Calls band(b) for the bands of task t of the plan (image t / parts, its part t % parts), in
// order.
template <typename BandFn>
void ForEachInvertedResidualBand(const InvertedResidualDims& d, const InvertedResidualBands& plan, int64_t t,
                                 const BandFn& band) {
  const int64_t OH = d.out_height(), first = (t % plan.parts) * plan.part_rows;
  const int64_t last = OH < first + plan.part_rows ? OH : first + plan.part_rows;
  int64_t base = 0, have = 0;  // the buffer holds the expanded image rows [base, base + have)
  for (int64_t o0 = first; o0 < last; o0 += plan.band) {
    InvertedResidualBand b{t / plan.parts, o0, o0 + plan.band < last ? o0 + plan.band : last, 0, 0, 0, 0};
    b.lo = o0 * d.stride - d.pad > 0 ? o0 * d.stride - d.pad : 0;
    b.hi = (b.o1 - 1) * d.stride - d.pad + d.kernel < d.height ? (b.o1 - 1) * d.stride - d.pad + d.kernel : d.height;
    b.kept = have > 0 && b.lo >= base && b.lo < base + have ? base + have - b.lo : 0;
    b.shift = b.lo - base;
    band(b);
    base = b.lo;
    have = b.hi - b.lo > b.kept ? b.hi - b.lo : b.kept;
  }
}

}  // namespace conv
}  // namespace symbind
