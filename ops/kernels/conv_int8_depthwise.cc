#include <immintrin.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_depthwise.h>
#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/requantize_avx512.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace quant {
namespace {

// Sums of up to this many products of 8-bit levels (|x| <= 255, |w| <= 128) stay below 2^24, so
// floats hold every partial sum exactly, whatever the order.
constexpr int64_t kMaxExactFloatTaps = 512;

struct PlaneGeom {
  int64_t H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
  // The zero-padded plane split by row phase (padded row mod sh) and column phase (padded
  // column mod sw): sh x sw sub-planes of Hq rows of L columns.
  int64_t Hq() const { return (H + 2 * ph + sh - 1) / sh; }
  int64_t L() const { return (W + 2 * pw + sw - 1) / sw; }
  int64_t PhaseFloats() const { return sh * sw * Hq() * L(); }
};

// One plane through floats, over the phases of the padded input: tap (ky, kx) of output
// (oy, ox) reads sub-plane ((ky * dh) % sh, (kx * dw) % sw) at row oy + (ky * dh) / sh and column
// ox + (kx * dw) / sw, so with outputs at acc[oy * L + ox] each tap is one loop over the whole
// plane at a fixed offset, which the compiler vectorises (the columns past OW are computed and
// dropped). The sums are exact integers (kMaxExactFloatTaps).
template <typename T>
__attribute__((always_inline)) inline void PlaneFloatBody(const T* image, const int8_t* filter, int32_t* out,
                                                          const PlaneGeom& g, float* phases, float* acc) {
  const int64_t Hq = g.Hq(), L = g.L();
  std::fill(phases, phases + g.PhaseFloats(), 0.0f);
  for (int64_t y = 0; y < g.H; ++y) {
    const int64_t row = y + g.ph;
    float* sub = phases + ((row % g.sh) * g.sw * Hq + row / g.sh) * L;
    const T* src = image + y * g.W;
    if (g.sw == 1) {
      for (int64_t x = 0; x < g.W; ++x) sub[g.pw + x] = static_cast<float>(src[x]);
      continue;
    }
    // The row as floats first (one vectorised loop), then dealt out to the column phases.
    float* floats = acc;  // free until the taps run
    for (int64_t x = 0; x < g.W; ++x) floats[x] = static_cast<float>(src[x]);
    for (int64_t q = 0; q < g.sw; ++q) {
      // Image columns x with (x + pw) % sw == q, from the first one on, every sw-th.
      const int64_t x0 = ((q - g.pw) % g.sw + g.sw) % g.sw, c0 = (x0 + g.pw) / g.sw;
      float* dst = sub + q * Hq * L + c0;
      const int64_t count = x0 < g.W ? (g.W - x0 + g.sw - 1) / g.sw : 0;
      if (g.sw == 2)
        for (int64_t c = 0; c < count; ++c) dst[c] = floats[x0 + 2 * c];
      else
        for (int64_t c = 0; c < count; ++c) dst[c] = floats[x0 + g.sw * c];
    }
  }
  const int64_t span = (g.OH - 1) * L + g.OW;
  std::fill(acc, acc + span, 0.0f);
  for (int64_t ky = 0; ky < g.KH; ++ky)
    for (int64_t kx = 0; kx < g.KW; ++kx) {
      const float wv = static_cast<float>(filter[ky * g.KW + kx]);
      if (wv == 0.0f) continue;
      const int64_t dy = ky * g.dh, dx = kx * g.dw;
      const float* src = phases + (((dy % g.sh) * g.sw + dx % g.sw) * Hq + dy / g.sh) * L + dx / g.sw;
      for (int64_t j = 0; j < span; ++j) acc[j] += wv * src[j];
    }
  for (int64_t oy = 0; oy < g.OH; ++oy)
    for (int64_t ox = 0; ox < g.OW; ++ox) out[oy * g.OW + ox] = static_cast<int32_t>(acc[oy * L + ox]);
}
template <typename T>
__attribute__((target("avx2,fma"))) void PlaneFloatAvx2(const T* image, const int8_t* filter, int32_t* out,
                                                       const PlaneGeom& g, float* phases, float* acc) {
  PlaneFloatBody(image, filter, out, g, phases, acc);
}
template <typename T>
__attribute__((target("avx512f,avx512bw"))) void PlaneFloatAvx512(const T* image, const int8_t* filter, int32_t* out,
                                                                  const PlaneGeom& g, float* phases, float* acc) {
  PlaneFloatBody(image, filter, out, g, phases, acc);
}
template <typename T>
void PlaneFloat(const T* image, const int8_t* filter, int32_t* out, const PlaneGeom& g, float* phases, float* acc) {
  PlaneFloatBody(image, filter, out, g, phases, acc);
}

// Kernels past kMaxExactFloatTaps: unsigned int32 sums (a wrap is defined), tap by tap over the
// output columns whose input column lies inside the image.
template <typename T>
void PlaneInt32(const T* image, const int8_t* filter, int32_t* out, const PlaneGeom& g) {
  uint32_t* sums = reinterpret_cast<uint32_t*>(out);
  std::fill(sums, sums + g.OH * g.OW, 0u);
  for (int64_t oy = 0; oy < g.OH; ++oy)
    for (int64_t ky = 0; ky < g.KH; ++ky) {
      const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
      if (iy < 0 || iy >= g.H) continue;
      for (int64_t kx = 0; kx < g.KW; ++kx) {
        const uint32_t wv = static_cast<uint32_t>(static_cast<int32_t>(filter[ky * g.KW + kx]));
        const int64_t offset = kx * g.dw - g.pw;
        for (int64_t ox = 0; ox < g.OW; ++ox) {
          const int64_t ix = ox * g.sw + offset;
          if (ix >= 0 && ix < g.W)
            sums[oy * g.OW + ox] += wv * static_cast<uint32_t>(static_cast<int32_t>(image[iy * g.W + ix]));
        }
      }
    }
}

// Square 3x3, 5x5 or 7x7 filters at stride 1 or 2 (undilated): the float32 depthwise plane
// kernel (conv_depthwise.h) on the levels as floats. Its products and sums are integers below
// 2^24 (at most 49 taps of 255 x 128), so floats, FMA or not, hold them exactly in any order.
// Output plane `plane` (image plane / channels, channel plane % channels), summed at `sums`, to
// levels (if any).
inline void RequantizePlane(const Int8Levels* levels, const int32_t* sums, int64_t plane, int64_t channels,
                            int64_t pixels) {
  if (levels)
    RequantizeBlock(LevelsAt(*levels, channels, pixels, plane / channels, plane % channels), sums, pixels, 0, 1, 0,
                    pixels);
}

SYMBIND_AVX512_INTRINSICS_BEGIN
// n levels to floats and n integer-valued floats to int32, 16 at a time where the CPU has
// AVX-512 (the plane kernel's input and output around DepthwiseThroughFloatKernel).
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void LevelsToFloatsAvx512(const T* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm512_storeu_ps(dst + i, _mm512_cvtepi32_ps(std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(v) : _mm512_cvtepi8_epi32(v)));
  }
  for (; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
__attribute__((target("avx512f"))) void FloatsToInt32Avx512(const float* src, int64_t n, int32_t* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_si512(dst + i, _mm512_cvtps_epi32(_mm512_loadu_ps(src + i)));
  for (; i < n; ++i) dst[i] = static_cast<int32_t>(src[i]);
}
// The bytes of a 64-byte window starting `base` columns into a row of `width` that lie inside it.
inline __mmask64 WindowInside(int64_t base, int64_t width) {
  const int64_t lo = std::max<int64_t>(0, -base), hi = std::min<int64_t>(64, width - base);
  return hi <= lo ? 0 : (hi - lo == 64 ? ~__mmask64{0} : ((__mmask64{1} << (hi - lo)) - 1)) << lo;
}
// A filter row's three taps (and a zero) as one int32, which vpdpbusd takes against the four
// input bytes GatheredWindow gives each position; and the 128 x their sum that int8 data,
// flipped to unsigned, adds to the row's products.
inline int32_t RowTaps(const int8_t* t) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint8_t>(t[0])) |
                              static_cast<uint32_t>(static_cast<uint8_t>(t[1])) << 8 |
                              static_cast<uint32_t>(static_cast<uint8_t>(t[2])) << 16);
}
inline int32_t RowFlipOffset(const int8_t* t) { return 128 * (t[0] + t[1] + t[2]); }
// The four input bytes each of 16 positions reads (`index`: Gather3x3's) from the window at `at`
// (bytes outside `inside` zero, neither read nor faulted on, so the window may start before its
// row), int8 data flipped to unsigned.
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vbmi"), always_inline)) inline __m512i GatheredWindow(
    const T* at, __mmask64 inside, __m512i index) {
  const __m512i bytes = _mm512_permutexvar_epi8(index, _mm512_maskz_loadu_epi8(inside, at));
  if constexpr (std::is_same_v<T, int8_t>) return _mm512_xor_si512(bytes, _mm512_set1_epi8(static_cast<char>(0x80)));
  return bytes;
}

