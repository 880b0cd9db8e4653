// _contrib_ROIAlign: a naive reference written as tent-function interpolation with clamping,
// position-sensitive and aligned modes, ignored rois, finite-difference gradients, and
// torchvision's roi_align (forward and data gradient; scripts/gen_detection_goldens.py).
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/";

// Bilinear value at (y, x): zero beyond one pixel outside, else the point clamped into the
// image and interpolated with tent weights max(0, 1 - distance).
double Interp(const NDArray& x, int64_t n, int64_t c, double y, double xx) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  if (y < -1.0 || y > H || xx < -1.0 || xx > W) return 0.0;
  return TentInterpolate(x, n, c, std::min(std::max(y, 0.0), double(H - 1)),
                         std::min(std::max(xx, 0.0), double(W - 1)));
}

NDArray NaiveROIAlign(const NDArray& x, const NDArray& rois, int64_t PH, int64_t PW, double scale,
                      int ratio, bool ps, bool aligned) {
  const TShape& s = x.shape();
  const int64_t R = rois.shape()[0], C = ps ? s[1] / (PH * PW) : s[1];
  NDArray y(TShape({R, C, PH, PW}));
  for (int64_t r = 0; r < R; ++r) {
    const double b = rois.GetFlat(r * 5), off = aligned ? 0.5 : 0.0;
    const double x1 = rois.GetFlat(r * 5 + 1) * scale - off, y1 = rois.GetFlat(r * 5 + 2) * scale - off;
    double w = rois.GetFlat(r * 5 + 3) * scale - off - x1, h = rois.GetFlat(r * 5 + 4) * scale - off - y1;
    if (!aligned) {
      w = std::max(w, 1.0);
      h = std::max(h, 1.0);
    }
    const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(h / PH));
    const int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(w / PW));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw) {
          double v = 0;
          if (b >= 0) {
            const int64_t src_c = ps ? (c * PH + ph) * PW + pw : c;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix)
                v += Interp(x, int64_t(b), src_c, y1 + (ph + (iy + 0.5) / gh) * h / PH,
                            x1 + (pw + (ix + 0.5) / gw) * w / PW);
            v /= double(gh * gw);
          }
          y.SetFlat(((r * C + c) * PH + ph) * PW + pw, float(v));
        }
  }
  return y;
}

NDArray Rois(const std::vector<float>& v) { return NDArray(TShape({int64_t(v.size() / 5), 5}), v); }
}  // namespace

TEST_CASE("ROIAlign: naive reference over sampling modes", "[ops][ROIAlign]") {
  NDArray x = RandomArray(TShape({2, 4, 7, 9}), 1);
  // Inside, past the border, tiny (forced to 1x1 unless aligned), negative batch (zeros).
  NDArray rois = Rois({0, 1.5f, 2.0f, 10.0f, 9.5f, 1, -3.0f, -2.0f, 20.0f, 16.0f, 1, 4.2f, 3.1f,
                       4.4f, 3.3f, -1, 1, 1, 5, 5, 1, 7.0f, 0.5f, 12.0f, 6.0f});
  struct Case {
    const char* scale;
    int ratio;
    bool ps, aligned;
  };
  for (const Case& c : {Case{"0.5", -1, false, false}, Case{"1", 2, false, false},
                        Case{"0.75", 3, false, true}, Case{"0.5", -1, true, false}}) {
    CAPTURE(c.scale, c.ratio, c.ps, c.aligned);
    KwArgs p = {{"pooled_size", "(2, 2)"}, {"spatial_scale", c.scale},
                {"sample_ratio", std::to_string(c.ratio)},
                {"position_sensitive", c.ps ? "True" : "False"}, {"aligned", c.aligned ? "True" : "False"}};
    NDArray use = rois;
    if (c.aligned) use = Rois({0, 1.5f, 2.0f, 10.0f, 9.5f, 1, -3.0f, -2.0f, 20.0f, 16.0f, -1, 1, 1, 5, 5});
    NDArray y = RunForward("_contrib_ROIAlign", p, {{"data", x}, {"rois", use}});
    RequireClose(y, NaiveROIAlign(x, use, 2, 2, std::stod(c.scale), c.ratio, c.ps, c.aligned), 1e-5f,
                 1e-4f, "ROIAlign");
  }
}

