// Convolution by im2col + GEMM (the reference every fast path is tested against), its gradients,
// and the choice of fast path.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

// ---------------------------------------------------------------------------------------------
// Kernels. Work is split over images when the batch has several (each task owning its column
// buffer), otherwise over channels for im2col/col2im and inside the GEMM. Chunking depends only
// on the problem, so results are identical for any thread count.

namespace {
// Channels per im2col/col2im task when one image is processed at a time.
int64_t ChannelGrain(const ConvGeom& g) {
  const int64_t per_channel = std::max<int64_t>(1, g.k_size() * g.out_size());
  return std::max<int64_t>(1, kElementwiseGrain / per_channel);
}

void Im2ColParallel(const float* img, const ConvGeom& g, int64_t channels, bool parallel,
                    float* col) {
  if (!parallel) return Im2Col(img, g, 0, channels, col);
  ParallelFor(channels, ChannelGrain(g), [&](int64_t c0, int64_t c1) {
    Im2Col(img, g, c0, c1, col + c0 * g.k_size() * g.out_size());
  });
}

// Runs fn(n, parallel_inside) for every image: across images when there are several.
template <typename F>
void ForEachImage(int64_t batch, const F& fn) {
  if (batch == 1) {
    fn(int64_t{0}, true);
    return;
  }
  ParallelFor(batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) fn(i, false);
  });
}
}  // namespace

namespace {
// One plane of FinishOutput (r and z may be null), compiled per instruction set: a baseline loop
// took longer than the elemwise_add and BatchNorm nodes it replaces. No multiply-add contracted
// into an FMA (which the AVX-512 clone has): BatchNorm's own loop rounds the product first.
#if defined(__clang__)
#define SYMBIND_NO_FP_CONTRACT
#define SYMBIND_NO_FP_CONTRACT_IN_BODY _Pragma("clang fp contract(off)")
#else
#define SYMBIND_NO_FP_CONTRACT optimize("fp-contract=off"),
#define SYMBIND_NO_FP_CONTRACT_IN_BODY
#endif
SYMBIND_ISA_VARIANTS(SYMBIND_NO_FP_CONTRACT, void, FinishPlane,
                     (float* __restrict y, const float* __restrict r, int64_t size, FusedActivation act,
                      float* __restrict z, float mean, float scale, float shift, FusedActivation z_act),
                     (y, r, size, act, z, mean, scale, shift, z_act), {
                       SYMBIND_NO_FP_CONTRACT_IN_BODY
                       if (r)
                         for (int64_t j = 0; j < size; ++j) y[j] += r[j];
                       ActivateInPlace(y, size, act);
                       if (!z) return;
                       for (int64_t j = 0; j < size; ++j) z[j] = (y[j] - mean) * scale + shift;
                       ActivateInPlace(z, size, z_act);
                     })
#undef SYMBIND_NO_FP_CONTRACT
#undef SYMBIND_NO_FP_CONTRACT_IN_BODY

// y = act(y + residual) (residual may be null) and the normalized second output, plane by plane,
// for images [i0, i1) (the planes in parallel when `parallel`): on the paths that do not make
// them as they write (the sums of elemwise_add, the activation after it and a
// _fused_batch_norm_act after that).
void FinishOutput(float* y, const float* residual, const ConvDims& n, const ConvGeom& g, const FusedActivation& act,
                  const NormalizedOutput& normalized, int64_t i0, int64_t i1, bool parallel) {
  const int64_t osize = g.out_size();
  const bool z = normalized.y != nullptr;
  auto planes = [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = p % n.out_c;
      FinishPlane(y + p * osize, residual ? residual + p * osize : nullptr, osize, act.ForRow(c),
                  z ? normalized.y + p * osize : nullptr, z ? normalized.mean[c] : 0.0f, z ? normalized.scale[c] : 0.0f,
                  z ? normalized.shift[c] : 0.0f, normalized.act);
    }
  };
  const int64_t first = i0 * n.out_c, count = (i1 - i0) * n.out_c;
  if (parallel) ParallelFor(count, GrainFor(osize), [&](int64_t b, int64_t e) { planes(first + b, first + e); });
  else planes(first, first + count);
}
// The same over the whole batch.
void FinishOutput(float* y, const float* residual, const ConvDims& n, const ConvGeom& g, const FusedActivation& act,
                  const NormalizedOutput& normalized) {
  FinishOutput(y, residual, n, g, act, normalized, 0, n.batch, true);
}

std::atomic<bool>& FastPathsFlag() {
  static std::atomic<bool> enabled = [] {
    const char* v = std::getenv("SYMBIND_CONV_FAST_PATHS");
    return !(v && std::string(v) == "0");
  }();
  return enabled;
}
}  // namespace

bool FastPathsEnabled() { return FastPathsFlag().load(std::memory_order_relaxed); }
void SetFastPathsEnabled(bool enabled) { FastPathsFlag().store(enabled, std::memory_order_relaxed); }