// Which of the 3 + kSh input rows from iy0 that two output rows read lie inside the image (rows
// past the first output row's only when there is a second, `pair`): rows outside are not read
// and add nothing to the sums, flipped or not.
template <int64_t kSh>
struct RowPairInside {
  bool row[3 + kSh];
  RowPairInside(int64_t iy0, int64_t H, bool pair) {
    for (int64_t r = 0; r < 3 + kSh; ++r) row[r] = iy0 + r >= 0 && iy0 + r < H && (r < 3 || pair);
  }
  // Where output row `second` (0 or 1) of a filter starts its sums: minus the flip offsets of the
  // filter rows (RowFlipOffset, zeros for uint8 data) whose input rows lie inside.
  int32_t Start(const int32_t* flip_offset, int64_t second) const {
    int32_t start = 0;
    for (int64_t ky = 0; ky < 3; ++ky) start -= row[second * kSh + ky] ? flip_offset[ky] : 0;
    return start;
  }
};
// The 3 + kSh input rows a pair of output rows reads, 16 positions from column `base`, gathered
// (GatheredWindow; zeros for the rows outside).
template <typename T, int64_t kSh>
__attribute__((target("avx512f,avx512bw,avx512vbmi"), always_inline)) inline void GatherRowPair(
    const T* plane, int64_t width, int64_t iy0, int64_t base, __mmask64 inside, __m512i index,
    const RowPairInside<kSh>& in, __m512i (&rows)[3 + kSh]) {
  #pragma GCC unroll 5
  for (int64_t r = 0; r < 3 + kSh; ++r)
    rows[r] = in.row[r] ? GatheredWindow(plane + (iy0 + r) * width + base, inside, index) : _mm512_setzero_si512();
}
// acc0 and acc1 (output rows 0 and 1) plus a filter's three rows of taps (RowTaps) against the
// gathered rows each reads: rows 0-2 and kSh to kSh + 2.
template <int64_t kSh>
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline void DotRowPair(const __m512i (&rows)[3 + kSh],
                                                                                  const __m512i (&taps)[3],
                                                                                  __m512i& acc0, __m512i& acc1) {
  #pragma GCC unroll 3
  for (int64_t ky = 0; ky < 3; ++ky) {
    acc0 = _mm512_dpbusd_epi32(acc0, rows[ky], taps[ky]);
    acc1 = _mm512_dpbusd_epi32(acc1, rows[kSh + ky], taps[ky]);
  }
}

