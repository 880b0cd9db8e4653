// _contrib_RROIAlign: a naive reference (sample points rotated about the region's center, read
// by tent-function interpolation), hand-checked values on a linear image, agreement with
// ROIAlign at angle 0, rotation by 180 degrees, no gradient, and the errors.
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Bilinear value at (y, x): zero beyond one pixel outside, else the point clamped into the
// image and interpolated with tent weights.
double Interp(const NDArray& x, int64_t n, int64_t c, double y, double xx) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  if (y < -1.0 || y > H || xx < -1.0 || xx > W) return 0.0;
  return TentInterpolate(x, n, c, std::min(std::max(y, 0.0), double(H - 1)), std::min(std::max(xx, 0.0), double(W - 1)));
}

NDArray NaiveRROIAlign(const NDArray& x, const NDArray& rois, int64_t PH, int64_t PW, double scale, int ratio) {
  const int64_t R = rois.shape()[0], C = x.shape()[1];
  NDArray y(TShape({R, C, PH, PW}));
  const double pi = std::acos(-1.0);
  for (int64_t r = 0; r < R; ++r) {
    auto at = [&](int k) { return double(rois.GetFlat(r * 6 + k)); };
    const int64_t n = int64_t(at(0));
    const double cx = at(1) * scale, cy = at(2) * scale, t = at(5) * pi / 180;
    const double w = std::max(at(3) * scale, 1.0), h = std::max(at(4) * scale, 1.0);
    const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(h / PH)), gw = ratio > 0 ? ratio : int64_t(std::ceil(w / PW));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw) {
          double v = 0;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              // The sample relative to the center, then rotated by t and moved to the center.
              const double dy = -h / 2 + (ph + (iy + 0.5) / gh) * h / PH;
              const double dx = -w / 2 + (pw + (ix + 0.5) / gw) * w / PW;
              v += Interp(x, n, c, cy + dy * std::cos(t) - dx * std::sin(t), cx + dx * std::cos(t) + dy * std::sin(t));
            }
          y.SetFlat(((r * C + c) * PH + ph) * PW + pw, float(v / double(gh * gw)));
        }
  }
  return y;
}

NDArray Rois(const std::vector<float>& v) { return NDArray(TShape({int64_t(v.size() / 6), 6}), v); }

NDArray Run(const KwArgs& p, const NDArray& x, const NDArray& rois) {
  return RunForward("_contrib_RROIAlign", p, {{"data", x}, {"rois", rois}});
}
}  // namespace

TEST_CASE("RROIAlign: naive reference over angles and sampling modes", "[ops][RROIAlign]") {
  NDArray x = RandomArray(TShape({2, 3, 9, 11}), 1);
  // Inside, rotated partly outside, tiny (forced to 1 x 1), negative angle, past the border.
  NDArray rois = Rois({0, 10.0f, 8.0f, 12.0f, 6.0f, 30.0f,  1, 4.0f, 14.0f, 20.0f, 9.0f, 135.0f,
                       1, 9.0f, 9.0f, 0.5f, 0.3f, 10.0f,    0, 12.0f, 6.0f, 7.0f, 15.0f, -70.0f,
                       1, 30.0f, 20.0f, 16.0f, 16.0f, 45.0f});
  struct Case {
    const char* pooled;
    int64_t ph, pw;
    const char* scale;
    int ratio;
  };
  for (const Case& c : {Case{"(2, 3)", 2, 3, "0.5", -1}, Case{"(3, 2)", 3, 2, "0.75", 2}, Case{"(1, 1)", 1, 1, "1", 3},
                        Case{"(4, 4)", 4, 4, "0.6", 0}}) {
    CAPTURE(c.pooled, c.scale, c.ratio);
    KwArgs p = {{"pooled_size", c.pooled}, {"spatial_scale", c.scale}, {"sampling_ratio", std::to_string(c.ratio)}};
    RequireClose(Run(p, x, rois), NaiveRROIAlign(x, rois, c.ph, c.pw, std::stod(c.scale), c.ratio), 1e-5f, 1e-4f,
                 "RROIAlign");
  }
}

