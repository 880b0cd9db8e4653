#include <symbind/ops/kernels/quantize_round.h>

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/requantize_avx512.h>
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
// int32 sums with a bias added first (wrapping as two's complement); other types take none.
template <typename TX>
__attribute__((target("avx2"), always_inline)) inline __m256 Load8(const TX* x, __m256i bias) {
  if constexpr (std::is_same_v<TX, int32_t>)
    return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), bias));
  return Load8(x);
}

// 8 scaled values to levels as int32 lanes: NaN lanes cleared to 0, clamped to [lo, hi] (no NaN
// left, so max/min order does not matter), then converted with the default rounding mode,
// half to even, which the shift in SaturateRound reproduces for values this small.
__attribute__((target("avx2"), always_inline)) inline __m256i Levels8(__m256 v, __m256 lo, __m256 hi) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
}

// x as float; int32 sums with `bias` added first, wrapping as two's complement (other types take
// a zero bias).
template <typename TX>
inline float Widen(TX x, int32_t bias) {
  if constexpr (std::is_same_v<TX, int32_t>)
    return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(bias)));
  return static_cast<float>(x);
}

// The scalar formulas, one element each: the portable loops.
// q = SaturateRound(x * scale), or with kAct SaturateRound(act(x * step) * scale); x widened with
// the bias (int32 sums only).
template <bool kAct, typename T, typename TX>
inline T RoundOne(TX x, float step, const FusedActivation& act, float scale, int32_t bias) {
  if constexpr (kAct) return SaturateRound<T>(act(Widen(x, bias) * step) * scale);
  return SaturateRound<T>(Widen(x, bias) * scale);
}
template <typename TO, typename TA, typename TB>
inline TO AddScaledOne(TA a, TB b, float wa, float wb, int32_t a_bias) {
  return SaturateRound<TO>(Widen(a, a_bias) * wa + static_cast<float>(b) * wb);
}
template <typename T>
inline int8_t ReluOne(T x) {
  return static_cast<int8_t>(std::min<int32_t>(std::max<int32_t>(x, 0), 127));
}
// A quantized BatchNorm's level: uint8 data first rounded to int8 levels (x * to_int8); with
// `relu`, the quantized relu of it.
template <typename T>
inline int8_t ScaleShiftOne(T x, float to_int8, float scale, float shift, bool relu) {
  const float level = std::is_same_v<T, uint8_t> ? static_cast<float>(SaturateRound<int8_t>(static_cast<float>(x) * to_int8))
                                                 : static_cast<float>(x);
  const int8_t out = SaturateRound<int8_t>(level * scale + shift);
  return relu ? ReluOne(out) : out;
}

// Four vectors of 8 int32 levels stored as 32 levels of T (int8 or uint8: packed with
// saturation, already in range) or as 32 int32.
template <typename T>
__attribute__((target("avx2"), always_inline)) inline void Store32(T* q, __m256i a, __m256i b, __m256i c, __m256i d) {
  if constexpr (std::is_same_v<T, int32_t>) {
    __m256i* out = reinterpret_cast<__m256i*>(q);
    _mm256_storeu_si256(out, a);
    _mm256_storeu_si256(out + 1, b);
    _mm256_storeu_si256(out + 2, c);
    _mm256_storeu_si256(out + 3, d);
  } else {
    // packs interleave 128-bit halves: lanes of a, b, c, d come out as a0-3 b0-3 c0-3 d0-3 a4-7 ...
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    const __m256i bytes = std::is_same_v<T, int8_t> ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
}
// One vector of 8 int32 levels stored as 8 levels of T (int8 or uint8, already in range).
template <typename T>
__attribute__((target("avx2"), always_inline)) inline void Store8(T* q, __m256i v) {
  static_assert(!std::is_same_v<T, int32_t>, "Store8 narrows to bytes");
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i bytes = std::is_same_v<T, int8_t> ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(q), bytes);
}
// T's range as floats for Levels8: int32's upper end is the largest float below 2^31 (ClampToInt32).
template <typename T>
__attribute__((target("avx2"), always_inline)) inline __m256 LowestOf() {
  return _mm256_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()));
}
template <typename T>
__attribute__((target("avx2"), always_inline)) inline __m256 HighestOf() {
  return _mm256_set1_ps(std::is_same_v<T, int32_t> ? 2147483520.0f : static_cast<float>(std::numeric_limits<T>::max()));
}

