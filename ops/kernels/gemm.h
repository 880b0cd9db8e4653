// GEMM on raw row-major float arrays, dispatched at run time to the AVX-512, AVX2 or baseline
// block kernel (ops/kernels/gemm_kernels/). Used by Convolution, FullyConnected and dot.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace symbind {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set.
// lda/ldb/ldc are row strides of A, B, C as stored. Parallel over fixed blocks of C, so results
// do not depend on the thread count.
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc);

// An activation fused into the loop that writes an op's output, computed exactly as the
// unfused op (NaN and signed zeros included): relu as Activation's `x > 0 ? x : 0`, clip as
// clip's `x > hi ? hi : (x < lo ? lo : x)`, leaky as LeakyReLU's `x > 0 ? x : slope * x`.
// prelu is leaky with one slope per output channel (a row of the product, a plane of the
// output): kernels resolve it per row with ForRow before applying it to values.
struct FusedActivation {
  enum Kind { kNone, kRelu, kClip, kLeaky, kPRelu };
  Kind kind = kNone;
  float lo = 0, hi = 0;            // kClip's bounds
  float slope = 0;                 // kLeaky's slope
  const float* slopes = nullptr;   // kPRelu's slope per output channel
  // The activation of output channel `row`: kPRelu becomes kLeaky with that channel's slope.
  FusedActivation ForRow(int64_t row) const {
    if (kind != kPRelu) return *this;
    FusedActivation a = *this;
    a.kind = kLeaky;
    a.slope = slopes[row];
    return a;
  }
  // The activation of the channels from `first` on (a group's filters): kPRelu's slopes advanced.
  FusedActivation FromRow(int64_t first) const {
    FusedActivation a = *this;
    if (kind == kPRelu) a.slopes = slopes + first;
    return a;
  }
  float operator()(float x) const {
    switch (kind) {
      case kRelu: return x > 0 ? x : 0.0f;
      case kClip: return x > hi ? hi : (x < lo ? lo : x);
      case kLeaky: return x > 0 ? x : slope * x;
      default: return x;  // kPRelu unresolved: kernels call ForRow first
    }
  }
};

// p[0:n] = act(p[0:n]), with the kind's branch outside the loop so that each loop vectorises
// (inlined into the caller, which may be compiled for a wider instruction set). p lies in one
// output channel: kPRelu resolved by the caller (ForRow).
inline __attribute__((always_inline)) void ActivateInPlace(float* __restrict p, int64_t n, FusedActivation act) {
  const float lo = act.lo, hi = act.hi, slope = act.slope;
  switch (act.kind) {
    case FusedActivation::kRelu:
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] > 0 ? p[i] : 0.0f;
      break;
    case FusedActivation::kClip:
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] > hi ? hi : (p[i] < lo ? lo : p[i]);
      break;
    case FusedActivation::kLeaky:
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] > 0 ? p[i] : slope * p[i];
      break;
    default: break;
  }
}

// What GemmPacked applies to each sum before storing it: + bias[row], + residual (a residual
// connection's other operand), then the activation; so C = act((A * B + bias) + R) in the
// rounding order of the unfused convolution, elemwise_add and activation.
struct GemmEpilogue {
  const float* bias = nullptr;  // one per row of C, or null
  FusedActivation act;          // kPRelu: act.slopes one per row of C
  const float* residual = nullptr;  // R laid out as C (ldc apart, not overlapping it), or null
};

// A second output written beside an op's output y (an op fused with the BatchNorm, and its
// activation, that reads y while others read y too): y2 = act(((y - mean[c]) * scale[c]) +
// shift[c]) per channel c (per row of a GEMM's C), BatchNorm's inference formula with its
// coefficients (InferenceBatchNorm in ops/nn/norm_util.h), so the bits a _fused_batch_norm_act
// gives. GemmBf16 makes it as it stores C; the float32 paths in a pass after (FinishOutput).
struct NormalizedOutput {
  float* y = nullptr;  // laid out as the op's output; null: none
  const float *mean = nullptr, *scale = nullptr, *shift = nullptr;  // one per channel
  FusedActivation act;                                              // not kPRelu
};

// How GemmPacked's micro-kernel lays a tile of C over the vector registers. kWide: columns in
// vectors, rows broadcast (8 rows x 32 columns on AVX-512), for products with many columns.
// kTall: rows in vectors, columns broadcast (32 rows x up to 12 columns), for few columns, where
// 32-wide tiles are mostly padding (7x7 = 49 positions fill 64). Both give the same bits.
enum class GemmTiling { kWide, kTall };
// The faster tiling for an M x N product (C's rows x columns), whatever its depth: kTall where it
// saves a tenth of the padded work.
GemmTiling ChooseGemmTiling(int64_t M, int64_t N);
// The same knowing the depth K: also kTall at no more padding for products at least 256 deep
// and at most 1024 wide (ResNet's 1x1 layers at 28x28 and below, SqueezeNet's conv10), where
// tall tiles read B where it lies and wide ones pack it per row block.
GemmTiling ChooseGemmTiling(int64_t M, int64_t N, int64_t K);
// Whether tall tiles pad the product no more than wide ones and it is deeper than 128 (or they
// save a tenth): where kernels built on tall tiles alone (the blocked weight gradient) were
// measured to pay.
bool TallTilesFit(int64_t M, int64_t N, int64_t K);