// 3x3 planes at strides 1 and 2 on VNNI with VBMI, 16 positions of an output row at a time: per
// filter row, one vpdpbusd of its three taps (and a zero) against the four input bytes each
// position reads, which one vpermb gathers from the input row as loaded (zeros outside the image
// by the load's mask). int8 data is flipped to unsigned (x + 128, a zero outside the image to
// 128) and the filter rows' 128 * sum taken off again. The sums are exact (wrapping as
// GemmInt8's), so the levels are the float kernel's.
template <typename T, int64_t kSh>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void Plane3x3Vnni(
    const T* image, const int8_t* filter, const PlaneGeom& geom, const uint8_t (&gather)[64], const Int8Levels* levels,
    int32_t* sums) {
  constexpr bool kSigned = std::is_same_v<T, int8_t>;
  constexpr int64_t kLanes = 16;
  // Copies the output's stores cannot alias, so they stay in registers.
  const PlaneGeom g = geom;
  const Int8Levels L = levels ? *levels : Int8Levels{};
  const __m512i index = _mm512_loadu_si512(gather);
  __m512i taps[3];
  int32_t flip_offset[3];
  for (int64_t ky = 0; ky < 3; ++ky) {
    taps[ky] = _mm512_set1_epi32(RowTaps(filter + ky * 3));
    flip_offset[ky] = kSigned ? RowFlipOffset(filter + ky * 3) : 0;
  }
  // Two output rows at a time: their input rows (3 + kSh) are loaded and gathered once, and the
  // two rows' sums are independent chains.
  for (int64_t oy = 0; oy < g.OH; oy += 2) {
    const bool pair = oy + 1 < g.OH;
    const int64_t iy0 = oy * kSh - g.ph;
    const RowPairInside<kSh> in(iy0, g.H, pair);
    const __m512i start0 = _mm512_set1_epi32(in.Start(flip_offset, 0)), start1 = _mm512_set1_epi32(in.Start(flip_offset, 1));
    for (int64_t ox = 0; ox < g.OW; ox += kLanes) {
      const int64_t base = ox * g.sw - g.pw;
      __m512i rows[3 + kSh];
      GatherRowPair<T, kSh>(image, g.W, iy0, base, WindowInside(base, g.W), index, in, rows);
      __m512i acc0 = start0, acc1 = start1;
      DotRowPair<kSh>(rows, taps, acc0, acc1);
      const __mmask16 lanes = FirstLanes(g.OW - ox);
      const int64_t at = oy * g.OW + ox;
      if (levels) {
        const LaneRun run0{at, lanes}, run1{at + g.OW, lanes};
        StoreLevels16(acc0, L, 0, &run0, 1);
        if (pair) StoreLevels16(acc1, L, 0, &run1, 1);
      } else {
        _mm512_mask_storeu_epi32(sums + at, lanes, acc0);
        if (pair) _mm512_mask_storeu_epi32(sums + at + g.OW, lanes, acc1);
      }
    }
  }
}

