#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_depthwise.h>
#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/ops/kernels/gemm_kernels.h>
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
SYMBIND_AVX512_INTRINSICS_END
template <typename T>
void LevelsToFloats(const T* src, int64_t n, float* dst, bool avx512) {
  if (avx512) return LevelsToFloatsAvx512(src, n, dst);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}
void FloatsToInt32(const float* src, int64_t n, int32_t* dst, bool avx512) {
  if (avx512) return FloatsToInt32Avx512(src, n, dst);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int32_t>(src[i]);
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

}  // namespace quant
}  // namespace symbind
