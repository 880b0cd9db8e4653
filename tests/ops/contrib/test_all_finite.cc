// all_finite and multi_all_finite: 1 when every element is finite, else 0, for several dtypes;
// init_output false leaves a set flag as it was.
#include <cmath>
#include <limits>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("all_finite and multi_all_finite flag non-finite elements", "[ops][all_finite]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  NDArray ok(TShape({2, 2}), {0, 1, -3, 1e30f}), with_inf(TShape({2}), {1, inf}), with_nan(TShape({3}), {nan, 0, 0});
  auto flag = [](const std::vector<NDArray>& out) {
    REQUIRE(out[0].shape() == TShape({1}));
    REQUIRE(out[0].dtype() == DType::kFloat32);
    return out[0].GetFlat(0);
  };
  CHECK(flag(Invoke("all_finite", {}, {ok})) == 1.0f);
  CHECK(flag(Invoke("all_finite", {}, {with_inf})) == 0.0f);
  CHECK(flag(Invoke("all_finite", {}, {with_nan})) == 0.0f);
  CHECK(flag(Invoke("all_finite", {}, {with_inf.AsType(DType::kFloat16)})) == 0.0f);
  CHECK(flag(Invoke("all_finite", {}, {ok.AsType(DType::kFloat64)})) == 1.0f);
  CHECK(flag(Invoke("multi_all_finite", {{"num_arrays", "2"}}, {ok, ok})) == 1.0f);
  CHECK(flag(Invoke("multi_all_finite", {{"num_arrays", "3"}}, {ok, with_nan, ok})) == 0.0f);
  // init_output false: the flag is only cleared, never set.
  NDArray cleared(TShape({1}), {0.0f});
  Invoke("multi_all_finite", {{"num_arrays", "1"}, {"init_output", "False"}}, {ok}, {cleared});
  CHECK(cleared.GetFlat(0) == 0.0f);
  NDArray set(TShape({1}), {1.0f});
  Invoke("all_finite", {{"init_output", "False"}}, {with_inf}, {set});
  CHECK(set.GetFlat(0) == 0.0f);
}
