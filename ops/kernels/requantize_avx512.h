// Int32 sums to output levels 16 lanes at a time on AVX-512, in registers: RequantizeBlock's
// formula (quantize_round.h) for kernels that finish their sums in vectors (the VNNI GEMM tiles,
// the depthwise planes), so that no sum is stored and read back.
//
//   const LaneRun run{n, mask};                  // lanes under `mask` go to columns n, n + 1, ...
//   StoreLevels16(sums, levels, m, &run, 1);      // row m: bias[m], scale[m], out + m * ld_out
#pragma once
#include <immintrin.h>

#include <cstdint>

#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/quantize_round.h>

namespace symbind {
namespace quant {

SYMBIND_AVX512_INTRINSICS_BEGIN
// Where a vector's 16 sums go: lane i, under `mask`, to column n + i of its row. A vector over
// positions of a padded image (GemmInt8PaddedImage) spans several output rows: one run each.
struct LaneRun {
  int64_t n;
  __mmask16 mask;
};

// 16 scaled values to levels as int32 lanes (Levels8 in quantize_round.cc on 16 lanes): NaN
// lanes to 0, clamped to [lo, hi], converted rounding half to even.
__attribute__((target("avx512f"), always_inline)) inline __m512i Levels16(__m512 v, __m512 lo, __m512 hi) {
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
}

// 16 finished sums (with row m's bias) to levels by RequantizeBlock's formula, in the same order
// of float operations (the *_round forms are never contracted into FMAs), stored by `runs`.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void StoreLevels16(
    __m512i sums, const Int8Levels& L, int64_t m, const LaneRun* runs, int count) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  __m512 v = _mm512_mul_round_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sums, _mm512_set1_epi32(L.bias[m]))),
                                 _mm512_set1_ps(L.scale[m]), kRound);
  if (L.sum) {
    const uint8_t* sum_row = static_cast<const uint8_t*>(L.sum) + m * L.ld_sum;
    __m128i s = _mm_setzero_si128();
    for (int i = 0; i < count; ++i) s = _mm_mask_loadu_epi8(s, runs[i].mask, sum_row + runs[i].n);
    const __m512 level = _mm512_cvtepi32_ps(L.sum_unsigned ? _mm512_cvtepu8_epi32(s) : _mm512_cvtepi8_epi32(s));
    v = _mm512_add_round_ps(v, _mm512_mul_round_ps(level, _mm512_set1_ps(L.sum_scale), kRound), kRound);
  }
  const float lo = L.out_unsigned ? 0.0f : -128.0f, hi = L.out_unsigned ? 255.0f : 127.0f;
  const __m512i q = Levels16(v, _mm512_set1_ps(lo), _mm512_set1_ps(hi));
  // Narrowed in a register, then a masked store: the narrowing store to memory is several
  // times slower on some CPUs.
  const __m128i bytes = L.out_unsigned ? _mm512_cvtusepi32_epi8(q) : _mm512_cvtsepi32_epi8(q);
  uint8_t* out_row = static_cast<uint8_t*>(L.out) + m * L.ld_out;
  for (int i = 0; i < count; ++i) _mm_mask_storeu_epi8(out_row + runs[i].n, runs[i].mask, bytes);
}

// The first n lanes of 16.
inline __mmask16 FirstLanes(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1); }
SYMBIND_AVX512_INTRINSICS_END

}  // namespace quant
}  // namespace symbind
