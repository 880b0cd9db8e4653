// Direct convolution of images with few channels (a network's first layer on RGB: SqueezeNet's
// conv1, 3 channels, 3x3 stride 2). As im2col + GEMM its depth (channels x taps, 27) is too
// shallow for the packed micro-kernel: every output costs a column of 27 copied floats and a
// tile of accumulators loaded and stored for 27 multiply-adds.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/avx512_lanes.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/im2col.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
constexpr int64_t kFilterBlock = 8;   // filters per task and per register tile
constexpr int64_t kLanes = 16;
constexpr int64_t kTileColumns = 2 * kLanes;  // output columns per register tile
constexpr int64_t kMaxChannels = 4;

// The weights of every block of kFilterBlock filters as [block][c][ky][kx][filter]: one tap's
// filters side by side (zero past out_c).
std::vector<float> PackTinyWeights(const float* w, int64_t out_c, int64_t taps) {
  const int64_t blocks = (out_c + kFilterBlock - 1) / kFilterBlock;
  std::vector<float> packed(static_cast<size_t>(blocks * taps * kFilterBlock), 0.0f);
  for (int64_t f = 0; f < out_c; ++f)
    for (int64_t t = 0; t < taps; ++t)
      packed[static_cast<size_t>(((f / kFilterBlock) * taps + t) * kFilterBlock + f % kFilterBlock)] = w[f * taps + t];
  return packed;
}

struct TinyArgs {
  const PhasedInput* in;
  int64_t channels, OW, osize, filters;  // filters: of this block (<= kFilterBlock)
  FusedActivation act;  // of this block's first filter (prelu's slopes from there on)
};

// Output row oh of one filter block: y[f][oh][:] = act(bias[f] + taps in (c, ky, kx) order).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// V vectors of output columns from ox on (masked at the row's end) for every filter of a block.
template <int K, int S, int V>
__attribute__((target("avx512f"), always_inline)) inline void TileAvx512(const TinyArgs& a, int64_t oh, int64_t ox,
                                                                     const float* wb, const float* bias, float* y) {
  __m512 acc[kFilterBlock][V];
  for (int f = 0; f < kFilterBlock; ++f)
    for (int v = 0; v < V; ++v) acc[f][v] = _mm512_set1_ps(bias[f]);
  const float* wt = wb;
  for (int64_t c = 0; c < a.channels; ++c)
    for (int ky = 0; ky < K; ++ky) {
      const float* phase[S];
      for (int q = 0; q < S; ++q) phase[q] = a.in->Row(c, oh * S + ky, q) + ox;
      for (int kx = 0; kx < K; ++kx, wt += kFilterBlock) {
        const float* p = phase[kx % S] + kx / S;
        __m512 x[V];
        for (int v = 0; v < V; ++v) x[v] = _mm512_loadu_ps(p + v * kLanes);
        for (int f = 0; f < kFilterBlock; ++f) {
          const __m512 wf = _mm512_set1_ps(wt[f]);
          for (int v = 0; v < V; ++v) acc[f][v] = _mm512_fmadd_ps(wf, x[v], acc[f][v]);
        }
      }
    }
  __mmask16 mask[V];  // the row's end
  for (int v = 0; v < V; ++v) mask[v] = LaneRange(0, a.OW - (ox + v * kLanes));
  for (int f = 0; f < kFilterBlock; ++f)  // compile-time indices keep acc in registers
    for (int v = 0; v < V; ++v)
      if (f < a.filters && mask[v] != 0)
        StoreActivatedAvx512(y + f * a.osize + oh * a.OW + ox + v * kLanes, mask[v], acc[f][v], a.act.ForRow(f),
                             false);
}

