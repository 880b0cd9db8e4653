// The packed-GEMM micro-kernel (see GemmPacked in ops/kernels/gemm.h), compiled once per
// instruction set like gemm_block.cc. A tile of kMr rows x kNr columns of C is accumulated in
// registers over kc steps of one packed A panel (kc x kMr) and one packed B panel (kc x kNr),
// then stored with the epilogue. Every element sums its products in k order with the same
// instructions wherever its tile lies (edges are padded with zeros in the panels and cut at
// the store), so results do not depend on how tiles are spread over threads.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "../gemm_kernels.h"

namespace symbind::SYMBIND_GEMM_VARIANT {

namespace {
#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16, kMr = 8, kVecs = 2;  // 16 accumulators of 32
constexpr int kTallCols = 12;                   // tall tiles: 24 accumulators of 32 x 12
inline Vec Load(const float* p) { return _mm512_loadu_ps(p); }
inline void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline Vec Splat(float x) { return _mm512_set1_ps(x); }
inline Vec Zero() { return _mm512_setzero_ps(); }
inline Vec MulAdd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline Vec Max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
inline Vec Min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
inline Vec Leaky(Vec x, Vec s) {  // x > 0 ? x : s * x
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, Zero(), _CMP_GT_OQ), _mm512_mul_ps(s, x), x);
}
#elif defined(__AVX2__)
using Vec = __m256;
constexpr int kLanes = 8, kMr = 6, kVecs = 2;  // 12 accumulators of 16
constexpr int kTallCols = 6;                   // tall tiles: 12 accumulators of 16 x 6
inline Vec Load(const float* p) { return _mm256_loadu_ps(p); }
inline void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline Vec Splat(float x) { return _mm256_set1_ps(x); }
inline Vec Zero() { return _mm256_setzero_ps(); }
inline Vec MulAdd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec Max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
inline Vec Min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
inline Vec Leaky(Vec x, Vec s) { return _mm256_blendv_ps(_mm256_mul_ps(s, x), x, _mm256_cmp_ps(x, Zero(), _CMP_GT_OQ)); }
#else
using Vec = __m128;
constexpr int kLanes = 4, kMr = 4, kVecs = 2;  // 8 accumulators of 16 (SSE2, no FMA)
constexpr int kTallCols = 4;                   // tall tiles: 8 accumulators of 8 x 4
inline Vec Load(const float* p) { return _mm_loadu_ps(p); }
inline void Store(float* p, Vec v) { _mm_storeu_ps(p, v); }
inline Vec Splat(float x) { return _mm_set1_ps(x); }
inline Vec Zero() { return _mm_setzero_ps(); }
inline Vec MulAdd(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline Vec Add(Vec a, Vec b) { return _mm_add_ps(a, b); }
inline Vec Max(Vec a, Vec b) { return _mm_max_ps(a, b); }
inline Vec Min(Vec a, Vec b) { return _mm_min_ps(a, b); }
inline Vec Leaky(Vec x, Vec s) {
  const Vec positive = _mm_cmpgt_ps(x, Zero());
  return _mm_or_ps(_mm_and_ps(positive, x), _mm_andnot_ps(positive, _mm_mul_ps(s, x)));
}
#endif
constexpr int kNr = kLanes * kVecs;
constexpr int kTallRows = kLanes * kVecs;

// FusedActivation's operator() on a vector: max/min return their second operand when either is
// NaN or both are zeros, so relu takes x first (NaN -> 0) and clip the bound first (NaN and -0
// kept). `slope`: kLeaky's, or kPRelu's for the vector's row(s).
inline Vec Activate(Vec v, FusedActivation::Kind kind, Vec lo, Vec hi, Vec slope) {
  switch (kind) {
    case FusedActivation::kRelu: return Max(v, Zero());
    case FusedActivation::kClip: return Min(hi, Max(lo, v));
    case FusedActivation::kLeaky:
    case FusedActivation::kPRelu: return Leaky(v, slope);
    default: return v;
  }
}
}  // namespace

GemmMicroShape PackedShape() { return {kMr, kNr}; }
GemmMicroShape PackedTallShape() { return {kTallRows, kTallCols}; }

