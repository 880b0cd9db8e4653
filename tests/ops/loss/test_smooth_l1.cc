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
