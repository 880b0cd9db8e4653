// Direct convolution as an implicit GEMM: the product of im2col + GEMM without the column
// buffer. With the image zero-padded and split by column phase once (SplitPhases), the column
// of tap (c, kh, kw) for output positions oh, ow.. is a phase row of plane c read from a fixed
// offset on: contiguous, so a register tile loads it in place at a per-tap offset. Tiles are 4
// filters by 3 vectors of 8 output columns ("slots": a row's columns in chunks of 8, the last
// one partial; the 3 slots of a tile may lie on consecutive rows). Each sum starts at zero and
// adds the taps in (c, kh, kw) order by one multiply-add each, then the bias and the
// activation: the sums of the packed GEMM's tiles, so both paths give the same bits.
//
// On AVX2 it beats Winograd F(6,3) and the packed GEMM on layers of fewer than 32 input
// channels (SqueezeNet's expansions, MTCNN), and the tiny-depth kernel on first layers (3x3 and
// 7x7, stride 1 or 2): it reads the input in place, with no column buffer or transforms to pay
// for. From 32 channels on, Winograd's fewer multiplies win.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
constexpr int kFilters = 4;  // filters per tile (a panel of the packed weights)
constexpr int kSlots = 3;    // vectors of 8 output columns per tile
constexpr int kLanes = 8;
// 4 x 3 accumulators take 4 broadcasts and 3 loads per 12 multiply-adds; the GEMM's 6 x 2 take
// 6 and 2, which ran slower here.

// The weights as panels of kFilters filters, tap-major (panel p, tap k: filters p*4.. side by
// side, zero past out_c).
struct DirectWeights {
  const float* panels = nullptr;
  int64_t floats = 0;
  std::shared_ptr<const void> keep;  // owns the panels, or the file they are read from
};

DirectWeights PackDirectWeights(const float* w, int64_t filters, int64_t depth) {
  const int64_t panels = (filters + kFilters - 1) / kFilters;
  auto data = std::make_shared<std::vector<float>>(static_cast<size_t>(panels * depth * kFilters), 0.0f);
  for (int64_t f = 0; f < filters; ++f)
    for (int64_t k = 0; k < depth; ++k)
      (*data)[static_cast<size_t>(((f / kFilters) * depth + k) * kFilters + f % kFilters)] = w[f * depth + k];
  return DirectWeights{data->data(), static_cast<int64_t>(data->size()), data};
}

// No header; one array.
const FormCodecRegistrar kDirectCodec(FormCodec{
    "conv_direct_panels", typeid(DirectWeights),
    [](const void* form) {
      const auto& d = *static_cast<const DirectWeights*>(form);
      return SavedForm{{}, {FloatSpan{d.panels, d.floats}}};
    },
    [](const std::vector<int64_t>& header, const std::vector<FloatSpan>& arrays,
       const std::shared_ptr<const void>& keep) -> std::shared_ptr<const void> {
      if (!header.empty() || arrays.size() != 1 || arrays[0].size % kFilters != 0)
        throw Error(StrCat("direct convolution panels: a header of ", header.size(), " integers and ", arrays.size(),
                           " arrays do not describe them"));
      return std::make_shared<const DirectWeights>(DirectWeights{arrays[0].data, arrays[0].size, keep});
    }});

std::shared_ptr<const DirectWeights> DirectWeightsFor(const float* w, DerivedWeights* weights, int64_t filters,
                                                      int64_t depth) {
  auto packed = DerivedForm<DirectWeights>(weights, w, {filters, depth},
                                           [&](const float* data) { return PackDirectWeights(data, filters, depth); });
  if (packed->floats != (filters + kFilters - 1) / kFilters * kFilters * depth)
    throw Error("direct convolution panels: the stored form does not fit the layer; the model file is damaged");
  return packed;
}
// One tile: where its slots read (the padded input at the slot's first output column) and
// write (row 0 of C, the tile's first filter's plane), how many of each slot's lanes are
// output columns (0: no slot).
struct Tile {
  const float* in[kSlots];
  float* out[kSlots];
  int lanes[kSlots];
};

