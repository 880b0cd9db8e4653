// Winograd F(2x2, 3x3), F(4x4, 3x3) and F(6x6, 3x3) convolution (Lavin & Gray 2015): each
// (m+2)x(m+2) input tile and 3x3 filter are transformed so that an m x m output tile costs
// (m+2)^2 products per channel pair instead of 9 m^2, the products being (m+2)^2 GEMMs (filters
// x channels) x (channels x tiles). F(2,3) interpolates at 0, +-1, inf (16 products per 4
// outputs), F(4,3) at 0, +-1, +-2, inf (36 per 16), F(6,3) at 0, +-1, +-2, +-1/2, inf (64 per
// 36: 21% fewer, but its 8x8 tiles pad more). The larger the tile, the fewer products but the
// more transformed weights per channel pair (16, 36, 64 floats against 9): F(2,3) is for wide
// layers on small images, whose weights dominate the bytes.
//
// The transforms run on kLanes tiles at once (one AVX-512 vector, two AVX2 ones), in local
// arrays the compiler vectorises; only the gather of the input patches and the scatter of the
// outputs touch single floats.
//
// Accuracy: F(4,3)'s transforms scale values by at most 8 and 5, F(6,3)'s by up to 32 (A^T) and
// 21/4 (B^T) with fractions such as 2/9 and 1/90 in G, so its float error is several times
// larger; the tests hold both to 1e-4 of the output's magnitude against a double reference.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <symbind/core/huge_pages.h>
#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
constexpr int kLanes = 16;  // tiles transformed together
using Lanes = float[kLanes];

// The transforms of F(kTile x kTile, 3x3) along one axis, on lane vectors: out[i * os] =
// (B^T in)_i with in[k * is] (Input), out[a * os] = (A^T in)_a (Output), and the filter's
// out = G in for taps in[0], in[s], in[2 s] (Filter).
template <int kTile>
struct Transforms;

template <>
struct Transforms<2> {
  static constexpr int kAlpha = 4;
  static inline __attribute__((always_inline)) void Input(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float r0 = in[0][l], r1 = in[is][l], r2 = in[2 * is][l], r3 = in[3 * is][l];
      out[0][l] = r0 - r2;
      out[os][l] = r1 + r2;
      out[2 * os][l] = r2 - r1;
      out[3 * os][l] = r1 - r3;
    }
  }
  static inline __attribute__((always_inline)) void Output(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float m0 = in[0][l], m1 = in[is][l], m2 = in[2 * is][l], m3 = in[3 * is][l];
      out[0][l] = m0 + m1 + m2;
      out[os][l] = m1 - m2 - m3;
    }
  }
  static void Filter(const float* in, int64_t s, float out[kAlpha]) {
    const float a = in[0], b = in[s], c = in[2 * s];
    out[0] = a;
    out[1] = (a + b + c) * 0.5f;
    out[2] = (a - b + c) * 0.5f;
    out[3] = c;
  }
};

template <>
struct Transforms<4> {
  static constexpr int kAlpha = 6;
  static inline __attribute__((always_inline)) void Input(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float r0 = in[0][l], r1 = in[is][l], r2 = in[2 * is][l], r3 = in[3 * is][l], r4 = in[4 * is][l],
                  r5 = in[5 * is][l];
      out[0][l] = 4 * r0 - 5 * r2 + r4;
      out[os][l] = -4 * (r1 + r2) + r3 + r4;
      out[2 * os][l] = 4 * (r1 - r2) - r3 + r4;
      out[3 * os][l] = 2 * (r3 - r1) - r2 + r4;
      out[4 * os][l] = 2 * (r1 - r3) - r2 + r4;
      out[5 * os][l] = 4 * r1 - 5 * r3 + r5;
    }
  }
  static inline __attribute__((always_inline)) void Output(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float m0 = in[0][l], m1 = in[is][l], m2 = in[2 * is][l], m3 = in[3 * is][l], m4 = in[4 * is][l],
                  m5 = in[5 * is][l];
      const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
      out[0][l] = m0 + s12 + s34;
      out[os][l] = d12 + 2 * d34;
      out[2 * os][l] = s12 + 4 * s34;
      out[3 * os][l] = d12 + 8 * d34 + m5;
    }
  }
  static void Filter(const float* in, int64_t s, float out[kAlpha]) {
    const float a = in[0], b = in[s], c = in[2 * s];
    out[0] = a * (1.0f / 4);
    out[1] = -(a + b + c) * (1.0f / 6);
    out[2] = -(a - b + c) * (1.0f / 6);
    out[3] = a * (1.0f / 24) + b * (1.0f / 12) + c * (1.0f / 6);
    out[4] = a * (1.0f / 24) - b * (1.0f / 12) + c * (1.0f / 6);
    out[5] = c;
  }
};

