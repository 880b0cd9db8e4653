// Winograd F(4x4, 3x3) convolution (Lavin & Gray 2015, interpolation points 0, +-1, +-2): each
// 6x6 input tile and 3x3 filter are transformed so that a 4x4 output tile costs 36 products per
// channel pair instead of 144, the products being 36 GEMMs (filters x channels) x (channels x
// tiles).
//
// Accuracy: the transforms scale values by at most 8 and 5, so the float error grows by a small
// constant over im2col + GEMM; the tests hold it to 1e-4 of the output's magnitude.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/weight_cache.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
constexpr int kTile = 4;               // outputs per tile side
constexpr int kAlpha = kTile + 2;      // inputs per tile side
constexpr int kPoints = kAlpha * kAlpha;  // 36 transformed positions

// out_i = (B^T in)_i for six vectors of `len` floats: the input transform applied along one axis.
inline __attribute__((always_inline)) void InputRows(const float* const in[kAlpha],
                                                     float* const out[kAlpha], int64_t len) {
  const float *r0 = in[0], *r1 = in[1], *r2 = in[2], *r3 = in[3], *r4 = in[4], *r5 = in[5];
  for (int64_t t = 0; t < len; ++t) {
    out[0][t] = 4 * r0[t] - 5 * r2[t] + r4[t];
    out[1][t] = -4 * (r1[t] + r2[t]) + r3[t] + r4[t];
    out[2][t] = 4 * (r1[t] - r2[t]) - r3[t] + r4[t];
    out[3][t] = 2 * (r3[t] - r1[t]) - r2[t] + r4[t];
    out[4][t] = 2 * (r1[t] - r3[t]) - r2[t] + r4[t];
    out[5][t] = 4 * r1[t] - 5 * r3[t] + r5[t];
  }
}

// out_a = (A^T in)_a for six vectors: the output transform along one axis.
inline __attribute__((always_inline)) void OutputRows(const float* const in[kAlpha],
                                                      float* const out[kTile], int64_t len) {
  const float *m0 = in[0], *m1 = in[1], *m2 = in[2], *m3 = in[3], *m4 = in[4], *m5 = in[5];
  for (int64_t t = 0; t < len; ++t) {
    const float s12 = m1[t] + m2[t], d12 = m1[t] - m2[t];
    const float s34 = m3[t] + m4[t], d34 = m3[t] - m4[t];
    out[0][t] = m0[t] + s12 + s34;
    out[1][t] = d12 + 2 * d34;
    out[2][t] = s12 + 4 * s34;
    out[3][t] = d12 + 8 * d34 + m5[t];
  }
}

// The problem split into chunks of tiles (over all images, so batches fill the GEMMs); each
// chunk's transformed input is 36 x channels x tiles, its products 36 x filters x tiles.
struct Tiling {
  int64_t tiles_h, tiles_w, per_image, total, chunk;
};

Tiling MakeTiling(const ConvDims& n, const ConvGeom& g) {
  Tiling t{};
  t.tiles_h = (g.out[1] + kTile - 1) / kTile;
  t.tiles_w = (g.out[2] + kTile - 1) / kTile;
  t.per_image = t.tiles_h * t.tiles_w;
  t.total = n.batch * t.per_image;
  // At most 64 tiles per chunk (measured best against 32 and 128 and against chunks sized by
  // bytes, ResNet 3x3 shapes, one thread), in chunks of equal size: 56x56 as 4 x 49 tiles, not
  // 3 x 64 + 4, which left one thread a sliver (and, on tall tiles, 1.79-1.87 vs 2.16-2.20 ms).
  constexpr int64_t kChunkTiles = 64;
  const int64_t chunks = (t.total + kChunkTiles - 1) / kChunkTiles;
  t.chunk = std::max<int64_t>(1, (t.total + chunks - 1) / std::max<int64_t>(chunks, 1));
  return t;
}