TEST_CASE("ROIAlign: gradients by finite differences", "[ops][ROIAlign]") {
  NDArray x = RandomArray(TShape({2, 2, 5, 6}), 2);
  NDArray rois = Rois({0, 0.5f, 1.0f, 8.0f, 7.0f, 1, 2.0f, 0.2f, 11.0f, 9.0f, -1, 0, 0, 4, 4});
  KwArgs p = {{"pooled_size", "(2, 3)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "2"}};
  GradCheckOptions o;
  o.no_grad = {"rois"};
  CheckGradients("_contrib_ROIAlign", p, {{"data", x}, {"rois", rois}}, o);
  p["position_sensitive"] = "True";
  p["pooled_size"] = "(1, 2)";
  CheckGradients("_contrib_ROIAlign", p, {{"data", x}, {"rois", rois}}, o);
}

TEST_CASE("ROIAlign: agrees with torchvision roi_align and ps_roi_align, forward and data gradient",
          "[ops][ROIAlign][goldens]") {
  struct Case {
    const char* name;
    KwArgs params;
  };
  for (const Case& c :
       {Case{"roialign_adaptive", {{"pooled_size", "(3, 2)"}, {"spatial_scale", "0.5"}}},
        Case{"roialign_aligned",
             {{"pooled_size", "(2, 3)"}, {"spatial_scale", "0.25"}, {"sample_ratio", "2"}, {"aligned", "True"}}},
        // torchvision's ps_roi_align: position-sensitive channels, half-pixel offset
        Case{"psroialign",
             {{"pooled_size", "(2, 2)"}, {"spatial_scale", "0.6"}, {"sample_ratio", "2"}, {"aligned", "True"},
              {"position_sensitive", "True"}}}}) {
    CAPTURE(c.name);
    const std::string pre = kGoldens + c.name;
    NDArray data = LoadNpy(pre + "_data.npy"), rois = LoadNpy(pre + "_rois.npy");
    auto exec = BindSingleOp("_contrib_ROIAlign", c.params, {{"data", data}, {"rois", rois}}, {"rois"});
    exec->Forward(true);
    RequireClose(exec->outputs()[0], LoadNpy(pre + "_output.npy"), 1e-5f, 1e-4f, "output");
    exec->Backward({LoadNpy(pre + "_head.npy")});
    RequireClose(exec->grad_arrays()[0], LoadNpy(pre + "_data_grad.npy"), 1e-5f, 1e-4f, "data grad");
  }
}

TEST_CASE("ROIAlign: shapes and errors", "[ops][ROIAlign]") {
  auto infer = [](const KwArgs& p, const TShape& d, const TShape& r) {
    return InferShape(SingleOpSymbol("_contrib_ROIAlign", p), {{"op_data", d}, {"op_rois", r}});
  };
  KwArgs p = {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}, {"position_sensitive", "True"}};
  REQUIRE_THROWS_WITH(infer(p, TShape({1, 6, 4, 4}), TShape({3, 5})),
                      Catch::Contains("must be divisible by pooled_size[0]*pooled_size[1] = 4"));
  REQUIRE_THROWS_WITH(infer(p, TShape({1, 8, 4, 4}), TShape({3, 4})),
                      Catch::Contains("rois should be a 2D tensor of shape (num_rois, 5)"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_ROIAlign", {{"pooled_size", "(2, 0)"}, {"spatial_scale", "1"}}),
                      Catch::Contains("two positive sizes"));
  // A batch index past the data is an error, not a read out of bounds.
  NDArray x = RandomArray(TShape({1, 1, 4, 4}), 3);
  REQUIRE_THROWS_WITH(RunForward("_contrib_ROIAlign", {{"pooled_size", "(1, 1)"}, {"spatial_scale", "1"}},
                                 {{"data", x}, {"rois", Rois({1, 0, 0, 2, 2})}}),
                      Catch::Contains("roi 0 has batch index 1, but the data holds 1 images"));
}
