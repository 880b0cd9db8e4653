// Direct depthwise 2-D convolution: every channel convolved with its own KxK filter, one plane
// at a time (AVX-512 kernel with masked loads, or plane loops vectorised by the compiler); planes
// no wider than 12 in flat chunks of 16 outputs, and windows covering the whole plane (global
// depthwise layers) as dot products. As im2col + GEMM it is C products of one row each,
// dominated by the im2col copy.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/avx512_lanes.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_depthwise.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

bool DepthwiseApplies(const ConvDims& n, const ConvGeom& g) {
  const bool square = g.k[1] == g.k[2] && (g.k[1] == 3 || g.k[1] == 5 || g.k[1] == 7);
  const bool stride = g.s[1] == g.s[2] && (g.s[1] == 1 || g.s[1] == 2);
  return n.groups == n.in_c && n.out_c == n.in_c && g.is_planar() && square && stride &&
         g.d[1] == 1 && g.d[2] == 1;
}

namespace {

using PlaneArgs = DepthwisePlaneArgs;

// One output plane read straight from the input (no padded copy: copying cost more than the
// convolution at stride 2). Each output is the bias plus the in-image taps in (kh, kw) order,
// so the sums do not depend on how planes are spread over threads. Columns whose taps all lie
// inside the image form the vectorised middle; the few at the edges check bounds.
template <int K, int S>
inline __attribute__((always_inline)) void PlaneImpl(const float* in, const PlaneArgs& a,
                                                     const float* w, float bias, float* out,
                                                     bool add) {
  const int64_t mid_lo = std::min(a.OW, (a.pw + S - 1) / S);
  const int64_t last = a.W - K + a.pw;  // the largest ow * S with every tap inside
  const int64_t mid_hi = last < 0 ? mid_lo : std::max(mid_lo, std::min(a.OW, last / S + 1));
  float wk[K * K];
  for (int i = 0; i < K * K; ++i) wk[i] = w[i];
  for (int64_t oh = 0; oh < a.OH; ++oh) {
    const float* rows[K];
    for (int kh = 0; kh < K; ++kh) {
      const int64_t ih = oh * S - a.ph + kh;
      rows[kh] = (ih >= 0 && ih < a.H) ? in + ih * a.W : a.zeros;
    }
    float* __restrict o = out + oh * a.OW;
    auto edge = [&](int64_t ow) {
      float s = bias;
      for (int kh = 0; kh < K; ++kh)
        for (int kw = 0; kw < K; ++kw) {
          const int64_t iw = ow * S - a.pw + kw;
          if (iw >= 0 && iw < a.W) s += wk[kh * K + kw] * rows[kh][iw];
        }
      o[ow] = add ? o[ow] + s : s;
    };
    for (int64_t ow = 0; ow < mid_lo; ++ow) edge(ow);
    for (int64_t ow = mid_lo; ow < mid_hi; ++ow) {
      float s = bias;
      for (int kh = 0; kh < K; ++kh)
        for (int kw = 0; kw < K; ++kw) s += wk[kh * K + kw] * rows[kh][ow * S - a.pw + kw];
      o[ow] = add ? o[ow] + s : s;
    }
    for (int64_t ow = mid_hi; ow < a.OW; ++ow) edge(ow);
    ActivateInPlace(o, a.OW, a.act);  // while the row is in L1
  }
}

// Compiled for AVX-512, AVX2 and the baseline (isa_variants.h), so the loops above vectorise as
// wide as the CPU allows without -march.
#define SYMBIND_DEPTHWISE_PLANE(K, S)                                                                     \
  SYMBIND_ISA_VARIANTS(, void, Plane##K##x##K##s##S,                                                      \
                       (const float* in, const PlaneArgs& a, const float* w, float bias, float* out, bool add), \
                       (in, a, w, bias, out, add), { PlaneImpl<K, S>(in, a, w, bias, out, add); })
SYMBIND_DEPTHWISE_PLANE(3, 1)
SYMBIND_DEPTHWISE_PLANE(3, 2)
SYMBIND_DEPTHWISE_PLANE(5, 1)
SYMBIND_DEPTHWISE_PLANE(5, 2)
SYMBIND_DEPTHWISE_PLANE(7, 1)  // 7x7: MobileFaceNet's global depthwise layer (7x7 input, 1x1 output)
SYMBIND_DEPTHWISE_PLANE(7, 2)
#undef SYMBIND_DEPTHWISE_PLANE

// Planes [p0, p1) (p = image * C + channel) whose K x K window is the whole plane (K x K input,
// pad 0: the global depthwise layer of MobileFaceNet and InsightFace's other mobile nets), one
// output each. The window is then contiguous, so each output is a dot product of two runs of
// K * K floats: partial sums in 16 lanes (tap t in lane t % 16), summed pairwise, then added to
// the bias. One chain of K * K dependent multiply-adds per channel, as the plane kernels run it,
// leaves the layer latency-bound, and 16-lane gathers of 16 channels do no better; 16
// independent partial sums do not wait on each other. The order is fixed by K alone, so the bits
// do not depend on threads; they differ from the plane kernels' (another order of the sum).
constexpr int64_t kGlobalLanes = 16;
// part[0] += part[j] for every lane, pairwise (the order both versions below sum in), then plane
// p's output as PlaneImpl stores it.
inline void FinishGlobalPlane(float* part, const float* bias, float* y, int64_t p, int64_t c, bool add,
                              const FusedActivation& act) {
  for (int64_t width = kGlobalLanes / 2; width > 0; width /= 2)
    for (int64_t j = 0; j < width; ++j) part[j] += part[j + width];
  const float sum = (bias ? bias[c] : 0.0f) + part[0];
  y[p] = act.ForRow(c)(add ? y[p] + sum : sum);
}
SYMBIND_ISA_VARIANTS(, void, GlobalPlanes,
                     (const float* x, int64_t taps, const float* w, const float* bias, float* y, int64_t C,
                      int64_t p0, int64_t p1, bool add, const FusedActivation& act),
                     (x, taps, w, bias, y, C, p0, p1, add, act), {
  for (int64_t p = p0, c = p0 % C; p < p1; ++p, c = c + 1 == C ? 0 : c + 1) {  // no division per plane
    float part[kGlobalLanes] = {};
    for (int64_t t = 0; t < taps; ++t) part[t % kGlobalLanes] += w[c * taps + t] * x[p * taps + t];
    FinishGlobalPlane(part, bias, y, p, c, add, act);
  }
})
__attribute__((target("avx512f"))) void GlobalPlanesAvx512(const float* x, int64_t taps, const float* w,
                                                           const float* bias, float* y, int64_t C, int64_t p0,
                                                           int64_t p1, bool add, const FusedActivation& act) {
  for (int64_t p = p0, c = p0 % C; p < p1; ++p, c = c + 1 == C ? 0 : c + 1) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; t += kGlobalLanes) {
      const __mmask16 in = LaneRange(0, taps - t);
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(in, w + c * taps + t), _mm512_maskz_loadu_ps(in, x + p * taps + t),
                            acc);
    }
    float part[kGlobalLanes];
    _mm512_storeu_ps(part, acc);
    FinishGlobalPlane(part, bias, y, p, c, add, act);
  }
}

