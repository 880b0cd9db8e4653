// Convolution kernels on raw pointers (NC + 1-3 spatial dims, channel-first), shared by
// Convolution and Deconvolution (whose forward is a convolution's data gradient and vice versa).
// ConvForward picks a fast path where one applies (see conv.cc) and falls back to im2col + GEMM.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/ops/kernels/derived_weights.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/im2col.h>

namespace symbind {
namespace conv {

using symbind::NormalizedOutput;  // gemm.h: the second output a fused BatchNorm reads

// The sizes of a (grouped) convolution: image side x (batch, in_c, g.in), column side
// y (batch, out_c, g.out), weight (out_c, in_c / groups, k...).
struct ConvDims {
  int64_t batch, in_c, out_c, groups;
  // Elements from one image of y to the next: 0 for out_c * out size (y contiguous); more
  // when y's images lie inside a larger array (a Concat's output along channels:
  // Op::strided_output). ConvForward takes it on every path with req kWrite and no residual
  // or second output (the packed GEMM and Winograd write so, the others through a
  // temporary); the other entry points leave it to ConvForward.
  int64_t y_image_stride = 0;
  int64_t YImageStride(const ConvGeom& g) const { return y_image_stride ? y_image_stride : out_c * g.out_size(); }
};

// y (as req says) = act(conv(x, w) + bias) (bias may be null), by the fastest path that
// applies; the activation is applied where the output is written, not in a second pass.
// `weights`, when the caller has one, is the node's DerivedWeights, pointed at the array `w`
// points into (DerivedWeights::Use): derived forms of it (Winograd-transformed or GEMM-packed
// weights) are then kept across calls until the array changes; without it they are made on
// every call (training, imperative calls).
// `residual` (a residual connection's other operand, laid out as y and not overlapping it):
// y = act((conv(x, w) + bias) + residual), the bits of the convolution, elemwise_add and
// activation run one after another. `normalized.y`: also that second output of y (see
// NormalizedOutput). The residual is added where the packed GEMM stores its wide tiles, the
// second output in a pass over each image after its GEMM; the other paths make both in one pass
// after the convolution (Bf16ConvForward: both in the bf16 GEMM's store); req kWrite.
void ConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                 const ConvGeom& g, OpReq req, DerivedWeights* weights = nullptr,
                 const FusedActivation& act = {}, const float* residual = nullptr,
                 const NormalizedOutput& normalized = {});

// The paths ConvForward chooses from, callable directly so tests can compare them.
// The fast paths take req kWrite (or kWriteInplace) and apply `act` as they write; ConvForward
// runs kAdd with an activation through a temporary.
// im2col + GEMM (1x1 stride-1 unpadded kernels multiply the input directly): any convolution,
// and the reference the others are tested against (an activation is a second pass here).
void ConvForwardIm2Col(const float* x, const float* w, const float* bias, float* y,
                       const ConvDims& n, const ConvGeom& g, OpReq req, const FusedActivation& act = {});
// im2col (none for 1x1 stride-1 unpadded kernels) + GemmPacked: the weights packed once for
// the micro-kernel (cached per weight array when `weights` is given; tiled by
// ChooseGemmTiling), bias and activation in the GEMM's store. Any convolution; ConvForward
// takes it for ungrouped ones (PackedGemmApplies, given the `weights` ConvForward has) with
// outputs of at least 32 positions and depths (channels x kernel size) of at most 384, and
// deeper ones that get tall tiles when their packed weights are kept (`weights` given).
bool PackedGemmApplies(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights = nullptr);
// The weights (groups x fg filters of depth kdim) of every group packed for GemmPacked: kept in
// `weights` when given (one form per tiling), else packed for this call.
struct PackedConvWeights {
  std::vector<PackedGemmA> groups;
};
std::shared_ptr<const PackedConvWeights> DerivedPackedConvWeights(const float* w, DerivedWeights* weights,
                                                                 int64_t groups, int64_t fg, int64_t kdim,
                                                                 GemmTiling tiling);
void PackedGemmConvForward(const float* x, const float* w, const float* bias, float* y,
                           const ConvDims& n, const ConvGeom& g, const FusedActivation& act = {},
                           DerivedWeights* weights = nullptr, const float* residual = nullptr,
                           const NormalizedOutput& normalized = {});
// The packed GEMM's product over the image split into phase planes (conv_phased.cc), with no
// column buffer: `A` the filters packed for wide tiles (out_c a multiple of their rows), one
// group, 2-D, stride 1 or 2, any window above 1x1, padding and dilation; y (images
// YImageStride apart) = epilogue(the sums), the same bits as GemmPacked over im2col's columns.
// PhasedColumnsApply: where PackedGemmConvForward takes it for a whole image in one product, on
// AVX-512, where it was measured to pay (docs/benchmarks-history.md).
bool PhasedColumnsApply(const ConvDims& n, const ConvGeom& g, GemmTiling tiling);
void PhasedGemmConvForward(const float* x, const PackedGemmA& A, float* y, const ConvDims& n, const ConvGeom& g,
                           const GemmEpilogue& epilogue);
// Where the product over phase planes beats Winograd (which ConvForward then skips), at any
// batch: below 32 input channels (SqueezeNet's first fire modules' 3x3 expands, MTCNN P-Net's 16 ->
// 32), Winograd's transforms of every output cost more than its fewer products save.
bool PhasedBeatsWinograd(const ConvDims& n, const ConvGeom& g);
// bfloat16 products, float32 sums (Precision::kBfloat16; needs Bf16Available()): im2col (none
// for 1x1 stride-1 unpadded kernels) + GemmBf16 with the weights rounded and packed once when
// `weights` is given; bias, residual, activation and the second output (NormalizedOutput, when
// asked) in its store; Winograd's 3x3 layers with bf16 products. Ungrouped convolutions that
// float32 runs through a GEMM or Winograd (its direct and tiny-depth kernels are faster still);
// req kWrite.
bool Bf16ConvApplies(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights);
void Bf16ConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                     const ConvGeom& g, DerivedWeights* weights, const FusedActivation& act = {},
                     const float* residual = nullptr, const NormalizedOutput& normalized = {});