struct TileArgs {
  const float* panel;      // depth x kFilters packed weights
  const int64_t* offsets;  // tap k of a slot at in + offsets[k]
  int64_t depth;
  int64_t plane;  // floats between output planes
  int filters;    // of this panel (<= kFilters)
  const float* bias;  // this panel's first filter's, or null
  FusedActivation act;  // from this panel's first filter on
};

// A full tile's sums (every filter of the panel, every lane of the slots) + bias, the
// activation, stored from the registers: the general store below (through memory, a mask and
// the activation's kind per vector) is a large part of the time of shallow first layers, whose
// sums have only 27 taps.
template <FusedActivation::Kind kAct>
__attribute__((target("avx2,fma"), always_inline)) inline void StoreFullTile(const TileArgs& a, const Tile& t,
                                                                           const __m256 (&acc)[kFilters][kSlots]) {
  const __m256 lo = _mm256_set1_ps(a.act.lo), hi = _mm256_set1_ps(a.act.hi);
#pragma GCC unroll 4
  for (int f = 0; f < kFilters; ++f) {
    const __m256 slope = _mm256_set1_ps(kAct == FusedActivation::kPRelu ? a.act.slopes[f] : a.act.slope);
    const __m256 bias = _mm256_set1_ps(a.bias ? a.bias[f] : 0.0f);
#pragma GCC unroll 3
    for (int s = 0; s < kSlots; ++s) {
      // bias-free sums stay as they are (no + 0: -0 kept)
      const __m256 v = a.bias ? _mm256_add_ps(acc[f][s], bias) : acc[f][s];
      _mm256_storeu_ps(t.out[s] + f * a.plane, ActivateAvx2(v, kAct, lo, hi, slope));
    }
  }
}

__attribute__((target("avx2,fma"))) void RunTile(const TileArgs& a, const Tile& t) {
  __m256 acc[kFilters][kSlots];
#pragma GCC unroll 4
  for (int f = 0; f < kFilters; ++f)
#pragma GCC unroll 3
    for (int s = 0; s < kSlots; ++s) acc[f][s] = _mm256_setzero_ps();
  const float* in0 = t.in[0];
  const float* in1 = t.in[1];
  const float* in2 = t.in[2];
  const float* w = a.panel;
  for (int64_t k = 0; k < a.depth; ++k, w += kFilters) {
    const int64_t o = a.offsets[k];
    const __m256 x0 = _mm256_loadu_ps(in0 + o), x1 = _mm256_loadu_ps(in1 + o), x2 = _mm256_loadu_ps(in2 + o);
#pragma GCC unroll 4
    for (int f = 0; f < kFilters; ++f) {
      const __m256 wf = _mm256_broadcast_ss(w + f);
      acc[f][0] = _mm256_fmadd_ps(wf, x0, acc[f][0]);
      acc[f][1] = _mm256_fmadd_ps(wf, x1, acc[f][1]);
      acc[f][2] = _mm256_fmadd_ps(wf, x2, acc[f][2]);
    }
  }
  if (a.filters == kFilters && t.lanes[0] == kLanes && t.lanes[1] == kLanes && t.lanes[2] == kLanes) {
    switch (a.act.kind) {
      case FusedActivation::kNone: return StoreFullTile<FusedActivation::kNone>(a, t, acc);
      case FusedActivation::kRelu: return StoreFullTile<FusedActivation::kRelu>(a, t, acc);
      case FusedActivation::kClip: return StoreFullTile<FusedActivation::kClip>(a, t, acc);
      case FusedActivation::kLeaky: return StoreFullTile<FusedActivation::kLeaky>(a, t, acc);
      case FusedActivation::kPRelu: return StoreFullTile<FusedActivation::kPRelu>(a, t, acc);
    }
  }
  // Out of the registers at compile-time indices first: indexing acc in the loop below would
  // keep it in memory through the products.
  alignas(32) float sums[kFilters * kSlots * kLanes];
#pragma GCC unroll 4
  for (int f = 0; f < kFilters; ++f)
#pragma GCC unroll 3
    for (int s = 0; s < kSlots; ++s) _mm256_store_ps(sums + (f * kSlots + s) * kLanes, acc[f][s]);
  for (int f = 0; f < a.filters; ++f) {
    const __m256 bias = _mm256_set1_ps(a.bias ? a.bias[f] : 0.0f);
    const FusedActivation act = a.act.ForRow(f);
    for (int s = 0; s < kSlots; ++s) {
      if (t.lanes[s] == 0) continue;
      __m256 v = _mm256_load_ps(sums + (f * kSlots + s) * kLanes);
      if (a.bias) v = _mm256_add_ps(v, bias);  // bias-free sums stay as they are (no + 0: -0 kept)
      StoreActivatedAvx2(t.out[s] + f * a.plane, LaneMask8(0, t.lanes[s]), t.lanes[s] == kLanes, v, act, false);
    }
  }
}
}  // namespace