// Plane3x3Vnni over one channel quad (`count` <= 4 channels, x_plane apart, their levels from row 0
// of L on), its levels written as a quad plane (GemmInt8Quads' layout): position p's 4 bytes at
// out + 4 * p, one masked dword store per 16 positions. int8 levels go out flipped to unsigned
// (x ^ 0x80), as the VNNI tile reads them; channels past `count` hold the flipped zero.
template <typename T, int64_t kSh>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void Quad3x3Vnni(
    const T* image, int64_t x_plane, const int8_t* filter, int64_t count, const PlaneGeom& geom,
    const uint8_t (&gather)[64], const Int8Levels& levels, uint8_t* out) {
  constexpr bool kSigned = std::is_same_v<T, int8_t>;
  constexpr int64_t kLanes = 16;
  const PlaneGeom g = geom;
  const Int8Levels L = levels;
  const __m512i index = _mm512_loadu_si512(gather);
  const __m512i out_flip = _mm512_set1_epi8(static_cast<char>(L.out_unsigned ? 0 : 0x80));
  __m512i taps[4][3];
  int32_t flip_offset[4][3] = {};
  __m512i bias[4];
  __m512 scale[4];
  for (int64_t c = 0; c < count; ++c) {
    for (int64_t ky = 0; ky < 3; ++ky) {
      taps[c][ky] = _mm512_set1_epi32(RowTaps(filter + c * 9 + ky * 3));
      flip_offset[c][ky] = kSigned ? RowFlipOffset(filter + c * 9 + ky * 3) : 0;
    }
    bias[c] = _mm512_set1_epi32(L.bias[c]);
    scale[c] = _mm512_set1_ps(L.scale[c]);
  }
  for (int64_t oy = 0; oy < g.OH; oy += 2) {
    const bool pair = oy + 1 < g.OH;
    const int64_t iy0 = oy * kSh - g.ph;
    const RowPairInside<kSh> in(iy0, g.H, pair);
    __m512i start0[4], start1[4];
    for (int64_t c = 0; c < count; ++c) {
      start0[c] = _mm512_set1_epi32(in.Start(flip_offset[c], 0));
      start1[c] = _mm512_set1_epi32(in.Start(flip_offset[c], 1));
    }
    for (int64_t ox = 0; ox < g.OW; ox += kLanes) {
      const int64_t base = ox * g.sw - g.pw;
      const __mmask64 inside = WindowInside(base, g.W);
      __m128i level0[4], level1[4];
      #pragma GCC unroll 4
      for (int64_t c = 0; c < 4; ++c) {
        level0[c] = level1[c] = _mm_setzero_si128();
        if (c >= count) continue;
        __m512i rows[3 + kSh];
        GatherRowPair<T, kSh>(image + c * x_plane, g.W, iy0, base, inside, index, in, rows);
        __m512i acc0 = start0[c], acc1 = start1[c];
        DotRowPair<kSh>(rows, taps[c], acc0, acc1);
        level0[c] = LevelBytes16(ScaledSums16(acc0, bias[c], scale[c]), L.out_unsigned);
        level1[c] = LevelBytes16(ScaledSums16(acc1, bias[c], scale[c]), L.out_unsigned);
      }
      const __mmask16 lanes = FirstLanes(g.OW - ox);
      uint8_t* at = out + 4 * (oy * g.OW + ox);
      _mm512_mask_storeu_epi32(at, lanes, _mm512_xor_si512(InterleaveQuads16(level0), out_flip));
      if (pair)
        _mm512_mask_storeu_epi32(at + 4 * g.OW, lanes, _mm512_xor_si512(InterleaveQuads16(level1), out_flip));
    }
  }
}