// Tiles of three vectors (24 accumulators: 11 loads per 24 multiply-adds, against 10 per 16 with
// two) while more than four vectors remain, then two, and one for a last sliver: 112 columns as
// 48 + 32 + 32.
template <int K, int S>
__attribute__((target("avx512f"))) void RowAvx512(const TinyArgs& a, int64_t oh, const float* wb, const float* bias,
                                                  float* y) {
  int64_t ox = 0;
  for (; a.OW - ox > 4 * kLanes; ox += 3 * kLanes) TileAvx512<K, S, 3>(a, oh, ox, wb, bias, y);
  for (; a.OW - ox > kLanes; ox += kTileColumns) TileAvx512<K, S, 2>(a, oh, ox, wb, bias, y);
  if (ox < a.OW) TileAvx512<K, S, 1>(a, oh, ox, wb, bias, y);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// AVX2: the same sums in the same order, one vector of 8 columns for the 8 filters of a block
// (8 accumulators). Half a block by three vectors (12 accumulators, fewer loads per
// multiply-add) measured no faster.
template <int K, int S>
__attribute__((target("avx2,fma"))) void RowAvx2(const TinyArgs& a, int64_t oh, const float* wb, const float* bias,
                                                 float* y) {
  constexpr int kAvx2Lanes = 8;
  for (int64_t ox = 0; ox < a.OW; ox += kAvx2Lanes) {
    __m256 acc[kFilterBlock];
    for (int f = 0; f < kFilterBlock; ++f) acc[f] = _mm256_set1_ps(bias[f]);
    const float* wt = wb;
    for (int64_t c = 0; c < a.channels; ++c)
      for (int ky = 0; ky < K; ++ky) {
        const float* phase[S];
        for (int q = 0; q < S; ++q) phase[q] = a.in->Row(c, oh * S + ky, q) + ox;
#pragma GCC unroll 8
        for (int kx = 0; kx < K; ++kx, wt += kFilterBlock) {
          const __m256 x = _mm256_loadu_ps(phase[kx % S] + kx / S);
#pragma GCC unroll 8
          for (int f = 0; f < kFilterBlock; ++f) acc[f] = _mm256_fmadd_ps(_mm256_set1_ps(wt[f]), x, acc[f]);
        }
      }
    const bool full = ox + kAvx2Lanes <= a.OW;
    const __m256i mask = LaneMask8(0, a.OW - ox);  // the row's end
#pragma GCC unroll 8
    for (int f = 0; f < kFilterBlock; ++f)  // compile-time indices keep acc in registers
      if (f < a.filters)
        StoreActivatedAvx2(y + f * a.osize + oh * a.OW + ox, mask, full, acc[f], a.act.ForRow(f), false);
  }
}

// The same sums in the same order without AVX (plain loops; for CPUs without it).
template <int K, int S>
void RowPlain(const TinyArgs& a, int64_t oh, const float* wb, const float* bias, float* y) {
  for (int64_t f = 0; f < a.filters; ++f) {
    float* out = y + f * a.osize + oh * a.OW;
    for (int64_t ox = 0; ox < a.OW; ++ox) {
      float s = bias[f];
      const float* wt = wb + f;
      for (int64_t c = 0; c < a.channels; ++c)
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx, wt += kFilterBlock)
            s += *wt * a.in->Row(c, oh * S + ky, kx % S)[ox + kx / S];
      out[ox] = s;
    }
    ActivateInPlace(out, a.OW, a.act.ForRow(f));
  }
}

using RowFn = void (*)(const TinyArgs&, int64_t, const float*, const float*, float*);
RowFn ChooseRow(int64_t k, int64_t s) {
  const KernelIsa isa = ActiveIsa();
  if (isa == KernelIsa::kAvx512) {
    if (k == 3) return s == 1 ? RowAvx512<3, 1> : RowAvx512<3, 2>;
    if (k == 5) return s == 1 ? RowAvx512<5, 1> : RowAvx512<5, 2>;
    return s == 1 ? RowAvx512<7, 1> : RowAvx512<7, 2>;
  }
  if (isa == KernelIsa::kAvx2) {
    if (k == 3) return s == 1 ? RowAvx2<3, 1> : RowAvx2<3, 2>;
    if (k == 5) return s == 1 ? RowAvx2<5, 1> : RowAvx2<5, 2>;
    return s == 1 ? RowAvx2<7, 1> : RowAvx2<7, 2>;
  }
  if (k == 3) return s == 1 ? RowPlain<3, 1> : RowPlain<3, 2>;
  if (k == 5) return s == 1 ? RowPlain<5, 1> : RowPlain<5, 2>;
  return s == 1 ? RowPlain<7, 1> : RowPlain<7, 2>;
}
}  // namespace

