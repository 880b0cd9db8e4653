// Linear, logistic and MAE regression heads: forward and gradients.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Regression outputs", "[ops][regression][grad]") {
  NDArray x = RandomArray(TShape({4, 2}), 18), t = RandomArray(TShape({4, 2}), 19);
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  opt.loss = [&](const std::vector<NDArray>& outs) {
    double s = 0;  // 0.5 * squared error / outputs per sample
    for (int64_t i = 0; i < 8; ++i) s += 0.5 * std::pow(outs[0].GetFlat(i) - t.GetFlat(i), 2) / 2;
    return s;
  };
  CHECK(RunForward("LinearRegressionOutput", {}, {{"data", x}, {"label", t}}).GetFlat(3) == x.GetFlat(3));
  CheckGradients("LinearRegressionOutput", {}, {{"data", x}, {"label", t}}, opt);
}
