// _contrib_RROIAlign: ROI align over rotated regions (text detection), forward only as in MXNet
// 1.9.1, whose CPU kernel (Caffe2's roi_align_rotated) is the reference for every rounding.
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/roi_util.h>

namespace symbind {

namespace {
struct RROIAlignParam : Parameter<RROIAlignParam> {
  TShape pooled_size;
  float spatial_scale;
  int sampling_ratio;
  static void Declare(ParamDeclarer<RROIAlignParam>& d) {
    roi::DeclarePooledGrid(d, "RROI align output shape (h,w) ");
    d.field("sampling_ratio", &RROIAlignParam::sampling_ratio).set_default(-1)
        .describe("Optional sampling ratio of RROI align, using adaptive size by default.");
  }
};

constexpr int64_t kRoiWidth = 6;  // [batch_index, center x, center y, width, height, degrees]

void InferShapeRROIAlign(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<RROIAlignParam>();
  const TShape& d = (*in)[0];
  const TShape& r = (*in)[1];
  if (!roi::CheckRoiInputs("RROIAlign", d, r, kRoiWidth)) return;
  ShapeAssignCheck(out, 0, TShape({r[0], d[1], p.pooled_size[0], p.pooled_size[1]}));
}

// The taps of every sample of one roi, in (ph, pw, iy, ix) order: the bin grid is laid out
// around the region's center, rotated by theta and moved to the center.
std::vector<roi::Taps> RotatedTaps(const RROIAlignParam& p, const float* roi, int64_t H, int64_t W,
                                   const roi::SampleGrid& g, float rh, float rw) {
  const int64_t PH = p.pooled_size[0], PW = p.pooled_size[1];
  const float cx = roi[1] * p.spatial_scale, cy = roi[2] * p.spatial_scale;
  // Degrees to radians in double, then float: MXNet's rounding.
  constexpr double kPi = 3.14159265358979323846;
  const float theta = static_cast<float>(static_cast<double>(roi[5]) * kPi / 180.0);
  const float cos_t = std::cos(theta), sin_t = std::sin(theta);
  const float start_h = -rh / 2.0f, start_w = -rw / 2.0f;
  const float bin_h = rh / static_cast<float>(PH), bin_w = rw / static_cast<float>(PW);
  std::vector<roi::Taps> taps;
  taps.reserve(static_cast<size_t>(PH * PW * g.h * g.w));
  for (int64_t ph = 0; ph < PH; ++ph)
    for (int64_t pw = 0; pw < PW; ++pw)
      for (int64_t iy = 0; iy < g.h; ++iy) {
        const float yy = start_h + static_cast<float>(ph) * bin_h +
                         (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(g.h);
        for (int64_t ix = 0; ix < g.w; ++ix) {
          const float xx = start_w + static_cast<float>(pw) * bin_w +
                           (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(g.w);
          const float x = xx * cos_t + yy * sin_t + cx;
          const float y = yy * cos_t - xx * sin_t + cy;
          taps.push_back(roi::SampleTaps(y, x, H, W));
        }
      }
  return taps;
}

// A roi's scaled size, malformed ones forced to at least 1 x 1.
void ScaledSize(const RROIAlignParam& p, const float* roi, float* rh, float* rw) {
  *rw = std::max(roi[3] * p.spatial_scale, 1.0f);
  *rh = std::max(roi[4] * p.spatial_scale, 1.0f);  // NaN stays NaN and fails the grid check
}

void ForwardRROIAlign(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<RROIAlignParam>();
  const TShape& d = in[0].shape();
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], R = in[1].shape()[0];
  const int64_t PH = p.pooled_size[0], PW = p.pooled_size[1], bins = PH * PW;
  const float* x = in[0].fdata();
  const float* rois = in[1].fdata();
  float* y = out[0].fdata();
  // Every roi is checked in index order first, so an error names the first bad one. A negative
  // batch index is an error too: MXNet's kernel reads out of bounds with it.
  std::vector<int64_t> batches(static_cast<size_t>(R));
  std::vector<roi::SampleGrid> grids(static_cast<size_t>(R));
  std::vector<float> sizes(static_cast<size_t>(R * 2));
  for (int64_t r = 0; r < R; ++r) {
    const float* roi = rois + r * kRoiWidth;
    batches[static_cast<size_t>(r)] = roi::RoiBatch("RROIAlign", roi, N, r, false);
    float* hw = sizes.data() + r * 2;
    ScaledSize(p, roi, &hw[0], &hw[1]);
    grids[static_cast<size_t>(r)] = roi::SampleGridOf("RROIAlign", r, hw[0], hw[1], PH, PW, p.sampling_ratio);
  }
  ParallelFor(R, 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* roi = rois + r * kRoiWidth;
      const roi::SampleGrid& g = grids[static_cast<size_t>(r)];
      const std::vector<roi::Taps> taps = RotatedTaps(p, roi, H, W, g, sizes[r * 2], sizes[r * 2 + 1]);
      const int64_t per_bin = g.h * g.w;
      const float count = static_cast<float>(per_bin);
      const int64_t n = batches[static_cast<size_t>(r)];
      for (int64_t c = 0; c < C; ++c) {
        const float* plane = x + (n * C + c) * H * W;
        for (int64_t bin = 0; bin < bins; ++bin) {
          float v = 0.0f;
          for (int64_t k = 0; k < per_bin; ++k) v += roi::TapsValue(taps[static_cast<size_t>(bin * per_bin + k)], plane);
          v /= count;
          float& dst = y[(r * C + c) * bins + bin];
          dst = req[0] == OpReq::kAdd ? dst + v : v;
        }
      }
    }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_RROIAlign)
    .describe("Rotated region of interest align (text detection, Ma et al. 2018): each region "
              "[batch_index, x, y, w, h, theta] (center, size and angle in degrees; positions and "
              "sizes scaled by spatial_scale, sizes at least 1) is split into pooled_size bins "
              "around its center, and each bin averages bilinear samples on a regular grid "
              "(sampling_ratio per side, or ceil(bin size) when -1) rotated by theta about the "
              "center. Samples more than one pixel outside the data read 0. A batch index outside "
              "the data is an error. Not differentiable (MXNet 1.9.1 defines no gradient).")
    .set_params<RROIAlignParam>()
    .set_arguments({"data", "rois"})
    .add_argument_doc("data", roi::kDataDoc)
    .add_argument_doc("rois", "Bounding box coordinates, a 2D array")
    .set_infer_shape(InferShapeRROIAlign)
    .set_forward(ForwardRROIAlign);

}  // namespace symbind