bool TinyDepthApplies(const ConvDims& n, const ConvGeom& g) {
  // Rows of at least one vector. Faster than the packed GEMM on RGB first layers (SqueezeNet,
  // MobileNet v2, MobileFaceNet, ResNet, MTCNN), except SqueezeNet's conv1 on AVX2, whose 64
  // filters fill the GEMM's tiles: taken there too, for one rule.
  constexpr int64_t kMinRow = 16;
  const bool square = g.k[1] == g.k[2] && (g.k[1] == 3 || g.k[1] == 5 || g.k[1] == 7);
  const bool stride = g.s[1] == g.s[2] && (g.s[1] == 1 || g.s[1] == 2);
  return n.groups == 1 && n.in_c <= kMaxChannels && g.is_planar() && square && stride &&
         g.p[1] == g.p[2] && g.d[1] == 1 && g.d[2] == 1 && g.out[2] >= kMinRow &&
         ActiveIsa() != KernelIsa::kBase;
}

void TinyDepthConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                          const ConvGeom& g, const FusedActivation& act) {
  const int64_t K = g.k[2], taps = n.in_c * K * K, OH = g.out[1], osize = g.out_size();
  const int64_t blocks = (n.out_c + kFilterBlock - 1) / kFilterBlock;
  const std::vector<float> packed = PackTinyWeights(w, n.out_c, taps);
  std::vector<float> padded_bias(static_cast<size_t>(blocks * kFilterBlock), 0.0f);
  if (bias) std::copy(bias, bias + n.out_c, padded_bias.begin());
  const RowFn row = ChooseRow(K, g.s[2]);
  // Tasks of (image, band of rows, filter block), blocks innermost so that neighbouring tasks
  // read the same input rows; every output is one task's, so any split gives the same bits.
  const int64_t band = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, g.out[2] * taps));
  // Output rows [begin, end) of image i from `in`.
  auto run = [&](const PhasedInput& in, int64_t i, int64_t begin, int64_t end) {
    const int64_t bands = (end - begin + band - 1) / band;
    ParallelFor(bands * blocks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t % blocks, r0 = begin + (t / blocks) * band, r1 = std::min(end, r0 + band);
        const TinyArgs args{&in, n.in_c, g.out[2], osize, std::min(kFilterBlock, n.out_c - b * kFilterBlock),
                             act.FromRow(b * kFilterBlock)};
        float* out = y + (i * n.out_c + b * kFilterBlock) * osize;
        for (int64_t oh = r0; oh < r1; ++oh)
          row(args, oh, packed.data() + b * taps * kFilterBlock, padded_bias.data() + b * kFilterBlock, out);
      }
    });
  };
  // Unpadded stride-1 layers (MTCNN's P-Net conv1 at every scale) read the image in place
  // instead of a copy of it: a tile's loads run up to kTileColumns floats past a row, into the
  // next row or image. Only the last image's last output rows, whose loads could pass the
  // array's end, read a copy of the input rows they need, with zeros after it.
  const bool in_place = g.s[2] == 1 && g.p[1] == 0 && g.p[2] == 0;
  const int64_t H = g.in[1], W = g.in[2], C = n.in_c;
  for (int64_t i = 0; i < n.batch; ++i) {
    const float* xi = x + i * C * g.in_size();
    if (!in_place) {
      run(SplitPhases(xi, C, g, kTileColumns), i, 0, OH);
      continue;
    }
    const int64_t tail = i + 1 < n.batch ? 0 : std::min(OH, (kTileColumns + W - 1) / W);
    run(PhasedInput::InPlace(xi, H, W), i, 0, OH - tail);
    if (tail == 0) continue;
    // The input rows of the last `tail` output rows.
    run(CopyLastRows(xi, C, H, W, tail + K - 1, kTileColumns), i, OH - tail, OH);
  }
}

}  // namespace conv
}  // namespace symbind
