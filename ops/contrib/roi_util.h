// Shared by ROIPooling, ROIAlign and RROIAlign: the pooled grid and scale parameters, the checks
// of their two inputs, data (batch, channel, h, w) and rois (num_rois, 5 or 6), and the
// aligns' bilinear sample taps and sampling grids.
#pragma once
#include <algorithm>
#include <cmath>

#include <symbind/ops/op_util.h>

namespace symbind::roi {

// pooled_size (two positive sizes) and spatial_scale, in MXNet's words; `pooled_size_doc` is
// the op's own description of the grid.
template <typename P>
void DeclarePooledGrid(ParamDeclarer<P>& d, const char* pooled_size_doc) {
  d.field("pooled_size", &P::pooled_size)
      .require([](const TShape& s) { return s.ndim() == 2 && s[0] > 0 && s[1] > 0; },
               "two positive sizes (h, w)")
      .describe(pooled_size_doc);
  d.field("spatial_scale", &P::spatial_scale).set_range(0.0, 1.0)
      .describe("Ratio of input feature map height (or w) to raw image height (or w). Equals "
                "the reciprocal of total stride in convolutional layers");
}

// The ranks of data and rois (and the `roi_width` entries of a roi); false while either is
// unknown.
inline bool CheckRoiInputs(const char* op, const TShape& data, const TShape& rois, int64_t roi_width = 5) {
  if (data.ndim_known() && data.ndim() != 4)
    throw ShapeError(StrCat(op, ": data should be a 4D tensor (batch, channel, h, w), got ", data));
  if (rois.ndim_known() && (rois.ndim() != 2 || (rois[1] >= 0 && rois[1] != roi_width)))
    throw ShapeError(StrCat(op, ": rois should be a 2D tensor of shape (num_rois, ", roi_width, "), got ", rois));
  return data.ndim_known() && rois.ndim_known();
}

// Bilinear taps of one sample point, Detectron's rules: points beyond one pixel outside read
// nothing, points just outside clamp to the border.
struct Taps {
  int64_t pos[4] = {0, 0, 0, 0};
  float w[4] = {0, 0, 0, 0};
};
inline Taps SampleTaps(float y, float x, int64_t H, int64_t W) {
  Taps t;
  if (!(y >= -1.0f && y <= static_cast<float>(H) && x >= -1.0f && x <= static_cast<float>(W))) return t;
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = static_cast<float>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = static_cast<float>(x0);
  } else {
    x1 = x0 + 1;
  }
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  t.pos[0] = y0 * W + x0;
  t.pos[1] = y0 * W + x1;
  t.pos[2] = y1 * W + x0;
  t.pos[3] = y1 * W + x1;
  t.w[0] = hy * hx;
  t.w[1] = hy * lx;
  t.w[2] = ly * hx;
  t.w[3] = ly * lx;
  return t;
}

// Sum of the taps' weighted values in one plane, in MXNet's order.
inline float TapsValue(const Taps& t, const float* plane) {
  return t.w[0] * plane[t.pos[0]] + t.w[1] * plane[t.pos[1]] + t.w[2] * plane[t.pos[2]] +
         t.w[3] * plane[t.pos[3]];
}

// Samples per bin side of roi `index`, a region of rh x rw (scaled) split into PH x PW bins:
// `ratio` when positive, else ceil of the float quotient region / bins, as MXNet computes it.
// Absurd (or NaN) regions, and grids whose taps would not fit in memory, are errors.
struct SampleGrid {
  int64_t h = 0, w = 0;
};
inline SampleGrid SampleGridOf(const char* op, int64_t index, float rh, float rw, int64_t PH, int64_t PW,
                               int ratio) {
  const double side_h = ratio > 0 ? ratio : std::ceil(rh / static_cast<float>(PH));
  const double side_w = ratio > 0 ? ratio : std::ceil(rw / static_cast<float>(PW));
  constexpr int64_t kMaxSamples = int64_t{1} << 20;
  if (!(side_h * side_w * static_cast<double>(PH * PW) <= static_cast<double>(kMaxSamples)))
    throw Error(StrCat(op, ": roi ", index, " is ", rh, " x ", rw, " (height x width) after scaling; its ", PH,
                       " x ", PW, " bins would take ", side_h, " x ", side_w, " samples each, more than ",
                       kMaxSamples, " in all"));
  return {static_cast<int64_t>(side_h), static_cast<int64_t>(side_w)};
}

}  // namespace symbind::roi
