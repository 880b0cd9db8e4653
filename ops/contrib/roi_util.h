// Shared by ROIPooling, ROIAlign and the position-sensitive poolings (PSROIPooling,
// DeformablePSROIPooling): the pooled grid and scale parameters, the checks of their two
// inputs, data (batch, channel, h, w) and rois (num_rois, 5), and the batch index of a roi.
#pragma once
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

// The ranks of data and rois (and the 5 entries of a roi); false while either is unknown.
inline bool CheckRoiInputs(const char* op, const TShape& data, const TShape& rois) {
  if (data.ndim_known() && data.ndim() != 4)
    throw ShapeError(StrCat(op, ": data should be a 4D tensor (batch, channel, h, w), got ", data));
  if (rois.ndim_known() && (rois.ndim() != 2 || (rois[1] >= 0 && rois[1] != 5)))
    throw ShapeError(StrCat(op, ": rois should be a 2D tensor of shape (num_rois, 5), got ", rois));
  return data.ndim_known() && rois.ndim_known();
}

// MXNet's descriptions of the two inputs.
inline constexpr const char* kDataDoc = "Input data to the pooling operator, a 4D Feature maps";
inline constexpr const char* kRoisDoc =
    "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) and (x2, y2) "
    "are top left and down right corners of designated region of interest. batch_index indicates "
    "the index of corresponding image in the input data";

// The image roi `index` reads: its batch index truncated to int, as MXNet does; -1 for the rois
// MXNet skips (negative index). An index past the data is an error, not a read out of bounds.
inline int64_t RoiBatch(const char* op, const float* roi, int64_t batch_size, int64_t index) {
  const float b = roi[0];
  if (!(b > -1.0f)) return -1;
  if (!(b < static_cast<float>(batch_size)))
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

}  // namespace symbind::roi
