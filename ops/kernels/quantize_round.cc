#include <symbind/ops/kernels/quantize_round.h>

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace quant {
namespace {

__attribute__((target("avx2"), always_inline)) inline __m256 Load8(const float* x) { return _mm256_loadu_ps(x); }
__attribute__((target("avx2"), always_inline)) inline __m256 Load8(const int32_t* x) {
  return _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
}

__attribute__((target("avx2"), always_inline)) inline __m256 Load8(const int8_t* x) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))));
}
__attribute__((target("avx2"), always_inline)) inline __m256 Load8(const uint8_t* x) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))));
}

// 8 scaled values to levels as int32 lanes: NaN lanes cleared to 0, clamped to [lo, hi] (no NaN
// left, so max/min order does not matter), then converted with the default rounding mode,
// half to even, which the shift in SaturateRound reproduces for values this small.
__attribute__((target("avx2"), always_inline)) inline __m256i Levels8(__m256 v, __m256 lo, __m256 hi) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
}

// q = SaturateRound(x * scale), or with kAct SaturateRound(act(x * step) * scale) (ActivateAvx2
// is FusedActivation's operator() lane by lane).
// The levels of 8 elements (RoundAvx2's formula).
template <bool kAct, typename TX>
__attribute__((target("avx2,fma"), always_inline)) inline __m256i RoundLevels8(const TX* x, __m256 step,
                                                                             FusedActivation::Kind kind, __m256 act_lo,
                                                                             __m256 act_hi, __m256 slope, __m256 scale,
                                                                             __m256 lo, __m256 hi) {
  __m256 v = Load8(x);
  if constexpr (kAct) v = conv::ActivateAvx2(_mm256_mul_ps(v, step), kind, act_lo, act_hi, slope);
  return Levels8(_mm256_mul_ps(v, scale), lo, hi);
}

template <bool kAct, typename TX, typename T>
__attribute__((target("avx2,fma"))) void RoundAvx2(const TX* x, int64_t n, float step, const FusedActivation& act,
                                                   float scale, T* q) {
  const __m256 s = _mm256_set1_ps(scale), st = _mm256_set1_ps(step);
  const __m256 act_lo = _mm256_set1_ps(act.lo), act_hi = _mm256_set1_ps(act.hi), slope = _mm256_set1_ps(act.slope);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<T>::max()));
  // packs interleave 128-bit halves: lanes of a, b, c, d come out as a0-3 b0-3 c0-3 d0-3 a4-7 ...
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k) v[k] = RoundLevels8<kAct>(x + i + 8 * k, st, act.kind, act_lo, act_hi, slope, s, lo, hi);
    const __m256i ab = _mm256_packs_epi32(v[0], v[1]), cd = _mm256_packs_epi32(v[2], v[3]);
    const __m256i bytes = std::is_same_v<T, int8_t> ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; i < n; ++i)
    q[i] = kAct ? SaturateRound<T>(act(static_cast<float>(x[i]) * step) * scale)
                : SaturateRound<T>(static_cast<float>(x[i]) * scale);
}

template <bool kAct, typename TX, typename T>
void RoundOf(const TX* x, int64_t n, float step, const FusedActivation& act, float scale, T* q) {
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (avx2) return RoundAvx2<kAct>(x + b, e - b, step, act, scale, q + b);
    for (int64_t i = b; i < e; ++i)
      q[i] = kAct ? SaturateRound<T>(act(static_cast<float>(x[i]) * step) * scale)
                  : SaturateRound<T>(static_cast<float>(x[i]) * scale);
  });
}
template <typename TX, typename T>
void ScaleRoundOf(const TX* x, int64_t n, float scale, T* q) {
  RoundOf<false>(x, n, 1.0f, FusedActivation{}, scale, q);
}

template <typename T>
__attribute__((target("avx2"))) void ReluLevelsAvx2(const T* x, int64_t n, int8_t* y) {
  const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi8(127);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i r = std::is_same_v<T, int8_t> ? _mm256_max_epi8(v, zero) : _mm256_min_epu8(v, top);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  for (; i < n; ++i) y[i] = static_cast<int8_t>(std::min<int32_t>(std::max<int32_t>(x[i], 0), 127));
}

template <typename T>
void ReluLevelsOf(const T* x, int64_t n, int8_t* y) {
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (avx2) return ReluLevelsAvx2(x + b, e - b, y + b);
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<int8_t>(std::min<int32_t>(std::max<int32_t>(x[i], 0), 127));
  });
}

}  // namespace

void ScaleRound(const float* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int8_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int8_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const uint8_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const uint8_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ActScaleRound(const int8_t* x, int64_t n, float step, const FusedActivation& act, float scale, int8_t* q) {
  RoundOf<true>(x, n, step, act, scale, q);
}
void ActScaleRound(const int8_t* x, int64_t n, float step, const FusedActivation& act, float scale, uint8_t* q) {
  RoundOf<true>(x, n, step, act, scale, q);
}
void ActScaleRound(const uint8_t* x, int64_t n, float step, const FusedActivation& act, float scale, int8_t* q) {
  RoundOf<true>(x, n, step, act, scale, q);
}
void ActScaleRound(const uint8_t* x, int64_t n, float step, const FusedActivation& act, float scale, uint8_t* q) {
  RoundOf<true>(x, n, step, act, scale, q);
}
void ReluLevels(const int8_t* x, int64_t n, int8_t* y) { ReluLevelsOf(x, n, y); }
void ReluLevels(const uint8_t* x, int64_t n, int8_t* y) { ReluLevelsOf(x, n, y); }
void ScaleRound(const float* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int32_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int32_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }

}  // namespace quant
}  // namespace symbind
