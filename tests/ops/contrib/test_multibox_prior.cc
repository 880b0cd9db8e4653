// _contrib_MultiBoxPrior: a naive reference (sizes with the first ratio, then ratios with the
// first size), clipping, explicit steps and offsets, the zero gradient, and parameter errors.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray NaivePrior(int64_t H, int64_t W, const std::vector<double>& sizes,
                   const std::vector<double>& ratios, bool clip, double sy, double sx, double oy,
                   double ox) {
  const int64_t A = int64_t(sizes.size() + ratios.size()) - 1;
  NDArray y(TShape({1, H * W * A, 4}));
  if (sy <= 0) { sy = 1.0 / H; sx = 1.0 / W; }
  int64_t row = 0;
  for (int64_t r = 0; r < H; ++r)
    for (int64_t c = 0; c < W; ++c) {
      std::vector<std::pair<double, double>> shapes;  // (size, ratio)
      for (double s : sizes) shapes.push_back({s, ratios[0]});
      for (size_t j = 1; j < ratios.size(); ++j) shapes.push_back({sizes[0], ratios[j]});
      for (auto& sr : shapes) {
        const double w = sr.first * H / W * std::sqrt(sr.second) / 2, h = sr.first / std::sqrt(sr.second) / 2;
        const double cx = (c + ox) * sx, cy = (r + oy) * sy;
        const double box[4] = {cx - w, cy - h, cx + w, cy + h};
        for (int k = 0; k < 4; ++k)
          y.SetFlat(row * 4 + k, float(clip ? std::min(1.0, std::max(0.0, box[k])) : box[k]));
        ++row;
      }
    }
  return y;
}
}  // namespace

TEST_CASE("MultiBoxPrior: naive reference with sizes, ratios, clip, steps and offsets",
          "[ops][MultiBoxPrior]") {
  NDArray x = RandomArray(TShape({2, 3, 4, 6}), 1);
  RequireClose(RunForward("_contrib_MultiBoxPrior", {}, {{"data", x}}),
               NaivePrior(4, 6, {1.0}, {1.0}, false, -1, -1, 0.5, 0.5), 1e-6f, 1e-5f, "defaults");
  KwArgs p = {{"sizes", "(0.5, 0.25, 0.1)"}, {"ratios", "[1, 2, 0.5]"}};
  RequireClose(RunForward("_contrib_MultiBoxPrior", p, {{"data", x}}),
               NaivePrior(4, 6, {0.5, 0.25, 0.1}, {1, 2, 0.5}, false, -1, -1, 0.5, 0.5), 1e-6f, 1e-5f,
               "sizes and ratios");
  p["clip"] = "True";
  NDArray clipped = RunForward("_contrib_MultiBoxPrior", p, {{"data", x}});
  RequireClose(clipped, NaivePrior(4, 6, {0.5, 0.25, 0.1}, {1, 2, 0.5}, true, -1, -1, 0.5, 0.5), 1e-6f,
               1e-5f, "clip");
  for (int64_t i = 0; i < clipped.Size(); ++i) REQUIRE((clipped.GetFlat(i) >= 0 && clipped.GetFlat(i) <= 1));
  p = {{"sizes", "(0.3,)"}, {"ratios", "(1, 3)"}, {"steps", "(0.2, 0.1)"}, {"offsets", "(0.25, 0.75)"}};
  RequireClose(RunForward("_contrib_MultiBoxPrior", p, {{"data", x}}),
               NaivePrior(4, 6, {0.3}, {1, 3}, false, 0.2, 0.1, 0.25, 0.75), 1e-6f, 1e-5f, "steps, offsets");
}

TEST_CASE("MultiBoxPrior: zero gradient, shapes and errors", "[ops][MultiBoxPrior]") {
  NDArray x = RandomArray(TShape({1, 2, 3, 3}), 2);
  auto exec = BindSingleOp("_contrib_MultiBoxPrior", {{"sizes", "(0.5, 0.2)"}}, {{"data", x}});
  exec->grad_arrays()[0].Fill(7.0f);
  exec->Forward(true);
  REQUIRE(exec->outputs()[0].shape() == TShape({1, 3 * 3 * 2, 4}));
  exec->Backward({RandomArray(exec->outputs()[0].shape(), 3)});
  for (int64_t i = 0; i < x.Size(); ++i) REQUIRE(exec->grad_arrays()[0].GetFlat(i) == 0.0f);
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_MultiBoxPrior", {{"offsets", "(0.5, 1.5)"}}),
                      Catch::Contains("each in [0, 1]"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_MultiBoxPrior", {{"steps", "(0.5,)"}}),
                      Catch::Contains("(step_y, step_x)"));
  // A size or ratio <= 0 made boxes of no or negative extent (a negative ratio: NaN corners).
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_MultiBoxPrior", {{"sizes", "(0.5, 0)"}}),
                      Catch::StartsWith("value (0.5, 0) for Parameter sizes should be a non-empty tuple of numbers > 0"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_MultiBoxPrior", {{"ratios", "(1, -2)"}}),
                      Catch::StartsWith("value (1, -2) for Parameter ratios should be a non-empty tuple of numbers > 0"));
  REQUIRE_THROWS_WITH(
      InferShape(SingleOpSymbol("_contrib_MultiBoxPrior", {}), {{"op_data", TShape({1, 3, 4})}}),
      Catch::Contains("input data should be 4D"));
}