// rows[q] = input row first + q of the plane, or the zero row where that lies in the padding:
// the rows a group of output rows from oh0 reads (first = S * oh0 - ph at stride S).
inline void InputRows(const float* in, const PlaneArgs& a, int64_t first, int count, const float** rows) {
  for (int q = 0; q < count; ++q) {
    const int64_t ih = first + q;
    rows[q] = ih >= 0 && ih < a.H ? in + ih * a.W : a.zeros;
  }
}

// AVX-512, stride 1: output rows in chunks of 16 columns, four rows at a time (four independent
// sums per tap hide the multiply-add latency); every tap one masked load (zeros outside the
// image; masked-off lanes never fault) and one multiply-add per chunk. Auto-vectorising the
// plane loop above leaves rows of 7 and 14 outputs (MobileNet v2's 576- and 960-channel layers)
// to scalar edge code. Sums start at the bias and add every tap in (kh, kw) order, w * 0 for
// taps in the padding.
// (GCC 12 warns inside its own avx512fintrin.h, as for the GEMM kernels' AVX-512 build.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// AVX-512, stride 2: 16 output columns read 32 + K - 2 input columns of a row. Each input row a
// chunk touches is loaded once (three masked loads) and split into its K tap vectors, x[2i + kw]
// for kw = 0..K-1: the even and odd lanes by permutations, the later taps by moving those down
// one or two lanes with the next block's first lanes; every output row that reads the input
// row (at stride 2, rows of four outputs share 2 * 4 + K - 2 input rows) takes its taps from
// them. The sums are the stride-1 kernel's: bias, then every tap in (kh, kw) order, w * 0 in
// the padding.
template <int K>
__attribute__((target("avx512f"))) void PlaneStride2Avx512(const float* in, const PlaneArgs& a, const float* w,
                                                           float bias, float* out, bool add) {
  constexpr int kLanes = 16, kRows = 4, kInputRows = 2 * (kRows - 1) + K;
  __m512 wk[K * K];
  for (int i = 0; i < K * K; ++i) wk[i] = _mm512_set1_ps(w[i]);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  // Rows of four outputs outermost: their input rows stay in L1 across the chunks.
  for (int64_t oh0 = 0; oh0 < a.OH; oh0 += kRows) {
    for (int64_t c0 = 0; c0 < a.OW; c0 += kLanes) {
      const __mmask16 out_mask = LaneRange(0, a.OW - c0);
      const int64_t base = 2 * c0 - a.pw;  // the input column of tap kw = 0 for lane 0
      const __mmask16 m0 = LaneRange(-base, a.W - base), m1 = LaneRange(-base - kLanes, a.W - base - kLanes),
                      m2 = LaneRange(-base - 2 * kLanes, a.W - base - 2 * kLanes) & LaneRange(0, K - 1);
      __m512 acc[kRows];
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_set1_ps(bias);
#pragma GCC unroll 16
      for (int q = 0; q < kInputRows; ++q) {
        const int64_t ih = 2 * oh0 - a.ph + q;
        const float* row = ih >= 0 && ih < a.H ? in + ih * a.W : a.zeros;
        const __m512 lo = _mm512_maskz_loadu_ps(m0, row + base), hi = _mm512_maskz_loadu_ps(m1, row + base + kLanes);
        const __m512 next = _mm512_maskz_loadu_ps(m2, row + base + 2 * kLanes);
        __m512 tap[K];
        tap[0] = _mm512_permutex2var_ps(lo, even, hi);  // x[base + 2i]
        tap[1] = _mm512_permutex2var_ps(lo, odd, hi);   // x[base + 2i + 1]
        const __m512i next_even = _mm512_castps_si512(_mm512_permutexvar_ps(even, next));
        tap[2] = _mm512_castsi512_ps(_mm512_alignr_epi32(next_even, _mm512_castps_si512(tap[0]), 1));
        if constexpr (K == 5) {
          const __m512i next_odd = _mm512_castps_si512(_mm512_permutexvar_ps(odd, next));
          tap[3] = _mm512_castsi512_ps(_mm512_alignr_epi32(next_odd, _mm512_castps_si512(tap[1]), 1));
          tap[4] = _mm512_castsi512_ps(_mm512_alignr_epi32(next_even, _mm512_castps_si512(tap[0]), 2));
        }
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          const int kh = q - 2 * r;
          if (kh < 0 || kh >= K) continue;
#pragma GCC unroll 8
          for (int kw = 0; kw < K; ++kw) acc[r] = _mm512_fmadd_ps(wk[kh * K + kw], tap[kw], acc[r]);
        }
      }
      for (int r = 0; r < kRows && oh0 + r < a.OH; ++r)
        StoreActivatedAvx512(out + (oh0 + r) * a.OW + c0, out_mask, acc[r], a.act, add);
    }
  }
}