// Points 0, 1, -1, 2, -2, 1/2, -1/2, inf.
template <>
struct Transforms<6> {
  static constexpr int kAlpha = 8;
  static inline __attribute__((always_inline)) void Input(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float d0 = in[0][l], d1 = in[is][l], d2 = in[2 * is][l], d3 = in[3 * is][l], d4 = in[4 * is][l],
                  d5 = in[5 * is][l], d6 = in[6 * is][l], d7 = in[7 * is][l];
      out[0][l] = d0 - d6 + (d4 - d2) * 5.25f;
      out[7 * os][l] = d7 - d1 + (d3 - d5) * 5.25f;
      const float a1 = d2 + d6 - d4 * 4.25f, b1 = d1 + d5 - d3 * 4.25f;
      out[os][l] = a1 + b1;
      out[2 * os][l] = a1 - b1;
      const float a2 = d6 + d2 * 0.25f - d4 * 1.25f, b2 = d1 * 0.5f - d3 * 2.5f + d5 * 2;
      out[3 * os][l] = a2 + b2;
      out[4 * os][l] = a2 - b2;
      const float a3 = d6 + (d2 - d4 * 1.25f) * 4, b3 = d1 * 2 - d3 * 2.5f + d5 * 0.5f;
      out[5 * os][l] = a3 + b3;
      out[6 * os][l] = a3 - b3;
    }
  }
  static inline __attribute__((always_inline)) void Output(const Lanes* in, int is, Lanes* out, int os) {
    for (int l = 0; l < kLanes; ++l) {
      const float m0 = in[0][l], m1 = in[is][l], m2 = in[2 * is][l], m3 = in[3 * is][l], m4 = in[4 * is][l],
                  m5 = in[5 * is][l], m6 = in[6 * is][l], m7 = in[7 * is][l];
      const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4, s56 = m5 + m6, d56 = m5 - m6;
      out[0][l] = m0 + s12 + s34 + s56;
      out[os][l] = d12 + 2 * d34 + 0.5f * d56;
      out[2 * os][l] = s12 + 4 * s34 + 0.25f * s56;
      out[3 * os][l] = d12 + 8 * d34 + 0.125f * d56;
      out[4 * os][l] = s12 + 16 * s34 + 0.0625f * s56;
      out[5 * os][l] = d12 + 32 * d34 + 0.03125f * d56 + m7;
    }
  }
  static void Filter(const float* in, int64_t s, float out[kAlpha]) {
    const float a = in[0], b = in[s], c = in[2 * s];
    out[0] = a;
    out[1] = -(a + b + c) * (2.0f / 9);
    out[2] = -(a - b + c) * (2.0f / 9);
    out[3] = a * (1.0f / 90) + b * (1.0f / 45) + c * (2.0f / 45);
    out[4] = a * (1.0f / 90) - b * (1.0f / 45) + c * (2.0f / 45);
    out[5] = a * (32.0f / 45) + b * (16.0f / 45) + c * (8.0f / 45);
    out[6] = a * (32.0f / 45) - b * (16.0f / 45) + c * (8.0f / 45);
    out[7] = c;
  }
};

// dst[0:lanes] = src[0:lanes] in moves of fixed size: a variable-length loop or memcpy becomes
// `rep movsq` or a call to memcpy, either a sizeable share of a layer's time.
inline __attribute__((always_inline)) void CopyLanes(float* dst, const float* src, int lanes) {
  static_assert(kLanes == 16, "the moves below cover 16 lanes");
  if (lanes == kLanes) {
    std::memcpy(dst, src, kLanes * sizeof(float));
    return;
  }
  int l = 0;
  if (lanes >= 8) {
    std::memcpy(dst, src, 8 * sizeof(float));
    l = 8;
  }
  if (lanes - l >= 4) {
    std::memcpy(dst + l, src + l, 4 * sizeof(float));
    l += 4;
  }
  if (lanes - l >= 2) {
    std::memcpy(dst + l, src + l, 2 * sizeof(float));
    l += 2;
  }
  if (l < lanes) dst[l] = src[l];
}

