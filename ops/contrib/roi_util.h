// Shared by ROIPooling and ROIAlign: the pooled grid and scale parameters and the checks of
// their two inputs, data (batch, channel, h, w) and rois (num_rois, 5).
#pragma once
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

// The ranks of data and rois (and the 5 entries of a roi); false while either is unknown.
inline bool CheckRoiInputs(const char* op, const TShape& data, const TShape& rois) {
  if (data.ndim_known() && data.ndim() != 4)
    throw ShapeError(StrCat(op, ": data should be a 4D tensor (batch, channel, h, w), got ", data));
  if (rois.ndim_known() && (rois.ndim() != 2 || (rois[1] >= 0 && rois[1] != 5)))
    throw ShapeError(StrCat(op, ": rois should be a 2D tensor of shape (num_rois, 5), got ", rois));
  return data.ndim_known() && rois.ndim_known();
}

}  // namespace symbind::roi
