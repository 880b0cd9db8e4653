// _contrib_PSROIPooling: a naive reference (each bin's pixels chosen one by one and averaged),
// group sizes below, at and above pooled_size, skipped rois, finite-difference gradients,
// torchvision's ps_roi_pool (goldens from scripts/gen_detection_goldens.py) and shape errors.
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/";

NDArray Rois(const std::vector<float>& v) { return NDArray(TShape({int64_t(v.size() / 5), 5}), v); }

// Pixel (h, w) belongs to bin (ph, pw) when floor(start + ph * bin) <= h < ceil(start + (ph + 1)
// * bin), likewise w; the region runs from round(x1) * scale to (round(x2) + 1) * scale, at
// least 0.1 wide. Bounds in float, as MXNet computes them (a bin of 5.625 / 3 ends a hair off
// the integer).
NDArray NaivePSROIPooling(const NDArray& x, const NDArray& rois, int64_t D, int64_t P, int64_t G, double scale) {
  const TShape& s = x.shape();
  const int64_t R = rois.shape()[0], H = s[2], W = s[3];
  NDArray y(TShape({R, D, P, P}));
  for (int64_t r = 0; r < R; ++r) {
    const double b = rois.GetFlat(r * 5);
    const double x0 = std::round(rois.GetFlat(r * 5 + 1)) * scale, y0 = std::round(rois.GetFlat(r * 5 + 2)) * scale;
    const double rw = std::max((std::round(rois.GetFlat(r * 5 + 3)) + 1) * scale - x0, 0.1);
    const double rh = std::max((std::round(rois.GetFlat(r * 5 + 4)) + 1) * scale - y0, 0.1);
    for (int64_t c = 0; c < D; ++c)
      for (int64_t ph = 0; ph < P; ++ph)
        for (int64_t pw = 0; pw < P; ++pw) {
          const int64_t gh = std::min<int64_t>(ph * G / P, G - 1), gw = std::min<int64_t>(pw * G / P, G - 1);
          const int64_t src = (c * G + gh) * G + gw;
          double sum = 0;
          int64_t n = 0;
          for (int64_t h = 0; h < H && b > -1; ++h)  // MXNet truncates the index
            for (int64_t w = 0; w < W; ++w) {
              auto lo = [&](double start, double size, int64_t k) {
                return std::floor(float(k) * (float(size) / float(P)) + float(start));
              };
              auto hi = [&](double start, double size, int64_t k) {
                return std::ceil(float(k + 1) * (float(size) / float(P)) + float(start));
              };
              if (h < lo(y0, rh, ph) || h >= hi(y0, rh, ph)) continue;
              if (w < lo(x0, rw, pw) || w >= hi(x0, rw, pw)) continue;
              sum += x.GetFlat(((int64_t(b) * s[1] + src) * H + h) * W + w);
              ++n;
            }
          y.SetFlat(((r * D + c) * P + ph) * P + pw, n ? float(sum / n) : 0.0f);
        }
  }
  return y;
}
}  // namespace

TEST_CASE("PSROIPooling: naive reference over group sizes and regions", "[ops][PSROIPooling]") {
  // Inside, past every border, tiny (0.1 pixel after scaling), reversed, skipped (negative
  // batch), truncated batch -0.5 (image 0), half-way corners (rounded away from zero).
  NDArray rois = Rois({0, 2, 3, 13, 11, 1, -6, -4, 30, 24, 1, 5, 5, 5, 5, 0, 9, 9, 3, 3,
                       -1, 0, 0, 8, 8, -0.5f, 1, 1, 9, 7, 1, 2.5f, 1.5f, 7.5f, 10.5f});
  struct Case {
    int64_t D, P, G, channels;
    double scale;
  };
  for (const Case& c : {Case{2, 3, 3, 18, 0.5}, Case{2, 3, 0, 18, 0.5}, Case{3, 2, 2, 12, 1.0},
                        Case{1, 4, 2, 4, 0.625}, Case{2, 2, 3, 18, 0.5}, Case{1, 3, 3, 11, 0.0625}}) {
    CAPTURE(c.D, c.P, c.G, c.channels, c.scale);
    NDArray x = RandomArray(TShape({2, c.channels, 7, 8}), 11);
    KwArgs p = {{"output_dim", std::to_string(c.D)}, {"pooled_size", std::to_string(c.P)},
                {"spatial_scale", std::to_string(c.scale)}};
    if (c.G) p["group_size"] = std::to_string(c.G);
    if (c.channels < c.D * (c.G ? c.G : c.P) * (c.G ? c.G : c.P)) continue;
    NDArray y = RunForward("_contrib_PSROIPooling", p, {{"data", x}, {"rois", rois}});
    RequireClose(y, NaivePSROIPooling(x, rois, c.D, c.P, c.G ? c.G : c.P, c.scale), 1e-6f, 1e-5f, "PSROIPooling");
  }
  // More channels than output_dim * group_size^2: the first ones are read, as in MXNet.
  NDArray x = RandomArray(TShape({2, 10, 7, 8}), 12);
  NDArray y = RunForward("_contrib_PSROIPooling", {{"output_dim", "2"}, {"pooled_size", "2"}, {"spatial_scale", "0.5"}},
                         {{"data", x}, {"rois", rois}});
  RequireClose(y, NaivePSROIPooling(x, rois, 2, 2, 2, 0.5), 1e-6f, 1e-5f, "extra channels");
}