// Direct depthwise 2-D (groups == in_c == out_c; 3x3, 5x5 or 7x7, stride 1 or 2 in both dims,
// dilation 1, any padding).
bool DepthwiseApplies(const ConvDims& n, const ConvGeom& g);
void DepthwiseConvForward(const float* x, const float* w, const float* bias, float* y,
                          const ConvDims& n, const ConvGeom& g, OpReq req, const FusedActivation& act = {});
// Direct convolution of images with at most 4 channels (RGB first layers; conv_tiny_depth.cc):
// 2-D, one group, square 3x3, 5x5 or 7x7 kernels, stride 1 or 2 in both dims, dilation 1,
// output rows of at least 16, on CPUs with AVX-512 or AVX2 (TinyDepthConvForward also runs without them).
// Sums start at the bias and add the taps in (c, kh, kw) order; `act` is applied as rows are
// written. req kWrite.
bool TinyDepthApplies(const ConvDims& n, const ConvGeom& g);
void TinyDepthConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                          const ConvGeom& g, const FusedActivation& act = {});
// Direct convolution as an implicit GEMM (conv_direct.cc): the image zero-padded and split by
// column phase once (SplitPhases), tiles of 4 filters x 24 output positions reading each tap's
// columns in place. 2-D, one group, stride 1 or 2, any kernel size above 1x1, any padding and
// dilation, on CPUs whose kernels are AVX2 (SYMBIND_GEMM_ISA=avx2 on AVX-512 ones). The bits of
// the packed GEMM (PackedGemmConvForward): each sum from zero, taps in (c, kh, kw) order, +
// bias, the activation. `weights` as for ConvForward (the packed panels cached on it). req
// kWrite; y's images y_image_stride apart. DirectConvPays: where ConvForward takes it (below 32
// channels, depth at most 384).
bool DirectConvApplies(const ConvDims& n, const ConvGeom& g);
bool DirectConvPays(const ConvDims& n, const ConvGeom& g);
void DirectConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                       const ConvGeom& g, const FusedActivation& act = {}, DerivedWeights* weights = nullptr);
// Winograd F(2x2, 3x3), F(4x4, 3x3) or F(6x6, 3x3) (conv_winograd.cc): 2-D, 3x3, stride 1, dilation 1, one
// group, >= 16 channels in and out. `weights` as for ConvForward (null: transform the weights on
// this call); `tile` kNone: ChooseWinogradTile's pick (F(4,3) where none pays).
enum class WinogradTile { kNone, kF2, kF4, kF6 };
bool WinogradApplies(const ConvDims& n, const ConvGeom& g);
// bf16_products: each point's GEMM in bfloat16 (GemmBf16: the transformed weights and input
// rounded to bf16, float32 sums), for PredictorOptions::precision bf16.
void WinogradConvForward(const float* x, const float* w, const float* bias, float* y,
                         const ConvDims& n, const ConvGeom& g, OpReq req,
                         DerivedWeights* weights = nullptr, const FusedActivation& act = {},
                         WinogradTile tile = WinogradTile::kNone, bool bf16_products = false);