namespace {
enum class ForwardPath { kDepthwise, kDirect, kWinograd, kTinyDepth, kPacked, kIm2Col };
// The path ConvForward runs a plain convolution (no residual, no second output) on with `req`:
// the one place that orders the fast paths, so that the residual and strided-output cases ask
// it instead of repeating its conditions. The Winograd tile comes with it, chosen once.
struct ForwardChoice {
  ForwardPath path;
  WinogradTile tile = WinogradTile::kNone;
};
ForwardChoice ChooseForwardPath(const ConvDims& n, const ConvGeom& g, OpReq req, DerivedWeights* weights) {
  if (!FastPathsEnabled()) return {ForwardPath::kIm2Col};
  if (DepthwiseApplies(n, g)) return {ForwardPath::kDepthwise};
  if (req != OpReq::kAdd && DirectConvPays(n, g)) return {ForwardPath::kDirect};
  const WinogradTile tile = ChooseWinogradTile(n, g, weights);
  if (tile != WinogradTile::kNone && !(PhasedBeatsWinograd(n, g) && PackedGemmApplies(n, g, weights)))
    return {ForwardPath::kWinograd, tile};
  if (req != OpReq::kAdd && TinyDepthApplies(n, g)) return {ForwardPath::kTinyDepth};
  if (req != OpReq::kAdd && PackedGemmApplies(n, g, weights)) return {ForwardPath::kPacked};
  return {ForwardPath::kIm2Col};
}
}  // namespace

void ConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                 const ConvGeom& g, OpReq req, DerivedWeights* weights, const FusedActivation& act,
                 const float* residual, const NormalizedOutput& normalized) {
  if (req == OpReq::kNull) return;
  if (n.YImageStride(g) != n.out_c * g.out_size()) {
    if (residual || normalized.y || req == OpReq::kAdd)
      throw Error("ConvForward: images of y apart (y_image_stride) need req write and no residual or second output");
    const ForwardPath path = ChooseForwardPath(n, g, req, weights).path;
    if (path != ForwardPath::kWinograd && path != ForwardPath::kPacked && path != ForwardPath::kDirect) {
      // The others write y contiguous: into a temporary, then each image to its place.
      ConvDims contiguous = n;
      contiguous.y_image_stride = 0;
      const int64_t image = n.out_c * g.out_size();
      const ScratchBuffer result(n.batch * image);
      ConvForward(x, w, bias, result.data(), contiguous, g, OpReq::kWrite, weights, act);
      ParallelFor(n.batch, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          std::copy(result.data() + i * image, result.data() + (i + 1) * image, y + i * n.y_image_stride);
      });
      return;
    }
  }
  if (residual || normalized.y) {
    if (req == OpReq::kAdd) throw Error("ConvForward: a residual or second output needs req write, not add");
    // The path the convolution takes without them, so the sums are the unfused ones'.
    if (ChooseForwardPath(n, g, req, weights).path == ForwardPath::kPacked)
      return PackedGemmConvForward(x, w, bias, y, n, g, act, weights, residual, normalized);
    ConvForward(x, w, bias, y, n, g, req, weights);
    return FinishOutput(y, residual, n, g, act, normalized);
  }
  if (req == OpReq::kAdd && act.kind != FusedActivation::kNone) {  // y += act(conv): not in one loop
    const int64_t size = n.batch * n.out_c * g.out_size();
    const ScratchBuffer result(size);
    ConvForward(x, w, bias, result.data(), n, g, OpReq::kWrite, weights, act);
    return AssignWithReq(y, result.data(), size, req);
  }
  const ForwardChoice choice = ChooseForwardPath(n, g, req, weights);
  switch (choice.path) {
    // These read the weights directly, not through forms.
    case ForwardPath::kDepthwise: return DepthwiseConvForward(x, RawWeights(w, weights), bias, y, n, g, req, act);
    case ForwardPath::kDirect: return DirectConvForward(x, w, bias, y, n, g, act, weights);
    case ForwardPath::kWinograd: return WinogradConvForward(x, w, bias, y, n, g, req, weights, act, choice.tile);
    case ForwardPath::kTinyDepth: return TinyDepthConvForward(x, RawWeights(w, weights), bias, y, n, g, act);
    case ForwardPath::kPacked: return PackedGemmConvForward(x, w, bias, y, n, g, act, weights);
    case ForwardPath::kIm2Col: return ConvForwardIm2Col(x, RawWeights(w, weights), bias, y, n, g, req, act);
  }
}

namespace {
// Columns at least in one GEMM of im2col's column buffer (so the weights are not re-packed too
// often).
constexpr int64_t kMinTileCols = 1024;

// Output rows per im2col tile: the tile's column buffer stays in cache (~512 KB, but at least
// kMinTileCols columns), so im2col and the GEMM share it instead of streaming a whole-image
// buffer through memory.
int64_t RowsPerTile(int64_t kdim, const ConvGeom& g) {
  const int64_t rows = g.out[0] * g.out[1], OW = g.out[2];
  constexpr int64_t kTileFloats = int64_t{1} << 17;
  return std::clamp<int64_t>(std::max(kTileFloats / std::max<int64_t>(1, kdim * OW), (kMinTileCols + OW - 1) / OW),
                             1, rows);
}
}  // namespace

