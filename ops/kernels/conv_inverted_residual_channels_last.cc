// The inverted residual block in bands of rows with its expanded rows channels-last (see
// conv_inverted_residual.h). Per band: the 1x1 expansion writes each pixel's hidden channels
// as whole vectors (6 pixels x 16 channels a tile, the input pixels copied k-major first), the
// depthwise window runs over 8 channels per vector for 8 output pixels at a time, and the
// projection is GemmPackedTallBt over the pixels' channel rows, + bias and the residual in its
// store. Every sum is the unfused fast paths' (the packed GEMM's: products in k order from 0,
// then the bias and the activation; the AVX2 depthwise kernels': the bias, then every tap in
// (kh, kw) order, w * 0 in the padding), so the bits are the unfused block's.
#include <immintrin.h>

#include <symbind/core/scratch.h>

#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_inverted_residual.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
constexpr int kLanes = 8;
constexpr int kPanelRows = 16;  // hidden channels per packed expansion panel: AVX2's tall tile
constexpr int kExpandPixels = 6, kDepthwisePixels = 8;

// act on 8 channels from c (kPRelu: their slopes).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 ActivateChannels(__m256 v, const FusedActivation& act,
                                                                               int64_t c) {
  const __m256 slope =
      act.kind == FusedActivation::kPRelu ? _mm256_loadu_ps(act.slopes + c) : _mm256_set1_ps(act.slope);
  return ActivateAvx2(v, act.kind, _mm256_set1_ps(act.lo), _mm256_set1_ps(act.hi), slope);
}

// e[p * ldc + h0 + 8v] = act(bias + sum over k of x[k * kPix + p] * the panel's weight) for kPix
// pixels and kVecs vectors of channels; x: the pixels packed k-major, panel: 16 channels'
// weights, k-major (PackedGemmA).
template <int kPix, int kVecs>
__attribute__((target("avx2,fma"))) void ExpandPixels(const float* x, const float* panel, int64_t K, const float* bias,
                                                      const FusedActivation& act, int64_t h0, float* e, int64_t ldc) {
  __m256 acc[kPix][kVecs];
  #pragma GCC unroll 16
  for (int p = 0; p < kPix; ++p)
    #pragma GCC unroll 16
    for (int v = 0; v < kVecs; ++v) acc[p][v] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k, x += kPix, panel += kPanelRows) {
    __m256 wv[kVecs];
    #pragma GCC unroll 16
    for (int v = 0; v < kVecs; ++v) wv[v] = _mm256_loadu_ps(panel + v * kLanes);
    #pragma GCC unroll 16
    for (int p = 0; p < kPix; ++p) {
      const __m256 xv = _mm256_broadcast_ss(x + p);
      #pragma GCC unroll 16
      for (int v = 0; v < kVecs; ++v) acc[p][v] = _mm256_fmadd_ps(wv[v], xv, acc[p][v]);
    }
  }
  #pragma GCC unroll 16
  for (int v = 0; v < kVecs; ++v) {
    const int64_t c = h0 + v * kLanes;
    const __m256 b = bias ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps();
    #pragma GCC unroll 16
    for (int p = 0; p < kPix; ++p) {
      const __m256 sum = bias ? _mm256_add_ps(acc[p][v], b) : acc[p][v];
      _mm256_storeu_ps(e + p * ldc + c, ActivateChannels(sum, act, c));
    }
  }
}

using ExpandFn = void (*)(const float*, const float*, int64_t, const float*, const FusedActivation&, int64_t, float*,
                          int64_t);
template <int kVecs, int... kPix>
constexpr std::array<ExpandFn, sizeof...(kPix)> ExpandTiles(std::integer_sequence<int, kPix...>) {
  return {ExpandPixels<kPix + 1, kVecs>...};
}