// The Winograd variant faster than the packed path for this convolution, or kNone: WinogradApplies,
// and for layers whose F(4,3) weights fit 16 MB, enough 4x4 tiles (over the batch: 16, or 4 that
// pad the output by at most half with >= 32 input channels), F(6,3) where its 8x8 tiles pad the
// output little enough to win; for wider layers (512 -> 512), only when `weights` is read-only
// (a Predictor's: transformed once, not on every training step), the variant whose products plus
// weight bytes read cost least, F(2,3) on small images (conv_winograd.cc).
WinogradTile ChooseWinogradTile(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights = nullptr);
// ChooseWinogradTile != kNone (ConvForward takes the tile itself; the data gradient asks this).
bool WinogradPays(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights = nullptr);
// The direct convolution's multiplies over Winograd's with `tile` (its tiles' padding counted):
// 5.06 for F(6,3) on outputs its tiles cover exactly, 1.72 at 7x7 (144 outputs made for 49).
double WinogradMultiplySaving(const ConvDims& n, const ConvGeom& g, WinogradTile tile);
// Whether convolutions (forward and backward) and 2-D / global pooling take their fast paths:
// true unless SYMBIND_CONV_FAST_PATHS=0 is set when the first one runs; then they always take
// the reference paths (ConvForwardIm2Col, the im2col gradients, the general pooling loops), for
// measuring the fast paths and for bisecting a numeric doubt. The setter is for tests and benchmarks that compare
// whole models both ways in one process.
bool FastPathsEnabled();
void SetFastPathsEnabled(bool enabled);

// dx (as req says) = the data gradient of conv for head gradient dy (Deconvolution's forward):
// WinogradBackwardData or PackedBackwardData where they apply and fast paths are on, else
// ConvBackwardDataIm2Col.
void ConvBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n,
                      const ConvGeom& g, OpReq req);
// The reference: per image col = W^T dy by Gemm, then col2im (none for 1x1 stride-1 unpadded).
void ConvBackwardDataIm2Col(const float* dy, const float* w, float* dx, const ConvDims& n,
                            const ConvGeom& g, OpReq req);
// The same with W^T packed once per call for GemmPacked (tiled by ChooseGemmTiling), the
// columns folded back while in cache: in tiles of output rows per image, or for outputs under
// 128 positions with weights of 1 MB and more in blocks of input channels over many images'
// columns side by side (each panel of W^T read once for all of them). Ungrouped convolutions
// of at least 32 output positions.
bool PackedBackwardDataApplies(const ConvDims& n, const ConvGeom& g);
void PackedBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n,
                        const ConvGeom& g, OpReq req);
// A 3x3 stride-1 convolution's data gradient is the 3x3 stride-1 convolution of dy with the
// weights flipped and transposed, padding 2 - pad: WinogradConvForward on it, taken where the
// forward would pay (WinogradPays of that convolution; pad at most 2). The weights are
// flipped and transformed on every call (they change every step).
bool WinogradBackwardDataApplies(const ConvDims& n, const ConvGeom& g);
void WinogradBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n, const ConvGeom& g,
                          OpReq req);
// dw (as req says) = the weight gradient of conv for head gradient dy and input x:
// BlockedBackwardWeight or else PackedBackwardWeight where they apply and fast paths are on,
// else ConvBackwardWeightIm2Col.
void ConvBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n,
                        const ConvGeom& g, OpReq req);
// The reference: per image im2col, then Gemm accumulating into fixed chunks' partial sums.
void ConvBackwardWeightIm2Col(const float* dy, const float* x, float* dw, const ConvDims& n,
                              const ConvGeom& g, OpReq req);
// The same chunks, each one GemmPacked over all its images' columns (dw^T = col dy^T, the
// columns packed once): ungrouped convolutions with outputs under 128 positions that the
// blocked path does not take (LeNet's conv2: slower than the reference, but kept so that
// training runs give the bits they gave before the blocked path: compat LeNet's test
// accuracy after 3 epochs lands at 0.8948 this way, 0.8889 on the reference, under the 0.89
// its test asks).
bool PackedBackwardWeightApplies(const ConvDims& n, const ConvGeom& g);
void PackedBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n, const ConvGeom& g,
                          OpReq req);
// Tasks of (chunk of images, block of input channels), each accumulating its block of dw over
// slices of positions: the block's im2col rows of a slice (written once, read in place) times
// the slice of dy packed for tall tiles (GemmPackedTallBt; conv_backward_weight.cc). Any
// ungrouped convolution; ConvBackwardWeight takes it where tall tiles pad the filters no more
// than wide ones would (TallTilesFit): ResNet's layers, not LeNet's 20 and 50 filters; and
// where it has at least 4 tasks (not one image with at most 3 x 192 im2col rows).
bool BlockedBackwardWeightApplies(const ConvDims& n, const ConvGeom& g);
void BlockedBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n, const ConvGeom& g,
                           OpReq req);
// db[c] (as req says) = sum of dy over batch and `spatial` positions for channel c.
void BiasBackward(const float* dy, float* db, int64_t batch, int64_t channels, int64_t spatial,
                  OpReq req);

}  // namespace conv
}  // namespace symbind