void ConvForwardIm2Col(const float* x, const float* w, const float* bias, float* y,
                       const ConvDims& n, const ConvGeom& g, OpReq req, const FusedActivation& act) {
  if (req == OpReq::kNull) return;
  if (act.kind != FusedActivation::kNone) {  // the reference: convolution, then the activation
    ConvForwardIm2Col(x, w, bias, y, n, g, req);
    const int64_t osize = g.out_size();  // one plane per (image, channel): prelu's slope per channel
    return ParallelFor(n.batch * n.out_c, GrainFor(osize), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) ActivateInPlace(y + p * osize, osize, act.ForRow(p % n.out_c));
    });
  }
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const float beta = req == OpReq::kAdd ? 1.0f : 0.0f;
  auto add_bias = [&](float* yi, int64_t begin, int64_t end) {
    if (bias)
      for (int64_t f = 0; f < n.out_c; ++f)
        for (float *o = yi + f * osize + begin, *e = yi + f * osize + end; o < e; ++o) *o += bias[f];
  };
  if (g.is_pointwise()) {  // the image is its own column buffer
    ForEachImage(n.batch, [&](int64_t i, bool) {
      float* yi = y + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(false, false, fg, osize, kdim, 1.0f, w + gr * fg * kdim, kdim,
             x + i * n.in_c * isize + gr * kdim * osize, osize, beta, yi + gr * fg * osize, osize);
      add_bias(yi, 0, osize);
    });
    return;
  }
  // Output rows are cut into tiles (RowsPerTile); tiles of every image run in parallel; their
  // size depends only on the problem.
  const int64_t rows = g.out[0] * g.out[1], OW = g.out[2];
  const int64_t rows_per_tile = RowsPerTile(kdim, g);
  const int64_t tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  // Tiny outputs (below 128 positions, as MTCNN's R- and O-Net's): several images side by side
  // in one column buffer make one wider GEMM, whose (filters, images * positions) result is then
  // copied into each image's planes.
  constexpr int64_t kBatchedBelow = 128;
  if (tiles == 1 && osize < kBatchedBelow && n.batch > 1) {
    const int64_t per_task = std::min(n.batch, (kMinTileCols + osize - 1) / osize);
    const int64_t tasks = (n.batch + per_task - 1) / per_task;
    ParallelFor(tasks, 1, [&](int64_t t0, int64_t t1) {
      const ScratchBuffer col(kdim * per_task * osize), prod(fg * per_task * osize);
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t i0 = t * per_task, i1 = std::min(n.batch, i0 + per_task);
        const int64_t ncols = (i1 - i0) * osize;
        for (int64_t gr = 0; gr < n.groups; ++gr) {
          for (int64_t i = i0; i < i1; ++i)
            Im2Col(x + i * n.in_c * isize, g, gr * cg, (gr + 1) * cg, 0, rows, ncols,
                   col.data() + (i - i0) * osize);
          Gemm(false, false, fg, ncols, kdim, 1.0f, w + gr * fg * kdim, kdim, col.data(), ncols, 0.0f,
               prod.data(), ncols);
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t f = 0; f < fg; ++f)
              AssignWithReq(y + (i * n.out_c + gr * fg + f) * osize,
                            prod.data() + f * ncols + (i - i0) * osize, osize, req);
        }
        for (int64_t i = i0; i < i1; ++i) add_bias(y + i * n.out_c * osize, 0, osize);
      }
    });
    return;
  }
  ParallelFor(n.batch * tiles, 1, [&](int64_t t0, int64_t t1) {
    const ScratchBuffer col(kdim * rows_per_tile * OW);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / tiles, r0 = (t % tiles) * rows_per_tile, r1 = std::min(rows, r0 + rows_per_tile);
      const int64_t ncols = (r1 - r0) * OW;
      const float* xi = x + i * n.in_c * isize;
      float* yi = y + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr) {
        Im2Col(xi, g, gr * cg, (gr + 1) * cg, r0, r1, ncols, col.data());
        Gemm(false, false, fg, ncols, kdim, 1.0f, w + gr * fg * kdim, kdim, col.data(), ncols, beta,
             yi + gr * fg * osize + r0 * OW, osize);
      }
      add_bias(yi, r0 * OW, r1 * OW);
    }
  });
}

namespace {
PackedConvWeights PackConvWeights(const float* w, int64_t groups, int64_t fg, int64_t kdim, GemmTiling tiling) {
  PackedConvWeights p;
  for (int64_t gr = 0; gr < groups; ++gr) p.groups.emplace_back(w + gr * fg * kdim, fg, kdim, kdim, tiling);
  return p;
}
}  // namespace

namespace {
// The columns of one GEMM of the packed path (the whole image for 1x1 stride-1 kernels, else
// one im2col tile) and the tiling for them.
int64_t PackedGemmColumns(int64_t kdim, const ConvGeom& g) {
  return (g.is_pointwise() ? g.out[0] * g.out[1] : RowsPerTile(kdim, g)) * g.out[2];
}
GemmTiling PackedConvTiling(const ConvDims& n, const ConvGeom& g) {
  const int64_t kdim = n.in_c / n.groups * g.k_size(), M = n.out_c / n.groups, N = PackedGemmColumns(kdim, g);
  return g.is_pointwise() ? ChooseGemmTiling(M, N, kdim) : ChooseGemmTiling(M, N);
}
}  // namespace

namespace {
const FormCodecRegistrar kPackedConvCodec(
    PackedPanelsCodec<PackedConvWeights, &PackedConvWeights::groups>("conv_packed_gemm"));
}  // namespace