int TileSide(WinogradTile tile) { return tile == WinogradTile::kF6 ? 6 : tile == WinogradTile::kF2 ? 2 : 4; }
int Points(WinogradTile tile) { return (TileSide(tile) + 2) * (TileSide(tile) + 2); }

// The problem split into chunks of tiles (over all images, so batches fill the GEMMs); each
// chunk's transformed input is points x channels x tiles, its products points x filters x tiles.
constexpr int64_t kChunkTiles = 64;
struct Tiling {
  int64_t side, tiles_h, tiles_w, per_image, total, chunk;
};

Tiling MakeTiling(const ConvDims& n, const ConvGeom& g, WinogradTile tile) {
  Tiling t{};
  t.side = TileSide(tile);
  t.tiles_h = (g.out[1] + t.side - 1) / t.side;
  t.tiles_w = (g.out[2] + t.side - 1) / t.side;
  t.per_image = t.tiles_h * t.tiles_w;
  t.total = n.batch * t.per_image;
  // At most 64 tiles per chunk (better than 32, 128 or chunks sized by bytes on ResNet's 3x3
  // shapes), in chunks of equal size: 56x56 as 4 x 49 tiles, not 3 x 64 + 4, which would leave
  // one thread a sliver.
  const int64_t chunks = (t.total + kChunkTiles - 1) / kChunkTiles;
  t.chunk = std::max<int64_t>(1, (t.total + chunks - 1) / std::max<int64_t>(chunks, 1));
  return t;
}

// Where each tile of a chunk starts: its image and its top-left output (= input, before the
// padding) position; computed once per task instead of dividing per tile and channel.
struct TileOrigin {
  int64_t img, oy, ox;
};
int ChunkOrigins(const Tiling& tl, int64_t t0, int64_t len, TileOrigin* out) {
  for (int64_t t = 0; t < len; ++t) {
    const int64_t tile = t0 + t, in_img = tile % tl.per_image;
    out[t] = {tile / tl.per_image, (in_img / tl.tiles_w) * tl.side, (in_img % tl.tiles_w) * tl.side};
  }
  return static_cast<int>(len);
}

// Eight floats as one vector (GCC's generic vectors: one AVX register, two SSE ones).
typedef float Row8 __attribute__((vector_size(32)));