// V[p][c][j] for tiles [t0, t0 + len) of channel c: the 6x6 input patch (zero outside the
// image) transformed as B^T d B.
__attribute__((target_clones("avx512f", "avx2", "default"))) void TransformInputChannel(
    const float* x, const ConvDims& n, const ConvGeom& g, const Tiling& tl, int64_t c, int64_t t0,
    int64_t len, float* patch, float* tmp, float* v) {
  const int64_t H = g.in[1], W = g.in[2];
  // patch[(k * 6 + j) * len + t]: row k, column j of tile t.
  for (int64_t t = 0; t < len; ++t) {
    const int64_t tile = t0 + t, img = tile / tl.per_image, in_img = tile % tl.per_image;
    const int64_t y0 = (in_img / tl.tiles_w) * kTile - g.p[1];
    const int64_t x0 = (in_img % tl.tiles_w) * kTile - g.p[2];
    const float* plane = x + (img * n.in_c + c) * H * W;
    const bool inside = y0 >= 0 && x0 >= 0 && y0 + kAlpha <= H && x0 + kAlpha <= W;
    for (int k = 0; k < kAlpha; ++k)
      for (int j = 0; j < kAlpha; ++j) {
        const int64_t iy = y0 + k, ix = x0 + j;
        patch[(k * kAlpha + j) * len + t] =
            (inside || (iy >= 0 && iy < H && ix >= 0 && ix < W)) ? plane[iy * W + ix] : 0.0f;
      }
  }
  // Columns first: tmp[(i * 6 + j)] = sum_k B^T[i][k] patch[k * 6 + j].
  for (int j = 0; j < kAlpha; ++j) {
    const float* in[kAlpha];
    float* out[kAlpha];
    for (int k = 0; k < kAlpha; ++k) {
      in[k] = patch + (k * kAlpha + j) * len;
      out[k] = tmp + (k * kAlpha + j) * len;
    }
    InputRows(in, out, len);
  }
  // Then rows: V[i * 6 + j] = sum_k tmp[i * 6 + k] B^T[j][k].
  const int64_t plane_stride = n.in_c * len;
  for (int i = 0; i < kAlpha; ++i) {
    const float* in[kAlpha];
    float* out[kAlpha];
    for (int k = 0; k < kAlpha; ++k) {
      in[k] = tmp + (i * kAlpha + k) * len;
      out[k] = v + (i * kAlpha + k) * plane_stride + c * len;
    }
    InputRows(in, out, len);
  }
}

// y for filter f over tiles [t0, t0 + len) from M[p][f][j]: A^T m A, plus bias, clipped to the
// output's edge; the activation applied unless adding (ConvForward never asks for both).
__attribute__((target_clones("avx512f", "avx2", "default"))) void TransformOutputFilter(
    const float* m, const ConvDims& n, const ConvGeom& g, const Tiling& tl, int64_t f, int64_t t0,
    int64_t len, float bias, bool add, const FusedActivation& act, float* tmp, float* res, float* y) {
  const int64_t OH = g.out[1], OW = g.out[2], plane_stride = n.out_c * len;
  // tmp[a * 6 + j] = sum_i A^T[a][i] M[i * 6 + j].
  for (int j = 0; j < kAlpha; ++j) {
    const float* in[kAlpha];
    float* out[kTile];
    for (int i = 0; i < kAlpha; ++i) in[i] = m + (i * kAlpha + j) * plane_stride + f * len;
    for (int a = 0; a < kTile; ++a) out[a] = tmp + (a * kAlpha + j) * len;
    OutputRows(in, out, len);
  }
  // res[a * 4 + b] = sum_j tmp[a * 6 + j] A^T[b][j].
  for (int a = 0; a < kTile; ++a) {
    const float* in[kAlpha];
    float* out[kTile];
    for (int j = 0; j < kAlpha; ++j) in[j] = tmp + (a * kAlpha + j) * len;
    for (int b = 0; b < kTile; ++b) out[b] = res + (a * kTile + b) * len;
    OutputRows(in, out, len);
  }
  for (int64_t t = 0; t < len; ++t) {
    const int64_t tile = t0 + t, img = tile / tl.per_image, in_img = tile % tl.per_image;
    const int64_t oy = (in_img / tl.tiles_w) * kTile, ox = (in_img % tl.tiles_w) * kTile;
    float* plane = y + (img * n.out_c + f) * OH * OW;
    const int rows = static_cast<int>(std::min<int64_t>(kTile, OH - oy));
    const int cols = static_cast<int>(std::min<int64_t>(kTile, OW - ox));
    for (int a = 0; a < rows; ++a)
      for (int b = 0; b < cols; ++b) {
        float& o = plane[(oy + a) * OW + ox + b];
        const float r = res[(a * kTile + b) * len + t] + bias;
        o = add ? o + r : act(r);
      }
  }
}

// The 36 transformed weight matrices (filters x channels) packed for GemmPacked, with a copy of
// the writable weights they were made from: comparing it reads 1/4 of what a transform writes.
struct WinogradWeights {
  std::vector<float> source;  // empty for read-only weights, which cannot change
  std::vector<PackedGemmA> packed;
};