// The expanded rows of `pixels` consecutive input pixels (x: the first one's channel 0, channels
// ldx apart) into e (each pixel's C = hidden channels together). The pixels are first copied
// into groups of 6, k-major (`packed`, K x pixels rounded up to 6): broadcast where they lay, each
// k step would read a cache line of its own.
void ExpandRows(const float* x, int64_t ldx, int64_t pixels, const PackedGemmA& weights, const float* bias,
                const FusedActivation& act, float* e, float* packed) {
  static constexpr auto kOne = ExpandTiles<1>(std::make_integer_sequence<int, kExpandPixels>{});
  static constexpr auto kTwo = ExpandTiles<2>(std::make_integer_sequence<int, kExpandPixels>{});
  const int64_t C = weights.rows(), K = weights.depth();
  for (int64_t k = 0; k < K; ++k) {
    const float* src = x + k * ldx;
    int64_t p = 0;
    for (; p + kExpandPixels <= pixels; p += kExpandPixels)
      std::memcpy(packed + p * K + k * kExpandPixels, src + p, sizeof(float) * kExpandPixels);
    for (int64_t q = p; q < pixels; ++q) packed[p * K + k * (pixels - p) + (q - p)] = src[q];
  }
  // Channel panels outermost: a panel's weights stay in L1 while the band's pixels pass.
  for (int64_t h0 = 0; h0 < C; h0 += kPanelRows) {
    const auto& tiles = C - h0 >= kPanelRows ? kTwo : kOne;
    const float* panel = weights.panel(h0 / kPanelRows);
    int64_t p = 0;
    for (; p + kExpandPixels <= pixels; p += kExpandPixels)
      tiles[kExpandPixels - 1](packed + p * K, panel, K, bias, act, h0, e + p * C, C);
    if (p < pixels) tiles[static_cast<size_t>(pixels - p - 1)](packed + p * K, panel, K, bias, act, h0, e + p * C, C);
  }
}

// out[g * C + c] = act(bias + the window's taps in (kh, kw) order) for kPix output pixels at
// `ow` of one output row, every channel 8 at a time. rows: the K input rows (each pixel's C
// channels together; null in the padding); taps: the weights tap-major (taps[t * C + c]).
// kEdge: some columns of the window lie outside the image (read as zeros).
template <int K, int S, int kPix, bool kEdge>
__attribute__((target("avx2,fma"))) void DepthwisePixels(const float* const* rows, int64_t W, int64_t pad, int64_t ow,
                                                         const float* taps, const float* bias,
                                                         const FusedActivation& act, int64_t C, float* out) {
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t c = 0; c < C; c += kLanes) {
    __m256 acc[kPix];
    const __m256 start = bias ? _mm256_loadu_ps(bias + c) : zero;
    #pragma GCC unroll 16
    for (int g = 0; g < kPix; ++g) acc[g] = start;
    #pragma GCC unroll 16
    for (int kh = 0; kh < K; ++kh) {
      const float* row = rows[kh];
      #pragma GCC unroll 16
      for (int kw = 0; kw < K; ++kw) {
        const __m256 wv = _mm256_loadu_ps(taps + (kh * K + kw) * C + c);
        #pragma GCC unroll 16
        for (int g = 0; g < kPix; ++g) {
          const int64_t iw = (ow + g) * S - pad + kw;
          const bool inside = row && (!kEdge || (iw >= 0 && iw < W));
          acc[g] = _mm256_fmadd_ps(wv, inside ? _mm256_loadu_ps(row + iw * C + c) : zero, acc[g]);
        }
      }
    }
    #pragma GCC unroll 16
    for (int g = 0; g < kPix; ++g) _mm256_storeu_ps(out + g * C + c, ActivateChannels(acc[g], act, c));
  }
}

using DepthwiseFn = void (*)(const float* const*, int64_t, int64_t, int64_t, const float*, const float*,
                             const FusedActivation&, int64_t, float*);
template <int K, int S, int... kPix>
constexpr std::array<DepthwiseFn, sizeof...(kPix)> DepthwiseTiles(std::integer_sequence<int, kPix...>) {
  return {DepthwisePixels<K, S, kPix + 1, false>...};
}