// r[i][j] -> r[j][i]: three rounds of two-input shuffles (unpack, 64-bit pairs, 128-bit halves;
// __builtin_shufflevector: GCC 12 and clang both have it).
inline __attribute__((always_inline)) void Transpose8x8(Row8 r[8]) {
  Row8 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * h + 1] = __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  // u[0..3] hold columns 0, 1, 2, 3 of rows 0-3 (and 4-7 of them in the upper halves); u[4..7] of rows 4-7.
  for (int j = 0; j < 4; ++j) {
    r[j] = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[j + 4] = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// d[k * A + j][l] = row k, column j of the input patch of lane l's tile (zero outside the
// image), for lanes [0, lanes) (zeros in the rest). Each patch row is read as 8 floats, and
// eight lanes' rows are transposed into the lane vectors at once: 8 loads and stores per row
// and 8 tiles instead of 64 each. Tiles at the image's edge (or whose 8-float rows would pass
// its right edge) are first copied, zero-padded, to `edge`.
template <int kTile>
inline __attribute__((always_inline)) void GatherPatches(const float* x, const ConvDims& n, const ConvGeom& g,
                                                         const TileOrigin* org, int64_t c, int lanes, Lanes* d,
                                                         float (*edge)[64]) {
  constexpr int A = kTile + 2;
  static const float zeros[8] = {};
  const int64_t H = g.in[1], W = g.in[2];
  const float* row0[kLanes];
  int64_t stride[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    if (l >= lanes) {
      row0[l] = zeros;
      stride[l] = 0;
      continue;
    }
    const TileOrigin& o = org[l];
    const int64_t y0 = o.oy - g.p[1], x0 = o.ox - g.p[2];
    const float* plane = x + (o.img * n.in_c + c) * H * W;
    if (y0 >= 0 && x0 >= 0 && y0 + A <= H && x0 + 8 <= W) {
      row0[l] = plane + y0 * W + x0;
      stride[l] = W;
      continue;
    }
    // Fixed-length loops with the bounds as conditions (masked moves, not memset and memcpy calls).
    const int j0 = static_cast<int>(std::max<int64_t>(0, -x0)), j1 = static_cast<int>(std::min<int64_t>(A, W - x0));
    for (int k = 0; k < 8; ++k) {
      const int64_t iy = y0 + k;
      const bool row_inside = k < A && iy >= 0 && iy < H;
      const int64_t at = iy * W + x0;  // read only at columns inside the image
      for (int j = 0; j < 8; ++j) edge[l][k * 8 + j] = row_inside && j >= j0 && j < j1 ? plane[at + j] : 0.0f;
    }
    row0[l] = edge[l];
    stride[l] = 8;
  }
  for (int l0 = 0; l0 < kLanes; l0 += 8)
    for (int k = 0; k < A; ++k) {
      Row8 r[8];
      for (int i = 0; i < 8; ++i) std::memcpy(&r[i], row0[l0 + i] + k * stride[l0 + i], sizeof(Row8));
      Transpose8x8(r);
      for (int j = 0; j < A; ++j) std::memcpy(d[k * A + j] + l0, &r[j], sizeof(Row8));
    }
}

// V[p][c][j] for tiles [t0, t0 + len) of channel c: each (kTile+2)^2 input patch (zero outside
// the image) transformed as B^T d B, kLanes tiles at a time.
// d: the caller's (kTile+2)^2 lane vectors, edge its scratch for tiles at the image's edge.
template <int kTile>
inline __attribute__((always_inline)) void TransformInputChannel(const float* x, const ConvDims& n,
                                                                 const ConvGeom& g, const TileOrigin* org,
                                                                 int64_t c, int64_t len, Lanes* d,
                                                                 float (*edge)[64], float* v) {
  using T = Transforms<kTile>;
  constexpr int A = T::kAlpha;
  const int64_t plane_stride = n.in_c * len;
  alignas(64) Lanes tmp[A * A], r[A];
  for (int64_t b = 0; b < len; b += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, len - b));
    GatherPatches<kTile>(x, n, g, org + b, c, lanes, d, edge);
    // Columns first: tmp[i * A + j] = sum_k B^T[i][k] d[k * A + j]; then rows.
    for (int j = 0; j < A; ++j) T::Input(d + j, A, tmp + j, A);
    for (int i = 0; i < A; ++i) {
      T::Input(tmp + i * A, 1, r, 1);
      float* out = v + i * A * plane_stride + c * len + b;
      for (int j = 0; j < A; ++j) CopyLanes(out + j * plane_stride, r[j], lanes);
    }
  }
}

SYMBIND_ISA_VARIANTS(, void, TransformInputChannels,
                     (const float* x, const ConvDims& n, const ConvGeom& g, const Tiling& tl, int64_t c0, int64_t c1,
                      int64_t t0, int64_t len, float* v),
                     (x, n, g, tl, c0, c1, t0, len, v), {
  TileOrigin org[kChunkTiles];
  ChunkOrigins(tl, t0, len, org);
  alignas(64) Lanes d[64];
  alignas(64) float edge[kLanes][64];
  for (int64_t c = c0; c < c1; ++c) {
    if (tl.side == 6) TransformInputChannel<6>(x, n, g, org, c, len, d, edge, v);
    else if (tl.side == 2) TransformInputChannel<2>(x, n, g, org, c, len, d, edge, v);
    else TransformInputChannel<4>(x, n, g, org, c, len, d, edge, v);
  }
})