WinogradWeights MakeWinogradWeights(const float* w, int64_t out_c, int64_t in_c, bool keep_source,
                                    GemmTiling tiling) {
  WinogradWeights e;
  if (keep_source) e.source.assign(w, w + out_c * in_c * 9);
  const std::vector<float> u = WinogradTransformWeights(w, out_c, in_c);
  for (int64_t p = 0; p < kPoints; ++p)
    e.packed.emplace_back(u.data() + p * out_c * in_c, out_c, in_c, in_c, tiling);
  return e;
}

std::shared_ptr<const WinogradWeights> CachedWeights(const NDArray& w, int64_t out_c, int64_t in_c,
                                                     GemmTiling tiling) {
  return CachedDerived<WinogradWeights>(
      w, StrCat("winograd ", tiling == GemmTiling::kTall ? "tall " : "wide ", out_c, "x", in_c),
      [&](const float* data) { return MakeWinogradWeights(data, out_c, in_c, !w.read_only(), tiling); },
      [&](const WinogradWeights& e, const float* data) {
        return SameFloats(e.source.data(), data, static_cast<int64_t>(e.source.size()));
      });
}
}  // namespace

bool WinogradApplies(const ConvDims& n, const ConvGeom& g) {
  // Below 16 channels on either side the transforms cost more than the products save.
  constexpr int64_t kMinChannels = 16;
  return n.groups == 1 && n.in_c >= kMinChannels && n.out_c >= kMinChannels && g.is_planar() &&
         g.k[1] == 3 && g.k[2] == 3 && g.s[1] == 1 && g.s[2] == 1 &&
         g.d[1] == 1 && g.d[2] == 1;
}

bool WinogradPays(const ConvDims& n, const ConvGeom& g) {
  // Measured on ResNet's 3x3 layers, one thread: with wide tiles the 36 GEMMs of (filters x
  // channels) x (channels x tiles) are only efficient with tens of tiles (256 channels at
  // 14x14: 16 tiles 2.3x slower than im2col, 48 tiles even, 128 tiles 1.5x faster). Tall tiles
  // (ChooseGemmTiling's pick for so few columns) make 9-16 tiles pay from 48 channels on
  // (256 at 14x14: 1.16 vs 2.35 ms packed; 64 at 12x12: 0.085 vs 0.142) but not below, where
  // the transforms dominate (16 -> 64 at 14x14: 0.070 vs 0.049). 36 x filters x channels
  // transformed weights beyond ~16 MB cost more to write per call, or to stream from memory,
  // than they save (512 x 512 at 7x7, batch 8: 2x slower). Below 32 input channels the packed
  // path wins at any size (SqueezeNet's 16 -> 64 at 55x55: 0.64 vs 0.83 ms; 32 -> 128 at
  // 27x27 is Winograd's, 0.47 vs 0.56).
  constexpr int64_t kMinTiles = 40, kMinTallTiles = 9, kMinInChannels = 32, kMinTallChannels = 48;
  constexpr int64_t kMaxTransformedFloats = int64_t{1} << 22;
  if (!WinogradApplies(n, g) || n.in_c < kMinInChannels || kPoints * n.out_c * n.in_c > kMaxTransformedFloats)
    return false;
  const Tiling t = MakeTiling(n, g);
  if (t.total >= kMinTiles) return true;
  return t.total >= kMinTallTiles && n.in_c >= kMinTallChannels && n.out_c >= kMinTallChannels &&
         ChooseGemmTiling(n.out_c, t.chunk, n.in_c) == GemmTiling::kTall;
}

namespace {
// out = G in for the three taps in[0], in[s], in[2 s]: the weight transform along one axis.
inline void FilterColumn(const float* in, int64_t s, float out[kAlpha]) {
  const float a = in[0], b = in[s], c = in[2 * s];
  out[0] = a * (1.0f / 4);
  out[1] = -(a + b + c) * (1.0f / 6);
  out[2] = -(a - b + c) * (1.0f / 6);
  out[3] = a * (1.0f / 24) + b * (1.0f / 12) + c * (1.0f / 6);
  out[4] = a * (1.0f / 24) - b * (1.0f / 12) + c * (1.0f / 6);
  out[5] = c;
}
}  // namespace

