// hard_sigmoid: clip(alpha * x + beta, 0, 1) against a naive reference, in float32, float64
// and float16; gradients by finite differences away from the two kinks.
#include <algorithm>
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
double NaiveHardSigmoid(double x, double alpha, double beta) { return std::min(1.0, std::max(0.0, alpha * x + beta)); }

// Values in [-4, 4] kept 0.05 away from the kinks where alpha * x + beta is 0 or 1.
NDArray AwayFromKinks(const TShape& s, uint64_t seed, double alpha, double beta) {
  NDArray x = RandomArray(s, seed, -4, 4);
  for (int64_t i = 0; i < x.Size(); ++i)
    for (double kink : {-beta / alpha, (1 - beta) / alpha})
      if (std::fabs(x.GetFlat(i) - kink) < 0.05) x.SetFlat(i, static_cast<float>(kink + 0.1));
  return x;
}
}  // namespace

TEST_CASE("hard_sigmoid forward and gradient for each alpha and beta", "[ops][hard_sigmoid][grad]") {
  for (auto ab : {std::pair<double, double>{0.2, 0.5}, {0.5, 0.25}, {-0.3, 0.6}}) {
    const double alpha = ab.first, beta = ab.second;
    INFO("alpha " << alpha << " beta " << beta);
    const KwArgs params = {{"alpha", std::to_string(alpha)}, {"beta", std::to_string(beta)}};
    NDArray x = AwayFromKinks(TShape({3, 5}), 7, alpha, beta);
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, static_cast<float>(NaiveHardSigmoid(x.GetFlat(i), alpha, beta)));
    RequireClose(RunForward("hard_sigmoid", params, {{"data", x}}), want);
    CheckGradients("hard_sigmoid", params, {{"data", x}});
  }
  // Defaults alpha 0.2, beta 0.5.
  NDArray x(TShape({4}), {-3, 0, 1, 3});
  RequireClose(RunForward("hard_sigmoid", {}, {{"data", x}}), NDArray(TShape({4}), {0, 0.5f, 0.7f, 1}));
}

TEST_CASE("hard_sigmoid runs forward and backward in float64 and float16", "[ops][hard_sigmoid]") {
  NDArray x = AwayFromKinks(TShape({2, 6}), 3, 0.2, 0.5);
  NDArray head = RandomArray(x.shape(), 4);
  for (DType t : {DType::kFloat64, DType::kFloat16}) {
    INFO(DTypeName(t));
    auto exec = BindSingleOp("hard_sigmoid", {}, {{"data", x.AsType(t)}});
    exec->Forward(true);
    exec->Backward({head.AsType(t)});
    NDArray y = exec->outputs()[0].AsType(DType::kFloat32), g = exec->grad_arrays()[0].AsType(DType::kFloat32);
    REQUIRE(exec->outputs()[0].dtype() == t);
    const float tol = t == DType::kFloat16 ? 2e-3f : 1e-6f;
    for (int64_t i = 0; i < x.Size(); ++i) {
      const double v = 0.2 * x.GetFlat(i) + 0.5;
      CHECK(y.GetFlat(i) == Approx(NaiveHardSigmoid(x.GetFlat(i), 0.2, 0.5)).margin(tol));
      CHECK(g.GetFlat(i) == Approx(v > 0 && v < 1 ? 0.2 * head.GetFlat(i) : 0.0).margin(tol));
    }
  }
}
