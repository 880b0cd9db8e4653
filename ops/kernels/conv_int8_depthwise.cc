#include <algorithm>

#include <symbind/core/scratch.h>
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
  int64_t Hp() const { return H + 2 * ph; }
  // A phase row: every sw-th padded column, with room for a vector's overrun.
  int64_t L() const { return (W + 2 * pw + sw - 1) / sw + 8; }
};

// One plane through floats: the input padded with zeros and split by column phase (padded
// column mod the stride), so each tap adds its weight times a contiguous run of one phase row,
// a loop the compiler vectorises; the sums are exact integers (kMaxExactFloatTaps).
template <typename T>
__attribute__((always_inline)) inline void PlaneFloatBody(const T* image, const int8_t* filter, int32_t* out,
                                                          const PlaneGeom& g, float* phases, float* acc) {
  const int64_t Hp = g.Hp(), L = g.L();
  std::fill(phases, phases + g.sw * Hp * L, 0.0f);
  for (int64_t q = 0; q < g.sw; ++q) {
    // Image columns x with (x + pw) % sw == q, from the first one on, every sw-th.
    const int64_t x0 = ((q - g.pw) % g.sw + g.sw) % g.sw, c0 = (x0 + g.pw) / g.sw;
    for (int64_t y = 0; y < g.H; ++y) {
      const T* src = image + y * g.W;
      float* dst = phases + (q * Hp + y + g.ph) * L + c0;
      for (int64_t x = x0, c = 0; x < g.W; x += g.sw, ++c) dst[c] = static_cast<float>(src[x]);
    }
  }
  for (int64_t oy = 0; oy < g.OH; ++oy) {
    std::fill(acc, acc + g.OW, 0.0f);
    for (int64_t ky = 0; ky < g.KH; ++ky)
      for (int64_t kx = 0; kx < g.KW; ++kx) {
        const float wv = static_cast<float>(filter[ky * g.KW + kx]);
        if (wv == 0.0f) continue;
        const int64_t shift = kx * g.dw;
        const float* src = phases + ((shift % g.sw) * Hp + oy * g.sh + ky * g.dh) * L + shift / g.sw;
        for (int64_t ox = 0; ox < g.OW; ++ox) acc[ox] += wv * src[ox];
      }
    int32_t* row = out + oy * g.OW;
    for (int64_t ox = 0; ox < g.OW; ++ox) row[ox] = static_cast<int32_t>(acc[ox]);
  }
}
template <typename T>
__attribute__((target("avx2,fma"))) void PlaneFloatAvx2(const T* image, const int8_t* filter, int32_t* out,
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

template <typename T>
void DepthwiseOf(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels, const conv::ConvGeom& cg) {
  const PlaneGeom g{cg.in[1], cg.in[2], cg.out[1], cg.out[2], cg.k[1], cg.k[2],
                    cg.s[1],  cg.s[2],  cg.p[1],   cg.p[2],   cg.d[1], cg.d[2]};
  const bool exact_in_float = g.KH * g.KW <= kMaxExactFloatTaps;
  const bool avx2 = ActiveIsa() != KernelIsa::kBase;
  ParallelFor(batch * channels, GrainFor(g.OH * g.OW * g.KH * g.KW), [&](int64_t p0, int64_t p1) {
    ScratchBuffer phases(exact_in_float ? g.sw * g.Hp() * g.L() : 1), acc(exact_in_float ? g.OW : 1);
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* image = x + plane * g.H * g.W;
      const int8_t* filter = w + (plane % channels) * g.KH * g.KW;
      int32_t* out = y + plane * g.OH * g.OW;
      if (!exact_in_float) PlaneInt32(image, filter, out, g);
      else if (avx2) PlaneFloatAvx2(image, filter, out, g, phases.data(), acc.data());
      else PlaneFloat(image, filter, out, g, phases.data(), acc.data());
    }
  });
}

}  // namespace

void DepthwiseConvInt8(const int8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g) {
  DepthwiseOf(x, w, y, batch, channels, g);
}
void DepthwiseConvInt8(const uint8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g) {
  DepthwiseOf(x, w, y, batch, channels, g);
}

}  // namespace quant
}  // namespace symbind
