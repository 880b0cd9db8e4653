// moments: mean and (biased) variance over axes, with and without keepdims, against naive
// two-pass sums; gradients of both outputs by finite differences.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("moments gives the mean and variance over the axes", "[ops][moments][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 11);
  // axes (0, 2): for each middle index j, the 8 elements x[a, j, c].
  for (bool keep : {false, true}) {
    INFO("keepdims " << keep);
    auto out = Invoke("moments", {{"axes", "(0,2)"}, {"keepdims", keep ? "True" : "False"}}, {x});
    REQUIRE(out.size() == 2);
    CHECK(out[0].shape() == (keep ? TShape({1, 3, 1}) : TShape({3})));
    for (int64_t j = 0; j < 3; ++j) {
      double s = 0, ss = 0;
      for (int64_t a = 0; a < 2; ++a)
        for (int64_t c = 0; c < 4; ++c) s += x.GetFlat((a * 3 + j) * 4 + c);
      const double mean = s / 8;
      for (int64_t a = 0; a < 2; ++a)
        for (int64_t c = 0; c < 4; ++c) ss += std::pow(x.GetFlat((a * 3 + j) * 4 + c) - mean, 2);
      CHECK(out[0].GetFlat(j) == Approx(mean).margin(1e-6));
      CHECK(out[1].GetFlat(j) == Approx(ss / 8).margin(1e-6));
    }
  }
  // Every axis: shape (1,) without keepdims, as MXNet 1.x's reductions.
  auto all = Invoke("moments", {{"axes", "(0,1,2)"}}, {x});
  CHECK(all[0].shape() == TShape({1}));
  CheckGradients("moments", {{"axes", "(1,)"}}, {{"data", x}});
  CheckGradients("moments", {{"axes", "(0,2)"}, {"keepdims", "True"}}, {{"data", x}});
  CHECK_THROWS_WITH(Invoke("moments", {}, {x}), Catch::Contains("empty axes"));
  CHECK_THROWS(Invoke("moments", {{"axes", "(3,)"}}, {x}));
}
