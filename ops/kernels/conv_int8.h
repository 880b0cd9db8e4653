// Int8 convolution as exact int32 sums (NCHW data of int8 or uint8, int8 weights): GemmInt8 per
// group over the columns of each image (zeros on the padding), read from the image as they are
// packed on VNNI or built by im2col elsewhere; optionally requantized to output levels block by
// block. Shared by _contrib_quantized_conv and the quantized _sg_mkldnn_conv.
//
//   const auto packed = PackConvInt8Weights(w, in_c, out_c, groups, g);      // once per node
//   ConvInt8(x, w, sums, batch, in_c, out_c, groups, g, &packed, &levels);  // levels: Int8Levels
#pragma once
#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_int8.h>
#include <symbind/ops/kernels/im2col.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace quant {

// A convolution's output levels (bias and scale per output channel; out and sum NCHW, rows of
// `pixels`) from channel c of image n on, for RequantizeBlock on that channel's rows.
inline Int8Levels LevelsAt(const Int8Levels& levels, int64_t channels, int64_t pixels, int64_t n, int64_t c) {
  Int8Levels at = levels;
  at.bias += c;
  at.scale += c;
  at.out = static_cast<uint8_t*>(at.out) + (n * channels + c) * pixels;
  if (at.sum) at.sum = static_cast<const uint8_t*>(at.sum) + (n * channels + c) * pixels;
  return at;
}

// Depthwise 2-D convolution (one filter per channel: groups = in_c = out_c), plane by plane:
// each tap adds its weight times the zero-padded plane at the tap's offset, so no columns are
// built and no GEMM runs one filter at a time. Sums wrap as two's complement like GemmInt8's.
// With `levels` (as ConvInt8's), each plane is requantized as soon as it is summed.
void DepthwiseConvInt8(const int8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g, const Int8Levels* levels = nullptr);
void DepthwiseConvInt8(const uint8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t channels,
                       const conv::ConvGeom& g, const Int8Levels* levels = nullptr);

// A band of a 3x3 depthwise layer's output rows (stride 1 or 2, undilated) from the input rows
// it reads, held apart from the image: `held` rows of `width` per channel, the first of them
// `top` rows below the top of the band's padded window (the image's zero padding above the
// image's first row, else 0); rows past the held ones read as zeros (the padding below the
// image). `rows` output rows of `out_width`; `pad`: the columns' zero padding.
struct DepthwiseBand {
  int64_t held, width, top, pad, stride, rows, out_width;
};
// The band's output as levels written as channel quads (GemmInt8Quads' data, which it reads
// unpacked): channel c of x at x + c * x_plane, its levels by row c of `levels` (bias[c],
// scale[c]; no sum input), output position p's level at levels.out + (c / 4) * quad_plane_bytes
// + 4 * p + c % 4 (ld_out unused); int8 levels flipped to unsigned (x ^ 0x80), a last quad's
// missing channels the flipped zero. On the calling thread (a part of the caller's task); the
// levels DepthwiseConvInt8 gives those rows. false, computing nothing, where its kernel does not
// run (a CPU without AVX512-VNNI and VBMI).
bool DepthwiseBand3x3Int8Quads(const uint8_t* x, int64_t x_plane, const int8_t* w, int64_t channels,
                               const DepthwiseBand& band, const Int8Levels& levels, int64_t quad_plane_bytes);
bool DepthwiseBand3x3Int8Quads(const int8_t* x, int64_t x_plane, const int8_t* w, int64_t channels,
                               const DepthwiseBand& band, const Int8Levels& levels, int64_t quad_plane_bytes);

// 3x3 windows (strides 1 and 2, undilated) over images of at most 4 channels in one group (RGB
// first layers), on CPUs with AVX512-VNNI and VBMI (conv_int8_depthwise.cc): each channel's input
// rows gathered once per 16 output positions for all filters, as the depthwise kernel gathers
// them. The sums (and levels, as ConvInt8's `levels`) every other path gives.
bool FewChannels3x3Applies(int64_t in_c, int64_t groups, const conv::ConvGeom& g);
void FewChannels3x3Int8(const int8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                        const conv::ConvGeom& g, const Int8Levels* levels = nullptr);
void FewChannels3x3Int8(const uint8_t* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                        const conv::ConvGeom& g, const Int8Levels* levels = nullptr);

