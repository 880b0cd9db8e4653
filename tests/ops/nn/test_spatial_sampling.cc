// BilinearSampler, GridGenerator and SpatialTransformer: naive references (tent-weight
// sampling with zero padding, affine and warp grids), MXNet's documented zoom example, and
// finite-difference gradients with sample points kept off pixel boundaries, and torch's
// affine_grid / grid_sample (goldens from scripts/gen_detection_goldens.py).
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
// data (n, c) at normalised (gx, gy): tent weights over the pixels, zero outside.
double Sample(const NDArray& x, int64_t n, int64_t c, double gx, double gy) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  return TentInterpolate(x, n, c, (gy + 1) * (H - 1) / 2, (gx + 1) * (W - 1) / 2);
}

NDArray NaiveSampler(const NDArray& x, const NDArray& grid) {
  const int64_t N = x.shape()[0], C = x.shape()[1], OH = grid.shape()[2], OW = grid.shape()[3];
  NDArray y(TShape({N, C, OH, OW}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t k = 0; k < OH * OW; ++k)
        y.SetFlat((n * C + c) * OH * OW + k,
                  float(Sample(x, n, c, grid.GetFlat(n * 2 * OH * OW + k), grid.GetFlat((n * 2 + 1) * OH * OW + k))));
  return y;
}

// grid[n] = theta[n] (2x3) x (x, y, 1) over an H x W target normalised to [-1, 1].
NDArray NaiveAffineGrid(const NDArray& theta, int64_t H, int64_t W) {
  const int64_t N = theta.shape()[0];
  NDArray g(TShape({N, 2, H, W}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t r = 0; r < H; ++r)
      for (int64_t c = 0; c < W; ++c) {
        const double x = -1.0 + 2.0 * c / (W - 1), y = -1.0 + 2.0 * r / (H - 1);
        for (int64_t o = 0; o < 2; ++o) {
          auto t = [&](int k) { return double(theta.GetFlat(n * 6 + o * 3 + k)); };
          g.SetFlat(((n * 2 + o) * H + r) * W + c, float(t(0) * x + t(1) * y + t(2)));
        }
      }
  return g;
}

// A grid whose pixel positions have fractional parts in [0.2, 0.8], some outside the image.
NDArray SafeGrid(int64_t N, int64_t OH, int64_t OW, int64_t H, int64_t W, uint64_t seed) {
  NDArray g(TShape({N, 2, OH, OW}));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> ix(-2, int(W)), iy(-2, int(H));
  std::uniform_real_distribution<float> frac(0.2f, 0.8f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < OH * OW; ++k) {
      const float px = float(ix(rng)) + frac(rng), py = float(iy(rng)) + frac(rng);
      g.SetFlat(n * 2 * OH * OW + k, 2 * px / float(W - 1) - 1);
      g.SetFlat((n * 2 + 1) * OH * OW + k, 2 * py / float(H - 1) - 1);
    }
  return g;
}

// True when every sample point of `grid` lies at least `margin` pixels from a pixel boundary.
bool OffPixelBoundaries(const NDArray& grid, int64_t H, int64_t W, double margin) {
  const int64_t P = grid.shape()[2] * grid.shape()[3];
  for (int64_t n = 0; n < grid.shape()[0]; ++n)
    for (int64_t k = 0; k < P; ++k) {
      const double px = (grid.GetFlat(n * 2 * P + k) + 1.0) * (W - 1) / 2;
      const double py = (grid.GetFlat((n * 2 + 1) * P + k) + 1.0) * (H - 1) / 2;
      for (double v : {px, py})
        if (std::fabs(v - std::round(v)) < margin) return false;
    }
  return true;
}
}  // namespace

TEST_CASE("BilinearSampler: naive reference with zero padding", "[ops][BilinearSampler]") {
  NDArray x = RandomArray(TShape({2, 3, 5, 6}), 1);
  NDArray grid = RandomArray(TShape({2, 2, 4, 7}), 2, -1.3f, 1.3f);
  auto exec = BindSingleOp("BilinearSampler", {}, {{"data", x}, {"grid", grid}}, {}, OpReq::kNull);
  exec->Forward(false);
  REQUIRE(exec->outputs().size() == 1);  // tmp is hidden
  RequireClose(exec->outputs()[0], NaiveSampler(x, grid), 1e-5f, 1e-4f, "BilinearSampler");
}

TEST_CASE("BilinearSampler and GridGenerator: MXNet's documented zoom-out example",
          "[ops][BilinearSampler][GridGenerator]") {
  NDArray data(TShape({1, 1, 4, 4}), {1, 4, 3, 6, 1, 8, 8, 9, 0, 4, 1, 5, 1, 0, 1, 3});
  NDArray theta(TShape({1, 6}), {2, 0, 0, 0, 2, 0});
  NDArray grid = RunForward("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(4, 4)"}},
                            {{"data", theta}});
  NDArray out = RunForward("BilinearSampler", {}, {{"data", data}, {"grid", grid}});
  RequireClose(out, NDArray(TShape({1, 1, 4, 4}), {0, 0, 0, 0, 0, 3.5f, 6.5f, 0, 0, 1.25f, 2.5f, 0, 0, 0, 0, 0}),
               1e-5f, 1e-5f, "zoom out");
}

