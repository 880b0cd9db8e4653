// _contrib_ROIAlign: average of bilinear samples in each bin of each region (Mask R-CNN), with
// MXNet's options: adaptive or fixed sampling grid, position-sensitive channels, and
// Detectron2's half-pixel `aligned` coordinates.
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/roi_util.h>

namespace symbind {

namespace {
struct ROIAlignParam : Parameter<ROIAlignParam> {
  TShape pooled_size;
  float spatial_scale;
  int sample_ratio;
  bool position_sensitive;
  bool aligned;
  static void Declare(ParamDeclarer<ROIAlignParam>& d) {
    roi::DeclarePooledGrid(d, "ROI Align output roi feature map height and width: (h, w)");
    d.field("sample_ratio", &ROIAlignParam::sample_ratio).set_default(-1)
        .describe("Optional sampling ratio of ROI align, using adaptive size by default.");
    d.field("position_sensitive", &ROIAlignParam::position_sensitive).set_default(false)
        .describe("Whether to perform position-sensitive RoI pooling. PSRoIPooling is first "
                  "proposaled by R-FCN and it can reduce the input channels by ph*pw times, "
                  "where (ph, pw) is the pooled_size");
    d.field("aligned", &ROIAlignParam::aligned).set_default(false)
        .describe("Center-aligned ROIAlign introduced in Detectron2. To enable, set aligned to "
                  "True.");
  }
};

void InferShapeROIAlign(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ROIAlignParam>();
  const TShape& d = (*in)[0];
  const TShape& r = (*in)[1];
  if (!roi::CheckRoiInputs("ROIAlign", d, r)) return;
  int64_t channels = d[1];
  const int64_t bins = p.pooled_size[0] * p.pooled_size[1];
  if (p.position_sensitive && channels >= 0) {
    if (channels % bins != 0)
      throw ShapeError(StrCat("ROIAlign: with position_sensitive, the data's ", channels,
                              " channels must be divisible by pooled_size[0]*pooled_size[1] = ", bins));
    channels /= bins;
  }
  ShapeAssignCheck(out, 0, TShape({r[0], channels, p.pooled_size[0], p.pooled_size[1]}));
}

// The sample taps of every bin of one roi, in (ph, pw, iy, ix) order, and the sample count per
// bin. Empty (batch < 0) for rois MXNet ignores.
struct RoiSamples {
  int64_t batch = -1;
  int64_t per_bin = 0;
  std::vector<roi::Taps> taps;
};
// With `with_taps` false only the checks run (and per_bin is set).
RoiSamples RoiSamplesOf(const ROIAlignParam& p, const float* roi, int64_t batch_size, int64_t H,
                        int64_t W, int64_t index, bool with_taps = true) {
  RoiSamples s;
  s.batch = roi::RoiBatch("ROIAlign", roi, batch_size, index);
  if (s.batch < 0) return s;
  const float offset = p.aligned ? 0.5f : 0.0f;
  const float sx = roi[1] * p.spatial_scale - offset, sy = roi[2] * p.spatial_scale - offset;
  const float ex = roi[3] * p.spatial_scale - offset, ey = roi[4] * p.spatial_scale - offset;
  float rw = ex - sx, rh = ey - sy;
  if (p.aligned) {
    if (!(rw > 0.0f) || !(rh > 0.0f))
      throw Error(StrCat("ROIAlign: with aligned=True, roi ", index, " must have positive width "
                         "and height after scaling, got ", rw, " x ", rh));
  } else {
    rw = std::max(rw, 1.0f);  // malformed rois become 1x1
    rh = std::max(rh, 1.0f);
  }
  const int64_t PH = p.pooled_size[0], PW = p.pooled_size[1];
  const roi::SampleGrid grid = roi::SampleGridOf("ROIAlign", index, rh, rw, PH, PW, p.sample_ratio);
  const float bin_h = rh / static_cast<float>(PH), bin_w = rw / static_cast<float>(PW);
  const int64_t gh = grid.h, gw = grid.w;
  s.per_bin = gh * gw;
  if (!with_taps) return s;
  s.taps.reserve(static_cast<size_t>(PH * PW * gh * gw));
  for (int64_t ph = 0; ph < PH; ++ph)
    for (int64_t pw = 0; pw < PW; ++pw)
      for (int64_t iy = 0; iy < gh; ++iy) {
        const float y = sy + ph * bin_h + (iy + 0.5f) * bin_h / static_cast<float>(gh);
        for (int64_t ix = 0; ix < gw; ++ix) {
          const float x = sx + pw * bin_w + (ix + 0.5f) * bin_w / static_cast<float>(gw);
          s.taps.push_back(roi::SampleTaps(y, x, H, W));
        }
      }
  return s;
}

// The data channel that output channel c reads in bin (ph, pw).
int64_t SourceChannel(const ROIAlignParam& p, int64_t c, int64_t bin) {
  return p.position_sensitive ? c * p.pooled_size[0] * p.pooled_size[1] + bin : c;
}

void ForwardROIAlign(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<ROIAlignParam>();
  const TShape& d = in[0].shape();
  const TShape& o = out[0].shape();
  const int64_t N = d[0], DC = d[1], H = d[2], W = d[3], R = o[0], C = o[1];
  const int64_t bins = o[2] * o[3];
  const float* x = in[0].fdata();
  const float* rois = in[1].fdata();
  float* y = out[0].fdata();
  // Checked in index order first, so the error names the first bad roi whatever the schedule.
  for (int64_t r = 0; r < R; ++r) RoiSamplesOf(p, rois + r * 5, N, H, W, r, false);
  ParallelFor(R, 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const RoiSamples s = RoiSamplesOf(p, rois + r * 5, N, H, W, r);
      for (int64_t c = 0; c < C; ++c)
        for (int64_t bin = 0; bin < bins; ++bin) {
          float v = 0.0f;
          if (s.batch >= 0) {
            const float* plane = x + (s.batch * DC + SourceChannel(p, c, bin)) * H * W;
            for (int64_t k = 0; k < s.per_bin; ++k) {
              v += roi::TapsValue(s.taps[static_cast<size_t>(bin * s.per_bin + k)], plane);
            }
            v /= static_cast<float>(s.per_bin);
          }
          float& dst = y[(r * C + c) * bins + bin];
          dst = req[0] == OpReq::kAdd ? dst + v : v;
        }
    }
  });
}

