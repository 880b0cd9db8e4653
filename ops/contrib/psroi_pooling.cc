// _contrib_PSROIPooling: position-sensitive region of interest pooling (R-FCN). Bin (ph, pw) of
// output channel c averages the pixels of data channel (c * group + gh) * group + gw, where
// (gh, gw) is the bin's group: each bin reads its own channels.
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/roi_util.h>

namespace symbind {

namespace {
struct PSROIPoolingParam : Parameter<PSROIPoolingParam> {
  float spatial_scale;
  int output_dim;
  int pooled_size;
  int group_size;
  // MXNet reads group_size 0 as pooled_size.
  int64_t group() const { return group_size > 0 ? group_size : pooled_size; }
  static void Declare(ParamDeclarer<PSROIPoolingParam>& d) {
    roi::DeclareSpatialScale(d);
    d.field("output_dim", &PSROIPoolingParam::output_dim).lower_bound(1)
        .describe("fix output dim: the output's channels");
    d.field("pooled_size", &PSROIPoolingParam::pooled_size).lower_bound(1)
        .describe("fix pooled size: bins per side");
    d.field("group_size", &PSROIPoolingParam::group_size).set_default(0).lower_bound(0)
        .describe("fix group size: position-sensitive groups per side (0: pooled_size)");
  }
};

constexpr const char* kOp = "PSROIPooling";

void InferShapePSROIPooling(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<PSROIPoolingParam>();
  TShape o;
  if (roi::PsOutputShape(kOp, (*in)[0], (*in)[1], p.output_dim, p.group(), p.pooled_size, &o))
    ShapeAssignCheck(out, 0, o);
}

// The pixels [h0, h1) x [w0, w1) of bin (ph, pw): the floor of its start and the ceil of its
// end, clipped to the image.
struct Window {
  int64_t h0, h1, w0, w1;
  bool empty() const { return h1 <= h0 || w1 <= w0; }
  float area() const { return static_cast<float>((h1 - h0) * (w1 - w0)); }
};
Window BinWindow(const roi::PsRegion& g, int64_t ph, int64_t pw, int64_t P, int64_t H, int64_t W) {
  const float bin_h = g.h / static_cast<float>(P), bin_w = g.w / static_cast<float>(P);
  // NaN (an infinite region's 0 * inf) clips to 0, as every value below 0 does.
  auto clip = [](float v, int64_t hi) {
    return v >= 0.0f ? (v < static_cast<float>(hi) ? static_cast<int64_t>(v) : hi) : int64_t{0};
  };
  Window w;
  w.h0 = clip(std::floor(static_cast<float>(ph) * bin_h + g.y), H);
  w.h1 = clip(std::ceil(static_cast<float>(ph + 1) * bin_h + g.y), H);
  w.w0 = clip(std::floor(static_cast<float>(pw) * bin_w + g.x), W);
  w.w1 = clip(std::ceil(static_cast<float>(pw + 1) * bin_w + g.x), W);
  return w;
}

void ForwardPSROIPooling(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<PSROIPoolingParam>();
  const TShape& d = in[0].shape();
  const int64_t N = d[0], DC = d[1], H = d[2], W = d[3];
  const int64_t R = in[1].shape()[0], C = p.output_dim, P = p.pooled_size;
  const std::vector<roi::PsRegion> regions = roi::PsRegions(kOp, in[1], N, p.spatial_scale, 0.0);
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  ParallelFor(R * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t rc = b; rc < e; ++rc) {
      const roi::PsRegion& g = regions[static_cast<size_t>(rc / C)];
      const int64_t c = rc % C;
      for (int64_t ph = 0; ph < P; ++ph)
        for (int64_t pw = 0; pw < P; ++pw) {
          const Window win = BinWindow(g, ph, pw, P, H, W);
          float v = 0.0f;
          if (g.batch >= 0 && !win.empty()) {
            const float* plane = x + (g.batch * DC + roi::PsSourceChannel(c, ph, pw, p.group(), P)) * H * W;
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t w = win.w0; w < win.w1; ++w) v += plane[h * W + w];
            v /= win.area();
          }
          float& dst = y[(rc * P + ph) * P + pw];
          dst = req[0] == OpReq::kAdd ? dst + v : v;
        }
    }
  });
}

void BackwardPSROIPooling(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[1] == OpReq::kWrite || a.req[1] == OpReq::kWriteInplace) a.in_grads[1].Fill(0.0f);
  if (a.req[0] == OpReq::kNull) return;
  if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
  const auto& p = attrs.param<PSROIPoolingParam>();
  const TShape& d = a.inputs[0].shape();
  const int64_t N = d[0], DC = d[1], H = d[2], W = d[3];
  const int64_t R = a.inputs[1].shape()[0], C = p.output_dim, P = p.pooled_size;
  const std::vector<roi::PsRegion> regions = roi::PsRegions(kOp, a.inputs[1], N, p.spatial_scale, 0.0);
  const float* dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  // Output channels read disjoint data channels: parallel over them.
  ParallelFor(C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t r = 0; r < R; ++r) {
        const roi::PsRegion& g = regions[static_cast<size_t>(r)];
        if (g.batch < 0) continue;
        for (int64_t ph = 0; ph < P; ++ph)
          for (int64_t pw = 0; pw < P; ++pw) {
            const Window win = BinWindow(g, ph, pw, P, H, W);
            if (win.empty()) continue;
            const float share = dy[((r * C + c) * P + ph) * P + pw] / win.area();
            float* plane = dx + (g.batch * DC + roi::PsSourceChannel(c, ph, pw, p.group(), P)) * H * W;
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t w = win.w0; w < win.w1; ++w) plane[h * W + w] += share;
          }
      }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_PSROIPooling)
    .describe("Position-sensitive region of interest pooling (R-FCN). Each region [batch_index, "
              "x1, y1, x2, y2] has its corners rounded, the far one made inclusive (+1), then "
              "scaled by spatial_scale (sides below 0.1 become 0.1); it is split into "
              "pooled_size x pooled_size bins, and bin (ph, pw) of output channel c averages the "
              "pixels it covers (floor of its start to ceil of its end, clipped to the image) in "
              "data channel (c * group_size + gh) * group_size + gw, where gh = floor(ph * "
              "group_size / pooled_size) and gw likewise (group_size 0 means pooled_size). The "
              "data needs output_dim * group_size^2 channels (further channels are not read, as "
              "in MXNet). Empty bins and regions with a negative batch index give 0; a batch index "
              "past the data or a non-finite coordinate is an error. Differentiable with respect "
              "to data; the rois get a zero gradient.")
    .set_params<PSROIPoolingParam>()
    .set_arguments({"data", "rois"})
    .add_argument_doc("data", roi::kDataDoc)
    .add_argument_doc("rois", roi::kRoisDoc)
    .set_infer_shape(InferShapePSROIPooling)
    .set_forward(ForwardPSROIPooling)
    .set_backward(BackwardPSROIPooling);

}  // namespace symbind