template <int K>
__attribute__((target("avx512f"))) void PlaneAvx512(const float* in, const PlaneArgs& a, const float* w, float bias,
                                                    float* out, bool add) {
  constexpr int kLanes = 16, kRows = 4, kInputRows = kRows + K - 1;
  __m512 wk[K * K];
  for (int i = 0; i < K * K; ++i) wk[i] = _mm512_set1_ps(w[i]);
  // Rows of four outputs outermost: their input rows stay in L1 across the chunks.
  for (int64_t oh0 = 0; oh0 < a.OH; oh0 += kRows) {
    const float* rows[kInputRows];
    InputRows(in, a, oh0 - a.ph, kInputRows, rows);
    for (int64_t c0 = 0; c0 < a.OW; c0 += kLanes) {
      const __mmask16 out_mask = LaneRange(0, a.OW - c0);
      __m512 acc[kRows];
      for (int r = 0; r < kRows; ++r) acc[r] = _mm512_set1_ps(bias);
      int64_t start[K];    // the input column of lane 0, per kw
      __mmask16 inside[K];  // its in-image lanes
      for (int kw = 0; kw < K; ++kw) {
        start[kw] = c0 - a.pw + kw;
        inside[kw] = LaneRange(-start[kw], a.W - start[kw]);
      }
      // Each input row's K shifted vectors loaded once, for every output row reading them.
#pragma GCC unroll 16
      for (int q = 0; q < kInputRows; ++q)
#pragma GCC unroll 8
        for (int kw = 0; kw < K; ++kw) {
          const __m512 x = _mm512_maskz_loadu_ps(inside[kw], rows[q] + start[kw]);
#pragma GCC unroll 4
          for (int r = 0; r < kRows; ++r) {
            const int kh = q - r;
            if (kh >= 0 && kh < K) acc[r] = _mm512_fmadd_ps(wk[kh * K + kw], x, acc[r]);
          }
        }
      for (int r = 0; r < kRows && oh0 + r < a.OH; ++r)
        StoreActivatedAvx512(out + (oh0 + r) * a.OW + c0, out_mask, acc[r], a.act, add);
    }
  }
}
// AVX-512, stride 1, "same" padding, narrow planes (MobileNet v2's 7x7 layers of 960 channels,
// MobileFaceNet's of 256): the plane as one flat run of OH * OW outputs in chunks of 16, so a
// chunk covers several rows instead of leaving 9 of 16 lanes idle on a row of 7. Output o reads
// tap (kh, kw) at o + (kh - p) * W + (kw - p), a contiguous load masked to the taps inside the
// image (`masks`, per chunk and tap, the same for every plane). Sums are the row kernel's: bias,
// then every tap in (kh, kw) order, w * 0 in the padding: the same bits.
template <int K>
__attribute__((target("avx512f"))) void FlatPlanesAvx512(const float* x, const float* w, const float* bias, float* y,
                                                         int64_t C, int64_t p0, int64_t p1, int64_t plane,
                                                         int64_t W, const __mmask16* masks, bool add,
                                                         const FusedActivation& act) {
  constexpr int kLanes = 16, kTaps = K * K;
  const int64_t pad = (K - 1) / 2;
  for (int64_t p = p0, c = p0 % C; p < p1; ++p, c = c + 1 == C ? 0 : c + 1) {
    const float* in = x + p * plane;
    float* out = y + p * plane;
    __m512 wk[kTaps];
    for (int t = 0; t < kTaps; ++t) wk[t] = _mm512_set1_ps(w[c * kTaps + t]);
    const FusedActivation channel_act = act.ForRow(c);
    const __mmask16* m = masks;
    for (int64_t o0 = 0; o0 < plane; o0 += kLanes, m += kTaps) {
      __m512 acc = _mm512_set1_ps(bias ? bias[c] : 0.0f);
#pragma GCC unroll 25
      for (int t = 0; t < kTaps; ++t) {
        const int64_t shift = (t / K - pad) * W + (t % K - pad);
        acc = _mm512_fmadd_ps(wk[t], _mm512_maskz_loadu_ps(m[t], in + o0 + shift), acc);
      }
      StoreActivatedAvx512(out + o0, LaneRange(0, plane - o0), acc, channel_act, add);
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// AVX2, stride 1: PlaneAvx512 on 8 lanes (rows of four outputs, each input row's K shifted
// vectors loaded once for every output row reading them). Chunks whose taps all lie inside the
// row load plainly, the edge chunks with masks (zeros outside the image). Same sums as the
// AVX-512 kernel: bias, then every tap in (kh, kw) order as a multiply-add, w * 0 in the
// padding. (The compiler-vectorised plane loops are far slower on 3x3 layers; two vectors per
// chunk for more independent sums, or the taps in lockstep over the rows, spill registers;
// copying the plane zero-padded first costs more than it saves on small planes.)
template <int K, bool kMasked>
__attribute__((target("avx2,fma"), always_inline)) inline void ChunkStride1Avx2(
    const float* const* rows, const PlaneArgs& a, const __m256* wk, float bias, float* out, int64_t oh0,
    int64_t c0, bool add) {
  constexpr int kLanes = 8, kRows = 4, kInputRows = kRows + K - 1;
  __m256 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm256_set1_ps(bias);
  __m256i inside[K];
  if constexpr (kMasked)
    for (int kw = 0; kw < K; ++kw) {
      const int64_t start = c0 - a.pw + kw;
      inside[kw] = LaneMask8(-start, a.W - start);
    }
#pragma GCC unroll 16
  for (int q = 0; q < kInputRows; ++q)
#pragma GCC unroll 8
    for (int kw = 0; kw < K; ++kw) {
      const float* src = rows[q] + c0 - a.pw + kw;
      __m256 x;
      if constexpr (kMasked) x = _mm256_maskload_ps(src, inside[kw]);
      else x = _mm256_loadu_ps(src);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const int kh = q - r;
        if (kh >= 0 && kh < K) acc[r] = _mm256_fmadd_ps(wk[kh * K + kw], x, acc[r]);
      }
    }
  const __m256i out_mask = LaneMask8(0, a.OW - c0);
  for (int r = 0; r < kRows && oh0 + r < a.OH; ++r)
    StoreActivatedAvx2(out + (oh0 + r) * a.OW + c0, out_mask, c0 + kLanes <= a.OW, acc[r], a.act, add);
}

template <int K>
__attribute__((target("avx2,fma"))) void PlaneAvx2(const float* in, const PlaneArgs& a, const float* w, float bias,
                                                   float* out, bool add) {
  constexpr int kLanes = 8, kRows = 4, kInputRows = kRows + K - 1;
  __m256 wk[K * K];
  for (int i = 0; i < K * K; ++i) wk[i] = _mm256_set1_ps(w[i]);
  // A chunk reads columns c0 - pw .. c0 - pw + K + 6.
  auto inside = [&](int64_t c0) { return c0 >= a.pw && c0 - a.pw + K - 1 + kLanes <= a.W && c0 + kLanes <= a.OW; };
  for (int64_t oh0 = 0; oh0 < a.OH; oh0 += kRows) {
    const float* rows[kInputRows];
    InputRows(in, a, oh0 - a.ph, kInputRows, rows);
    for (int64_t c0 = 0; c0 < a.OW; c0 += kLanes) {
      if (inside(c0)) ChunkStride1Avx2<K, false>(rows, a, wk, bias, out, oh0, c0, add);
      else ChunkStride1Avx2<K, true>(rows, a, wk, bias, out, oh0, c0, add);
    }
  }
}

// Taps of 8 stride-2 outputs from the 16 input columns lo, hi, in one shuffle and in the lane
// order 0 1 4 5 2 3 6 7 (shuffles stay within 128-bit halves; the sums are put back in order
// once, at the store): x[0, 2, 8, 10 | 4, 6, 12, 14], and x[1, 3, 9, 11 | 5, 7, 13, 15].
__attribute__((target("avx2,fma"), always_inline)) inline __m256 EvenLanesMixed(__m256 lo, __m256 hi) {
  return _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
}
__attribute__((target("avx2,fma"), always_inline)) inline __m256 OddLanesMixed(__m256 lo, __m256 hi) {
  return _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
}

// AVX2, stride 2: 8 output columns read 16 + K - 2 input columns of a row, loaded as pairs of
// vectors at offsets 0, 2, 4 and split into the K tap vectors (x[2i + kw]: the even lanes of
// the pair at kw, or the odd lanes of the pair at kw - 1, in EvenLanesMixed's lane order); every
// output row reading the input row takes its taps from them. Sums as PlaneStride2Avx512's.
// (Splitting in order would take two permutes more per tap.)
template <int K, bool kMasked>
__attribute__((target("avx2,fma"), always_inline)) inline void ChunkStride2Avx2(
    const float* const* rows, const PlaneArgs& a, const __m256* wk, float bias, float* out, int64_t oh0,
    int64_t c0, bool add) {
  constexpr int kLanes = 8, kRows = 4, kInputRows = 2 * (kRows - 1) + K, kPairs = (K + 1) / 2;
  const int64_t base = 2 * c0 - a.pw;  // the input column of tap kw = 0 for lane 0
  __m256i inside[kPairs][2];
  if constexpr (kMasked)
    for (int j = 0; j < kPairs; ++j)
      for (int h = 0; h < 2; ++h) {
        const int64_t start = base + 2 * j + h * kLanes;
        inside[j][h] = LaneMask8(-start, a.W - start);
      }
  __m256 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm256_set1_ps(bias);
#pragma GCC unroll 16
  for (int q = 0; q < kInputRows; ++q) {
    const float* row = rows[q] + base;
    __m256 tap[K];
#pragma GCC unroll 4
    for (int j = 0; j < kPairs; ++j) {
      __m256 lo, hi;
      if constexpr (kMasked) {
        lo = _mm256_maskload_ps(row + 2 * j, inside[j][0]);
        hi = _mm256_maskload_ps(row + 2 * j + kLanes, inside[j][1]);
      } else {
        lo = _mm256_loadu_ps(row + 2 * j);
        hi = _mm256_loadu_ps(row + 2 * j + kLanes);
      }
      tap[2 * j] = EvenLanesMixed(lo, hi);
      if (2 * j + 1 < K) tap[2 * j + 1] = OddLanesMixed(lo, hi);
    }
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const int kh = q - 2 * r;
      if (kh < 0 || kh >= K) continue;
#pragma GCC unroll 8
      for (int kw = 0; kw < K; ++kw) acc[r] = _mm256_fmadd_ps(wk[kh * K + kw], tap[kw], acc[r]);
    }
  }
  const __m256i out_mask = LaneMask8(0, a.OW - c0);
  for (int r = 0; r < kRows && oh0 + r < a.OH; ++r)
    StoreActivatedAvx2(out + (oh0 + r) * a.OW + c0, out_mask, c0 + kLanes <= a.OW, UnmixLanes(acc[r]), a.act, add);
}

template <int K>
__attribute__((target("avx2,fma"))) void PlaneStride2Avx2(const float* in, const PlaneArgs& a, const float* w,
                                                          float bias, float* out, bool add) {
  constexpr int kLanes = 8, kRows = 4, kInputRows = 2 * (kRows - 1) + K, kPairs = (K + 1) / 2;
  __m256 wk[K * K];
  for (int i = 0; i < K * K; ++i) wk[i] = _mm256_set1_ps(w[i]);
  // A chunk reads columns 2 * c0 - pw .. 2 * c0 - pw + 2 * (kPairs - 1) + 15.
  auto inside = [&](int64_t c0) {
    return 2 * c0 >= a.pw && 2 * c0 - a.pw + 2 * (kPairs - 1) + 2 * kLanes <= a.W && c0 + kLanes <= a.OW;
  };
  // Rows of four outputs outermost: their input rows stay in L1 across the chunks.
  for (int64_t oh0 = 0; oh0 < a.OH; oh0 += kRows) {
    const float* rows[kInputRows];
    InputRows(in, a, 2 * oh0 - a.ph, kInputRows, rows);
    for (int64_t c0 = 0; c0 < a.OW; c0 += kLanes) {
      if (inside(c0)) ChunkStride2Avx2<K, false>(rows, a, wk, bias, out, oh0, c0, add);
      else ChunkStride2Avx2<K, true>(rows, a, wk, bias, out, oh0, c0, add);
    }
  }
}

// AVX2, stride 1, "same" padding, narrow planes (MobileNet v2's 14x14 and 7x7 layers):
// FlatPlanesAvx512 on 8 lanes, two chunks at a time for two independent sums. `masks`: per chunk
// of 8 outputs, per tap, 8 lanes of all ones where the tap lies inside the image (FlatTapMasks8).
// Same sums as the row kernels: bias, then every tap in (kh, kw) order, w * 0 in the padding.
// Faster than PlaneAvx2 on such planes, whose rows leave lanes idle. (Interleaving 8 channels
// per vector through 8x8 transposes, as ONNX Runtime's NCHWc layout does throughout, was slower
// than either: the transposes cost what it saved.)
__attribute__((target("avx2,fma"), always_inline)) inline __m256i TapMask(const int32_t* masks, int64_t i) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(masks + i * 8));
}
template <int K>
__attribute__((target("avx2,fma"))) void FlatPlanesAvx2(const float* x, const float* w, const float* bias, float* y,
                                                        int64_t C, int64_t p0, int64_t p1, int64_t plane, int64_t W,
                                                        const int32_t* masks, bool add, const FusedActivation& act) {
  constexpr int kLanes = 8, kTaps = K * K;
  const int64_t pad = (K - 1) / 2, chunks = (plane + kLanes - 1) / kLanes;
  int64_t shift[kTaps];
  for (int t = 0; t < kTaps; ++t) shift[t] = (t / K - pad) * W + (t % K - pad);
  for (int64_t p = p0, c = p0 % C; p < p1; ++p, c = c + 1 == C ? 0 : c + 1) {
    const float* in = x + p * plane;
    float* out = y + p * plane;
    __m256 wk[kTaps];
    for (int t = 0; t < kTaps; ++t) wk[t] = _mm256_set1_ps(w[c * kTaps + t]);
    const FusedActivation channel_act = act.ForRow(c);
    const __m256 start = _mm256_set1_ps(bias ? bias[c] : 0.0f);
    int64_t chunk = 0;
    for (; chunk + 2 <= chunks; chunk += 2) {
      const int64_t o0 = chunk * kLanes;
      __m256 acc0 = start, acc1 = start;
#pragma GCC unroll 25
      for (int t = 0; t < kTaps; ++t) {
        const float* src = in + o0 + shift[t];
        acc0 = _mm256_fmadd_ps(wk[t], _mm256_maskload_ps(src, TapMask(masks, chunk * kTaps + t)), acc0);
        acc1 = _mm256_fmadd_ps(wk[t], _mm256_maskload_ps(src + kLanes, TapMask(masks, (chunk + 1) * kTaps + t)), acc1);
      }
      StoreActivatedAvx2(out + o0, LaneMask8(0, plane - o0), o0 + kLanes <= plane, acc0, channel_act, add);
      StoreActivatedAvx2(out + o0 + kLanes, LaneMask8(0, plane - o0 - kLanes), o0 + 2 * kLanes <= plane, acc1,
                         channel_act, add);
    }
    if (chunk < chunks) {
      const int64_t o0 = chunk * kLanes;
      __m256 acc = start;
#pragma GCC unroll 25
      for (int t = 0; t < kTaps; ++t)
        acc = _mm256_fmadd_ps(wk[t], _mm256_maskload_ps(in + o0 + shift[t], TapMask(masks, chunk * kTaps + t)), acc);
      StoreActivatedAvx2(out + o0, LaneMask8(0, plane - o0), o0 + kLanes <= plane, acc, channel_act, add);
    }
  }
}