// The levels of 8 elements by RoundOne's formula (ActivateAvx2 is FusedActivation's operator()
// lane by lane).
template <bool kAct, typename TX>
__attribute__((target("avx2,fma"), always_inline)) inline __m256i RoundLevels8(const TX* x, __m256 step,
                                                                             FusedActivation::Kind kind, __m256 act_lo,
                                                                             __m256 act_hi, __m256 slope, __m256 scale,
                                                                             __m256 lo, __m256 hi, __m256i bias) {
  __m256 v = Load8(x, bias);
  if constexpr (kAct) v = conv::ActivateAvx2(_mm256_mul_ps(v, step), kind, act_lo, act_hi, slope);
  return Levels8(_mm256_mul_ps(v, scale), lo, hi);
}

template <bool kAct, typename TX, typename T>
__attribute__((target("avx2,fma"))) void RoundAvx2(const TX* x, int64_t n, float step, const FusedActivation& act,
                                                   float scale, int32_t bias, T* q) {
  const __m256 s = _mm256_set1_ps(scale), st = _mm256_set1_ps(step);
  const __m256i b = _mm256_set1_epi32(bias);
  const __m256 act_lo = _mm256_set1_ps(act.lo), act_hi = _mm256_set1_ps(act.hi), slope = _mm256_set1_ps(act.slope);
  const __m256 lo = LowestOf<T>(), hi = HighestOf<T>();
  int64_t i = 0;
  // The tail goes through a zero-padded block: the same lane formula (small planes have long tails).
  TX tail_in[32] = {};
  T tail_out[32];
  for (; i < n; i += 32) {
    const bool tail = n - i < 32;
    if (tail) std::copy(x + i, x + n, tail_in);
    const TX* in = tail ? tail_in : x + i;
    __m256i v[4];
    for (int k = 0; k < 4; ++k) v[k] = RoundLevels8<kAct>(in + 8 * k, st, act.kind, act_lo, act_hi, slope, s, lo, hi, b);
    Store32(tail ? tail_out : q + i, v[0], v[1], v[2], v[3]);
    if (tail) std::copy(tail_out, tail_out + (n - i), q + i);
  }
}

template <bool kAct, typename TX, typename T>
void RoundOf(const TX* x, int64_t n, float step, const FusedActivation& act, float scale, T* q, int32_t bias = 0) {
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (avx2) return RoundAvx2<kAct>(x + b, e - b, step, act, scale, bias, q + b);
    for (int64_t i = b; i < e; ++i) q[i] = RoundOne<kAct, T>(x[i], step, act, scale, bias);
  });
}
template <typename TX, typename T>
void ScaleRoundOf(const TX* x, int64_t n, float scale, T* q, int32_t bias = 0) {
  RoundOf<false>(x, n, 1.0f, FusedActivation{}, scale, q, bias);
}

// Plain AVX2 without FMA, so that a * s + t stays a product and a sum, as in the scalar code.
template <typename T>
__attribute__((target("avx2"))) void ScaleShiftPlaneAvx2(const T* x, int64_t n, float to_int8, float scale, float shift,
                                                         bool relu, int8_t* y) {
  const __m256 r = _mm256_set1_ps(to_int8), s = _mm256_set1_ps(scale), t = _mm256_set1_ps(shift);
  // relu clamps at 0 before rounding: the same levels as max(0, the rounded level).
  const __m256 lo = LowestOf<int8_t>(), hi = HighestOf<int8_t>(), out_lo = relu ? _mm256_setzero_ps() : lo;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k) {
      __m256 level = Load8(x + i + 8 * k);
      if constexpr (std::is_same_v<T, uint8_t>) level = _mm256_cvtepi32_ps(Levels8(_mm256_mul_ps(level, r), lo, hi));
      v[k] = Levels8(_mm256_add_ps(_mm256_mul_ps(level, s), t), out_lo, hi);
    }
    Store32(y + i, v[0], v[1], v[2], v[3]);
  }
  for (; i < n; ++i) y[i] = ScaleShiftOne(x[i], to_int8, scale, shift, relu);
}