bool DirectConvApplies(const ConvDims& n, const ConvGeom& g) {
  // AVX2 only: measured there (AVX-512 CPUs keep their Winograd and packed tiles).
  const bool stride = g.s[1] == g.s[2] && (g.s[1] == 1 || g.s[1] == 2);
  return n.groups == 1 && g.is_planar() && stride && g.k_size() > 1 && g.out_size() > 0 &&
         ActiveIsa() == KernelIsa::kAvx2;
}

bool DirectConvPays(const ConvDims& n, const ConvGeom& g) {
  // Below 32 channels the direct kernel beats Winograd F(6,3): its transforms cost more than
  // they save on so few channels; from 32 on Winograd wins. Depths of at most 384 (as the packed
  // GEMM's wide tiles; 7x7 kernels up to 7 channels).
  constexpr int64_t kMaxChannels = 31, kMaxDepth = 384;
  return DirectConvApplies(n, g) && n.in_c <= kMaxChannels && n.in_c * g.k_size() <= kMaxDepth;
}

namespace {
// Output rows [0, rows) of one image: the slot at output (oh, ow) reads tap k at
// row_in(oh) + ow + offsets[k] and writes y + oh * OW + ow, filter planes `plane` floats apart.
template <typename RowIn>
void RunRows(const DirectWeights& packed, const std::vector<int64_t>& offsets, const RowIn& row_in, int64_t rows,
             int64_t OW, float* y, int64_t plane, int64_t filters, const float* bias, const FusedActivation& act) {
  const int64_t depth = static_cast<int64_t>(offsets.size());
  const int64_t slots_per_row = (OW + kLanes - 1) / kLanes, slots = rows * slots_per_row;
  if (slots == 0) return;
  const int64_t tiles = (slots + kSlots - 1) / kSlots, panels = (filters + kFilters - 1) / kFilters;
  // Tasks of bands of up to 32 tiles (768 output positions), each panel over the whole band
  // before the next: every filter's outputs are written as one run of whole cache lines (a
  // panel per tile would write 64 planes 96 bytes at a time), while the band's input stays in
  // L2 and the panel in L1. At least 16 bands where there are 16 tiles, so that two threads get
  // even shares.
  constexpr int64_t kMaxBandTiles = 32;
  const int64_t band = std::clamp<int64_t>(tiles / 16, 1, kMaxBandTiles), bands = (tiles + band - 1) / band;
  // Tile t: its slots' input and output (tiles past the last slot read the last slot's columns
  // again and store nothing).
  auto tile_at = [&](int64_t t) {
    Tile tile;
    for (int s = 0; s < kSlots; ++s) {
      const int64_t slot = std::min(t * kSlots + s, slots - 1);
      const int64_t oh = slot / slots_per_row, ow = slot % slots_per_row * kLanes;
      tile.in[s] = row_in(oh) + ow;
      tile.out[s] = y + oh * OW + ow;
      tile.lanes[s] = t * kSlots + s < slots ? static_cast<int>(std::min<int64_t>(kLanes, OW - ow)) : 0;
    }
    return tile;
  };
  ParallelFor(bands, 1, [&](int64_t b0, int64_t b1) {
    std::vector<Tile> band_tiles;
    for (int64_t b = b0; b < b1; ++b) {
      band_tiles.clear();
      for (int64_t t = b * band; t < std::min(tiles, (b + 1) * band); ++t) band_tiles.push_back(tile_at(t));
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t f0 = p * kFilters;
        const TileArgs args{packed.panels + p * depth * kFilters, offsets.data(), depth, plane,
                            static_cast<int>(std::min<int64_t>(kFilters, filters - f0)),
                            bias ? bias + f0 : nullptr, act.FromRow(f0)};
        for (Tile at : band_tiles) {
          for (float*& out : at.out) out += f0 * plane;
          RunTile(args, at);
        }
      }
    }
  });
}
}  // namespace

void DirectConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                       const ConvGeom& g, const FusedActivation& act, DerivedWeights* weights) {
  if (!DirectConvApplies(n, g))
    throw Error("DirectConvForward: needs a 2-D convolution of one group at stride 1 or 2 and an AVX2 CPU");
  const int64_t S = g.s[1], KH = g.k[1], KW = g.k[2], OH = g.out[1], OW = g.out[2], C = n.in_c;
  const int64_t H = g.in[1], W = g.in[2], depth = C * KH * KW, osize = g.out_size();
  const auto packed = DirectWeightsFor(w, weights, n.out_c, depth);
  std::vector<int64_t> offsets(static_cast<size_t>(depth));
  // Stride 1 without padding reads the image where it lies: each row's slack is the next row.
  // Only the last rows of the last image would read past the array (a partial last slot reads
  // up to 7 floats on): those rows read a copy of the input rows they need, with slack.
  const bool in_place = S == 1 && g.p[1] == 0 && g.p[2] == 0;
  // Tap offsets in planes of `rows` rows of W floats (the image's, or the copy's).
  auto plane_offsets = [&](int64_t rows) {
    std::vector<int64_t> taps(static_cast<size_t>(depth));
    for (int64_t c = 0, k = 0; c < C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) taps[static_cast<size_t>(k++)] = (c * rows + kh * g.d[1]) * W + kw * g.d[2];
    return taps;
  };
  if (in_place) offsets = plane_offsets(H);
  for (int64_t i = 0; i < n.batch; ++i) {
    const float* xi = x + i * C * g.in_size();
    float* yi = y + i * n.YImageStride(g);
    if (in_place) {
      const int64_t past_end = i + 1 < n.batch ? 0 : (kLanes - OW % kLanes) % kLanes;
      const int64_t tail = std::min(OH, (past_end + W - 1) / W);
      RunRows(*packed, offsets, [&](int64_t oh) { return xi + oh * W; }, OH - tail, OW, yi, osize, n.out_c, bias, act);
      if (tail == 0) continue;
      const int64_t rows = tail + (KH - 1) * g.d[1];  // input rows of the last `tail` output rows
      const PhasedInput copy = CopyLastRows(xi, C, H, W, rows, kLanes);
      RunRows(*packed, plane_offsets(rows), [&](int64_t oh) { return copy.base + oh * W; }, tail, OW,
              yi + (OH - tail) * OW, osize, n.out_c, bias, act);
      continue;
    }
    // Elsewhere the image is zero-padded and split by column phase; a slot's last lanes read up
    // to 7 columns past the row's outputs: the rows' slack.
    const PhasedInput in = SplitPhases(xi, C, g, kLanes);
    const float* origin = in.Row(0, 0, 0);
    for (int64_t c = 0, k = 0; c < C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          offsets[static_cast<size_t>(k++)] = in.Row(c, kh * g.d[1], kw * g.d[2] % S) - origin + kw * g.d[2] / S;
    RunRows(*packed, offsets, [&](int64_t oh) { return in.Row(0, oh * S, 0); }, OH, OW, yi, osize, n.out_c, bias,
            act);
  }
}

}  // namespace conv
}  // namespace symbind