std::shared_ptr<const PackedConvWeights> DerivedPackedConvWeights(const float* w, DerivedWeights* weights,
                                                                 int64_t groups, int64_t fg, int64_t kdim,
                                                                 GemmTiling tiling) {
  auto packed = DerivedForm<PackedConvWeights>(weights, w, {static_cast<int64_t>(tiling), groups, fg, kdim},
                                               [&](const float* data) { return PackConvWeights(data, groups, fg, kdim, tiling); });
  CheckPackedPanels(packed->groups, static_cast<size_t>(groups), fg, kdim, tiling, "convolution GEMM panels");
  return packed;
}

bool PackedGemmApplies(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights) {
  // Grouped convolutions (4-8 filters per group) ran slower than im2col + Eigen; below 32
  // output positions the micro-kernel's columns are mostly padding.
  constexpr int64_t kMinColumns = 32, kMaxWideDepth = 384;
  if (n.groups != 1 || g.out_size() < kMinColumns) return false;
  const int64_t kdim = n.in_c * g.k_size();
  if (kdim <= kMaxWideDepth) return true;
  // One image whose im2col is one tile (ResNet's stride-2 3x3 layers at batch 1): im2col's
  // single task fills the column buffer on one thread, the packed path on all of them.
  const bool one_tile = n.batch == 1 && RowsPerTile(kdim, g) >= g.out[0] * g.out[1];
  if (weights && one_tile) return true;
  // Deeper, with the packed weights cached: tall tiles beat Eigen's kernel (MobileNet v2's 1x1
  // projections, ResNet's 3x3 layers at 14x14 and 7x7, SqueezeNet's 3x3 expands), and so do
  // wide ones on 1x1 layers, but not on im2col tiles. Not without cached weights (training
  // forwards): packing on every call costs more than the kernel saves. The choice depends on
  // shapes only, not on whether the weights are read-only, so a model gives the same bits from
  // a .params file and from a memory-mapped one.
  return weights && (g.is_pointwise() || PackedConvTiling(n, g) == GemmTiling::kTall);
}

bool PhasedBeatsWinograd(const ConvDims& n, const ConvGeom& g) {
  constexpr int64_t kMinWinogradChannels = 32;
  return n.in_c < kMinWinogradChannels && PhasedColumnsApply(n, g, PackedConvTiling(n, g));
}

void PackedGemmConvForward(const float* x, const float* w, const float* bias, float* y,
                           const ConvDims& n, const ConvGeom& g, const FusedActivation& act,
                           DerivedWeights* weights, const float* residual, const NormalizedOutput& normalized) {
  const int64_t isize = g.in_size(), osize = g.out_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * g.k_size();
  const GemmTiling tiling = PackedConvTiling(n, g);
  if ((residual || normalized.y) && tiling == GemmTiling::kTall) {
    // Tall tiles would transpose the residual in as they do C: slower than a separate pass.
    PackedGemmConvForward(x, w, bias, y, n, g, {}, weights);
    return FinishOutput(y, residual, n, g, act, normalized);
  }
  const auto packed = DerivedPackedConvWeights(w, weights, n.groups, fg, kdim, tiling);
  const int64_t y_image = n.YImageStride(g);  // `at` below: the residual's offset, laid out as a contiguous y
  // The epilogue of group gr's product written at y + offset (the residual at the same offset).
  auto epilogue = [&](int64_t gr, int64_t offset) {
    return GemmEpilogue{bias ? bias + gr * fg : nullptr, act.FromRow(gr * fg), residual ? residual + offset : nullptr};
  };
  if (g.is_pointwise()) {  // the image is its own column buffer
    ForEachImage(n.batch, [&](int64_t i, bool parallel) {
      for (int64_t gr = 0; gr < n.groups; ++gr) {
        const int64_t at = i * n.out_c * osize + gr * fg * osize;
        GemmPacked(packed->groups[static_cast<size_t>(gr)], osize, x + i * n.in_c * isize + gr * kdim * osize,
                   osize, y + i * y_image + gr * fg * osize, osize, epilogue(gr, at));
      }
      // The second output while the image's output is still in cache (after the whole batch:
      // from memory at batch 8).
      if (normalized.y) FinishOutput(y, nullptr, n, g, {}, normalized, i, i + 1, parallel);
    });
    return;
  }
  const int64_t rows = g.out[0] * g.out[1], OW = g.out[2];
  const int64_t rows_per_tile = RowsPerTile(kdim, g);
  const int64_t tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  if (!residual && !normalized.y && PhasedColumnsApply(n, g, tiling) && (n.batch * tiles == 1 || PhasedBeatsWinograd(n, g)))
    return PhasedGemmConvForward(x, packed->groups[0], y, n, g, epilogue(0, 0));
  if (n.batch * tiles == 1) {  // one GEMM per group (small images): im2col split over channels too
    const ScratchBuffer col(kdim * osize);
    for (int64_t gr = 0; gr < n.groups; ++gr) {
      Im2ColParallel(x + gr * cg * isize, g, cg, true, col.data());
      GemmPacked(packed->groups[static_cast<size_t>(gr)], osize, col.data(), osize, y + gr * fg * osize, osize,
                 epilogue(gr, gr * fg * osize));
    }
    if (normalized.y) FinishOutput(y, nullptr, n, g, {}, normalized);
    return;
  }
  // Tiles of equal size (as many as RowsPerTile makes), so that the last is not a sliver.
  const int64_t tile_rows = (rows + tiles - 1) / tiles;
  ParallelFor(n.batch * tiles, 1, [&](int64_t t0, int64_t t1) {
    const ScratchBuffer col(kdim * tile_rows * OW);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / tiles, r0 = (t % tiles) * tile_rows, r1 = std::min(rows, r0 + tile_rows);
      const int64_t ncols = (r1 - r0) * OW;
      for (int64_t gr = 0; gr < n.groups; ++gr) {
        Im2Col(x + i * n.in_c * isize, g, gr * cg, (gr + 1) * cg, r0, r1, ncols, col.data());
        const int64_t at = (i * n.out_c + gr * fg) * osize + r0 * OW;
        GemmPacked(packed->groups[static_cast<size_t>(gr)], ncols, col.data(), ncols,
                   y + i * y_image + gr * fg * osize + r0 * OW, osize, epilogue(gr, at));
      }
    }
  });
  if (normalized.y) FinishOutput(y, nullptr, n, g, {}, normalized);
}