namespace {
// Where a tile's rows of `src` (C's layout, ldc apart) are read from: in place when the tile is
// full, else copied into `edge` (kNr apart, zero past the tile's rows and columns).
template <bool kFull>
inline __attribute__((always_inline)) const float* TileRows(const float* src, const PackedTileArgs& t, float* edge) {
  if constexpr (kFull) return src;
  std::fill(edge, edge + kMr * kNr, 0.0f);
  for (int r = 0; r < t.rows; ++r) std::copy(src + r * t.ldc, src + r * t.ldc + t.cols, edge + r * kNr);
  return edge;
}

// One k step of the wide tile: kMr weights of the A panel (broadcast) times kVecs vectors of B.
inline __attribute__((always_inline)) void WideStep(Vec (&acc)[kMr][kVecs], const float* a, const float* b) {
  Vec bv[kVecs];
  #pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) bv[v] = Load(b + v * kLanes);
  #pragma GCC unroll 16
  for (int r = 0; r < kMr; ++r) {
    const Vec av = Splat(a[r]);
    #pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[r][v] = MulAdd(av, bv[v], acc[r][v]);
  }
}

// The tile with its edge handling and epilogue fixed at compile time, so that the
// accumulators stay in registers from the first product to the store. kTaps: B's rows from a
// convolution's phase planes (PackedTileArgs::tap_offsets), in the same k order.
template <bool kFull, bool kLoadC, bool kBias, FusedActivation::Kind kAct, bool kResidual, bool kTaps = false>
inline __attribute__((always_inline)) void TileAt(const PackedTileArgs& t, const float* b_at, float* c_at,
                                                  const float* residual_at) {
  Vec acc[kMr][kVecs];
  alignas(64) float edge[kMr * kNr];
  const int64_t ld = kFull ? t.ldc : kNr;  // of what TileRows gives
  if constexpr (kLoadC) {
    const float* c = TileRows<kFull>(c_at, t, edge);
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = Load(c + r * ld + v * kLanes);
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = Zero();
  }
  if constexpr (kResidual)  // read after the products: on its way meanwhile (it was written long before)
    for (int r = 0; r < t.rows; ++r)
      for (int l = 0; l <= t.cols; l += 16) _mm_prefetch(reinterpret_cast<const char*>(residual_at + r * t.ldc + std::min(l, t.cols - 1)), _MM_HINT_T0);
  const float* a = t.a;
  if constexpr (kTaps) {
    const float* plane = b_at;
    for (int64_t c = 0; c < t.kc / t.taps; ++c, plane += t.plane_floats)
      for (int64_t tap = 0; tap < t.taps; ++tap, a += kMr) WideStep(acc, a, plane + t.tap_offsets[tap]);
  } else {
    const float* b = b_at;
    const int64_t ahead = t.b_prefetch_ahead;
    for (int64_t k = 0; k < t.kc; ++k, a += kMr, b += t.ldb) {
      if (ahead)
        for (int l = 0; l < kNr; l += 16) _mm_prefetch(reinterpret_cast<const char*>(b + ahead + l), _MM_HINT_T1);
      WideStep(acc, a, b);
    }
  }
  if constexpr (kBias) {
    // Rows past the edge read bias[row0] (any valid value: they are never stored).
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      const Vec bias = Splat(t.epilogue->bias[t.row0 + (kFull || r < t.rows ? r : 0)]);
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = Add(acc[r][v], bias);
    }
  }
  if constexpr (kResidual) {  // after the bias, before the activation: the unfused add's operands
    const float* residual = TileRows<kFull>(residual_at, t, edge);
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = Add(acc[r][v], Load(residual + r * ld + v * kLanes));
  }
  if constexpr (kAct != FusedActivation::kNone) {
    const FusedActivation& act = t.epilogue->act;
    const Vec lo = Splat(act.lo), hi = Splat(act.hi);
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r) {
      // Rows past the edge take row0's slope, as for the bias.
      const Vec slope = Splat(kAct == FusedActivation::kPRelu ? act.slopes[t.row0 + (kFull || r < t.rows ? r : 0)]
                                                               : act.slope);
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = Activate(acc[r][v], kAct, lo, hi, slope);
    }
  }
  if constexpr (kFull) {
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) Store(c_at + r * t.ldc + v * kLanes, acc[r][v]);
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < kMr; ++r)
      #pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) Store(edge + r * kNr + v * kLanes, acc[r][v]);
    for (int r = 0; r < t.rows; ++r) std::copy(edge + r * kNr, edge + r * kNr + t.cols, c_at + r * t.ldc);
  }
}

// t.tiles full tiles side by side (one tile at an edge): each the same sums as alone.
template <bool kFull, bool kLoadC, bool kBias, FusedActivation::Kind kAct, bool kResidual, bool kTaps>
inline __attribute__((always_inline)) void Tile(const PackedTileArgs& t) {
  for (int i = 0; i < t.tiles; ++i)
    TileAt<kFull, kLoadC, kBias, kAct, kResidual, kTaps>(t, t.b + i * t.b_tile_step, t.c + i * kNr,
                                                         kResidual ? t.residual + i * kNr : nullptr);
}