std::vector<float> WinogradTransformWeights(const float* w, int64_t out_c, int64_t in_c) {
  std::vector<float> u(static_cast<size_t>(kPoints * out_c * in_c));
  // One filter's in_c x 36 values at a time, then copied out as 36 contiguous rows: writing
  // each (f, c)'s 36 values straight to their planes (in_c floats apart, the same cache sets
  // for in_c = 512) took 150 ms for 512 x 512 filters.
  ParallelFor(out_c, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, in_c)), [&](int64_t f0, int64_t f1) {
    std::vector<float> row(static_cast<size_t>(kPoints * in_c));
    for (int64_t f = f0; f < f1; ++f) {
      for (int64_t c = 0; c < in_c; ++c) {
        const float* k = w + (f * in_c + c) * 9;
        float gk[3][kAlpha];  // (G k)^T: gk[j][i] = (G k)[i][j]
        for (int j = 0; j < 3; ++j) FilterColumn(k + j, 3, gk[j]);
        for (int i = 0; i < kAlpha; ++i) {
          const float col[3] = {gk[0][i], gk[1][i], gk[2][i]};
          float out[kAlpha];
          FilterColumn(col, 1, out);
          for (int j = 0; j < kAlpha; ++j) row[static_cast<size_t>(c * kPoints + i * kAlpha + j)] = out[j];
        }
      }
      for (int64_t p = 0; p < kPoints; ++p) {
        float* dst = u.data() + (p * out_c + f) * in_c;
        for (int64_t c = 0; c < in_c; ++c) dst[c] = row[static_cast<size_t>(c * kPoints + p)];
      }
    }
  });
  return u;
}

void WinogradConvForward(const float* x, const float* w, const float* bias, float* y,
                         const ConvDims& n, const ConvGeom& g, OpReq req, const NDArray* weights,
                         const FusedActivation& act) {
  if (req == OpReq::kNull) return;
  const int64_t C = n.in_c, F = n.out_c;
  const Tiling tl = MakeTiling(n, g);
  // The tiling of the 36 products (filters x channels) x (channels x chunk tiles): tall tiles
  // where a chunk's few tiles would mostly pad wide ones (14x14 outputs: 16 tiles).
  const GemmTiling tiling = ChooseGemmTiling(F, tl.chunk, C);
  std::shared_ptr<const WinogradWeights> u;
  if (weights) u = CachedWeights(*weights, F, C, tiling);
  else u = std::make_shared<const WinogradWeights>(MakeWinogradWeights(w, F, C, false, tiling));
  const int64_t chunks = (tl.total + tl.chunk - 1) / tl.chunk;
  const bool add = req == OpReq::kAdd;
  // Channels (filters) per transform task: ~256 tile-channels, so that a chunk of 16 tiles
  // (14x14 outputs, one chunk) still gives both threads work. 2 threads, wall ms (min of 60,
  // SCHED_FIFO): 256 channels at 14x14 1.02-1.08 with 4096 (one serial task), 0.73-0.80 with
  // 256; 64 -> 256 at 13x13 0.43-0.45 -> 0.33.
  const int64_t transform_grain = std::max<int64_t>(1, 256 / tl.chunk);
  ParallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    // Every element of v and m is written before it is read: no zero-filling.
    std::unique_ptr<float[]> v(new float[static_cast<size_t>(kPoints * C * tl.chunk)]);
    std::unique_ptr<float[]> m(new float[static_cast<size_t>(kPoints * F * tl.chunk)]);
    for (int64_t ch = c0; ch < c1; ++ch) {
      const int64_t t0 = ch * tl.chunk, len = std::min(tl.chunk, tl.total - t0);
      ParallelFor(C, transform_grain, [&](int64_t b, int64_t e) {
        std::vector<float> scratch(static_cast<size_t>(2 * kPoints * len));
        for (int64_t c = b; c < e; ++c)
          TransformInputChannel(x, n, g, tl, c, t0, len, scratch.data(),
                                scratch.data() + kPoints * len, v.get());
      });
      ParallelFor(kPoints, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
          GemmPacked(u->packed[static_cast<size_t>(p)], len, v.get() + p * C * len, len, m.get() + p * F * len, len);
      });
      ParallelFor(F, transform_grain, [&](int64_t b, int64_t e) {
        std::vector<float> scratch(static_cast<size_t>((kTile * kAlpha + kTile * kTile) * len));
        for (int64_t f = b; f < e; ++f)
          TransformOutputFilter(m.get(), n, g, tl, f, t0, len, bias ? bias[f] : 0.0f, add, act.ForRow(f),
                                scratch.data(), scratch.data() + kTile * kAlpha * len, y);
      });
    }
  });
}

}  // namespace conv
}  // namespace symbind