namespace {
// Winograd's 3x3 layers keep their tiles in bf16 (the products of each point in bf16) where they
// save at least this many multiplies; below it (outputs the tiles cover poorly: 7x7 in tiles of
// 6, 144 outputs made for 49) the transforms cost more than they save, and the columns' GEMM
// takes the layer.
constexpr double kBf16WinogradMinSaving = 1.5;
}  // namespace

bool Bf16ConvApplies(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights) {
  if (n.groups != 1 || g.out_size() <= 0) return false;
  // Where float32 has a kernel that does fewer or cheaper operations (the direct and tiny-depth
  // kernels of few channels), it is also the faster one.
  const ForwardChoice choice = ChooseForwardPath(n, g, OpReq::kWrite, weights);
  return choice.path == ForwardPath::kWinograd || choice.path == ForwardPath::kPacked ||
         choice.path == ForwardPath::kIm2Col;
}

void Bf16ConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                     const ConvGeom& g, DerivedWeights* weights, const FusedActivation& act, const float* residual,
                     const NormalizedOutput& normalized) {
  const ForwardChoice choice = ChooseForwardPath(n, g, OpReq::kWrite, weights);
  // F(6,3)'s transforms scale values by up to 32 before and after the products, which bf16's
  // 8-bit mantissas do not bear (errors up to 4% of an output's products): F(4,3) instead.
  const WinogradTile tile = choice.tile == WinogradTile::kF6 ? WinogradTile::kF4 : choice.tile;
  if (choice.path == ForwardPath::kWinograd && WinogradMultiplySaving(n, g, tile) >= kBf16WinogradMinSaving) {
    WinogradConvForward(x, w, bias, y, n, g, OpReq::kWrite, weights, residual ? FusedActivation{} : act, tile,
                        /*bf16_products=*/true);
    if (residual || normalized.y) FinishOutput(y, residual, n, g, residual ? act : FusedActivation{}, normalized);
    return;
  }
  const int64_t isize = g.in_size(), osize = g.out_size(), kdim = n.in_c * g.k_size();
  const auto packed = DerivedForm<PackedBf16A>(weights, w, {n.out_c, kdim},
                                               [&](const float* w) { return PackedBf16A(w, n.out_c, kdim, kdim); });
  const bool pointwise = g.is_pointwise();  // the image is its own column buffer
  const ScratchBuffer col(pointwise ? 1 : kdim * osize);
  for (int64_t i = 0; i < n.batch; ++i) {
    const float* columns = x + i * n.in_c * isize;
    if (!pointwise) {
      Im2ColParallel(columns, g, n.in_c, true, col.data());
      columns = col.data();
    }
    // The second output as the tiles store y (laid out as y, whose images are contiguous here).
    NormalizedOutput z = normalized;
    if (z.y) z.y += i * n.out_c * osize;
    GemmBf16(*packed, osize, columns, osize, y + i * n.YImageStride(g), osize,
             GemmEpilogue{bias, act, residual ? residual + i * n.out_c * osize : nullptr}, z);
  }
}

bool PackedBackwardDataApplies(const ConvDims& n, const ConvGeom& g) {
  constexpr int64_t kMinColumns = 32;  // as PackedGemmApplies: fewer columns are mostly padding
  return n.groups == 1 && g.out_size() >= kMinColumns;
}

void PackedBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n,
                        const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), kdim = n.in_c * g.k_size();
  // col = W^T dy for every image: W^T (kdim x out_c) packed once per call (straight from W, its
  // transpose), not per image.
  if (g.is_pointwise()) {  // col2im is the identity
    const PackedGemmA packed(PackedGemmA::Transposed{}, w, kdim, n.out_c, kdim, ChooseGemmTiling(kdim, osize));
    ForEachImage(n.batch, [&](int64_t i, bool) {
      float* dxi = dx + i * n.in_c * isize;
      if (req != OpReq::kAdd) return GemmPacked(packed, osize, dy + i * n.out_c * osize, osize, dxi, osize);
      std::vector<float> col(static_cast<size_t>(kdim * osize));
      GemmPacked(packed, osize, dy + i * n.out_c * osize, osize, col.data(), osize);
      AssignWithReq(dxi, col.data(), kdim * osize, req);
    });
    return;
  }
  constexpr int64_t kTileFloats = int64_t{1} << 17;
  // Small outputs (7x7) of several images with weights past L2 (1 MB): one GEMM per block of
  // input channels over the columns of many images side by side (tall tiles read them in
  // place), so each panel of W^T is read once for all of them, not once per image's 49
  // columns; the block's columns are folded back while they are in cache. Blocks run in
  // parallel, each writing its own channels of dx. (Smaller weights stay in cache: LeNet's
  // 50 x 500 ran slower this way.)
  constexpr int64_t kSmallOutput = 128, kMaxGroupColumns = 2048, kLargeWeights = int64_t{1} << 18;
  if (osize < kSmallOutput && n.batch > 1 && kdim * n.out_c >= kLargeWeights) {
    const int64_t ks = g.k_size(), rows = g.out[0] * g.out[1];
    const int64_t per_group = std::clamp<int64_t>(kMaxGroupColumns / osize, 1, n.batch);
    const int64_t group_cols = per_group * osize;
    constexpr int64_t kMinBlocks = 4;  // work for two threads besides the GEMM's own split
    const int64_t channels_per_block =
        std::clamp<int64_t>(2 * kTileFloats / (ks * group_cols), 1, (n.in_c + kMinBlocks - 1) / kMinBlocks);
    const int64_t blocks = (n.in_c + channels_per_block - 1) / channels_per_block;
    std::vector<float> b(static_cast<size_t>(n.out_c * group_cols));
    for (int64_t i0 = 0; i0 < n.batch; i0 += per_group) {
      const int64_t i1 = std::min(n.batch, i0 + per_group), ncols = (i1 - i0) * osize;
      ParallelFor(n.out_c, GrainFor(ncols), [&](int64_t f0, int64_t f1) {  // dy of the group: out_c x ncols
        for (int64_t f = f0; f < f1; ++f)
          for (int64_t i = i0; i < i1; ++i)
            std::copy(dy + (i * n.out_c + f) * osize, dy + (i * n.out_c + f + 1) * osize,
                      b.data() + f * ncols + (i - i0) * osize);
      });
      ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        std::vector<float> col(static_cast<size_t>(channels_per_block * ks * ncols));
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t c0 = blk * channels_per_block, c1 = std::min(n.in_c, c0 + channels_per_block);
          const PackedGemmA a(PackedGemmA::Transposed{}, w + c0 * ks, (c1 - c0) * ks, n.out_c, kdim, GemmTiling::kTall);
          GemmPacked(a, ncols, b.data(), ncols, col.data(), ncols);
          for (int64_t i = i0; i < i1; ++i) {
            float* dxi = dx + i * n.in_c * isize;
            if (req != OpReq::kAdd) std::fill(dxi + c0 * isize, dxi + c1 * isize, 0.0f);
            Col2ImAdd(col.data() + (i - i0) * osize, g, c0, c1, 0, rows, ncols, dxi);
          }
        }
      });
    }
    return;
  }
  // Output rows in tiles whose columns (~512 KB) are folded back while they are in cache; W^T is
  // packed once, so narrow tiles cost no re-packing. An image's tiles run in order, since
  // neighbouring tiles add into the same input rows.
  // At least kMinTileColumns columns: deep weights (FCN's fc6, 411 MB of W^T) are streamed
  // once per tile, so one-row tiles of 16 columns read them 16 times per image.
  constexpr int64_t kMinTileColumns = 256;
  const int64_t rows = g.out[0] * g.out[1], OW = g.out[2];
  const int64_t rows_per_tile = std::clamp<int64_t>(
      std::max(kTileFloats / std::max<int64_t>(1, kdim * OW), (kMinTileColumns + OW - 1) / OW), 1, rows);
  const int64_t tile_cols = rows_per_tile * OW;
  const PackedGemmA packed(PackedGemmA::Transposed{}, w, kdim, n.out_c, kdim,
                           ChooseGemmTiling(kdim, std::min(osize, tile_cols)));
  ForEachImage(n.batch, [&](int64_t i, bool parallel) {
    float* dxi = dx + i * n.in_c * isize;
    std::vector<float> col(static_cast<size_t>(kdim * tile_cols));
    if (req != OpReq::kAdd) std::fill(dxi, dxi + n.in_c * isize, 0.0f);
    for (int64_t r0 = 0; r0 < rows; r0 += rows_per_tile) {
      const int64_t r1 = std::min(rows, r0 + rows_per_tile), ncols = (r1 - r0) * OW;
      GemmPacked(packed, ncols, dy + i * n.out_c * osize + r0 * OW, osize, col.data(), ncols);
      if (!parallel) {
        Col2ImAdd(col.data(), g, 0, n.in_c, r0, r1, ncols, dxi);
        continue;
      }
      ParallelFor(n.in_c, ChannelGrain(g), [&](int64_t c0, int64_t c1) {
        Col2ImAdd(col.data() + c0 * g.k_size() * ncols, g, c0, c1, r0, r1, ncols, dxi);
      });
    }
  });
}