// ScaleShiftPlaneAvx2's lanes 16 at a time: the same operations per element (multiply, then
// add; NaN to 0, the clamp, rounding half to even), so the same levels.
SYMBIND_AVX512_INTRINSICS_BEGIN
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void ScaleShiftPlaneAvx512(const T* x, int64_t n, float to_int8,
                                                                                float scale, float shift, bool relu,
                                                                                int8_t* y) {
  const __m512 r = _mm512_set1_ps(to_int8), s = _mm512_set1_ps(scale), t = _mm512_set1_ps(shift);
  const __m512 lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f), out_lo = relu ? _mm512_setzero_ps() : lo;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    __m512 level = _mm512_cvtepi32_ps(std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes));
    if constexpr (std::is_same_v<T, uint8_t>) level = _mm512_cvtepi32_ps(Levels16(_mm512_mul_ps(level, r), lo, hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(Levels16(_mm512_add_ps(_mm512_mul_ps(level, s), t), out_lo, hi)));
  }
  for (; i < n; ++i) y[i] = ScaleShiftOne(x[i], to_int8, scale, shift, relu);
}
SYMBIND_AVX512_INTRINSICS_END

template <typename T>
void ScaleShiftLevelsOf(const T* x, int64_t outer, int64_t channels, int64_t inner, float to_int8, const float* scale,
                        const float* shift, int8_t* y, bool relu) {
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(outer * channels, GrainFor(inner), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % channels;
      const T* in = x + p * inner;
      int8_t* out = y + p * inner;
      if (avx512) {
        ScaleShiftPlaneAvx512(in, inner, to_int8, scale[c], shift[c], relu, out);
        continue;
      }
      if (avx2) {
        ScaleShiftPlaneAvx2(in, inner, to_int8, scale[c], shift[c], relu, out);
        continue;
      }
      for (int64_t i = 0; i < inner; ++i) out[i] = ScaleShiftOne(in[i], to_int8, scale[c], shift[c], relu);
    }
  });
}

template <typename TA, typename TB, typename TO>
__attribute__((target("avx2"))) void AddScaledAvx2(const TA* a, const TB* b, int64_t n, float wa, float wb,
                                                   int32_t a_bias, TO* y) {
  const __m256 sa = _mm256_set1_ps(wa), sb = _mm256_set1_ps(wb), lo = LowestOf<TO>(), hi = HighestOf<TO>();
  const __m256i bias = _mm256_set1_epi32(a_bias);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = Levels8(_mm256_add_ps(_mm256_mul_ps(Load8(a + i + 8 * k, bias), sa), _mm256_mul_ps(Load8(b + i + 8 * k), sb)),
                     lo, hi);
    Store32(y + i, v[0], v[1], v[2], v[3]);
  }
  for (; i < n; ++i) y[i] = AddScaledOne<TO>(a[i], b[i], wa, wb, a_bias);
}

// RequantizeBlock on AVX2: whole vectors of 32, then of 8, then the scalar formula, row by row.
template <bool kSum, typename TS, typename T>
__attribute__((target("avx2"))) void RequantizeRowsAvx2(const int32_t* x, int64_t ld, int64_t rows, int64_t n,
                                                        const int32_t* bias, const float* scale, const TS* s,
                                                        int64_t lds, float sum_scale, T* q, int64_t ldq) {
  const __m256 lo = LowestOf<T>(), hi = HighestOf<T>(), sb = _mm256_set1_ps(sum_scale);
  for (int64_t r = 0; r < rows; ++r, x += ld, q += ldq, s += kSum ? lds : 0) {
    const __m256 sa = _mm256_set1_ps(scale[r]);
    const __m256i b = _mm256_set1_epi32(bias[r]);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      __m256i v[4];
      for (int k = 0; k < 4; ++k) {
        __m256 a = _mm256_mul_ps(Load8(x + i + 8 * k, b), sa);
        if constexpr (kSum) a = _mm256_add_ps(a, _mm256_mul_ps(Load8(s + i + 8 * k), sb));
        v[k] = Levels8(a, lo, hi);
      }
      Store32(q + i, v[0], v[1], v[2], v[3]);
    }
    // Blocks of 16 columns (the AVX2 GEMM tile's) and tails: 8 at a time.
    for (; i + 8 <= n; i += 8) {
      __m256 a = _mm256_mul_ps(Load8(x + i, b), sa);
      if constexpr (kSum) a = _mm256_add_ps(a, _mm256_mul_ps(Load8(s + i), sb));
      Store8(q + i, Levels8(a, lo, hi));
    }
    for (; i < n; ++i) {
      if constexpr (kSum) q[i] = AddScaledOne<T>(x[i], s[i], scale[r], sum_scale, bias[r]);
      else q[i] = RoundOne<false, T>(x[i], 1.0f, FusedActivation{}, scale[r], bias[r]);
    }
  }
}