// 3x3 windows over an image of kC <= 4 channels (an RGB first layer), output rows [oy_begin,
// oy_end) of its F filters, on VNNI with VBMI: Plane3x3Vnni's gathered rows, made once per 16
// positions of two output rows for every filter, then per filter one vpdpbusd per channel and
// filter row. `taps`: filter f's RowTaps of channel c and row ky at (f * kC + c) * 3 + ky;
// `flip_offset`: row ky's RowFlipOffset summed over the channels at f * 3 + ky (zeros for uint8
// data); `levels`: the image's (LevelsAt of channel 0), else int32 sums to `sums` (the image's F
// planes). The sums are exact, so the levels are every other path's.
template <typename T, int64_t kC, int64_t kSh>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))) void FewChannels3x3Vnni(
    const T* image, const int32_t* taps, const int32_t* flip_offset, int64_t F, const PlaneGeom& geom,
    const uint8_t (&gather)[64], const Int8Levels* levels, int32_t* sums, int64_t oy_begin, int64_t oy_end) {
  constexpr int64_t kLanes = 16, kRows = 3 + kSh;
  const PlaneGeom g = geom;
  const int64_t pixels = g.OH * g.OW;
  const __m512i index = _mm512_loadu_si512(gather);
  std::vector<Int8Levels> at(levels ? size_t(F) : 0);
  for (int64_t f = 0; f < F && levels; ++f) at[size_t(f)] = LevelsAt(*levels, F, pixels, 0, f);
  for (int64_t oy = oy_begin; oy < oy_end; oy += 2) {
    const bool pair = oy + 1 < oy_end;
    const int64_t iy0 = oy * kSh - g.ph;
    const RowPairInside<kSh> in(iy0, g.H, pair);
    for (int64_t ox = 0; ox < g.OW; ox += kLanes) {
      const int64_t base = ox * g.sw - g.pw;
      const __mmask64 inside = WindowInside(base, g.W);
      __m512i rows[kC][kRows];
      #pragma GCC unroll 4
      for (int64_t c = 0; c < kC; ++c) GatherRowPair<T, kSh>(image + c * g.H * g.W, g.W, iy0, base, inside, index, in, rows[c]);
      const __mmask16 lanes = FirstLanes(g.OW - ox);
      const int64_t pos = oy * g.OW + ox;
      const LaneRun run0{pos, lanes}, run1{pos + g.OW, lanes};
      for (int64_t f = 0; f < F; ++f) {
        __m512i acc0 = _mm512_set1_epi32(in.Start(flip_offset + f * 3, 0)),
                acc1 = _mm512_set1_epi32(in.Start(flip_offset + f * 3, 1));
        const int32_t* ft = taps + f * kC * 3;
        #pragma GCC unroll 4
        for (int64_t c = 0; c < kC; ++c) {
          const __m512i t[3] = {_mm512_set1_epi32(ft[c * 3]), _mm512_set1_epi32(ft[c * 3 + 1]),
                                _mm512_set1_epi32(ft[c * 3 + 2])};
          DotRowPair<kSh>(rows[c], t, acc0, acc1);
        }
        if (levels) {
          StoreLevels16(acc0, at[size_t(f)], 0, &run0, 1);
          if (pair) StoreLevels16(acc1, at[size_t(f)], 0, &run1, 1);
        } else {
          int32_t* plane = sums + f * pixels;
          _mm512_mask_storeu_epi32(plane + pos, lanes, acc0);
          if (pair) _mm512_mask_storeu_epi32(plane + pos + g.OW, lanes, acc1);
        }
      }
    }
  }
}

SYMBIND_AVX512_INTRINSICS_END