TEST_CASE("RROIAlign: hand-checked values on a linear image", "[ops][RROIAlign]") {
  // Bilinear interpolation of v = 10 y + x is exact inside the image, and a bin's samples
  // average to the value at the bin's center.
  NDArray x(TShape({1, 1, 8, 8}));
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j) x.SetFlat(i * 8 + j, float(10 * i + j));
  KwArgs p = {{"pooled_size", "(1, 2)"}, {"spatial_scale", "1"}};
  // Center (4, 3), 4 wide and 2 high: bin centers at x = 3 and 5, y = 3.
  RequireClose(Run(p, x, Rois({0, 4, 3, 4, 2, 0})), NDArray(TShape({1, 1, 1, 2}), {33, 35}), 1e-4f, 0);
  // At 90 degrees the width runs up the image: bin centers at y = 4 and 2, x = 4.
  RequireClose(Run(p, x, Rois({0, 4, 3, 4, 2, 90})), NDArray(TShape({1, 1, 1, 2}), {44, 24}), 1e-4f, 0);
  // spatial_scale scales the center and size, not the angle.
  RequireClose(Run({{"pooled_size", "(1, 2)"}, {"spatial_scale", "0.5"}}, x, Rois({0, 8, 6, 8, 4, 90})),
               NDArray(TShape({1, 1, 1, 2}), {44, 24}), 1e-4f, 0);
  // Entirely beyond one pixel outside: zeros.
  RequireClose(Run(p, x, Rois({0, 40, 40, 4, 2, 30})), NDArray(TShape({1, 1, 1, 2}), {0, 0}), 0, 0);
}

TEST_CASE("RROIAlign: angle 0 is ROIAlign, 180 degrees mirrors the bins", "[ops][RROIAlign]") {
  NDArray x = RandomArray(TShape({1, 2, 10, 12}), 2);
  KwArgs p = {{"pooled_size", "(3, 4)"}, {"spatial_scale", "0.5"}, {"sampling_ratio", "2"}};
  NDArray r0 = Run(p, x, Rois({0, 11, 9, 12, 9, 0}));
  NDArray aligned = RunForward("_contrib_ROIAlign", {{"pooled_size", "(3, 4)"}, {"spatial_scale", "0.5"}, {"sample_ratio", "2"}},
                               {{"data", x}, {"rois", NDArray(TShape({1, 5}), {0, 5, 4.5f, 17, 13.5f})}});
  RequireClose(r0, aligned, 1e-5f, 1e-4f, "angle 0");
  NDArray r180 = Run(p, x, Rois({0, 11, 9, 12, 9, 180}));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t ph = 0; ph < 3; ++ph)
      for (int64_t pw = 0; pw < 4; ++pw)
        REQUIRE(At4(r180, 0, c, ph, pw) == Approx(At4(r0, 0, c, 2 - ph, 3 - pw)).margin(1e-5));
}

TEST_CASE("RROIAlign: no gradient, shapes and errors", "[ops][RROIAlign]") {
  REQUIRE(!OpRegistry::Global().Get("_contrib_RROIAlign").backward);
  auto infer = [](const KwArgs& p, const TShape& d, const TShape& r) {
    return InferShape(SingleOpSymbol("_contrib_RROIAlign", p), {{"op_data", d}, {"op_rois", r}});
  };
  KwArgs p = {{"pooled_size", "(2, 3)"}, {"spatial_scale", "0.25"}};
  REQUIRE(infer(p, TShape({2, 5, 8, 8}), TShape({7, 6})).out_shapes[0] == TShape({7, 5, 2, 3}));
  REQUIRE_THROWS_WITH(infer(p, TShape({2, 5, 8, 8}), TShape({7, 5})),
                      Catch::Contains("rois should be a 2D tensor of shape (num_rois, 6)"));
  REQUIRE_THROWS_WITH(infer(p, TShape({2, 5, 8}), TShape({7, 6})), Catch::Contains("data should be a 4D tensor"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_RROIAlign", {{"pooled_size", "(2, 2)"}}),
                      Catch::Contains("spatial_scale"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_RROIAlign", {{"pooled_size", "(2, 0)"}, {"spatial_scale", "1"}}),
                      Catch::Contains("two positive sizes"));
  // Batch indices outside the data, and regions whose sampling grid is absurd, are errors.
  NDArray x = RandomArray(TShape({2, 1, 4, 4}), 3);
  KwArgs one = {{"pooled_size", "(1, 1)"}, {"spatial_scale", "1"}};
  REQUIRE_THROWS_WITH(Run(one, x, Rois({0, 1, 1, 2, 2, 0, 2, 1, 1, 2, 2, 0})),
                      Catch::Contains("RROIAlign: roi 1 has batch index 2, but the data holds 2 images"));
  REQUIRE_THROWS_WITH(Run(one, x, Rois({-1, 1, 1, 2, 2, 0})), Catch::Contains("roi 0 has batch index -1"));
  REQUIRE_THROWS_WITH(Run(one, x, Rois({0, 1, 1, 1e30f, 2, 0})), Catch::Contains("more than 1048576 in all"));
  REQUIRE_THROWS_WITH(Run(one, x, Rois({0, 1, 1, std::nanf(""), 2, 0})),
                      Catch::Contains("RROIAlign: roi 0 is 2 x nan (height x width) after scaling"));
  // NaN positions and angles read nothing.
  NDArray y = Run(one, x, Rois({0, std::nanf(""), 1, 2, 2, 0, 1, 1, 1, 2, 2, std::nanf("")}));
  REQUIRE(y.GetFlat(0) == 0.0f);
  REQUIRE(y.GetFlat(1) == 0.0f);
}