using PlaneFn = void (*)(const float*, const PlaneArgs&, const float*, float, float*, bool);
PlaneFn ChoosePlane(int64_t k, int64_t s) {
  // SYMBIND_GEMM_ISA=avx2 / base select the AVX2 kernels / the plane loops everywhere (for tests).
  if (k == 7) return s == 1 ? Plane7x7s1 : Plane7x7s2;  // plane loops only (rare, small layers)
  if (ActiveIsa() == KernelIsa::kAvx512) {
    if (k == 3) return s == 1 ? PlaneAvx512<3> : PlaneStride2Avx512<3>;
    return s == 1 ? PlaneAvx512<5> : PlaneStride2Avx512<5>;
  }
  if (ActiveIsa() == KernelIsa::kAvx2) {
    if (k == 3) return s == 1 ? PlaneAvx2<3> : PlaneStride2Avx2<3>;
    return s == 1 ? PlaneAvx2<5> : PlaneStride2Avx2<5>;
  }
  if (k == 3) return s == 1 ? Plane3x3s1 : Plane3x3s2;
  return s == 1 ? Plane5x5s1 : Plane5x5s2;
}

// Whether tap t of flat output o of an H x W plane under a K x K window (same padding) lies
// inside the image.
bool FlatTapInside(int64_t o, int64_t t, int64_t H, int64_t W, int64_t K) {
  const int64_t pad = (K - 1) / 2, ih = o / W + t / K - pad, iw = o % W + t % K - pad;
  return ih >= 0 && ih < H && iw >= 0 && iw < W;
}