// Plane3x3Vnni's vpermb index: byte j of lane i is input column i * sw + j of a loaded window
// (j = 3 meets the zero tap).
void Gather3x3(int64_t sw, uint8_t (&gather)[64]) {
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 4; ++j) gather[4 * i + j] = static_cast<uint8_t>(std::min<int64_t>(i * sw + j, 63));
}

// Plane3x3Vnni over every plane where it applies (3x3, undilated, strides up to 2, a CPU with
// VNNI and VBMI).
template <typename T>
bool Depthwise3x3Vnni(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                      const conv::ConvGeom& cg, const Int8Levels* levels) {
  if (!ActiveVnniVbmi() || !cg.is_planar() || cg.k[1] != 3 || cg.k[2] != 3 || cg.d[1] != 1 || cg.d[2] != 1 ||
      cg.s[1] > 2 || cg.s[2] > 2)
    return false;
  const PlaneGeom g{cg.in[1], cg.in[2], cg.out[1], cg.out[2], 3, 3, cg.s[1], cg.s[2], cg.p[1], cg.p[2], 1, 1};
  const int64_t pixels = g.OH * g.OW;
  uint8_t gather[64];
  Gather3x3(g.sw, gather);
  ParallelFor(batch * channels, GrainFor(pixels * 9, int64_t{1} << 17), [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      Int8Levels at;
      if (levels) at = LevelsAt(*levels, channels, pixels, plane / channels, plane % channels);
      const T* image = x + plane * g.H * g.W;
      const int8_t* filter = w + (plane % channels) * 9;
      const Int8Levels* plane_levels = levels ? &at : nullptr;
      if (g.sh == 1) Plane3x3Vnni<T, 1>(image, filter, g, gather, plane_levels, y + plane * pixels);
      else Plane3x3Vnni<T, 2>(image, filter, g, gather, plane_levels, y + plane * pixels);
    }
  });
  return true;
}

// Their loops for AVX2 (DepthwiseThroughFloatKernel runs on AVX2 and AVX-512 only), which the
// compiler vectorises 8 at a time.
template <typename T>
__attribute__((target("avx2"))) void LevelsToFloatsAvx2(const T* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
__attribute__((target("avx2"))) void FloatsToInt32Avx2(const float* src, int64_t n, int32_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int32_t>(src[i]);
}
template <typename T>
void LevelsToFloats(const T* src, int64_t n, float* dst, bool avx512) {
  if (avx512) return LevelsToFloatsAvx512(src, n, dst);
  LevelsToFloatsAvx2(src, n, dst);
}
void FloatsToInt32(const float* src, int64_t n, int32_t* dst, bool avx512) {
  if (avx512) return FloatsToInt32Avx512(src, n, dst);
  FloatsToInt32Avx2(src, n, dst);
}

template <typename T>
bool DepthwiseThroughFloatKernel(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                                 const conv::ConvGeom& cg, const Int8Levels* levels) {
  const conv::ConvDims dims{batch, channels, channels, channels};
  if (!conv::DepthwiseApplies(dims, cg) || ActiveIsa() == KernelIsa::kBase) return false;
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  const int64_t k = cg.k[1];
  const conv::DepthwisePlaneFn plane_fn = conv::ChooseDepthwisePlane(k, cg.s[1]);
  const int64_t H = cg.in[1], W = cg.in[2], OH = cg.out[1], OW = cg.out[2];
  // Planes in chunks of about 128k multiply-adds (4 of MobileNet v2's 56x56 ones), each chunk
  // with one scratch block: the image, the output, a row of zeros and the filter as floats.
  const int64_t image_floats = (H * W + 15) / 16 * 16, out_floats = (OH * OW + 15) / 16 * 16;
  const int64_t zeros_floats = (W + 15) / 16 * 16;
  ParallelFor(batch * channels, GrainFor(OH * OW * k * k, int64_t{1} << 17), [&](int64_t p0, int64_t p1) {
    ScratchBuffer scratch(image_floats + out_floats + zeros_floats + k * k);
    float* image = scratch.data();
    float* out = image + image_floats;
    float* zeros = out + out_floats;
    float* filter = zeros + zeros_floats;
    std::fill(zeros, zeros + W, 0.0f);
    const conv::DepthwisePlaneArgs args{H, W, cg.p[1], cg.p[2], OH, OW, zeros, FusedActivation{}};
    for (int64_t plane = p0; plane < p1; ++plane) {
      LevelsToFloats(x + plane * H * W, H * W, image, avx512);
      const int8_t* f = w + (plane % channels) * k * k;
      for (int64_t i = 0; i < k * k; ++i) filter[i] = static_cast<float>(f[i]);
      plane_fn(image, args, filter, 0.0f, out, false);
      if (levels && !levels->sum) {
        RequantizeFloatSums(LevelsAt(*levels, channels, OH * OW, plane / channels, plane % channels), out, OH * OW);
        continue;
      }
      int32_t* dst = y + plane * OH * OW;
      FloatsToInt32(out, OH * OW, dst, avx512);
      RequantizePlane(levels, dst, plane, channels, OH * OW);
    }
  });
  return true;
}

template <typename T>
void DepthwiseOf(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels, const conv::ConvGeom& cg,
                 const Int8Levels* levels) {
  if (Depthwise3x3Vnni(x, w, y, batch, channels, cg, levels)) return;
  if (DepthwiseThroughFloatKernel(x, w, y, batch, channels, cg, levels)) return;
  const PlaneGeom g{cg.in[1], cg.in[2], cg.out[1], cg.out[2], cg.k[1], cg.k[2],
                    cg.s[1],  cg.s[2],  cg.p[1],   cg.p[2],   cg.d[1], cg.d[2]};
  const bool exact_in_float = g.KH * g.KW <= kMaxExactFloatTaps;
  const KernelIsa isa = ActiveIsa();
  ParallelFor(batch * channels, GrainFor(g.OH * g.OW * g.KH * g.KW), [&](int64_t p0, int64_t p1) {
    ScratchBuffer phases(exact_in_float ? g.PhaseFloats() : 1),
        acc(exact_in_float ? std::max(g.OH * g.L(), g.W) : 1);  // the output's sums, or one input row
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* image = x + plane * g.H * g.W;
      const int8_t* filter = w + (plane % channels) * g.KH * g.KW;
      int32_t* out = y + plane * g.OH * g.OW;
      if (!exact_in_float) PlaneInt32(image, filter, out, g);
      else if (isa == KernelIsa::kAvx512) PlaneFloatAvx512(image, filter, out, g, phases.data(), acc.data());
      else if (isa == KernelIsa::kAvx2) PlaneFloatAvx2(image, filter, out, g, phases.data(), acc.data());
      else PlaneFloat(image, filter, out, g, phases.data(), acc.data());
      RequantizePlane(levels, out, plane, channels, g.OH * g.OW);
    }
  });
}

}  // namespace