namespace {
// The data gradient of a 3x3 stride-1 convolution as the forward convolution it is: dy (the
// image now) with the weights flipped and transposed, padded 2 - pad, giving dx (the columns).
ConvDims TransposedDims(const ConvDims& n) { return {n.batch, n.out_c, n.in_c, n.groups}; }
ConvGeom TransposedGeom(const ConvGeom& g) {
  ConvGeom t = g;
  for (int a = 0; a < 3; ++a) {
    std::swap(t.in[a], t.out[a]);
    t.p[a] = (g.k[a] - 1) * g.d[a] - g.p[a];
  }
  return t;
}
}  // namespace

bool WinogradBackwardDataApplies(const ConvDims& n, const ConvGeom& g) {
  if (!g.is_planar() || g.s[1] != 1 || g.s[2] != 1 || g.k[1] != 3 || g.k[2] != 3) return false;
  if (g.p[1] > 2 || g.p[2] > 2) return false;  // the transposed padding would be negative
  return WinogradPays(TransposedDims(n), TransposedGeom(g));
}

void WinogradBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n, const ConvGeom& g,
                          OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t taps = g.k_size();
  std::vector<float> flipped(static_cast<size_t>(n.in_c * n.out_c * taps));  // [c][f][taps reversed]
  ParallelFor(n.in_c, GrainFor(n.out_c * taps), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t f = 0; f < n.out_c; ++f)
        for (int64_t t = 0; t < taps; ++t)
          flipped[static_cast<size_t>((c * n.out_c + f) * taps + t)] = w[(f * n.in_c + c) * taps + taps - 1 - t];
  });
  WinogradConvForward(dy, flipped.data(), nullptr, dx, TransposedDims(n), TransposedGeom(g), req);
}

void ConvBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n,
                      const ConvGeom& g, OpReq req) {
  if (FastPathsEnabled() && WinogradBackwardDataApplies(n, g)) return WinogradBackwardData(dy, w, dx, n, g, req);
  if (FastPathsEnabled() && PackedBackwardDataApplies(n, g)) return PackedBackwardData(dy, w, dx, n, g, req);
  ConvBackwardDataIm2Col(dy, w, dx, n, g, req);
}

void ConvBackwardDataIm2Col(const float* dy, const float* w, float* dx, const ConvDims& n,
                            const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const bool pointwise = g.is_pointwise();
  ForEachImage(n.batch, [&](int64_t i, bool parallel) {
    const float* dyi = dy + i * n.out_c * osize;
    float* dxi = dx + i * n.in_c * isize;
    if (pointwise) {  // col2im is the identity: write the GEMM straight into dx
      const float beta = req == OpReq::kAdd ? 1.0f : 0.0f;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(true, false, kdim, osize, fg, 1.0f, w + gr * fg * kdim, kdim, dyi + gr * fg * osize,
             osize, beta, dxi + gr * kdim * osize, osize);
      return;
    }
    std::vector<float> col(static_cast<size_t>(n.in_c * ks * osize));
    for (int64_t gr = 0; gr < n.groups; ++gr)
      Gemm(true, false, kdim, osize, fg, 1.0f, w + gr * fg * kdim, kdim, dyi + gr * fg * osize,
           osize, 0.0f, col.data() + gr * kdim * osize, osize);
    if (req != OpReq::kAdd) std::fill(dxi, dxi + n.in_c * isize, 0.0f);
    if (!parallel) return Col2ImAdd(col.data(), g, 0, n.in_c, dxi);
    ParallelFor(n.in_c, ChannelGrain(g), [&](int64_t c0, int64_t c1) {
      Col2ImAdd(col.data() + c0 * ks * osize, g, c0, c1, dxi);
    });
  });
}

namespace {
// dw^T (kdim x out_c) = sum over images [i0, i1) of col_i dy_i^T, as one GemmPacked of depth
// (i1 - i0) * positions: the images' columns side by side (packed once as A, kdim x depth) and
// their head gradients transposed below one another (B, depth x out_c). Ungrouped.
void WeightGradientPacked(const float* dy, const float* x, int64_t i0, int64_t i1, const ConvDims& n,
                          const ConvGeom& g, float* dwt) {
  const int64_t isize = g.in_size(), osize = g.out_size(), kdim = n.in_c * g.k_size();
  const int64_t images = i1 - i0, depth = images * osize, rows = g.out[0] * g.out[1];
  std::vector<float> col(static_cast<size_t>(kdim * depth)), dyt(static_cast<size_t>(depth * n.out_c));
  for (int64_t i = i0; i < i1; ++i) {
    Im2Col(x + i * n.in_c * isize, g, 0, n.in_c, 0, rows, depth, col.data() + (i - i0) * osize);
    const float* dyi = dy + i * n.out_c * osize;
    float* b = dyt.data() + (i - i0) * osize * n.out_c;
    for (int64_t f = 0; f < n.out_c; ++f)
      for (int64_t o = 0; o < osize; ++o) b[o * n.out_c + f] = dyi[f * osize + o];
  }
  const PackedGemmA a(col.data(), kdim, depth, depth, ChooseGemmTiling(kdim, n.out_c));
  GemmPacked(a, n.out_c, dyt.data(), n.out_c, dwt, n.out_c);
}
}  // namespace

