// reset_arrays zeroes every input in place, of any dtype, and returns nothing.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("reset_arrays zeroes its inputs in place", "[ops][reset_arrays]") {
  NDArray a = RandomArray(TShape({2, 3}), 1);
  NDArray b = RandomArray(TShape({4}), 2).AsType(DType::kFloat64);
  NDArray c(TShape({3}), DType::kInt32);
  for (int i = 0; i < 3; ++i) c.data<int32_t>()[i] = i + 7;
  NDArray untouched = RandomArray(TShape({2}), 3);
  const std::vector<float> before = untouched.ToVector();
  std::vector<NDArray> out = Invoke("reset_arrays", {{"num_arrays", "3"}}, std::vector<NDArray>{a, b, c});
  CHECK(out.empty());
  CHECK(a.ToVector() == std::vector<float>(6, 0.0f));
  for (int i = 0; i < 4; ++i) CHECK(b.data<double>()[i] == 0.0);
  for (int i = 0; i < 3; ++i) CHECK(c.data<int32_t>()[i] == 0);
  CHECK(untouched.ToVector() == before);
  CHECK_THROWS_AS(Invoke("reset_arrays", {{"num_arrays", "0"}}, std::vector<NDArray>{}), ParamError);
  CHECK_THROWS(Invoke("reset_arrays", {{"num_arrays", "2"}}, std::vector<NDArray>{a}));
}