template <bool kSum, typename TS, typename T>
void RequantizeRowsOf(const int32_t* x, int64_t ld, int64_t rows, int64_t n, const int32_t* bias, const float* scale,
                      const TS* s, int64_t lds, float sum_scale, T* q, int64_t ldq) {
  if (ActiveIsa() != KernelIsa::kBase) return RequantizeRowsAvx2<kSum>(x, ld, rows, n, bias, scale, s, lds, sum_scale, q, ldq);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kSum) q[r * ldq + i] = AddScaledOne<T>(x[r * ld + i], s[r * lds + i], scale[r], sum_scale, bias[r]);
      else q[r * ldq + i] = RoundOne<false, T>(x[r * ld + i], 1.0f, FusedActivation{}, scale[r], bias[r]);
    }
}

// RequantizeFloatSums: each sum to int32 (exact), then RequantizeRowsAvx2's lanes (the bias added
// wrapping, the product, NaN to 0, the clamp, rounding half to even), 8 at a time, or 16 in
// registers on AVX-512 (StoreLevels16); the rest by the scalar formula.
// Returns how many it made (whole vectors of 8); the caller makes the rest.
template <typename T>
__attribute__((target("avx2"))) int64_t FloatSumsToLevelsAvx2(const float* sums, int64_t n, int32_t bias, float scale,
                                                              T* q) {
  const __m256 lo = LowestOf<T>(), hi = HighestOf<T>(), s = _mm256_set1_ps(scale);
  const __m256i b = _mm256_set1_epi32(bias);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_cvtps_epi32(_mm256_loadu_ps(sums + i)), b));
    Store8(q + i, Levels8(_mm256_mul_ps(x, s), lo, hi));
  }
  return i;
}
SYMBIND_AVX512_INTRINSICS_BEGIN
__attribute__((target("avx512f,avx512bw,avx512vl"))) void FloatSumsToLevelsAvx512(const Int8Levels& levels,
                                                                                  const float* sums, int64_t n) {
  const Int8Levels L = levels;  // a copy the byte stores cannot alias
  for (int64_t i = 0; i < n; i += 16) {
    const LaneRun run{i, FirstLanes(n - i)};
    StoreLevels16(_mm512_cvtps_epi32(_mm512_maskz_loadu_ps(run.mask, sums + i)), L, 0, &run, 1);
  }
}
SYMBIND_AVX512_INTRINSICS_END

template <typename T>
__attribute__((target("avx2"))) void ReluLevelsAvx2(const T* x, int64_t n, int8_t* y) {
  const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi8(127);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i r = std::is_same_v<T, int8_t> ? _mm256_max_epi8(v, zero) : _mm256_min_epu8(v, top);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  for (; i < n; ++i) y[i] = ReluOne(x[i]);
}

template <typename T>
void ReluLevelsOf(const T* x, int64_t n, int8_t* y) {
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (avx2) return ReluLevelsAvx2(x + b, e - b, y + b);
    for (int64_t i = b; i < e; ++i) y[i] = ReluOne(x[i]);
  });
}

}  // namespace

void ScaleRound(const float* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const float* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int32_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int32_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int8_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int8_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const uint8_t* x, int64_t n, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const uint8_t* x, int64_t n, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q); }
void ScaleRound(const int32_t* x, int64_t n, int32_t bias, float scale, int8_t* q) { ScaleRoundOf(x, n, scale, q, bias); }
void ScaleRound(const int32_t* x, int64_t n, int32_t bias, float scale, uint8_t* q) { ScaleRoundOf(x, n, scale, q, bias); }
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
void ScaleShiftLevels(const int8_t* x, int64_t outer, int64_t channels, int64_t inner, float to_int8,
                      const float* scale, const float* shift, int8_t* y, bool relu) {
  ScaleShiftLevelsOf(x, outer, channels, inner, to_int8, scale, shift, y, relu);
}
void ScaleShiftLevels(const uint8_t* x, int64_t outer, int64_t channels, int64_t inner, float to_int8,
                      const float* scale, const float* shift, int8_t* y, bool relu) {
  ScaleShiftLevelsOf(x, outer, channels, inner, to_int8, scale, shift, y, relu);
}

