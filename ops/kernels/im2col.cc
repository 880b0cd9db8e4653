#include <algorithm>
#include <cstring>
#include <type_traits>

#include <symbind/ops/kernels/im2col.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

// Compiled per instruction set so that it runs on wide permutes: on SSE2 shuffles this gather
// is a large share of ResNet-50's conv0.
SYMBIND_ISA_VARIANTS(, void, GatherStride2, (const float* __restrict src, int64_t n, float* __restrict dst),
                     (src, n, dst), {
                       for (int64_t i = 0; i < n; ++i) dst[i] = src[2 * i];
                     })

namespace {
// dst[j] = src[j * S + q - pad] where that is inside the W columns of src (null: none), else 0;
// S is 1 or 2.
void SplitRow(const float* src, int64_t W, int64_t S, int64_t q, int64_t pad, int64_t length, float* dst) {
  int64_t lo = 0, hi = 0;  // j range reading inside the row
  if (src) {
    lo = std::min(length, std::max<int64_t>(0, (pad - q + S - 1) / S));
    hi = std::max(lo, std::min(length, (W - 1 + pad - q) / S + 1));
  }
  std::fill(dst, dst + lo, 0.0f);
  const float* from = src ? src + q - pad : nullptr;
  if (S == 1) std::copy(from + lo, from + hi, dst + lo);
  else if (hi > lo) GatherStride2(from + 2 * lo, hi - lo, dst + lo);
  std::fill(dst + hi, dst + length, 0.0f);
}
}  // namespace

PhasedInput SplitPhases(const float* x, int64_t channels, const ConvGeom& g, int64_t slack) {
  PhasedInput in;
  const int64_t H = g.in[1], W = g.in[2], S = g.s[2], ph = g.p[1], pw = g.p[2];
  in.rows = H + 2 * ph;
  in.stride = S;
  in.length = g.out[2] + (g.k[2] - 1) * g.d[2] / S + slack;
  in.data = ScratchBuffer(channels * in.rows * S * in.length);
  in.base = in.data.data();
  ParallelFor(channels * in.rows, std::max<int64_t>(1, kElementwiseGrain / (S * in.length)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / in.rows, y = r % in.rows - ph;
      const float* src = y >= 0 && y < H ? x + (c * H + y) * W : nullptr;
      for (int64_t q = 0; q < S; ++q) {
        float* dst = in.data.data() + (r * S + q) * in.length;
        SplitRow(src, W, S, q, pw, in.length, dst);
      }
    }
  });
  return in;
}

PhasedInput CopyLastRows(const float* image, int64_t channels, int64_t height, int64_t width, int64_t rows,
                         int64_t slack) {
  PhasedInput in;
  in.data = ScratchBuffer(channels * rows * width + slack);
  float* copy = in.data.data();
  for (int64_t c = 0; c < channels; ++c)
    std::memcpy(copy + c * rows * width, image + (c * height + height - rows) * width,
                static_cast<size_t>(rows * width) * sizeof(float));
  std::fill(copy + channels * rows * width, copy + channels * rows * width + slack, 0.0f);
  in.base = copy;
  in.rows = rows;
  in.length = width;
  in.first_row = height - rows;
  return in;
}

namespace {
// Im2Col for any element type: zeros on the padding (for quantized data, zero is the real 0).
template <typename T>
void Im2ColOf(const T* img, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1, int64_t ld, T* col) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t OH = g.out[1], OW = g.out[2], SW = g.s[2];
  // Rows shorter than this (7x7 outputs) are gathered by the inline loop: for so few values the
  // vector gather's call cost more than the copy.
  constexpr int64_t kShortRow = 16;
  for (int64_t c = c0; c < c1; ++c) {
    const T* plane = img + c * D * H * W;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t row = ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
          T* dst = col + (row - c0 * g.k_size()) * ld;
          const int64_t off = kw * g.d[2] - g.p[2];
          // Output columns [lo, hi) read inside the row (iw = ow * SW + off in [0, W)); the
          // rest are padding.
          const int64_t lo = std::min(OW, off >= 0 ? 0 : (-off + SW - 1) / SW);
          const int64_t hi = std::max(lo, std::min(OW, W - off <= 0 ? 0 : (W - off + SW - 1) / SW));
          // Output row r is (od, oh), advanced with r rather than divided out of it per row.
          int64_t od = r0 / OH, oh = r0 % OH;
          for (int64_t r = r0; r < r1; ++r, dst += OW) {
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (++oh == OH) {
              oh = 0;
              ++od;
            }
            if (id < 0 || id >= D || ih < 0 || ih >= H) {
              std::fill(dst, dst + OW, T(0));
              continue;
            }
            const T* src = plane + (id * H + ih) * W + off;
            std::fill(dst, dst + lo, T(0));
            if (SW == 1) {  // the part inside is one copy
              std::copy(src + lo, src + hi, dst + lo);
            } else if (std::is_same_v<T, float> && SW == 2 && hi - lo >= kShortRow) {
              // Stride 2 (ResNet's 7x7 and most stems) as its own loop, which vectorises.
              if constexpr (std::is_same_v<T, float>) GatherStride2(src + lo * 2, hi - lo, dst + lo);
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * SW];
            }
            std::fill(dst + hi, dst + OW, T(0));
          }
        }
  }
}

}  // namespace

void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1,
            int64_t ld, float* col) {
  Im2ColOf(img, g, c0, c1, r0, r1, ld, col);
}
void Im2Col(const int8_t* img, const ConvGeom& g, int64_t c0, int64_t c1, int8_t* col) {
  Im2ColOf(img, g, c0, c1, 0, g.out[0] * g.out[1], g.out_size(), col);
}
void Im2Col(const uint8_t* img, const ConvGeom& g, int64_t c0, int64_t c1, uint8_t* col) {
  Im2ColOf(img, g, c0, c1, 0, g.out[0] * g.out[1], g.out_size(), col);
}

void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, float* col) {
  Im2Col(img, g, c0, c1, 0, g.out[0] * g.out[1], g.out_size(), col);
}

void Col2ImAdd(const float* col, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1, int64_t ld,
               float* img) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t OH = g.out[1], OW = g.out[2], SW = g.s[2];
  for (int64_t c = c0; c < c1; ++c) {
    float* plane = img + c * D * H * W;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t row = ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
          const float* src = col + (row - c0 * g.k_size()) * ld;
          const int64_t off = kw * g.d[2] - g.p[2];
          // Output columns [lo, hi) land inside the row (as in Im2Col); the rest fell on padding.
          const int64_t lo = std::min(OW, off >= 0 ? 0 : (-off + SW - 1) / SW);
          const int64_t hi = std::max(lo, std::min(OW, W - off <= 0 ? 0 : (W - off + SW - 1) / SW));
          for (int64_t r = r0; r < r1; ++r, src += OW) {
            const int64_t od = r / OH, oh = r % OH;
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (id < 0 || id >= D || ih < 0 || ih >= H) continue;
            float* dst = plane + (id * H + ih) * W;
            if (SW == 1)  // as its own loop, which vectorises
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow + off] += src[ow];
            else
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow * SW + off] += src[ow];
          }
        }
  }
}

void Col2ImAdd(const float* col, const ConvGeom& g, int64_t c0, int64_t c1, float* img) {
  Col2ImAdd(col, g, c0, c1, 0, g.out[0] * g.out[1], g.out_size(), img);
}

}  // namespace conv
}  // namespace symbind