// y for filter f over tiles [t0, t0 + len) from M[p][f][j]: A^T m A, plus bias, clipped to the
// output's edge; the activation applied unless adding (ConvForward never asks for both).
// d as for TransformInputChannel.
template <int kTile>
inline __attribute__((always_inline)) void TransformOutputFilter(const float* m, const ConvDims& n,
                                                                 const ConvGeom& g, const TileOrigin* org,
                                                                 int64_t f, int64_t len, float bias, bool add,
                                                                 const FusedActivation& act, Lanes* d, float* y) {
  using T = Transforms<kTile>;
  constexpr int A = T::kAlpha;
  const int64_t OH = g.out[1], OW = g.out[2], plane_stride = n.out_c * len;
  alignas(64) Lanes tmp[kTile * A], res[kTile * kTile];
  for (int64_t b = 0; b < len; b += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, len - b));
    const float* in = m + f * len + b;
    for (int p = 0; p < A * A; ++p) CopyLanes(d[p], in + p * plane_stride, lanes);
    // tmp[a * A + j] = sum_i A^T[a][i] M[i * A + j]; res[a * kTile + b] = sum_j tmp[a * A + j] A^T[b][j].
    for (int j = 0; j < A; ++j) T::Output(d + j, A, tmp + j, A);
    for (int a = 0; a < kTile; ++a) T::Output(tmp + a * A, 1, res + a * kTile, 1);
    for (int p = 0; p < kTile * kTile; ++p)
      for (int l = 0; l < kLanes; ++l) res[p][l] += bias;
    if (!add) ActivateInPlace(res[0], kTile * kTile * kLanes, act);
    // Back to rows of each tile: eight lanes' row a transposed at once (columns past kTile are
    // copies, never stored); whole rows stored as kTile floats, tiles at the output's edge cut.
    for (int l0 = 0; l0 < lanes; l0 += 8) {
      float* out[8] = {};
      int rows[8] = {}, cols[8] = {};
      for (int i = 0; i < 8 && l0 + i < lanes; ++i) {
        const TileOrigin& o = org[b + l0 + i];
        out[i] = y + o.img * n.YImageStride(g) + f * OH * OW + o.oy * OW + o.ox;
        rows[i] = static_cast<int>(std::min<int64_t>(kTile, OH - o.oy));
        cols[i] = static_cast<int>(std::min<int64_t>(kTile, OW - o.ox));
      }
      for (int a = 0; a < kTile; ++a) {
        Row8 r[8];
        for (int j = 0; j < 8; ++j) std::memcpy(&r[j], res[a * kTile + std::min(j, kTile - 1)] + l0, sizeof(Row8));
        Transpose8x8(r);
        for (int i = 0; i < 8 && l0 + i < lanes; ++i) {
          if (a >= rows[i]) continue;
          float* row = out[i] + a * OW;
          if (cols[i] == kTile) {
            Row8 o = r[i];
            if (add) {
              std::memcpy(&o, row, kTile * sizeof(float));
              o += r[i];
            }
            std::memcpy(row, &o, kTile * sizeof(float));
          } else {
            for (int j = 0; j < kTile; ++j)
              if (j < cols[i]) row[j] = add ? row[j] + r[i][j] : r[i][j];
          }
        }
      }
    }
  }
}

SYMBIND_ISA_VARIANTS(, void, TransformOutputFilters,
                     (const float* m, const ConvDims& n, const ConvGeom& g, const Tiling& tl, int64_t f0, int64_t f1,
                      int64_t t0, int64_t len, const float* bias, bool add, const FusedActivation& act, float* y),
                     (m, n, g, tl, f0, f1, t0, len, bias, add, act, y), {
  TileOrigin org[kChunkTiles];
  ChunkOrigins(tl, t0, len, org);
  alignas(64) Lanes d[64] = {};
  for (int64_t f = f0; f < f1; ++f) {
    const float bf = bias ? bias[f] : 0.0f;
    if (tl.side == 6) TransformOutputFilter<6>(m, n, g, org, f, len, bf, add, act.ForRow(f), d, y);
    else if (tl.side == 2) TransformOutputFilter<2>(m, n, g, org, f, len, bf, add, act.ForRow(f), d, y);
    else TransformOutputFilter<4>(m, n, g, org, f, len, bf, add, act.ForRow(f), d, y);
  }
})

