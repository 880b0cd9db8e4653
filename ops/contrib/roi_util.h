// Shared by ROIPooling, ROIAlign, RROIAlign and the position-sensitive poolings (PSROIPooling,
// DeformablePSROIPooling): the pooled grid and scale parameters, the checks of their two inputs,
// data (batch, channel, h, w) and rois (num_rois, 5 or 6), the batch index of a roi, and the
// aligns' bilinear sample taps and sampling grids.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind::roi {

template <typename P>
void DeclareSpatialScale(ParamDeclarer<P>& d) {
  d.field("spatial_scale", &P::spatial_scale).set_range(0.0, 1.0)
      .describe("Ratio of input feature map height (or w) to raw image height (or w). Equals "
                "the reciprocal of total stride in convolutional layers");
}

// pooled_size (two positive sizes) and spatial_scale, in MXNet's words; `pooled_size_doc` is
// the op's own description of the grid.
template <typename P>
void DeclarePooledGrid(ParamDeclarer<P>& d, const char* pooled_size_doc) {
  d.field("pooled_size", &P::pooled_size)
      .require([](const TShape& s) { return s.ndim() == 2 && s[0] > 0 && s[1] > 0; },
               "two positive sizes (h, w)")
      .describe(pooled_size_doc);
  DeclareSpatialScale(d);
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

// MXNet's descriptions of the two inputs.
inline constexpr const char* kDataDoc = "Input data to the pooling operator, a 4D Feature maps";
inline constexpr const char* kRoisDoc =
    "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) and (x2, y2) "
    "are top left and down right corners of designated region of interest. batch_index indicates "
    "the index of corresponding image in the input data";

// The image roi `index` reads: its batch index truncated to int, as MXNet does; -1 for the rois
// MXNet skips (negative index), an error for ops that skip none (`negative_skips` false, where
// MXNet would read out of bounds). An index past the data is an error, not a read out of bounds.
inline int64_t RoiBatch(const char* op, const float* roi, int64_t batch_size, int64_t index,
                        bool negative_skips = true) {
  const float b = roi[0];
  if (negative_skips && !(b > -1.0f)) return -1;
  if (!(b > -1.0f && b < static_cast<float>(batch_size)))
    throw Error(StrCat(op, ": roi ", index, " has batch index ", b, ", but the data holds ",
                       batch_size, " images"));
  return static_cast<int64_t>(b);
}

// --- Position-sensitive pooling (R-FCN): PSROIPooling and DeformablePSROIPooling ---

// Data (batch, output_dim * group^2 or more channels, h, w) and rois (num_rois, 5) give the
// output (num_rois, output_dim, pooled, pooled); false while a rank is unknown. Channels past
// output_dim * group^2 are never read, as in MXNet.
inline bool PsOutputShape(const char* op, const TShape& data, const TShape& rois, int64_t output_dim,
                          int64_t group, int64_t pooled, TShape* out) {
  if (!CheckRoiInputs(op, data, rois)) return false;
  const int64_t needed = CheckedMul(CheckedMul(output_dim, group, op, ": output_dim * group_size"), group,
                                    op, ": output_dim * group_size^2");
  if (data[1] >= 0 && data[1] < needed)
    throw ShapeError(StrCat(op, ": data has ", data[1], " channels, but output_dim * group_size^2 = ",
                            output_dim, " * ", group, "^2 = ", needed, " are read"));
  *out = TShape({rois[0], output_dim, pooled, pooled});
  return true;
}

// R-FCN's region of a roi, in feature map coordinates: corners rounded to integers before
// scaling, the far corner made inclusive (+1), then moved by `shift` (the deformable form's
// -0.5); sides below 0.1 become 0.1. In float, in MXNet's order of operations.
struct PsRegion {
  int64_t batch = -1;  // -1: a skipped roi (RoiBatch)
  float x = 0, y = 0, w = 0, h = 0;
};
inline PsRegion PsRegionOf(const char* op, const float* roi, int64_t batch_size, float scale, double shift,
                           int64_t index) {
  PsRegion r;
  r.batch = RoiBatch(op, roi, batch_size, index);
  if (r.batch < 0) return r;
  for (int k = 1; k < 5; ++k)
    if (!std::isfinite(roi[k]))
      throw Error(StrCat(op, ": roi ", index, " has a non-finite coordinate ", roi[k]));
  auto corner = [&](float v, double inclusive) {
    const float scaled = static_cast<float>(static_cast<double>(std::round(v)) + inclusive) * scale;
    return static_cast<float>(static_cast<double>(scaled) + shift);
  };
  r.x = corner(roi[1], 0.0);
  r.y = corner(roi[2], 0.0);
  r.w = std::max(corner(roi[3], 1.0) - r.x, 0.1f);
  r.h = std::max(corner(roi[4], 1.0) - r.y, 0.1f);
  return r;
}

// The regions of all rois, checked in index order so an error names the first bad roi.
inline std::vector<PsRegion> PsRegions(const char* op, const NDArray& rois, int64_t batch_size, float scale,
                                       double shift) {
  std::vector<PsRegion> regions;
  const float* r = rois.fdata();
  for (int64_t i = 0; i < rois.shape()[0]; ++i)
    regions.push_back(PsRegionOf(op, r + i * 5, batch_size, scale, shift, i));
  return regions;
}

// The position-sensitive group of bin `p` of `pooled`: floor(p * group / pooled), kept in
// [0, group) (group may exceed pooled).
inline int64_t PsGroupOf(int64_t p, int64_t group, int64_t pooled) {
  const float g = std::floor(static_cast<float>(p) * static_cast<float>(group) / static_cast<float>(pooled));
  return std::min(std::max<int64_t>(static_cast<int64_t>(g), 0), group - 1);
}

// The data channel bin (ph, pw) of output channel c reads: (c * group + gh) * group + gw, where
// (gh, gw) is the bin's group.
inline int64_t PsSourceChannel(int64_t c, int64_t ph, int64_t pw, int64_t group, int64_t pooled) {
  return (c * group + PsGroupOf(ph, group, pooled)) * group + PsGroupOf(pw, group, pooled);
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