TEST_CASE("BilinearSampler: gradients by finite differences", "[ops][BilinearSampler]") {
  NDArray x = RandomArray(TShape({2, 2, 4, 5}), 3);
  NDArray grid = SafeGrid(2, 3, 3, 4, 5, 4);
  CheckGradients("BilinearSampler", {}, {{"data", x}, {"grid", grid}});
}

TEST_CASE("GridGenerator: affine and warp against naive grids, with gradients", "[ops][GridGenerator]") {
  NDArray theta = RandomArray(TShape({3, 6}), 5);
  RequireClose(RunForward("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(4, 5)"}}, {{"data", theta}}),
               NaiveAffineGrid(theta, 4, 5), 1e-6f, 1e-5f, "affine");
  NDArray flow = RandomArray(TShape({2, 2, 3, 4}), 6, -2.0f, 2.0f);
  NDArray want(flow.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        const int64_t ix = ((n * 2) * 3 + r) * 4 + c, iy = ((n * 2 + 1) * 3 + r) * 4 + c;
        want.SetFlat(ix, (flow.GetFlat(ix) + c) / ((4 - 1) / 2.0f) - 1);
        want.SetFlat(iy, (flow.GetFlat(iy) + r) / ((3 - 1) / 2.0f) - 1);
      }
  RequireClose(RunForward("GridGenerator", {{"transform_type", "warp"}}, {{"data", flow}}), want, 1e-6f, 1e-5f,
               "warp");
  CheckGradients("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(3, 4)"}}, {{"data", theta}});
  CheckGradients("GridGenerator", {{"transform_type", "warp"}}, {{"data", flow}});
  REQUIRE_THROWS_WITH(InferShape(SingleOpSymbol("GridGenerator", {{"transform_type", "affine"}}),
                                 {{"op_data", TShape({1, 6})}}),
                      Catch::Contains("needs target_shape (H, W) with H, W > 0"));
  REQUIRE_THROWS_WITH(InferShape(SingleOpSymbol("GridGenerator", {{"transform_type", "warp"}}),
                                 {{"op_data", TShape({1, 3, 4, 4})}}),
                      Catch::Contains("optical flow of shape (batch, 2, H, W)"));
}

TEST_CASE("SpatialTransformer: affine grid then sampling, and gradients", "[ops][SpatialTransformer]") {
  NDArray x = RandomArray(TShape({2, 3, 5, 6}), 7);
  NDArray loc(TShape({2, 6}), {0.93f, 0.06f, 0.2f, -0.09f, 1.05f, 0.19f, 1.21f, -0.08f, 0.17f, 0.43f, 0.77f, -0.51f});
  KwArgs p = {{"target_shape", "(3, 4)"}, {"transform_type", "affine"}, {"sampler_type", "bilinear"}};
  NDArray grid = NaiveAffineGrid(loc, 3, 4);
  RequireClose(RunForward("SpatialTransformer", p, {{"data", x}, {"loc", loc}}), NaiveSampler(x, grid), 1e-5f,
               1e-4f, "SpatialTransformer");
  // loc moves every sample point: keep them off pixel boundaries for finite differences.
  REQUIRE(OffPixelBoundaries(grid, 5, 6, 0.02));
  GradCheckOptions o;
  o.eps = 1e-3f;
  CheckGradients("SpatialTransformer", p, {{"data", x}, {"loc", loc}}, o);
  REQUIRE_THROWS_WITH(InferShape(SingleOpSymbol("SpatialTransformer", p),
                                 {{"op_data", TShape({2, 3, 5, 6})}, {"op_loc", TShape({2, 4})}}),
                      Catch::Contains("loc should be (batch, 6)"));
}

TEST_CASE("GridGenerator and BilinearSampler: agree with torch affine_grid and grid_sample",
          "[ops][GridGenerator][BilinearSampler][goldens]") {
  const std::string pre = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/sampler_";
  auto grid = BindSingleOp("GridGenerator", {{"transform_type", "affine"}, {"target_shape", "(5, 4)"}},
                           {{"data", LoadNpy(pre + "theta.npy")}});
  grid->Forward(true);
  RequireClose(grid->outputs()[0], LoadNpy(pre + "affine_grid.npy"), 1e-6f, 1e-5f, "affine grid");
  grid->Backward({LoadNpy(pre + "grid_head.npy")});
  RequireClose(grid->grad_arrays()[0], LoadNpy(pre + "theta_grad.npy"), 1e-5f, 1e-5f, "theta grad");
  auto sampler = BindSingleOp("BilinearSampler", {},
                              {{"data", LoadNpy(pre + "data.npy")}, {"grid", LoadNpy(pre + "grid.npy")}});
  sampler->Forward(true);
  RequireClose(sampler->outputs()[0], LoadNpy(pre + "output.npy"), 1e-5f, 1e-4f, "sampled");
  sampler->Backward({LoadNpy(pre + "head.npy")});
  RequireClose(sampler->grad_arrays()[0], LoadNpy(pre + "data_grad.npy"), 1e-5f, 1e-4f, "data grad");
  RequireClose(sampler->grad_arrays()[1], LoadNpy(pre + "grid_grad.npy"), 1e-4f, 1e-4f, "grid grad");
}