// U[p][f][c] = (G w[f][c] G^T)[p] for the points p: the transformed weights.
// A transient buffer (its own mapping when large, returned to the system when freed, so that the
// heap does not keep it beside the packed forms made from it).
template <int kTile>
std::shared_ptr<float> TransformWeights(const float* w, int64_t out_c, int64_t in_c) {
  using T = Transforms<kTile>;
  constexpr int A = T::kAlpha, P = A * A;
  std::shared_ptr<float> u = AllocateZeroedFloats(static_cast<size_t>(P * out_c * in_c), "Winograd-transformed weights");
  // One filter's in_c x P values at a time, then copied out as P contiguous rows: writing
  // each (f, c)'s values straight to their planes (in_c floats apart, the same cache sets
  // for in_c = 512) thrashes the cache.
  ParallelFor(out_c, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, in_c)), [&](int64_t f0, int64_t f1) {
    std::vector<float> row(static_cast<size_t>(P * in_c));
    for (int64_t f = f0; f < f1; ++f) {
      for (int64_t c = 0; c < in_c; ++c) {
        const float* k = w + (f * in_c + c) * 9;
        float gk[3][A];  // (G k)^T: gk[j][i] = (G k)[i][j]
        for (int j = 0; j < 3; ++j) T::Filter(k + j, 3, gk[j]);
        for (int i = 0; i < A; ++i) {
          const float col[3] = {gk[0][i], gk[1][i], gk[2][i]};
          float out[A];
          T::Filter(col, 1, out);
          for (int j = 0; j < A; ++j) row[static_cast<size_t>(c * P + i * A + j)] = out[j];
        }
      }
      for (int64_t p = 0; p < P; ++p) {
        float* dst = u.get() + (p * out_c + f) * in_c;
        for (int64_t c = 0; c < in_c; ++c) dst[c] = row[static_cast<size_t>(c * P + p)];
      }
    }
  });
  return u;
}

// The transformed weight matrices (filters x channels), one per point, packed for GemmPacked.
struct WinogradWeights {
  std::vector<PackedGemmA> packed;
};

std::shared_ptr<float> TransformWeights(const float* w, int64_t out_c, int64_t in_c, WinogradTile tile) {
  return tile == WinogradTile::kF6   ? TransformWeights<6>(w, out_c, in_c)
         : tile == WinogradTile::kF2 ? TransformWeights<2>(w, out_c, in_c)
                                     : TransformWeights<4>(w, out_c, in_c);
}

WinogradWeights MakeWinogradWeights(const float* w, int64_t out_c, int64_t in_c, WinogradTile tile,
                                    GemmTiling tiling) {
  WinogradWeights e;
  const std::shared_ptr<float> u = TransformWeights(w, out_c, in_c, tile);
  // One block for all points: large enough for huge pages. Each point starts on a cache line,
  // one line further on than its size (often a power of two) would put it, so that the same
  // offsets of neighbouring points do not fall into the same cache sets.
  constexpr int64_t kLineFloats = 16;
  const int64_t stride = (PackedGemmA::PanelFloats(out_c, in_c, tiling) + kLineFloats - 1) / kLineFloats * kLineFloats + kLineFloats;
  std::shared_ptr<float> block = AllocateZeroedFloats(static_cast<size_t>(Points(tile) * stride), "Winograd weights");
  for (int64_t p = 0; p < Points(tile); ++p)
    e.packed.emplace_back(u.get() + p * out_c * in_c, out_c, in_c, in_c, tiling, block.get() + p * stride, block);
  return e;
}

// The same matrices rounded to bf16 (PackedBf16A), for the bf16 products.
struct WinogradWeightsBf16 {
  std::vector<PackedBf16A> points;
};

WinogradWeightsBf16 MakeWinogradWeightsBf16(const float* w, int64_t out_c, int64_t in_c, WinogradTile tile) {
  WinogradWeightsBf16 e;
  const std::shared_ptr<float> u = TransformWeights(w, out_c, in_c, tile);
  for (int64_t p = 0; p < Points(tile); ++p) e.points.emplace_back(u.get() + p * out_c * in_c, out_c, in_c, in_c);
  return e;
}

const FormCodecRegistrar kWinogradCodec(
    PackedPanelsCodec<WinogradWeights, &WinogradWeights::packed>("winograd_packed_gemm"));

}  // namespace

bool WinogradApplies(const ConvDims& n, const ConvGeom& g) {
  // Below 16 channels on either side the transforms cost more than the products save.
  constexpr int64_t kMinChannels = 16;
  return n.groups == 1 && n.in_c >= kMinChannels && n.out_c >= kMinChannels && g.is_planar() &&
         g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 1 && g.s[2] == 1 &&
         g.d[1] == 1 && g.d[2] == 1;
}