// FlatPlanesAvx512's masks of an H x W plane under a K x K window (same padding): per chunk of 16
// outputs, per tap, the lanes whose tap lies inside the image.
std::vector<__mmask16> FlatTapMasks(int64_t H, int64_t W, int64_t K) {
  const int64_t outputs = H * W;
  std::vector<__mmask16> masks;
  for (int64_t o0 = 0; o0 < outputs; o0 += 16)
    for (int64_t t = 0; t < K * K; ++t) {
      __mmask16 m = 0;
      for (int64_t l = 0; l < 16 && o0 + l < outputs; ++l)
        if (FlatTapInside(o0 + l, t, H, W, K)) m = static_cast<__mmask16>(m | (1u << l));
      masks.push_back(m);
    }
  return masks;
}

// FlatPlanesAvx2's masks: FlatTapMasks on 8 lanes, each lane an int32 of all ones or zero.
std::vector<int32_t> FlatTapMasks8(int64_t H, int64_t W, int64_t K) {
  const int64_t outputs = H * W, chunks = (outputs + 7) / 8;
  std::vector<int32_t> masks(static_cast<size_t>(chunks * K * K * 8));
  int32_t* m = masks.data();
  for (int64_t o0 = 0; o0 < outputs; o0 += 8)
    for (int64_t t = 0; t < K * K; ++t)
      for (int64_t l = 0; l < 8; ++l) *m++ = o0 + l < outputs && FlatTapInside(o0 + l, t, H, W, K) ? -1 : 0;
  return masks;
}

}  // namespace