// Output rows [o0, o1) of the depthwise layer into out (each pixel's channels together), from the
// expanded image rows [base, base + have) in e.
template <int K, int S>
void DepthwiseRows(const float* e, int64_t base, const InvertedResidualDims& d, int64_t o0, int64_t o1,
                   const float* taps, const float* bias, float* out) {
  static constexpr auto kInside = DepthwiseTiles<K, S>(std::make_integer_sequence<int, kDepthwisePixels>{});
  const int64_t H = d.height, W = d.width, OW = d.out_width(), C = d.hidden_c, pad = d.pad;
  const int64_t mid_lo = std::min(OW, (pad + S - 1) / S);  // the first column with every tap inside
  const int64_t last = W - K + pad;                         // the largest ow * S with every tap inside
  const int64_t mid_hi = last < 0 ? mid_lo : std::max(mid_lo, std::min(OW, last / S + 1));
  for (int64_t oh = o0; oh < o1; ++oh) {
    const float* rows[K];
    #pragma GCC unroll 16
    for (int kh = 0; kh < K; ++kh) {
      const int64_t ih = oh * S - pad + kh;
      rows[kh] = ih >= 0 && ih < H ? e + (ih - base) * W * C : nullptr;
    }
    float* o = out + (oh - o0) * OW * C;
    for (int64_t ow = 0; ow < mid_lo; ++ow)
      DepthwisePixels<K, S, 1, true>(rows, W, pad, ow, taps, bias, d.depthwise_act, C, o + ow * C);
    int64_t ow = mid_lo;
    for (; ow + kDepthwisePixels <= mid_hi; ow += kDepthwisePixels)
      kInside[kDepthwisePixels - 1](rows, W, pad, ow, taps, bias, d.depthwise_act, C, o + ow * C);
    if (ow < mid_hi) kInside[static_cast<size_t>(mid_hi - ow - 1)](rows, W, pad, ow, taps, bias, d.depthwise_act, C, o + ow * C);
    for (ow = mid_hi; ow < OW; ++ow)
      DepthwisePixels<K, S, 1, true>(rows, W, pad, ow, taps, bias, d.depthwise_act, C, o + ow * C);
  }
}

using DepthwiseRowsFn = void (*)(const float*, int64_t, const InvertedResidualDims&, int64_t, int64_t, const float*,
                                 const float*, float*);
DepthwiseRowsFn ChooseDepthwiseRows(int64_t kernel, int64_t stride) {
  if (kernel == 3) return stride == 1 ? DepthwiseRows<3, 1> : DepthwiseRows<3, 2>;
  return stride == 1 ? DepthwiseRows<5, 1> : DepthwiseRows<5, 2>;
}
}  // namespace

bool InvertedResidualChannelsLastApplies(const InvertedResidualDims& d) {
  return ActiveIsa() == KernelIsa::kAvx2 && d.hidden_c % kLanes == 0 && (d.kernel == 3 || d.kernel == 5) &&
         (d.stride == 1 || d.stride == 2);
}

bool InvertedResidualChannelsLastPays(const InvertedResidualDims& d) {
  // The projection's tall tiles hold 16 rows; with 24 outputs the last 8 go through a one-vector
  // tile, whose 6 sums wait on the multiply-add latency. At stride 2 the depthwise work the layout
  // saves pays for that; at stride 1 it does not, and planes or the unfused layers win.
  return InvertedResidualChannelsLastApplies(d) && (d.out_c % kPanelRows == 0 || d.stride == 2);
}