void DepthwiseConvInt8(const int8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g, const Int8Levels* levels) {
  DepthwiseOf(x, w, y, batch, channels, g, levels);
}
void DepthwiseConvInt8(const uint8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g, const Int8Levels* levels) {
  DepthwiseOf(x, w, y, batch, channels, g, levels);
}

bool FewChannels3x3Applies(int64_t in_c, int64_t groups, const conv::ConvGeom& g) {
  return ActiveVnniVbmi() && groups == 1 && in_c >= 1 && in_c <= 4 && g.is_planar() && g.k[1] == 3 && g.k[2] == 3 &&
         g.d[1] == 1 && g.d[2] == 1 && g.s[1] >= 1 && g.s[1] <= 2 && g.s[2] >= 1 && g.s[2] <= 2 && g.out_size() > 0;
}

namespace {
template <typename T, int64_t kC>
void FewChannels3x3Of(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t out_c, const conv::ConvGeom& cg,
                      const Int8Levels* levels) {
  const PlaneGeom g{cg.in[1], cg.in[2], cg.out[1], cg.out[2], 3, 3, cg.s[1], cg.s[2], cg.p[1], cg.p[2], 1, 1};
  const int64_t pixels = g.OH * g.OW;
  uint8_t gather[64];
  Gather3x3(g.sw, gather);
  // The filters' rows as FewChannels3x3Vnni takes them, once for every task.
  std::vector<int32_t> taps(static_cast<size_t>(out_c * kC * 3)), flip_offset(static_cast<size_t>(out_c * 3), 0);
  for (int64_t f = 0; f < out_c; ++f)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t ky = 0; ky < 3; ++ky) {
        const int8_t* t = w + ((f * kC + c) * 3 + ky) * 3;
        taps[size_t((f * kC + c) * 3 + ky)] = RowTaps(t);
        if (std::is_same_v<T, int8_t>) flip_offset[size_t(f * 3 + ky)] += RowFlipOffset(t);
      }
  // Tasks of output rows (in pairs), every filter: each input row is gathered once per task that
  // reads it. Blocks of filters, each gathering the whole image, took 0.070-0.078 ms on MobileNet
  // v2's first layer on two threads against 0.065-0.069 for rows (Zen 5).
  const int64_t parts = batch >= UsableThreads() ? 1 : std::min<int64_t>((g.OH + 1) / 2, 2 * UsableThreads());
  ParallelFor(batch * parts, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / parts, part = t % parts;
      const int64_t oy_begin = g.OH * part / parts / 2 * 2;
      const int64_t oy_end = part + 1 == parts ? g.OH : g.OH * (part + 1) / parts / 2 * 2;
      Int8Levels image_levels;
      if (levels) image_levels = LevelsAt(*levels, out_c, pixels, i, 0);
      const T* image = x + i * kC * g.H * g.W;
      int32_t* sums = y + i * out_c * pixels;
      const Int8Levels* L = levels ? &image_levels : nullptr;
      const int32_t *tp = taps.data(), *fo = flip_offset.data();
      if (g.sh == 1) FewChannels3x3Vnni<T, kC, 1>(image, tp, fo, out_c, g, gather, L, sums, oy_begin, oy_end);
      else FewChannels3x3Vnni<T, kC, 2>(image, tp, fo, out_c, g, gather, L, sums, oy_begin, oy_end);
    }
  });
}