// One filter per channel over 2-D planes: DepthwiseConvInt8's layers.
inline bool IsDepthwisePlanar(int64_t in_c, int64_t out_c, int64_t groups, const conv::ConvGeom& g) {
  return groups > 1 && groups == in_c && groups == out_c && g.is_planar();
}
// RGB-like first layers, which ConvInt8ThroughFloat runs unless the GEMM reads their columns
// from the image (TinyDepthApplies: at most 4 input channels, 3x3 to 7x7 windows).
inline bool IsRgbLike(int64_t in_c, int64_t out_c, int64_t groups, const conv::ConvGeom& g) {
  return groups == 1 && conv::TinyDepthApplies(conv::ConvDims{1, in_c, out_c, groups}, g);
}
// Whether ConvInt8 runs GEMMs over these filters (not the depthwise or RGB paths, not dot
// products for a single output pixel), so that packing them once pays.
inline bool ConvInt8UsesGemm(int64_t in_c, int64_t out_c, int64_t groups, const conv::ConvGeom& g) {
  return !IsDepthwisePlanar(in_c, out_c, groups, g) && g.out_size() > 1 && !FewChannels3x3Applies(in_c, groups, g) &&
         (!IsRgbLike(in_c, out_c, groups, g) || GemmInt8CanReadImages(g));
}

// Whether a layer that quantizes its float weights itself (the quantized _sg_mkldnn_conv) may take
// them at even levels, 2 * round(w * s / 2) with s = 126 / max|w_c| instead of 127.5 / max|w_c|,
// when asked to (PredictorOptions::int8_even_weights): where ConvInt8 runs them through the
// packed GEMM and that is faster so (GemmInt8PrefersEvenWeights: AVX2 without VNNI, where oneDNN
// halves weights). The sums stay exact for the weights used.
inline bool ConvInt8EvenWeights(int64_t in_c, int64_t out_c, int64_t groups, const conv::ConvGeom& g) {
  return GemmInt8PrefersEvenWeights() && ConvInt8UsesGemm(in_c, out_c, groups, g);
}

// Each group's filters packed for GemmInt8 (PackedInt8A), made once per node: tap-major where the
// kernel reads the image rearranged once (GemmInt8CanReadPaddedImages).
inline std::vector<PackedInt8A> PackConvInt8Weights(const int8_t* w, int64_t in_c, int64_t out_c, int64_t groups,
                                                    const conv::ConvGeom& g) {
  const int64_t gf = out_c / groups, gc = in_c / groups, depth = gc * g.k_size();
  const bool tap_major = GemmInt8CanReadPaddedImages(g);
  std::vector<PackedInt8A> packed;
  for (int64_t grp = 0; grp < groups; ++grp)
    packed.push_back(tap_major ? PackedInt8A::PackTapMajor(gf, gc, g.k_size(), w + grp * gf * depth)
                               : PackedInt8A::Pack(gf, depth, w + grp * gf * depth, depth));
  return packed;
}

// RGB-like first layers (IsRgbLike) through the float kernel made for them: levels and their
// products are integers, and a sum of at most 4 x 7 x 7 products of 255 x 128 stays below 2^24,
// so float adds them exactly in any order. The sums go to y as int32, or with `levels` (and no
// sum input) straight from the float sums to output levels, plane by plane, y unused.
template <typename T>
inline void ConvInt8ThroughFloat(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                                 const conv::ConvGeom& g, const Int8Levels* levels = nullptr) {
  const conv::ConvDims dims{batch, in_c, out_c, 1};
  const int64_t xs = batch * in_c * g.in_size(), ws = out_c * in_c * g.k_size(), ys = batch * out_c * g.out_size();
  ScratchBuffer xf(xs), wf(ws), yf(ys);
  float *xp = xf.data(), *wp = wf.data(), *yp = yf.data();
  ParallelFor(xs, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) xp[i] = static_cast<float>(x[i]);
  });
  for (int64_t i = 0; i < ws; ++i) wp[i] = static_cast<float>(w[i]);
  conv::TinyDepthConvForward(xp, wp, nullptr, yp, dims, g, FusedActivation{});
  if (levels) {
    const int64_t pixels = g.out_size();
    ParallelFor(batch * out_c, GrainFor(pixels), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        RequantizeFloatSums(LevelsAt(*levels, out_c, pixels, p / out_c, p % out_c), yp + p * pixels, pixels);
    });
    return;
  }
  ParallelFor(ys, kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<int32_t>(yp[i]);
  });
}