DepthwisePlaneFn ChooseDepthwisePlane(int64_t k, int64_t stride) { return ChoosePlane(k, stride); }

void DepthwiseConvForward(const float* x, const float* w, const float* bias, float* y,
                          const ConvDims& n, const ConvGeom& g, OpReq req, const FusedActivation& act) {
  if (req == OpReq::kNull) return;
  const int64_t K = g.k[2], C = n.in_c;
  const int64_t isize = g.in_size(), osize = g.out_size();
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  if (g.in[1] == K && g.in[2] == K && g.p[1] == 0 && g.p[2] == 0) {  // the window is the whole plane
    const auto global = avx512 ? GlobalPlanesAvx512 : GlobalPlanes;
    ParallelFor(n.batch * C, GrainFor(K * K), [&](int64_t p0, int64_t p1) {
      global(x, isize, w, bias, y, C, p0, p1, req == OpReq::kAdd, act);
    });
    return;
  }
  // Planes per task: ~32k multiply-adds, a plane's call counted as ~1k more (a 7x7 plane of
  // one output is mostly call overhead).
  constexpr int64_t kPlaneCallCost = 1024;
  const int64_t grain = GrainFor(osize * K * K + kPlaneCallCost);
  // Narrow planes at stride 1 with "same" padding: flat chunks (FlatPlanesAvx512).
  constexpr int64_t kMaxFlatWidth = 12, kMaxFlatWidthAvx2 = 16;
  const bool same_stride1 = g.s[1] == 1 && g.s[2] == 1 && 2 * g.p[1] == K - 1 && 2 * g.p[2] == K - 1;
  if ((K == 3 || K == 5) && same_stride1 && g.in[2] <= kMaxFlatWidth && avx512) {
    const std::vector<__mmask16> masks = FlatTapMasks(g.in[1], g.in[2], K);
    const auto flat = K == 3 ? FlatPlanesAvx512<3> : FlatPlanesAvx512<5>;
    ParallelFor(n.batch * C, grain, [&](int64_t p0, int64_t p1) {
      flat(x, w, bias, y, C, p0, p1, osize, g.in[2], masks.data(), req == OpReq::kAdd, act);
    });
    return;
  }
  // On AVX2, 3x3 only: 5x5 planes ran slower flat (25 masked loads per chunk), 28 wide too.
  if (K == 3 && same_stride1 && g.in[2] <= kMaxFlatWidthAvx2 && ActiveIsa() == KernelIsa::kAvx2) {
    const std::vector<int32_t> masks = FlatTapMasks8(g.in[1], g.in[2], K);
    ParallelFor(n.batch * C, grain, [&](int64_t p0, int64_t p1) {
      FlatPlanesAvx2<3>(x, w, bias, y, C, p0, p1, osize, g.in[2], masks.data(), req == OpReq::kAdd, act);
    });
    return;
  }
  const PlaneFn plane = ChoosePlane(K, g.s[2]);
  const std::vector<float> zeros(static_cast<size_t>(g.in[2]), 0.0f);
  const PlaneArgs args{g.in[1], g.in[2], g.p[1], g.p[2], g.out[1], g.out[2], zeros.data(), act};
  const bool per_channel = act.kind == FusedActivation::kPRelu;
  ParallelFor(n.batch * C, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % C;
      PlaneArgs channel_args = args;
      if (per_channel) channel_args.act = act.ForRow(c);
      plane(x + p * isize, channel_args, w + c * K * K, bias ? bias[c] : 0.0f, y + p * osize, req == OpReq::kAdd);
    }
  });
}

}  // namespace conv
}  // namespace symbind