template <typename T>
void FewChannels3x3Dispatch(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                            const conv::ConvGeom& g, const Int8Levels* levels) {
  switch (in_c) {
    case 1: return FewChannels3x3Of<T, 1>(x, w, y, batch, out_c, g, levels);
    case 2: return FewChannels3x3Of<T, 2>(x, w, y, batch, out_c, g, levels);
    case 3: return FewChannels3x3Of<T, 3>(x, w, y, batch, out_c, g, levels);
    default: return FewChannels3x3Of<T, 4>(x, w, y, batch, out_c, g, levels);
  }
}
}  // namespace

void FewChannels3x3Int8(const int8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                        const conv::ConvGeom& g, const Int8Levels* levels) {
  FewChannels3x3Dispatch(x, w, y, batch, in_c, out_c, g, levels);
}
void FewChannels3x3Int8(const uint8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                        const conv::ConvGeom& g, const Int8Levels* levels) {
  FewChannels3x3Dispatch(x, w, y, batch, in_c, out_c, g, levels);
}

namespace {
template <typename T>
bool DepthwiseBandQuadsOf(const T* x, int64_t x_plane, const int8_t* w, int64_t channels, const DepthwiseBand& b,
                          const Int8Levels& levels, int64_t quad_plane_bytes) {
  if (!ActiveVnniVbmi() || b.stride < 1 || b.stride > 2 || b.top < 0 || b.pad < 0 || b.rows <= 0) return false;
  const PlaneGeom g{b.held, b.width, b.rows, b.out_width, 3, 3, b.stride, b.stride, b.top, b.pad, 1, 1};
  uint8_t gather[64];
  Gather3x3(g.sw, gather);
  for (int64_t c = 0; c < channels; c += 4) {
    Int8Levels at = levels;
    at.bias += c;
    at.scale += c;
    uint8_t* out = static_cast<uint8_t*>(levels.out) + c / 4 * quad_plane_bytes;
    const int64_t count = std::min<int64_t>(4, channels - c);
    if (g.sh == 1) Quad3x3Vnni<T, 1>(x + c * x_plane, x_plane, w + c * 9, count, g, gather, at, out);
    else Quad3x3Vnni<T, 2>(x + c * x_plane, x_plane, w + c * 9, count, g, gather, at, out);
  }
  return true;
}

}  // namespace

bool DepthwiseBand3x3Int8Quads(const uint8_t* x, int64_t x_plane, const int8_t* w, int64_t channels,
                               const DepthwiseBand& band, const Int8Levels& levels, int64_t quad_plane_bytes) {
  return DepthwiseBandQuadsOf(x, x_plane, w, channels, band, levels, quad_plane_bytes);
}
bool DepthwiseBand3x3Int8Quads(const int8_t* x, int64_t x_plane, const int8_t* w, int64_t channels,
                               const DepthwiseBand& band, const Int8Levels& levels, int64_t quad_plane_bytes) {
  return DepthwiseBandQuadsOf(x, x_plane, w, channels, band, levels, quad_plane_bytes);
}

}  // namespace quant
}  // namespace symbind
