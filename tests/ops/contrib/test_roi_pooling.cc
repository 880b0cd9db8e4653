// ROIPooling: MXNet's documented example, a naive reference (max over each bin's pixels),
// invalid rois, finite-difference gradients, torchvision's roi_pool (goldens from
// scripts/gen_detection_goldens.py) and shape errors.
#include <cfloat>
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray Rois(const std::vector<float>& v) { return NDArray(TShape({int64_t(v.size() / 5), 5}), v); }

NDArray NaiveROIPooling(const NDArray& x, const NDArray& rois, int64_t PH, int64_t PW, float scale) {
  const TShape& s = x.shape();
  const int64_t R = rois.shape()[0], C = s[1], H = s[2], W = s[3];
  NDArray y(TShape({R, C, PH, PW}));
  for (int64_t r = 0; r < R; ++r) {
    const float b = rois.GetFlat(r * 5);
    const bool batch_ok = b > -1 && b < s[0];  // MXNet truncates the index to int
    const int64_t x1 = std::lround(rois.GetFlat(r * 5 + 1) * scale), y1 = std::lround(rois.GetFlat(r * 5 + 2) * scale);
    const int64_t x2 = std::lround(rois.GetFlat(r * 5 + 3) * scale), y2 = std::lround(rois.GetFlat(r * 5 + 4) * scale);
    const double rh = std::max<int64_t>(y2 - y1 + 1, 1), rw = std::max<int64_t>(x2 - x1 + 1, 1);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw) {
          // Pixels (h, w) of the bin: floor(ph * rh / PH) <= h - y1 < ceil((ph + 1) * rh / PH).
          float best = -FLT_MAX;
          bool any = false;
          for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w) {
              const int64_t dh = h - y1, dw = w - x1;
              if (dh < std::floor(ph * rh / PH) || dh >= std::ceil((ph + 1) * rh / PH)) continue;
              if (dw < std::floor(pw * rw / PW) || dw >= std::ceil((pw + 1) * rw / PW)) continue;
              if (!batch_ok) continue;
              any = true;
              best = std::max(best, x.GetFlat(((int64_t(b) * C + c) * H + h) * W + w));
            }
          const bool valid = any;
          y.SetFlat(((r * C + c) * PH + ph) * PW + pw, valid ? best : 0.0f);
        }
  }
  return y;
}
}  // namespace

TEST_CASE("ROIPooling: MXNet's documented example", "[ops][ROIPooling]") {
  std::vector<float> v;
  for (int i = 0; i < 48; ++i) v.push_back(float(i));
  NDArray x(TShape({1, 1, 8, 6}), v);
  NDArray rois = Rois({0, 0, 0, 4, 4});
  NDArray y = RunForward("ROIPooling", {{"pooled_size", "(2,2)"}, {"spatial_scale", "1.0"}},
                         {{"data", x}, {"rois", rois}});
  RequireClose(y, NDArray(TShape({1, 1, 2, 2}), {14, 16, 26, 28}), 0, 0, "scale 1");
  y = RunForward("ROIPooling", {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.7"}},
                 {{"data", x}, {"rois", rois}});
  RequireClose(y, NDArray(TShape({1, 1, 2, 2}), {7, 9, 19, 21}), 0, 0, "scale 0.7");
}

TEST_CASE("ROIPooling: naive reference, borders and invalid rois", "[ops][ROIPooling]") {
  NDArray x = RandomArray(TShape({2, 3, 9, 7}), 4);
  // Regular, past the borders, reversed (forced 1x1), invalid batch indices, truncated -0.5.
  NDArray rois = Rois({0, 2, 3, 11, 13, 1, -4, -6, 20, 30, 1, 9, 9, 3, 3, 2, 0, 0, 4, 4,
                       -1, 0, 0, 4, 4, -0.5f, 1, 1, 6, 6});
  for (float scale : {1.0f, 0.5f}) {
    KwArgs p = {{"pooled_size", "(3, 2)"}, {"spatial_scale", std::to_string(scale)}};
    NDArray y = RunForward("ROIPooling", p, {{"data", x}, {"rois", rois}});
    RequireClose(y, NaiveROIPooling(x, rois, 3, 2, scale), 0, 0, "ROIPooling");
  }
}

TEST_CASE("ROIPooling: gradients by finite differences", "[ops][ROIPooling]") {
  NDArray x = RandomArray(TShape({2, 2, 6, 5}), 5);  // distinct values: every max is unique
  NDArray rois = Rois({0, 0, 0, 4, 5, 1, 1, 2, 4, 5, 0, 2, 1, 3, 3});
  GradCheckOptions o;
  o.no_grad = {"rois"};
  CheckGradients("ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                 {{"data", x}, {"rois", rois}}, o);
}

TEST_CASE("ROIPooling: shape errors", "[ops][ROIPooling]") {
  auto infer = [](const TShape& d, const TShape& r) {
    InferShape(SingleOpSymbol("ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}}),
               {{"op_data", d}, {"op_rois", r}});
  };
  REQUIRE_THROWS_WITH(infer(TShape({1, 3, 4}), TShape({2, 5})),
                      Catch::Contains("data should be a 4D tensor"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 3, 4, 4}), TShape({2, 4})),
                      Catch::Contains("rois should be a 2D tensor of shape (num_rois, 5)"));
  REQUIRE_NOTHROW(infer(TShape({1, 3, 4, 4}), TShape({2, 5})));
}

TEST_CASE("ROIPooling: type inference, float32 data only", "[ops][ROIPooling]") {
  Symbol s = SingleOpSymbol("ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}});
  auto types = InferType(s, {{"op_data", DType::kFloat32}});
  REQUIRE(types.out_types.size() == 1);
  REQUIRE(types.out_types[0] == DType::kFloat32);
  REQUIRE_THROWS_WITH(SimpleBind(s, Context::CPU(), {{"op_data", NDArray(TShape({1, 1, 4, 4}), DType::kFloat64)},
                                                     {"op_rois", NDArray(TShape({1, 5}), DType::kFloat64)}}),
                      Catch::Contains("Type inconsistent for input 'data' (op_data): provided float64, inferred float32"));
}

TEST_CASE("ROIPooling: agrees with torchvision roi_pool, forward and data gradient",
          "[ops][ROIPooling][goldens]") {
  const std::string pre = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/roipool_";
  auto exec = BindSingleOp("ROIPooling", {{"pooled_size", "(3, 2)"}, {"spatial_scale", "0.7"}},
                           {{"data", LoadNpy(pre + "data.npy")}, {"rois", LoadNpy(pre + "rois.npy")}}, {"rois"});
  exec->Forward(true);
  RequireClose(exec->outputs()[0], LoadNpy(pre + "output.npy"), 0, 0, "output");
  exec->Backward({LoadNpy(pre + "head.npy")});
  RequireClose(exec->grad_arrays()[0], LoadNpy(pre + "data_grad.npy"), 1e-6f, 1e-6f, "data grad");
}