// The tile with the epilogue's parts as template arguments: a residual check at run time is a
// noticeable cost to small-depth tiles, whose store is a large part of their work.
template <bool kFull, bool kLoadC, bool kResidual, bool kTaps = false>
void TileFor(const PackedTileArgs& t) {
  const GemmEpilogue* ep = t.epilogue;
  if (!ep) return Tile<kFull, kLoadC, false, FusedActivation::kNone, false, kTaps>(t);
  const bool bias = ep->bias != nullptr;
  switch (ep->act.kind) {
    case FusedActivation::kRelu:
      return bias ? Tile<kFull, kLoadC, true, FusedActivation::kRelu, kResidual, kTaps>(t)
                  : Tile<kFull, kLoadC, false, FusedActivation::kRelu, kResidual, kTaps>(t);
    case FusedActivation::kClip:
      return bias ? Tile<kFull, kLoadC, true, FusedActivation::kClip, kResidual, kTaps>(t)
                  : Tile<kFull, kLoadC, false, FusedActivation::kClip, kResidual, kTaps>(t);
    case FusedActivation::kLeaky:
      return bias ? Tile<kFull, kLoadC, true, FusedActivation::kLeaky, kResidual, kTaps>(t)
                  : Tile<kFull, kLoadC, false, FusedActivation::kLeaky, kResidual, kTaps>(t);
    case FusedActivation::kPRelu:
      return bias ? Tile<kFull, kLoadC, true, FusedActivation::kPRelu, kResidual, kTaps>(t)
                  : Tile<kFull, kLoadC, false, FusedActivation::kPRelu, kResidual, kTaps>(t);
    default:
      return bias ? Tile<kFull, kLoadC, true, FusedActivation::kNone, kResidual, kTaps>(t)
                  : Tile<kFull, kLoadC, false, FusedActivation::kNone, kResidual, kTaps>(t);
  }
}
template <bool kFull, bool kLoadC>
void TileFor(const PackedTileArgs& t) {
  return t.residual ? TileFor<kFull, kLoadC, true>(t) : TileFor<kFull, kLoadC, false>(t);
}
}  // namespace

void PackedTile(const PackedTileArgs& t) {
  if (t.tap_offsets) return t.load_c ? TileFor<true, true, false, true>(t) : TileFor<true, false, false, true>(t);
  const bool full = t.rows == kMr && t.cols == kNr;
  if (full) return t.load_c ? TileFor<true, true>(t) : TileFor<true, false>(t);
  return t.load_c ? TileFor<false, true>(t) : TileFor<false, false>(t);
}