template <typename TA, typename TB, typename TO>
void AddScaledLevels(const TA* a, const TB* b, int64_t n, float wa, float wb, TO* y, int32_t a_bias) {
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(n, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    if (avx2) return AddScaledAvx2(a + i0, b + i0, i1 - i0, wa, wb, a_bias, y + i0);
    for (int64_t i = i0; i < i1; ++i) y[i] = AddScaledOne<TO>(a[i], b[i], wa, wb, a_bias);
  });
}
#define SYMBIND_ADD_SCALED_LEVELS(TA, TB)                                                          \
  template void AddScaledLevels(const TA*, const TB*, int64_t, float, float, int8_t*, int32_t);   \
  template void AddScaledLevels(const TA*, const TB*, int64_t, float, float, uint8_t*, int32_t);  \
  template void AddScaledLevels(const TA*, const TB*, int64_t, float, float, int32_t*, int32_t);
SYMBIND_ADD_SCALED_LEVELS(int8_t, int8_t)
SYMBIND_ADD_SCALED_LEVELS(int8_t, uint8_t)
SYMBIND_ADD_SCALED_LEVELS(uint8_t, int8_t)
SYMBIND_ADD_SCALED_LEVELS(uint8_t, uint8_t)
SYMBIND_ADD_SCALED_LEVELS(int32_t, int8_t)
SYMBIND_ADD_SCALED_LEVELS(int32_t, uint8_t)
#undef SYMBIND_ADD_SCALED_LEVELS

void RequantizeBlock(const Int8Levels& L, const int32_t* C, int64_t ldc, int64_t m0, int64_t m1, int64_t n0,
                     int64_t n1) {
  if (m1 <= m0 || n1 <= n0) return;
  const int32_t* x = C + m0 * ldc + n0;
  auto to = [&](auto out_zero) {
    using T = decltype(out_zero);
    T* q = static_cast<T*>(L.out) + m0 * L.ld_out + n0;
    if (!L.sum)
      return RequantizeRowsOf<false, int8_t>(x, ldc, m1 - m0, n1 - n0, L.bias + m0, L.scale + m0, nullptr, 0, 0.0f, q,
                                             L.ld_out);
    auto with = [&](auto sum_zero) {
      using TS = decltype(sum_zero);
      RequantizeRowsOf<true>(x, ldc, m1 - m0, n1 - n0, L.bias + m0, L.scale + m0,
                             static_cast<const TS*>(L.sum) + m0 * L.ld_sum + n0, L.ld_sum, L.sum_scale, q, L.ld_out);
    };
    if (L.sum_unsigned) with(uint8_t{});
    else with(int8_t{});
  };
  if (L.out_unsigned) to(uint8_t{});
  else to(int8_t{});
}

void RequantizeFloatSums(const Int8Levels& levels, const float* sums, int64_t n) {
  if (levels.sum) throw Error("RequantizeFloatSums takes no sum input (RequantizeBlock does)");
  if (ActiveIsa() == KernelIsa::kAvx512) return FloatSumsToLevelsAvx512(levels, sums, n);
  auto to = [&](auto* q) {
    using T = std::remove_pointer_t<decltype(q)>;
    int64_t i = ActiveIsa() == KernelIsa::kAvx2 ? FloatSumsToLevelsAvx2(sums, n, levels.bias[0], levels.scale[0], q) : 0;
    for (; i < n; ++i)
      q[i] = RoundOne<false, T>(static_cast<int32_t>(sums[i]), 1.0f, FusedActivation{}, levels.scale[0], levels.bias[0]);
  };
  if (levels.out_unsigned) to(static_cast<uint8_t*>(levels.out));
  else to(static_cast<int8_t*>(levels.out));
}

void ReluLevels(const int8_t* x, int64_t n, int8_t* y) { ReluLevelsOf(x, n, y); }
void ReluLevels(const uint8_t* x, int64_t n, int8_t* y) { ReluLevelsOf(x, n, y); }

}  // namespace quant
}  // namespace symbind
