// smooth_l1: forward against the piecewise formula for several sigmas, MXNet's documented
// example, gradients by finite differences.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("smooth_l1 forward and gradients", "[ops][smooth_l1][grad]") {
  NDArray x = RandomArray(TShape({4, 6}), 5, -3, 3);
  for (double sigma : {1.0, 2.0, 0.5}) {
    INFO("sigma " << sigma);
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) {
      const double v = x.GetFlat(i), t = 1 / (sigma * sigma);
      want.SetFlat(i, static_cast<float>(std::fabs(v) < t ? 0.5 * sigma * sigma * v * v : std::fabs(v) - 0.5 * t));
    }
    KwArgs p{{"scalar", std::to_string(sigma)}};
    RequireClose(RunForward("smooth_l1", p, {{"data", x}}), want);
    CheckGradients("smooth_l1", p, {{"data", x}});
  }
  // MXNet's docs: smooth_l1([1, 2, 3, 4]) = [0.5, 1.5, 2.5, 3.5] with the default scalar 1.
  RequireClose(RunForward("smooth_l1", {}, {{"data", NDArray(TShape({4}), {1, 2, 3, 4})}}),
               NDArray(TShape({4}), {0.5f, 1.5f, 2.5f, 3.5f}));
  CHECK(OpRegistry::Global().Get("_npx_smooth_l1").name == "smooth_l1");
}

TEST_CASE("smooth_l1 computes float64 in double", "[ops][smooth_l1][grad][float64]") {
  // Values away from the kinks at +-1/sigma^2, where central differences would straddle one.
  NDArray x(TShape({8}), {-2.7f, -1.4f, -0.6f, -0.13f, 0.21f, 0.45f, 1.3f, 2.2f});
  for (double sigma : {1.0, 2.0}) {
    INFO("sigma " << sigma);
    CheckFloat64Elementwise("smooth_l1", {{"scalar", std::to_string(sigma)}}, {{"data", x}},
                            [sigma](const std::vector<double>& v) {
                              const double t = 1 / (sigma * sigma), a = std::fabs(v[0]);
                              return a < t ? 0.5 * sigma * sigma * v[0] * v[0] : a - 0.5 * t;
                            });
  }
}
