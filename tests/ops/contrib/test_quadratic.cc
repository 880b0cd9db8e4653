// _contrib_quadratic: a x^2 + b x + c against a naive reference for several coefficients and
// dtypes; gradient 2 a x + b by finite differences.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_contrib_quadratic computes a x^2 + b x + c", "[ops][quadratic][grad]") {
  NDArray x = RandomArray(TShape({2, 5}), 3, -2, 2);
  for (auto abc : {std::vector<double>{1, 0, 0}, {0.5, -1.5, 2}, {-2, 0.25, -0.75}}) {
    const KwArgs p = {{"a", std::to_string(abc[0])}, {"b", std::to_string(abc[1])}, {"c", std::to_string(abc[2])}};
    NDArray want = MapNaive(x, [&](double v) { return (abc[0] * v + abc[1]) * v + abc[2]; });
    RequireClose(RunForward("_contrib_quadratic", p, {{"data", x}}), want);
    CheckGradients("_contrib_quadratic", p, {{"data", x}});
    for (DType t : {DType::kFloat64, DType::kFloat16}) {
      NDArray y = Invoke("_contrib_quadratic", p, {x.AsType(t)})[0];
      CHECK(y.dtype() == t);
      RequireClose(y.AsType(DType::kFloat32), want, t == DType::kFloat16 ? 2e-2f : 1e-5f, 1e-3f);
    }
  }
  RequireClose(RunForward("_contrib_quadratic", {}, {{"data", x}}), MapNaive(x, [](double) { return 0.0; }));
}