namespace {
// The most transformed weights (points x filters x channels) that ChooseWinogradTile takes as
// cached across the calls of a forward (F4Pays, the F(6,3) choice); wider layers are costed by
// WideLayerTile.
constexpr int64_t kMaxTransformedFloats = int64_t{1} << 22;
bool TransformedWeightsFit(WinogradTile tile, const ConvDims& n) {
  return Points(tile) * n.out_c * n.in_c <= kMaxTransformedFloats;
}

// Whether Winograd beats the packed path (with the weights' transforms cached): from 16 tiles
// on at any channel count WinogradApplies allows, and on 4-15 tiles (over the batch) that pad
// the output by at most half, with >= 32 input channels; not on 5x5 outputs, whose 2x2 tiles
// of 4 cover 8x8 and waste most products on padding. For layers WinogradApplies to whose
// F(4,3) weights fit (TransformedWeightsFit).
bool F4Pays(const ConvDims& n, const ConvGeom& g) {
  constexpr int64_t kMinTiles = 16, kMinFewTiles = 4, kMinFewTilesChannels = 32;
  const Tiling t = MakeTiling(n, g, WinogradTile::kF4);
  if (t.total >= kMinTiles) return true;
  const int64_t padded = n.batch * t.tiles_h * t.tiles_w * 16, outputs = n.batch * g.out[1] * g.out[2];
  return t.total >= kMinFewTiles && n.in_c >= kMinFewTilesChannels && 2 * padded <= 3 * outputs;
}

// Layers whose F(4,3) weights pass kMaxTransformedFloats (512 -> 512 channels: ResNet's last
// stage, VGG's conv4 and conv5). Their weights do not stay in cache from one call to the next
// and each chunk of tiles reads all of them, so the cost of each variant counts the bytes read
// as well as the products: products + kMacsPerByte * chunks * points * filters * channels * 4,
// against the packed path's positions * 9 * filters * channels / kPackedEfficiency plus its
// 9 * filters * channels floats once; the cheapest, if below 0.9 of the packed path. Constants:
// the ratio of the multiply-add rate (~100 G/s on two threads) to the memory stream (~27 GB/s),
// and the packed path's rate on these layers as a fraction (~0.85) of the Winograd GEMMs'. So
// small images at batch 1 take F(2,3), whose weights are smallest, and larger batches or images
// F(4,3), where the products dominate.
WinogradTile WideLayerTile(const ConvDims& n, const ConvGeom& g) {
  constexpr double kMacsPerByte = 100.0 / 27.0, kPackedEfficiency = 0.85, kMinSaving = 0.9;
  const double pairs = static_cast<double>(n.out_c) * static_cast<double>(n.in_c);
  const double positions = static_cast<double>(n.batch * g.out[1] * g.out[2]);
  const double packed = positions * 9 * pairs / kPackedEfficiency + kMacsPerByte * 9 * pairs * 4;
  WinogradTile best = WinogradTile::kNone;
  double best_cost = kMinSaving * packed;
  for (WinogradTile tile : {WinogradTile::kF2, WinogradTile::kF4, WinogradTile::kF6}) {
    const Tiling t = MakeTiling(n, g, tile);
    const double points = Points(tile), chunks = static_cast<double>((t.total + t.chunk - 1) / t.chunk);
    const double cost = static_cast<double>(t.total) * points * pairs + kMacsPerByte * chunks * points * pairs * 4;
    if (cost < best_cost) {
      best = tile;
      best_cost = cost;
    }
  }
  return best;
}
}  // namespace

WinogradTile ChooseWinogradTile(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights) {
  // Transformed filters take 16/9 to 64/9 of the filters' memory.
  if (!WinogradApplies(n, g) || (weights && weights->compact())) return WinogradTile::kNone;
  if (!TransformedWeightsFit(WinogradTile::kF4, n)) {
    // Writable weights may change every call (a training step), and transforming 512 x 512
    // filters each time costs more than it saves.
    const bool transformed_once = weights && weights->read_only();
    return transformed_once ? WideLayerTile(n, g) : WinogradTile::kNone;
  }
  if (!F4Pays(n, g)) return WinogradTile::kNone;
  // F(6,3) where its tiles x 64 points, which both the products and the transforms scale with,
  // are at most 0.92 of F(4,3)'s tiles x 36: near 1 (14x14 and 13x13, whose 3x3 tiles of 6 pad
  // 14 to 18) the larger tiles' padding and transforms lose what the fewer products save. The
  // transformed weights (64 x filters x channels) stay within the same bound as F(4,3)'s.
  // And from 8 tiles on: each tile is one column of the products, and 2x2 tiles (outputs of
  // 9x9 to 12x12) leave them too narrow to run at the rate the fewer products assume
  // (F(4,3)'s 3x3 tiles were 1.3-1.5x faster on 64 -> 256 and 128 -> 128 channels at 12x12).
  constexpr int64_t kMinF6Tiles = 8;
  const Tiling t6 = MakeTiling(n, g, WinogradTile::kF6);
  const int64_t f4 = MakeTiling(n, g, WinogradTile::kF4).total * 36, f6 = t6.total * 64;
  if (100 * f6 <= 92 * f4 && t6.total >= kMinF6Tiles && TransformedWeightsFit(WinogradTile::kF6, n))
    return WinogradTile::kF6;
  return WinogradTile::kF4;
}