namespace {
// The tall tile: kTallRows rows of C in vectors (one step of the A panel is kTallRows
// consecutive weights), kCols <= kTallCols columns each broadcast from B as it is (a broadcast
// loads one float wherever it lies, so B needs no packing). Every sum is the wide tile's: zero (or C), one multiply-add per k in k order, + bias,
// the activation; so both tilings give the same bits. C is row-major, so the column vectors are
// transposed through a small buffer at the load and the store (a few percent of a deep tile).
// kBt: B given transposed (column c at b + c * ldb, its k consecutive), as a weight gradient's
// im2col rows are.
// buf[c * kTallRows + r] = src[r * ldc + c] over the tile's rows (C's layout; zero past them):
// a tile of C in column vectors.
template <int kCols>
inline __attribute__((always_inline)) void TransposeIn(const float* src, const PackedTileArgs& t, float* buf) {
  if (t.rows < kTallRows) std::fill(buf, buf + kCols * kTallRows, 0.0f);
  for (int r = 0; r < t.rows; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < kCols; ++c) buf[c * kTallRows + r] = src[r * t.ldc + c];
}

template <int kCols, bool kBt, int kRowVecs>
void TallTile(const PackedTileArgs& t) {
  Vec acc[kCols][kRowVecs];
  alignas(64) float buf[kTallCols * kTallRows];
  if (t.load_c) {
    TransposeIn<kCols>(t.c, t, buf);
    #pragma GCC unroll 16
    for (int c = 0; c < kCols; ++c)
      #pragma GCC unroll 4
      for (int v = 0; v < kRowVecs; ++v) acc[c][v] = Load(buf + c * kTallRows + v * kLanes);
  } else {
    #pragma GCC unroll 16
    for (int c = 0; c < kCols; ++c)
      #pragma GCC unroll 4
      for (int v = 0; v < kRowVecs; ++v) acc[c][v] = Zero();
  }
  if (t.residual)  // as for the wide tile
    for (int r = 0; r < t.rows; ++r) {
      _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * t.ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * t.ldc + kCols - 1), _MM_HINT_T0);
    }
  const float* a = t.a;
  const float* b = t.b;
  const char* prefetch = t.prefetch;
  const int64_t ahead = kBt ? 0 : t.b_prefetch_ahead;
  for (int64_t k = 0; k < t.kc; ++k, a += kTallRows, b += kBt ? 1 : t.ldb) {
    if (prefetch < t.prefetch_end)
      for (int l = 0; l < t.prefetch_lines_per_step; ++l, prefetch += 64) _mm_prefetch(prefetch, _MM_HINT_T1);
    if (ahead) {  // both ends of a later tile's kTallCols columns of B's row k
      _mm_prefetch(reinterpret_cast<const char*>(b + ahead), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(b + ahead + kTallCols - 1), _MM_HINT_T1);
    }
    Vec av[kRowVecs];
    #pragma GCC unroll 4
    for (int v = 0; v < kRowVecs; ++v) av[v] = Load(a + v * kLanes);
    #pragma GCC unroll 16
    for (int c = 0; c < kCols; ++c) {
      const Vec bv = Splat(kBt ? b[c * t.ldb] : b[c]);
      #pragma GCC unroll 4
      for (int v = 0; v < kRowVecs; ++v) acc[c][v] = MulAdd(av[v], bv, acc[c][v]);
    }
  }
  if (const GemmEpilogue* ep = t.epilogue) {
    if (ep->bias) {
      alignas(64) float bias[kTallRows] = {};  // rows past the edge: never stored
      std::copy(ep->bias + t.row0, ep->bias + t.row0 + t.rows, bias);
      #pragma GCC unroll 4
      for (int v = 0; v < kRowVecs; ++v) {
        const Vec bv = Load(bias + v * kLanes);
        #pragma GCC unroll 16
        for (int c = 0; c < kCols; ++c) acc[c][v] = Add(acc[c][v], bv);
      }
    }
    if (t.residual) {  // transposed in as C is for load_c
      TransposeIn<kCols>(t.residual, t, buf);
      #pragma GCC unroll 16
      for (int c = 0; c < kCols; ++c)
        #pragma GCC unroll 4
        for (int v = 0; v < kRowVecs; ++v) acc[c][v] = Add(acc[c][v], Load(buf + c * kTallRows + v * kLanes));
    }
    if (ep->act.kind != FusedActivation::kNone) {
      const Vec lo = Splat(ep->act.lo), hi = Splat(ep->act.hi);
      alignas(64) float slopes[kTallRows];  // per row (kPRelu; rows past the edge never stored)
      std::fill(slopes, slopes + kTallRows, ep->act.slope);
      if (ep->act.kind == FusedActivation::kPRelu)
        std::copy(ep->act.slopes + t.row0, ep->act.slopes + t.row0 + t.rows, slopes);
      #pragma GCC unroll 4
      for (int v = 0; v < kRowVecs; ++v) {
        const Vec slope = Load(slopes + v * kLanes);
        #pragma GCC unroll 16
        for (int c = 0; c < kCols; ++c) acc[c][v] = Activate(acc[c][v], ep->act.kind, lo, hi, slope);
      }
    }
  }
  #pragma GCC unroll 16
  for (int c = 0; c < kCols; ++c)
    #pragma GCC unroll 4
    for (int v = 0; v < kRowVecs; ++v) Store(buf + c * kTallRows + v * kLanes, acc[c][v]);
  for (int r = 0; r < t.rows; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < kCols; ++c) t.c[r * t.ldc + c] = buf[c * kTallRows + r];
}

using TallFn = void (*)(const PackedTileArgs&);
template <bool kBt, int kRowVecs, int... kCols>
constexpr std::array<TallFn, sizeof...(kCols)> TallTiles(std::integer_sequence<int, kCols...>) {
  return {TallTile<kCols + 1, kBt, kRowVecs>...};
}

// The tile for t.cols columns; a last panel of at most kLanes rows (24 filters: 16 + 8 on AVX2)
// with one vector of rows, not two of which one is padding.
template <bool kBt>
void TallTileFor(const PackedTileArgs& t) {
  static constexpr auto kTiles = TallTiles<kBt, kVecs>(std::make_integer_sequence<int, kTallCols>{});
  static constexpr auto kHalfTiles = TallTiles<kBt, 1>(std::make_integer_sequence<int, kTallCols>{});
  (t.rows <= kLanes ? kHalfTiles : kTiles)[static_cast<size_t>(t.cols - 1)](t);
}
}  // namespace

void PackedTallTile(const PackedTileArgs& t) { TallTileFor<false>(t); }

void PackedTallTileBt(const PackedTileArgs& t) { TallTileFor<true>(t); }

}  // namespace symbind::SYMBIND_GEMM_VARIANT