void InvertedResidualFusedChannelsLast(const float* x, const InvertedResidualWeights& w, float* y,
                                       const InvertedResidualDims& d) {
  if (!InvertedResidualChannelsLastApplies(d))
    throw Error("InvertedResidualFusedChannelsLast: needs the AVX2 kernels, hidden channels a multiple of 8 and a "
                "3x3 or 5x5 window at stride 1 or 2; got " + std::string(GemmIsa()) + ", " +
                std::to_string(d.hidden_c) + " channels, " + std::to_string(d.kernel) + "x" +
                std::to_string(d.kernel) + " at stride " + std::to_string(d.stride));
  const int64_t H = d.height, W = d.width, OH = d.out_height(), OW = d.out_width(), K = d.kernel, S = d.stride;
  const int64_t C = d.hidden_c;
  const InvertedResidualBands plan = PlanInvertedResidualBands(d, true);
  const int64_t R = plan.buffer_rows;
  const auto expand = DerivedPackedConvWeights(w.expand_w, w.expand, 1, C, d.in_c, GemmTiling::kTall);
  const auto project = DerivedPackedConvWeights(w.project_w, w.project, 1, d.out_c, C, GemmTiling::kTall);
  if (expand->groups[0].mr() != kPanelRows)
    throw Error("InvertedResidualFusedChannelsLast: expansion panels of " + std::to_string(expand->groups[0].mr()) +
                " rows, expected " + std::to_string(kPanelRows));
  std::vector<float> taps(static_cast<size_t>(K * K * C));  // tap-major: each tap's C weights together
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < K * K; ++t) taps[static_cast<size_t>(t * C + c)] = w.depthwise_w[c * K * K + t];
  const DepthwiseRowsFn depthwise = ChooseDepthwiseRows(K, S);
  // Output rows [o0, o1) of image i from its expanded rows in E (image row `base` first),
  // filtered into D, projected (+ bias, + x) into y.
  auto filter_and_project = [&](int64_t i, const float* E, int64_t base, int64_t o0, int64_t o1, float* D) {
    depthwise(E, base, d, o0, o1, taps.data(), w.depthwise_b, D);
    const GemmEpilogue epilogue{w.project_b, {}, d.residual ? x + i * d.in_c * H * W + o0 * OW : nullptr};
    GemmPackedTallBt(project->groups[0], (o1 - o0) * OW, D, C, y + (i * d.out_c * OH + o0) * OW, OH * OW, false,
                     &epilogue);
  };
  // One image on several threads whose expanded image fits 512 KB (7x7 and 14x14): the parts
  // expand disjoint input rows into one buffer, then each filters and projects its output rows,
  // reading the rows next to its own from there. Parts that expand all the rows they read
  // expand the rows where they meet twice (9 rows of a 7x7 image on two threads), which costs
  // more than a second parallel region. The same sums either way.
  constexpr int64_t kMaxSharedFloats = int64_t{1} << 17;
  if (d.batch == 1 && plan.parts > 1 && H * W * C <= kMaxSharedFloats) {
    const ScratchBuffer E(H * W * C);
    ParallelFor(plan.parts, 1, [&](int64_t p0, int64_t p1) {
      thread_local std::vector<float> packed;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t r0 = p * H / plan.parts, r1 = (p + 1) * H / plan.parts;
        if (packed.size() < static_cast<size_t>((r1 - r0) * W * d.in_c + kExpandPixels * d.in_c))
          packed.resize(static_cast<size_t>((r1 - r0) * W * d.in_c + kExpandPixels * d.in_c));
        if (r1 > r0)
          ExpandRows(x + r0 * W, H * W, (r1 - r0) * W, expand->groups[0], w.expand_b, d.expand_act,
                     E.data() + r0 * W * C, packed.data());
      }
    });
    ParallelFor(plan.parts, 1, [&](int64_t p0, int64_t p1) {
      thread_local std::vector<float> filtered;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t o0 = p * plan.part_rows, o1 = std::min(OH, o0 + plan.part_rows);
        if (filtered.size() < static_cast<size_t>((o1 - o0) * OW * C)) filtered.resize(static_cast<size_t>((o1 - o0) * OW * C));
        filter_and_project(0, E.data(), 0, o0, o1, filtered.data());
      }
    });
    return;
  }
  ParallelFor(d.batch * plan.parts, 1, [&](int64_t t0, int64_t t1) {
    // Per thread, reused across calls (no task of this loop waits inside another's body).
    thread_local std::vector<float> expanded, filtered, packed;
    if (expanded.size() < static_cast<size_t>(R * W * C)) expanded.resize(static_cast<size_t>(R * W * C));
    if (filtered.size() < static_cast<size_t>(plan.band * OW * C))
      filtered.resize(static_cast<size_t>(plan.band * OW * C));
    if (packed.size() < static_cast<size_t>(R * W * d.in_c + kExpandPixels * d.in_c))
      packed.resize(static_cast<size_t>(R * W * d.in_c + kExpandPixels * d.in_c));
    float* E = expanded.data();
    float* D = filtered.data();
    for (int64_t t = t0; t < t1; ++t)
      ForEachInvertedResidualBand(d, plan, t, [&](const InvertedResidualBand& b) {
        const float* xi = x + b.image * d.in_c * H * W;
        // Rows the band before expanded and this one needs move to the front.
        if (b.kept > 0 && b.shift > 0)
          std::memmove(E, E + b.shift * W * C, sizeof(float) * static_cast<size_t>(b.kept * W * C));
        if (b.hi > b.lo + b.kept)
          ExpandRows(xi + (b.lo + b.kept) * W, H * W, (b.hi - b.lo - b.kept) * W, expand->groups[0], w.expand_b,
                     d.expand_act, E + b.kept * W * C, packed.data());
        filter_and_project(b.image, E, b.lo, b.o0, b.o1, D);
      });
  });
}

}  // namespace conv
}  // namespace symbind