bool WinogradPays(const ConvDims& n, const ConvGeom& g, DerivedWeights* weights) {
  return ChooseWinogradTile(n, g, weights) != WinogradTile::kNone;
}

double WinogradMultiplySaving(const ConvDims& n, const ConvGeom& g, WinogradTile tile) {
  const double direct = static_cast<double>(n.batch * g.out[1] * g.out[2]) * 9;
  return direct / static_cast<double>(MakeTiling(n, g, tile).total * Points(tile));
}

void WinogradConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                         const ConvGeom& g, OpReq req, DerivedWeights* weights, const FusedActivation& act,
                         WinogradTile tile, bool bf16_products) {
  if (req == OpReq::kNull) return;
  if (tile == WinogradTile::kNone) tile = ChooseWinogradTile(n, g, weights);
  if (tile == WinogradTile::kNone) tile = WinogradTile::kF4;  // asked for directly where it does not pay
  const int64_t C = n.in_c, F = n.out_c, P = Points(tile);
  const Tiling tl = MakeTiling(n, g, tile);
  // The tiling of the products (filters x channels) x (channels x chunk tiles): tall tiles
  // where a chunk's few tiles would mostly pad wide ones (14x14 outputs: 16 tiles).
  const GemmTiling tiling = ChooseGemmTiling(F, tl.chunk);
  std::shared_ptr<const WinogradWeights> u;
  std::shared_ptr<const WinogradWeightsBf16> u_bf16;
  if (bf16_products) {
    u_bf16 = DerivedForm<WinogradWeightsBf16>(weights, w, {static_cast<int64_t>(tile), F, C}, [&](const float* data) {
      return MakeWinogradWeightsBf16(data, F, C, tile);
    });
  } else {
    u = DerivedForm<WinogradWeights>(weights, w, {static_cast<int64_t>(tile), static_cast<int64_t>(tiling), F, C},
                                     [&](const float* data) { return MakeWinogradWeights(data, F, C, tile, tiling); });
    CheckPackedPanels(u->packed, static_cast<size_t>(P), F, C, tiling, "Winograd-transformed weights");
  }
  const int64_t chunks = (tl.total + tl.chunk - 1) / tl.chunk;
  const bool add = req == OpReq::kAdd;
  // Channels (filters) per transform task: ~256 tile-channels, so that a chunk of 16 tiles
  // (14x14 outputs, one chunk) still gives both threads work instead of one serial task.
  const int64_t transform_grain = std::max<int64_t>(1, 256 / tl.chunk);
  ParallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    // Every element of v and m is written before it is read: no zero-filling.
    const ScratchBuffer v(P * C * tl.chunk), m(P * F * tl.chunk);
    for (int64_t ch = c0; ch < c1; ++ch) {
      const int64_t t0 = ch * tl.chunk, len = std::min(tl.chunk, tl.total - t0);
      ParallelFor(C, transform_grain,
                  [&](int64_t b, int64_t e) { TransformInputChannels(x, n, g, tl, b, e, t0, len, v.data()); });
      ParallelFor(P, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const float* vp = v.data() + p * C * len;
          float* mp = m.data() + p * F * len;
          if (u_bf16) GemmBf16Serial(u_bf16->points[static_cast<size_t>(p)], len, vp, len, mp, len);
          else GemmPacked(u->packed[static_cast<size_t>(p)], len, vp, len, mp, len);
        }
      });
      ParallelFor(F, transform_grain, [&](int64_t b, int64_t e) {
        TransformOutputFilters(m.data(), n, g, tl, b, e, t0, len, bias, add, act, y);
      });
    }
  });
}

}  // namespace conv
}  // namespace symbind