bool PackedBackwardWeightApplies(const ConvDims& n, const ConvGeom& g) {
  // Small outputs only (7x7 layers): from 14x14 on, im2col + Eigen is faster.
  constexpr int64_t kBelowPositions = 128;
  return n.groups == 1 && g.out_size() > 0 && g.out_size() < kBelowPositions;
}

void PackedBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n, const ConvGeom& g,
                          OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t kdim = n.in_c * g.k_size(), wsize = n.out_c * kdim;
  // Fixed chunks of the batch (a function of the problem only), each one GEMM into its own
  // transposed partial; partials summed in chunk order. At most 8 chunks, partials of at most
  // ~64 MB, and at least kMinDepth positions per chunk: each GEMM writes all of its partial,
  // which for the 7x7 layers (512 x 4608) costs more than 49 steps of depth compute.
  constexpr int64_t kMinDepth = 512;
  const int64_t most = std::max<int64_t>(1, std::min({n.batch, int64_t{8}, (int64_t{1} << 24) / std::max<int64_t>(1, wsize)}));
  const int64_t per_chunk = std::min(n.batch, std::max((n.batch + most - 1) / most, (kMinDepth + g.out_size() - 1) / std::max<int64_t>(1, g.out_size())));
  const int64_t chunks = (n.batch + per_chunk - 1) / per_chunk;
  std::vector<float> partial(static_cast<size_t>(chunks * wsize));
  ParallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      WeightGradientPacked(dy, x, c * per_chunk, std::min(n.batch, (c + 1) * per_chunk), n, g,
                           partial.data() + c * wsize);
  });
  MapWithReq(dw, wsize, req, [&](int64_t j) {  // j = f * kdim + r; partials are (r, f)
    const int64_t f = j / kdim, r = j % kdim;
    float s = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(c * wsize + r * n.out_c + f)];
    return s;
  });
}

void ConvBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n,
                        const ConvGeom& g, OpReq req) {
  if (FastPathsEnabled() && BlockedBackwardWeightApplies(n, g)) return BlockedBackwardWeight(dy, x, dw, n, g, req);
  if (FastPathsEnabled() && PackedBackwardWeightApplies(n, g)) return PackedBackwardWeight(dy, x, dw, n, g, req);
  ConvBackwardWeightIm2Col(dy, x, dw, n, g, req);
}

void ConvBackwardWeightIm2Col(const float* dy, const float* x, float* dw, const ConvDims& n,
                              const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const int64_t wsize = n.out_c * kdim;
  const bool pointwise = g.is_pointwise();
  // The batch is cut into a fixed number of chunks (a function of the problem size only, at
  // most 8 and with partial buffers of at most ~64 MB); each accumulates its partial gradient,
  // and the partials are summed in chunk order.
  const int64_t kPartialBudget = int64_t{1} << 24;  // floats
  const int64_t chunks =
      std::max<int64_t>(1, std::min({n.batch, int64_t{8}, kPartialBudget / std::max<int64_t>(1, wsize)}));
  const int64_t per_chunk = (n.batch + chunks - 1) / chunks;
  std::vector<float> partial(static_cast<size_t>(chunks > 1 ? chunks * wsize : 0));
  auto run_chunk = [&](int64_t ch, bool parallel) {
    float* acc = chunks > 1 ? partial.data() + ch * wsize : dw;
    float beta = (chunks == 1 && req == OpReq::kAdd) ? 1.0f : 0.0f;
    std::vector<float> buf;
    if (!pointwise) buf.resize(static_cast<size_t>(n.in_c * ks * osize));
    for (int64_t i = ch * per_chunk; i < std::min(n.batch, (ch + 1) * per_chunk); ++i) {
      const float* col = x + i * n.in_c * isize;
      if (!pointwise) {
        Im2ColParallel(col, g, n.in_c, parallel, buf.data());
        col = buf.data();
      }
      const float* dyi = dy + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(false, true, fg, kdim, osize, 1.0f, dyi + gr * fg * osize, osize,
             col + gr * kdim * osize, osize, beta, acc + gr * fg * kdim, kdim);
      beta = 1.0f;
    }
  };
  if (chunks == 1) {
    run_chunk(0, true);
    return;
  }
  ParallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) run_chunk(c, false);
  });
  MapWithReq(dw, wsize, req, [&](int64_t j) {
    float s = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(c * wsize + j)];
    return s;
  });
}

void BiasBackward(const float* dy, float* db, int64_t batch, int64_t channels, int64_t spatial,
                  OpReq req) {
  if (req == OpReq::kNull) return;
  std::vector<float> sums(static_cast<size_t>(channels));
  ParallelFor(channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, batch * spatial)),
              [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                  double s = 0;
                  for (int64_t i = 0; i < batch; ++i) {
                    // Float partial sums over 8 lanes vectorise; rows are summed in double.
                    const float* row = dy + (i * channels + c) * spatial;
                    float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    int64_t o = 0;
                    for (; o + 8 <= spatial; o += 8)
                      for (int l = 0; l < 8; ++l) lanes[l] += row[o + l];
                    double r = 0;
                    for (int l = 0; l < 8; ++l) r += lanes[l];
                    for (; o < spatial; ++o) r += row[o];
                    s += r;
                  }
                  sums[static_cast<size_t>(c)] = static_cast<float>(s);
                }
              });
  AssignWithReq(db, sums.data(), channels, req);
}

}  // namespace conv
}  // namespace symbind