TEST_CASE("PSROIPooling: gradients by finite differences", "[ops][PSROIPooling]") {
  NDArray x = RandomArray(TShape({2, 8, 5, 6}), 13);
  NDArray rois = Rois({0, 0, 1, 9, 8, 1, 3, 0, 11, 9, -1, 0, 0, 4, 4, 1, 4, 4, 4, 4});
  GradCheckOptions o;
  o.no_grad = {"rois"};
  CheckGradients("_contrib_PSROIPooling", {{"output_dim", "2"}, {"pooled_size", "2"}, {"spatial_scale", "0.5"}},
                 {{"data", x}, {"rois", rois}}, o);
  // group_size 1 with pooled_size 3: every bin reads the same channel, and gradients add up.
  CheckGradients("_contrib_PSROIPooling",
                 {{"output_dim", "8"}, {"pooled_size", "3"}, {"group_size", "1"}, {"spatial_scale", "0.5"}},
                 {{"data", x}, {"rois", rois}}, o);
}

TEST_CASE("PSROIPooling: agrees with torchvision ps_roi_pool, forward and data gradient",
          "[ops][PSROIPooling][goldens]") {
  struct Case {
    const char* name;
    KwArgs params;
  };
  for (const Case& c :
       {Case{"psroipool_half", {{"output_dim", "2"}, {"pooled_size", "3"}, {"spatial_scale", "0.5"}}},
        Case{"psroipool_one", {{"output_dim", "3"}, {"pooled_size", "2"}, {"group_size", "2"}, {"spatial_scale", "1"}}}}) {
    CAPTURE(c.name);
    const std::string pre = kGoldens + c.name;
    NDArray data = LoadNpy(pre + "_data.npy"), rois = LoadNpy(pre + "_rois.npy");
    auto exec = BindSingleOp("_contrib_PSROIPooling", c.params, {{"data", data}, {"rois", rois}}, {"rois"});
    exec->Forward(true);
    RequireClose(exec->outputs()[0], LoadNpy(pre + "_output.npy"), 1e-6f, 1e-5f, "output");
    exec->Backward({LoadNpy(pre + "_head.npy")});
    RequireClose(exec->grad_arrays()[0], LoadNpy(pre + "_data_grad.npy"), 1e-6f, 1e-5f, "data grad");
  }
}

TEST_CASE("PSROIPooling: shapes and errors", "[ops][PSROIPooling]") {
  auto infer = [](const KwArgs& p, const TShape& d, const TShape& r) {
    return InferShape(SingleOpSymbol("_contrib_PSROIPooling", p), {{"op_data", d}, {"op_rois", r}});
  };
  KwArgs p = {{"output_dim", "2"}, {"pooled_size", "3"}, {"spatial_scale", "0.0625"}};
  REQUIRE(infer(p, TShape({1, 18, 14, 14}), TShape({4, 5})).out_shapes[0] == TShape({4, 2, 3, 3}));
  REQUIRE_THROWS_WITH(infer(p, TShape({1, 17, 14, 14}), TShape({4, 5})),
                      Catch::Contains("data has 17 channels, but output_dim * group_size^2 = 2 * 3^2 = 18 are read"));
  REQUIRE_THROWS_WITH(infer(p, TShape({1, 18, 14, 14}), TShape({4, 4})),
                      Catch::Contains("rois should be a 2D tensor of shape (num_rois, 5)"));
  REQUIRE_THROWS_WITH(infer(p, TShape({18, 14, 14}), TShape({4, 5})),
                      Catch::Contains("data should be a 4D tensor"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_PSROIPooling", {{"output_dim", "0"}, {"pooled_size", "3"}, {"spatial_scale", "1"}}),
                      Catch::Contains("output_dim"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_PSROIPooling", {{"output_dim", "2"}, {"spatial_scale", "1"}}),
                      Catch::Contains("pooled_size"));
  // A batch index past the data and a non-finite corner are errors, not reads out of bounds.
  NDArray x = RandomArray(TShape({1, 4, 4, 4}), 14);
  KwArgs q = {{"output_dim", "1"}, {"pooled_size", "2"}, {"spatial_scale", "1"}};
  REQUIRE_THROWS_WITH(RunForward("_contrib_PSROIPooling", q, {{"data", x}, {"rois", Rois({0, 0, 0, 2, 2, 1, 0, 0, 2, 2})}}),
                      Catch::Contains("roi 1 has batch index 1, but the data holds 1 images"));
  REQUIRE_THROWS_WITH(RunForward("_contrib_PSROIPooling", q, {{"data", x}, {"rois", Rois({0, 0, NAN, 2, 2})}}),
                      Catch::Contains("roi 0 has a non-finite coordinate"));
  // Far (finite) corners only clip.
  NDArray y = RunForward("_contrib_PSROIPooling", q, {{"data", x}, {"rois", Rois({0, -3e38f, -3e38f, 3e38f, 3e38f})}});
  for (int64_t i = 0; i < y.Size(); ++i) REQUIRE(std::isfinite(y.GetFlat(i)));
}
