// Convolution geometry and im2col/col2im: the column buffer of a 1-, 2- or 3-D convolution.
#pragma once
#include <cstdint>

#include <symbind/core/scratch.h>

namespace symbind {
namespace conv {

// Spatial geometry of one convolution, right-aligned into three slots (d, h, w): a 2-D
// problem has in[0] = out[0] = k[0] = s[0] = d[0] = 1 and p[0] = 0.
// `in` is the image side (the convolution's input, the deconvolution's output), `out` the
// column side (the convolution's output, the deconvolution's input).
struct ConvGeom {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
          p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  // A 2-D h x w image, a square kernel, the same stride and padding in both dims, dilation 1.
  static ConvGeom Planar(int64_t h, int64_t w, int64_t kernel, int64_t stride, int64_t pad) {
    ConvGeom g;
    g.in[1] = h;
    g.in[2] = w;
    for (int i = 1; i < 3; ++i) {
      g.k[i] = kernel;
      g.s[i] = stride;
      g.p[i] = pad;
      g.out[i] = (g.in[i] + 2 * pad - kernel) / stride + 1;
    }
    return g;
  }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
  // A 2-D problem (or a 3-D one of depth 1 that stays depth 1: no depth padding).
  bool is_planar() const { return in[0] == 1 && k[0] == 1 && out[0] == 1; }
  // 1x1 kernel, unit stride, no padding: the column buffer is the image itself.
  bool is_pointwise() const {
    for (int i = 0; i < 3; ++i)
      if (k[i] != 1 || s[i] != 1 || p[i] != 0) return false;
    return true;
  }
};

// dst[i] = src[2 * i] for i < n: the stride-2 gather of stems (ResNet's 7x7 from 3 channels
// writes 7.4 MB of columns per image; the tiny-depth kernel splits its input by it).
void GatherStride2(const float* __restrict src, int64_t n, float* __restrict dst);
// The input of one image (2-D) zero-padded and split by column phase (padded column mod the
// stride S, 1 or 2): phase q of padded row y of channel c holds padded columns q, q + S, q + 2S,
// ... so tap kx of output columns ox.. reads phase (kx * dilation) % S from ox + (kx *
// dilation) / S on, contiguous; a direct kernel loads its register tiles there. Each row is
// out_w + ((k_w - 1) * dilation) / S + slack floats, zeros past the image, so tiles of up to
// `slack` columns load whole vectors at the right edge. Used by the tiny-depth and direct
// convolutions.
struct PhasedInput {
  ScratchBuffer data{0};  // every element written by SplitPhases (no zero-fill pass)
  const float* base = nullptr;  // data, or the image itself (InPlace)
  int64_t rows = 0, stride = 1, length = 0;
  int64_t first_row = 0;  // the padded row at `base` (rows of the image's end only, copied)
  const float* Row(int64_t c, int64_t y, int64_t phase) const {
    return base + ((c * rows + y - first_row) * stride + phase) * length;
  }
  // An unpadded image read where it is, as stride 1 reads it: rows of `width` floats, `rows` per
  // channel; loads past a row's end read the next row (or, past the image, must not happen).
  static PhasedInput InPlace(const float* image, int64_t rows, int64_t width) {
    PhasedInput in;
    in.base = image;
    in.rows = rows;
    in.length = width;
    return in;
  }
};
// In parallel over rows.
PhasedInput SplitPhases(const float* x, int64_t channels, const ConvGeom& g, int64_t slack);
// A copy of the last `rows` rows of each channel of an unpadded (channels, height, width) image
// with `slack` zeros after it, indexed as InPlace indexes the image (first_row = height - rows):
// for kernels reading in place whose last loads would pass the array's end.
PhasedInput CopyLastRows(const float* image, int64_t channels, int64_t height, int64_t width, int64_t rows,
                         int64_t slack);
// A 2-D image zero-padded and split by row and column stride phase (padded coordinate mod the
// stride, 1 or 2 each way): phase (a, b) holds padded (sh * i + a, sw * j + b) at position
// (a * sw + b) * rows * Wph + (i - first) * Wph + j, for the phase rows [first, first + rows)
// kept. Tap (ky, kx) of output (y, x) reads TapOffset(g, ky, kx) + (y - first) * Wph + x, so
// consecutive outputs of a row read consecutive positions of one phase. The layout of GemmInt8's
// rearranged image (channel quads) and of conv_phased.cc's planes (floats).
struct StridePhases {
  int64_t sh, sw, Wph, first, rows;
  // 2-D, strides 1 or 2, and the output size the input, padding, window and dilation give.
  static bool Fit(const ConvGeom& g) {
    if (!g.is_planar() || g.out_size() <= 0) return false;
    for (int i = 1; i < 3; ++i)
      if ((g.s[i] != 1 && g.s[i] != 2) || g.out[i] != (g.in[i] + 2 * g.p[i] - (g.k[i] - 1) * g.d[i] - 1) / g.s[i] + 1)
        return false;
    return true;
  }
  // The phase rows that output rows [oy0, oy1) read.
  StridePhases(const ConvGeom& g, int64_t oy0, int64_t oy1)
      : sh(g.s[1]), sw(g.s[2]), Wph((g.in[2] + 2 * g.p[2] + g.s[2] - 1) / g.s[2]), first(oy0),
        rows(oy1 - oy0 + (g.k[1] - 1) * g.d[1] / g.s[1]) {}
  int64_t PhasePositions() const { return rows * Wph; }
  int64_t TapOffset(const ConvGeom& g, int64_t ky, int64_t kx) const {
    const int64_t dy = ky * g.d[1], dx = kx * g.d[2];
    return (dy % sh * sw + dx % sw) * PhasePositions() + dy / sh * Wph + dx / sw;
  }
};

// Columns (channels * k_size, out_size) of channels [c0, c1) of one image (channels, in_size).
// Rows are ordered (c, kd, kh, kw) like the weight; out-of-image taps are zero. The overload
// with r0, r1 takes only output rows [r0, r1) of the flattened (od, oh) rows: columns
// (channels * k_size, (r1 - r0) * out_w), each column-buffer row `ld` floats apart.
void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, float* col);
void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1,
            int64_t ld, float* col);
// The same for quantized images (int8_t or uint8_t): zero is the real 0 of their scale.
void Im2Col(const int8_t* img, const ConvGeom& g, int64_t c0, int64_t c1, int8_t* col);
void Im2Col(const uint8_t* img, const ConvGeom& g, int64_t c0, int64_t c1, uint8_t* col);
// img += the column buffer folded back, for channels [c0, c1); the overload with r0, r1 folds
// the columns of output rows [r0, r1) only, laid out as Im2Col's overload writes them.
void Col2ImAdd(const float* col, const ConvGeom& g, int64_t c0, int64_t c1, float* img);
void Col2ImAdd(const float* col, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1, int64_t ld,
               float* img);

}  // namespace conv
}  // namespace symbind
