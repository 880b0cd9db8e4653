// SwapAxis / swapaxes: against a naive loop, negative axes, shape inference both ways, gradient.
#include "../../op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("SwapAxis exchanges two axes and swaps the gradient back", "[ops][swapaxis]") {
  const NDArray x = RandomArray({2, 3, 4}, 1);
  const NDArray y = RunForward("SwapAxis", {{"dim1", "0"}, {"dim2", "2"}}, {{"data", x}});
  REQUIRE(y.shape() == TShape({4, 3, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) CHECK(y.At({k, j, i}) == x.At({i, j, k}));
  const NDArray z = RunForward("swapaxes", {{"dim1", "-1"}, {"dim2", "1"}}, {{"data", x}});
  REQUIRE(z.shape() == TShape({2, 4, 3}));
  CHECK(z.At({1, 3, 2}) == x.At({1, 2, 3}));
  RequireClose(RunForward("SwapAxis", {}, {{"data", x}}), x, 0, 0);  // dim1 = dim2 = 0
  CheckGradients("SwapAxis", {{"dim1", "0"}, {"dim2", "1"}}, {{"data", x}});
  Symbol s = SingleOpSymbol("SwapAxis", {{"dim1", "1"}, {"dim2", "2"}});
  CHECK(InferShape(s, {{"op_data", TShape({5, 6, 7})}}).out_shapes[0] == TShape({5, 7, 6}));
  CHECK_THROWS_AS(InferShape(s, {{"op_data", TShape({5, 6})}}), ShapeError);
}
