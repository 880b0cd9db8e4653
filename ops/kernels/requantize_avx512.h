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

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// (sums + bias) * scale of row m, as RequantizeBlock computes it (never contracted into an FMA).
__attribute__((target("avx512f"), always_inline)) inline __m512 ScaledSums16(__m512i sums, __m512i bias, __m512 scale) {
  return _mm512_mul_round_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sums, bias)), scale, kRoundNearest);
}

// Scaled values to 16 output levels in the low bytes, narrowed in a register (the narrowing store
// to memory is several times slower on some CPUs).
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m128i LevelBytes16(__m512 v,
                                                                                                 bool out_unsigned) {
  // Unsigned: vmaxps returns its second operand (0) where v is NaN, so the clamp at 0 alone sends
  // NaN to 0; vpmovusdb's saturation clamps at 255 (a value past int32 converts to 0x80000000,
  // which it saturates too).
  if (out_unsigned) return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_max_ps(v, _mm512_setzero_ps())));
  // Signed: NaN lanes to +0 by one vfixupimmps (its table: QNaN and SNaN give +0, every other
  // class the value itself), the clamp at 127 (a value past int32 converts to 0x80000000),
  // vpmovsdb's saturation the clamp at -128.
  const __m512 numbers = _mm512_fixupimm_ps(v, v, _mm512_set1_epi32(0x11111188), 0);
  return _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_min_ps(numbers, _mm512_set1_ps(127.0f))));
}

// A whole row of a 32-column tile: 32 finished sums of row m (no sum input) at columns n..n + 31,
// by RequantizeBlock's formula, in one store.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void StoreLevels32(
    __m512i sums0, __m512i sums1, const Int8Levels& L, int64_t m, int64_t n, uint32_t offset = 0) {
  // `offset` (a correction every sum of the row takes) added to the bias: the same wrapping sum.
  const __m512i bias = _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(L.bias[m]) + offset));
  const __m512 scale = _mm512_set1_ps(L.scale[m]);
  const __m128i lo = LevelBytes16(ScaledSums16(sums0, bias, scale), L.out_unsigned);
  const __m128i hi = LevelBytes16(ScaledSums16(sums1, bias, scale), L.out_unsigned);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint8_t*>(L.out) + m * L.ld_out + n),
                      _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// 16 finished sums (with row m's bias) to levels by RequantizeBlock's formula, in the same order
// of float operations (the *_round forms are never contracted into FMAs), stored by `runs`.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void StoreLevels16(
    __m512i sums, const Int8Levels& L, int64_t m, const LaneRun* runs, int count) {
  __m512 v = ScaledSums16(sums, _mm512_set1_epi32(L.bias[m]), _mm512_set1_ps(L.scale[m]));
  if (L.sum) {
    const uint8_t* sum_row = static_cast<const uint8_t*>(L.sum) + m * L.ld_sum;
    __m128i s = _mm_setzero_si128();
    for (int i = 0; i < count; ++i) s = _mm_mask_loadu_epi8(s, runs[i].mask, sum_row + runs[i].n);
    const __m512 level = _mm512_cvtepi32_ps(L.sum_unsigned ? _mm512_cvtepu8_epi32(s) : _mm512_cvtepi8_epi32(s));
    v = _mm512_add_round_ps(v, _mm512_mul_round_ps(level, _mm512_set1_ps(L.sum_scale), kRoundNearest), kRoundNearest);
  }
  const __m128i bytes = LevelBytes16(v, L.out_unsigned);
  uint8_t* out_row = static_cast<uint8_t*>(L.out) + m * L.ld_out;
  for (int i = 0; i < count; ++i) _mm_mask_storeu_epi8(out_row + runs[i].n, runs[i].mask, bytes);
}

// Four rows of 16 bytes (rows k..k+3 at 16 columns) as 16 quads, column i's 4 bytes in dword i:
// the int8 tiles' layout (a 4x4 transpose of dwords across 128-bit lanes, then of bytes within
// each lane).
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i InterleaveQuads16(const __m128i (&r)[4]) {
  const __m512i dwords = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i bytes = _mm512_set4_epi32(0x0F0B0703, 0x0E0A0602, 0x0D090501, 0x0C080400);
  __m512i v = _mm512_inserti32x4(_mm512_castsi128_si512(r[0]), r[1], 1);
  v = _mm512_inserti32x4(_mm512_inserti32x4(v, r[2], 2), r[3], 3);
  return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dwords, v), bytes);
}

// The first n lanes of 16.
inline __mmask16 FirstLanes(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1); }
SYMBIND_AVX512_INTRINSICS_END

}  // namespace quant
}  // namespace symbind
