// AVX2 pieces shared by the direct kernels (depthwise, tiny-depth): 8-lane masks and the fused
// activation applied to a vector as it is stored; the AVX2 counterpart of avx512_lanes.h.
//
//   const __m256i tail = LaneMask8(0, width - c);            // once per chunk of 8 columns
//   StoreActivatedAvx2(out + c, tail, width - c >= 8, acc, act.ForRow(f), /*add=*/false);
//
// Masked loads (_mm256_maskload_ps) never fault on masked-off lanes and read them as 0.
// Functions carry target("avx2,fma"), so callers compiled for the baseline can use them inside
// their own avx2 functions; they are inlined there.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace conv {

// Lanes [lo, hi) of an 8-lane mask (all bits set in those lanes; none when hi <= lo).
__attribute__((target("avx2,fma"), always_inline)) inline __m256i LaneMask8(int64_t lo, int64_t hi) {
  const int l = static_cast<int>(std::clamp<int64_t>(lo, 0, 8));
  const int h = static_cast<int>(std::clamp<int64_t>(hi, 0, 8));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(l - 1)),
                          _mm256_cmpgt_epi32(_mm256_set1_epi32(h), lane));
}

// Lanes 0 1 4 5 2 3 6 7 back in order: what _mm256_shuffle_ps(lo, hi, even or odd picks) gives
// for the even or odd elements of the 16 floats lo, hi (shuffles stay within 128-bit halves).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 UnmixLanes(__m256 v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

// FusedActivation's operator() lane by lane (NaN and signed zeros as the scalar code: max/min
// return their second operand on NaN), `slope` per lane: kLeaky's splat, or kPRelu's slopes of
// the lanes' channels (channels-last vectors).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 ActivateAvx2(__m256 v, FusedActivation::Kind kind,
                                                                           __m256 lo, __m256 hi, __m256 slope) {
  const __m256 zero = _mm256_setzero_ps();
  switch (kind) {  // no default: a new kind must be added here (-Wswitch)
    case FusedActivation::kNone: return v;
    case FusedActivation::kRelu: return _mm256_max_ps(v, zero);  // NaN -> 0, as x > 0 ? x : 0
    case FusedActivation::kClip: return _mm256_min_ps(hi, _mm256_max_ps(lo, v));  // NaN kept
    case FusedActivation::kLeaky:  // x > 0 ? x : slope * x
    case FusedActivation::kPRelu:
      return _mm256_blendv_ps(_mm256_mul_ps(slope, v), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ));
  }
  return v;
}

// o[lanes of mask] = act(v (+ o when add)) (ActivateAvx2). `full`: every lane is in the mask (a
// plain store). act is one channel's (kPRelu resolved by ForRow).
__attribute__((target("avx2,fma"), always_inline)) inline void StoreActivatedAvx2(float* o, __m256i mask, bool full,
                                                                                __m256 v, const FusedActivation& act,
                                                                                bool add) {
  if (add) v = _mm256_add_ps(full ? _mm256_loadu_ps(o) : _mm256_maskload_ps(o, mask), v);
  v = ActivateAvx2(v, act.kind, _mm256_set1_ps(act.lo), _mm256_set1_ps(act.hi), _mm256_set1_ps(act.slope));
  if (full) {
    _mm256_storeu_ps(o, v);
    return;
  }
  // The lanes one by one: AMD's vmaskmovps store is microcoded, slower than scalar stores.
  alignas(32) float lanes[8];
  alignas(32) int32_t keep[8];
  _mm256_store_ps(lanes, v);
  _mm256_store_si256(reinterpret_cast<__m256i*>(keep), mask);
  for (int l = 0; l < 8; ++l)
    if (keep[l]) o[l] = lanes[l];
}

}  // namespace conv
}  // namespace symbind