void BackwardROIAlign(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<ROIAlignParam>();
  if (a.req[1] == OpReq::kWrite || a.req[1] == OpReq::kWriteInplace) a.in_grads[1].Fill(0.0f);
  if (a.req[0] == OpReq::kNull) return;
  if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
  const TShape& d = a.inputs[0].shape();
  const TShape& o = a.out_grads[0].shape();
  const int64_t N = d[0], DC = d[1], H = d[2], W = d[3], R = o[0], C = o[1];
  const int64_t bins = o[2] * o[3];
  const float* rois = a.inputs[1].fdata();
  const float* dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  std::vector<RoiSamples> samples;
  for (int64_t r = 0; r < R; ++r) samples.push_back(RoiSamplesOf(p, rois + r * 5, N, H, W, r));
  // Output channel c scatters into data channels only it reads: parallel over c.
  ParallelFor(C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t r = 0; r < R; ++r) {
        const RoiSamples& s = samples[static_cast<size_t>(r)];
        if (s.batch < 0) continue;
        for (int64_t bin = 0; bin < bins; ++bin) {
          float* plane = dx + (s.batch * DC + SourceChannel(p, c, bin)) * H * W;
          const float g = dy[(r * C + c) * bins + bin] / static_cast<float>(s.per_bin);
          for (int64_t k = 0; k < s.per_bin; ++k) {
            const roi::Taps& t = s.taps[static_cast<size_t>(bin * s.per_bin + k)];
            for (int j = 0; j < 4; ++j) plane[t.pos[j]] += g * t.w[j];
          }
        }
      }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_ROIAlign)
    .describe("Region of interest align (Mask R-CNN): each region [batch_index, x1, y1, x2, y2] "
              "(scaled by spatial_scale) is split into pooled_size bins, and each bin averages "
              "bilinear samples on a regular grid (sample_ratio per side, or ceil(bin size) when "
              "-1). Regions with a negative batch index give zeros (all of the region's output; "
              "MXNet 1.9.1's CPU kernel zeroes only its first element); a batch index past the "
              "data is an error. Differentiable with respect to data; the rois get a zero "
              "gradient.")
    .set_params<ROIAlignParam>()
    .set_arguments({"data", "rois"})
    .set_infer_shape(InferShapeROIAlign)
    .set_forward(ForwardROIAlign)
    .set_backward(BackwardROIAlign);

}  // namespace symbind
