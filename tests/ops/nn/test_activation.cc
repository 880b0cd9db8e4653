// Activation: every act_type forward and gradient.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
float NaiveAct(const std::string& t, float x) {
  if (t == "relu") return std::max(x, 0.0f);
  if (t == "sigmoid") return 1.0f / (1.0f + std::exp(-x));
  if (t == "tanh") return std::tanh(x);
  if (t == "softrelu") return std::log(1.0f + std::exp(x));
  return x / (1.0f + std::fabs(x));
}
}  // namespace

TEST_CASE("Activation forward and gradients", "[ops][activation][grad]") {
  for (std::string t : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    INFO(t);
    NDArray x = RandomArray(TShape({3, 5}), 9, -2.0f, 2.0f);
    // Keep relu's kink away from the finite-difference step.
    for (int64_t i = 0; i < x.Size(); ++i)
      if (std::fabs(x.GetFlat(i)) < 0.05f) x.SetFlat(i, 0.3f);
    NDArray y = RunForward("Activation", {{"act_type", t}}, {{"data", x}});
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, NaiveAct(t, x.GetFlat(i)));
    RequireClose(y, want);
    CheckGradients("Activation", {{"act_type", t}}, {{"data", x}});
  }
}
