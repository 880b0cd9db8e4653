// AVX-512 pieces shared by the direct kernels (depthwise, tiny-depth, pooling): 16-lane masks and
// the fused activation applied to a vector as it is stored.
//
//   const __mmask16 tail = LaneRange(0, width - c);          // once per chunk of 16 columns
//   StoreActivatedAvx512(out + c, tail, acc, act.ForRow(f), /*add=*/false);
//
// Functions carry target("avx512f"), so callers compiled for the baseline can use them inside
// their own avx512f functions; they are inlined there.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace conv {

// Lanes [lo, hi) of a 16-lane mask (empty when hi <= lo).
inline __mmask16 LaneRange(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, 16);
  return hi <= lo ? 0 : static_cast<__mmask16>(((1u << (hi - lo)) - 1u) << lo);
}

// o[lanes of mask] = act(v (+ o when add)), FusedActivation's operator() lane by lane. act is
// one channel's (kPRelu resolved by ForRow); the mask is the caller's, built once per chunk
// (building it per store slows the depthwise kernels).
__attribute__((target("avx512f"), always_inline)) inline void StoreActivatedAvx512(float* o, __mmask16 mask, __m512 v,
                                                                                 const FusedActivation& act, bool add) {
  const __m512 zero = _mm512_setzero_ps();
  if (add) v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, o), v);
  switch (act.kind) {  // no default: a new kind must be added here (-Wswitch)
    case FusedActivation::kNone: break;
    case FusedActivation::kRelu: v = _mm512_max_ps(v, zero); break;  // NaN -> 0, as x > 0 ? x : 0
    case FusedActivation::kClip:  // NaN kept
      v = _mm512_min_ps(_mm512_set1_ps(act.hi), _mm512_max_ps(_mm512_set1_ps(act.lo), v));
      break;
    case FusedActivation::kLeaky:  // x > 0 ? x : slope * x
      v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), _mm512_mul_ps(_mm512_set1_ps(act.slope), v), v);
      break;
    case FusedActivation::kPRelu: break;  // unreachable: callers pass act.ForRow(channel)
  }
  _mm512_mask_storeu_ps(o, mask, v);
}

}  // namespace conv
}  // namespace symbind
