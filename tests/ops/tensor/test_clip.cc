// clip: forward and gradient.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("clip forward and gradient", "[ops][clip][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 9, -2.0f, 2.0f);
  for (int64_t i = 0; i < x.Size(); ++i)  // away from the kinks at -0.5 and 1
    if (std::fabs(x.GetFlat(i) + 0.5f) < 0.05f || std::fabs(x.GetFlat(i) - 1.0f) < 0.05f) x.SetFlat(i, 0.2f);
  KwArgs p = {{"a_min", "-0.5"}, {"a_max", "1"}};
  NDArray y = RunForward("clip", p, {{"data", x}});
  for (int64_t i = 0; i < x.Size(); ++i)
    CHECK(y.GetFlat(i) == std::min(1.0f, std::max(-0.5f, x.GetFlat(i))));
  CheckGradients("clip", p, {{"data", x}});
  CHECK_THROWS_AS(Symbol::Create("clip", "c", {{"a_min", "0"}}, {}), ParamError);
}