// Per image and group: the int32 sums of the group's filters times the image's columns (zeros on
// the padding), through `packed` (PackConvInt8Weights) where given and usable, which on VNNI
// reads the columns from the image (GemmInt8ReadsImages) instead of im2col's buffer; depthwise
// planar layers go to DepthwiseConvInt8, 3x3 RGB first layers on VNNI with VBMI to
// FewChannels3x3Int8, other RGB first layers to ConvInt8ThroughFloat.
// With `levels` (bias and scale per output channel; out and sum NCHW, rows of `pixels`), each
// block of sums becomes output levels as soon as it is final, and y is only scratch.
template <typename T>
inline void ConvInt8(const T* x, const int8_t* w, int32_t* y, int64_t batch, int64_t in_c, int64_t out_c,
                     int64_t groups, const conv::ConvGeom& g, const std::vector<PackedInt8A>* packed = nullptr,
                     const Int8Levels* levels = nullptr) {
  const int64_t gc = in_c / groups, gf = out_c / groups, depth = gc * g.k_size(), pixels = g.out_size();
  // Channels [c0, c1) of image n to levels, across threads: sums a kernel finished as a whole.
  auto requantize_channels = [&](int64_t n, int64_t c0, int64_t c1) {
    if (!levels) return;
    ParallelFor(c1 - c0, GrainFor(pixels), [&](int64_t a, int64_t b) {
      RequantizeBlock(LevelsAt(*levels, out_c, pixels, n, c0 + a), y + (n * out_c + c0 + a) * pixels, pixels, 0, b - a,
                      0, pixels);
    });
  };
  if (IsDepthwisePlanar(in_c, out_c, groups, g)) return DepthwiseConvInt8(x, w, y, batch, in_c, g, levels);
  if (FewChannels3x3Applies(in_c, groups, g)) return FewChannels3x3Int8(x, w, y, batch, in_c, out_c, g, levels);
  const bool pointwise = g.is_pointwise();
  // The VNNI kernel reads the columns from the image (packing them as it goes, or at stride 1 from
  // the image rearranged once): no column buffer.
  const bool from_image = !pointwise && pixels > 1 && packed && !packed->empty() && (*packed)[0].usable() &&
                          GemmInt8ReadsImages((*packed)[0], g);
  if (IsRgbLike(in_c, out_c, groups, g) && !from_image) {
    if (levels && !levels->sum) return ConvInt8ThroughFloat(x, w, y, batch, in_c, out_c, g, levels);
    ConvInt8ThroughFloat(x, w, y, batch, in_c, out_c, g);
    for (int64_t n = 0; n < batch; ++n) requantize_channels(n, 0, out_c);
    return;
  }
  ScratchBuffer buffer(pointwise || from_image ? 1 : (depth * pixels * static_cast<int64_t>(sizeof(T)) + 3) / 4);
  T* columns = reinterpret_cast<T*>(buffer.data());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t grp = 0; grp < groups; ++grp) {
      const T* image = x + (n * in_c + grp * gc) * g.in_size();
      int32_t* sums = y + (n * out_c + grp * gf) * pixels;
      Int8Levels group_levels;
      if (levels) group_levels = LevelsAt(*levels, out_c, pixels, n, grp * gf);
      const Int8Levels* gemm_levels = levels ? &group_levels : nullptr;
      const PackedInt8A* group_packed = packed && static_cast<size_t>(grp) < packed->size() &&
                                                (*packed)[static_cast<size_t>(grp)].usable()
                                            ? &(*packed)[static_cast<size_t>(grp)]
                                            : nullptr;
      if (from_image) {
        GemmInt8(*group_packed, image, g, sums, pixels, gemm_levels);
        continue;
      }
      if (!pointwise)  // channels split across threads: each writes its own rows of columns
        ParallelFor(gc, GrainFor(g.k_size() * pixels), [&](int64_t c0, int64_t c1) {
          conv::Im2Col(image, g, c0, c1, columns + c0 * g.k_size() * pixels);
        });
      const T* cols = pointwise ? image : columns;
      if (pixels > 1 && group_packed) {
        GemmInt8(*group_packed, pixels, cols, pixels, sums, pixels, gemm_levels);
        continue;
      }
      // One output pixel (a classifier's 1x1 convolution): dot products, not a GEMM of one column.
      if (pixels == 1) GemmInt8NT(1, gf, depth, cols, w + grp * gf * depth, sums);
      else GemmInt8(gf, pixels, depth, w + grp * gf * depth, depth, cols, pixels, sums, pixels);
      requantize_channels(n, grp * gf, (grp + 1) * gf);
    }
}

}  // namespace quant
}  // namespace symbind