// The A operand of GemmPacked: a row-major M x K matrix (lda apart) rearranged once into the
// micro-kernel's panels (mr rows, k-major, zero-padded; mr depends on the tiling), so that
// products reusing it (the weights of a convolution) skip the packing. Tied to the instruction
// set chosen at start-up.
class PackedGemmA {
 public:
  PackedGemmA(const float* A, int64_t M, int64_t K, int64_t lda, GemmTiling tiling = GemmTiling::kWide);
  // The same panels written into `panels` (PanelFloats(M, K, tiling) zeroed floats), which `keep`
  // keeps alive: several matrices packed into one block (a Winograd layer's points).
  PackedGemmA(const float* A, int64_t M, int64_t K, int64_t lda, GemmTiling tiling, float* panels,
              std::shared_ptr<const void> keep);
  // The same panels from A given transposed: At is K x M row-major (ldat apart), e.g. a
  // convolution's weights (filters x depth) for the data gradient's W^T. Each panel step is
  // then a contiguous copy, not a transpose.
  struct Transposed {};
  PackedGemmA(Transposed, const float* At, int64_t M, int64_t K, int64_t ldat, GemmTiling tiling = GemmTiling::kWide);
  // Panels packed before, read in place (a prepacked .symbind file's): `data` holds
  // PanelFloats(M, K, tiling) floats, which `keep` keeps alive. Throws Error when they do not
  // fit. Null when `mr` is not this process's panel height for `tiling` (packed for another
  // instruction set).
  static std::shared_ptr<const PackedGemmA> View(int64_t M, int64_t K, int mr, GemmTiling tiling, const float* data,
                                                 int64_t floats, std::shared_ptr<const void> keep);
  // The floats of A's panels for this process's instruction set.
  static int64_t PanelFloats(int64_t M, int64_t K, GemmTiling tiling);
  int64_t rows() const { return M_; }
  int64_t depth() const { return K_; }
  const float* panel(int64_t i) const { return data_ + i * K_ * mr_; }
  const float* data() const { return data_; }
  int64_t floats() const { return (M_ + mr_ - 1) / mr_ * mr_ * K_; }
  int mr() const { return mr_; }
  GemmTiling tiling() const { return tiling_; }

 private:
  PackedGemmA(int64_t M, int64_t K, int mr, GemmTiling tiling) : M_(M), K_(K), mr_(mr), tiling_(tiling) {}
  // Zero-filled panels of this shape, owned by keep_.
  float* Allocate();
  // A's panels into `data` (zeroed: the last panel's padding stays zero).
  void Pack(const float* A, int64_t lda, float* data) const;
  int64_t M_, K_;
  int mr_;
  GemmTiling tiling_;
  std::shared_ptr<const void> keep_;  // owns the panels, or the file they are read from
  const float* data_ = nullptr;
};

// C[M,N] (ldc apart) = epilogue(A * B) with A packed and B row-major K x N (ldb apart);
// overwrites C. Parallel over fixed blocks of C; each sum runs in k order whatever the block
// (and whatever A's tiling), so results are identical for every thread count. Wide tiles read
// B's columns packed per block of C (or in place where A has few row panels or B is small:
// see gemm.cc); tall ones read B packed from 8 row panels on, else in place.
void GemmPacked(const PackedGemmA& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                const GemmEpilogue& epilogue = {});
// The same on the calling thread only, in one block of rows (B packed once per column block,
// or read in place as above):
// for kernels that already run tiles of their own in parallel tasks. The same bits.
void GemmPackedSerial(const PackedGemmA& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                      const GemmEpilogue& epilogue = {});

// C[M,N] (ldc apart) = epilogue(A * B) for a convolution over its image split into phase planes
// (conv_phased.cc): A (wide panels, M a multiple of their rows) holds the filters, depth
// channels x taps in im2col's order, and B's row for channel c and tap t is read where it lies,
// at planes + c * plane_floats + tap_offsets[t] (N a multiple of GemmPackedTapsColumns(); the
// caller leaves room for the last tile's reads). No columns are built. Runs on the calling thread
// (the convolution parallelises over images and blocks of filters); each sum in k order, so the
// bits are GemmPacked's over im2col's columns. No residual. Only rows [first_row, last_row) of the
// product (multiples of A's panel rows; last_row -1: to the end), C pointing at row first_row.
void GemmPackedTaps(const PackedGemmA& A, int64_t N, const float* planes, int64_t plane_floats,
                    const int64_t* tap_offsets, int64_t taps, float* C, int64_t ldc, const GemmEpilogue& epilogue,
                    int64_t first_row = 0, int64_t last_row = -1);
// GemmPackedTaps' N is a multiple of this (the wide tile's columns).
int64_t GemmPackedTapsColumns();

// C[M,N] (ldc apart) = (accumulate ? C : 0) + A * B, A packed for tall tiles, B given transposed:
// Bt is N x K row-major (ldbt apart), B's columns as rows, as a weight gradient's im2col rows
// hold positions, or a channels-last activation its pixels. Tall tiles broadcast B where it
// lies, so neither B nor Bt is packed. With an epilogue, C = epilogue(that), as GemmPacked's (its
// residual laid out as C). Runs on the calling thread (callers parallelise over independent
// products); each sum in k order, so the bits are GemmPacked's for the same product.
void GemmPackedTallBt(const PackedGemmA& A, int64_t N, const float* Bt, int64_t ldbt, float* C, int64_t ldc,
                      bool accumulate, const GemmEpilogue* epilogue = nullptr);

}  // namespace symbind
