// ROIPooling: max pooling of each region of interest into a fixed grid of bins (Fast R-CNN).
#include <cfloat>
#include <cmath>

#include <symbind/ops/contrib/roi_util.h>

namespace symbind {

namespace {
struct ROIPoolingParam : Parameter<ROIPoolingParam> {
  TShape pooled_size;
  float spatial_scale;
  static void Declare(ParamDeclarer<ROIPoolingParam>& d) {
    roi::DeclarePooledGrid(d, "ROI pooling output shape (h,w) ");
  }
};

void InferShapeROIPooling(const NodeAttrs& attrs, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  const auto& p = attrs.param<ROIPoolingParam>();
  const TShape& d = (*in)[0];
  const TShape& r = (*in)[1];
  if (!roi::CheckRoiInputs("ROIPooling", d, r)) return;
  const TShape o({r[0], d[1], p.pooled_size[0], p.pooled_size[1]});
  ShapeAssignCheck(out, 0, o);
  ShapeAssignCheck(out, 1, o);
}

// Float32 data and rois; the hidden argmax output is int32, as in MXNet.
void InferTypeROIPooling(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  constexpr int kF32 = static_cast<int>(DType::kFloat32);
  TypeAssignCheck(in, 0, kF32);
  TypeAssignCheck(in, 1, kF32);
  TypeAssignCheck(out, 0, kF32);
  TypeAssignCheck(out, 1, static_cast<int>(DType::kInt32));
}

void ForwardROIPooling(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<ROIPoolingParam>();
  const TShape& d = in[0].shape();
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], R = in[1].shape()[0];
  const int64_t PH = p.pooled_size[0], PW = p.pooled_size[1];
  const float* x = in[0].fdata();
  const float* rois = in[1].fdata();
  float* y = out[0].fdata();
  int32_t* argmax = out[1].data<int32_t>();
  ParallelFor(R * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t rc = b; rc < e; ++rc) {
      const int64_t r = rc / C, c = rc % C;
      const float* roi = rois + r * 5;
      // MXNet truncates the batch index to int: (-1, N) is valid.
      bool invalid = !(roi[0] > -1.0f) || !(roi[0] < static_cast<float>(N));
      for (int k = 1; k < 5; ++k) invalid = invalid || !std::isfinite(roi[k]);
      const int64_t batch = invalid ? 0 : static_cast<int64_t>(roi[0]);
      // Far coordinates only make empty bins: pin them so the integer math cannot overflow.
      auto scaled = [&](float v) {
        return invalid ? 0 : std::lround(std::min(std::max(v * p.spatial_scale, -1e9f), 1e9f));
      };
      const int64_t x1 = scaled(roi[1]), y1 = scaled(roi[2]), x2 = scaled(roi[3]), y2 = scaled(roi[4]);
      const float bin_h = static_cast<float>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<float>(PH);
      const float bin_w = static_cast<float>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<float>(PW);
      const int64_t base = invalid ? 0 : (batch * C + c) * H * W;
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw) {
          auto clamp = [](int64_t v, int64_t hi) { return std::min(std::max<int64_t>(v, 0), hi); };
          const int64_t hs = clamp(static_cast<int64_t>(std::floor(ph * bin_h)) + y1, H);
          const int64_t he = clamp(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, H);
          const int64_t ws = clamp(static_cast<int64_t>(std::floor(pw * bin_w)) + x1, W);
          const int64_t we = clamp(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, W);
          float best = 0.0f;
          int64_t best_at = -1;
          if (!invalid && he > hs && we > ws) {
            best = -FLT_MAX;
            for (int64_t h = hs; h < he; ++h)
              for (int64_t w = ws; w < we; ++w)
                if (x[base + h * W + w] > best) {
                  best = x[base + h * W + w];
                  best_at = base + h * W + w;
                }
          }
          const int64_t o = rc * PH * PW + ph * PW + pw;
          if (req[0] != OpReq::kNull) y[o] = req[0] == OpReq::kAdd ? y[o] + best : best;
          argmax[o] = static_cast<int32_t>(best_at);
        }
    }
  });
}

void BackwardROIPooling(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  if (a.req[1] == OpReq::kWrite || a.req[1] == OpReq::kWriteInplace) a.in_grads[1].Fill(0.0f);
  if (a.req[0] == OpReq::kNull) return;
  if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
  const TShape& o = a.out_grads[0].shape();
  const int64_t R = o[0], C = o[1], bins = o[2] * o[3];
  const float* dy = a.out_grads[0].fdata();
  const int32_t* argmax = a.outputs[1].data<int32_t>();
  float* dx = a.in_grads[0].fdata();
  // The argmax of output channel c lies in data channel c: parallel over channels.
  ParallelFor(C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t i = (r * C + c) * bins + k;
          if (argmax[i] >= 0) dx[argmax[i]] += dy[i];
        }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(ROIPooling)
    .add_alias("_npx_roi_pooling")
    .describe("Region of interest max pooling (Fast R-CNN): each region [batch_index, x1, y1, "
              "x2, y2], scaled by spatial_scale and rounded, is split into pooled_size bins and "
              "each bin takes its maximum. Regions with an invalid batch index, and empty bins, "
              "give 0. The hidden second output (maxidx, int32) records the argmax for the data "
              "gradient; the rois get a zero gradient.")
    .set_params<ROIPoolingParam>()
    .set_arguments({"data", "rois"})
    .set_outputs({"output", "maxidx"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeROIPooling)
    .set_dtype_generic()  // for the int32 maxidx; InferTypeROIPooling pins everything else to float32
    .set_infer_type(InferTypeROIPooling)
    .set_forward(ForwardROIPooling)
    .set_backward(BackwardROIPooling);

}  // namespace symbind
