// transpose: forward, gradient and shape inference.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("transpose forward, gradient and shape inference", "[ops][transpose][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 2);
  for (std::string axes : {"()", "(1,0,2)", "(2,0,1)", "(0,2,1)"}) {
    INFO(axes);
    std::vector<int64_t> ax = {2, 1, 0};
    if (axes != "()") {
      TShape t = TShape::Parse(axes);
      ax = t.dims();
    }
    NDArray y = RunForward("transpose", {{"axes", axes}}, {{"data", x}});
    TShape ws({x.shape()[ax[0]], x.shape()[ax[1]], x.shape()[ax[2]]});
    REQUIRE(y.shape() == ws);
    for (int64_t k = 0; k < y.Size(); ++k) {
      auto oi = Unravel(k, ws);
      std::vector<int64_t> ii(3);
      for (int d = 0; d < 3; ++d) ii[ax[d]] = oi[d];
      CHECK(y.GetFlat(k) == x.GetFlat(Ravel(ii, x.shape())));
    }
    CheckGradients("transpose", {{"axes", axes}}, {{"data", RandomArray(TShape({2, 3, 2}), 3)}});
  }
  // Both directions: the input from the output.
  Symbol t = Symbol::Create("transpose", "t", {{"axes", "(1,2,0)"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", t}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({3, 4, 2})}}).arg_shapes[0] == TShape({2, 3, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("transpose", {{"axes", "(0,0,1)"}}, TShape({2, 3, 4})); }),
             Catch::Contains("not a permutation"));
  CHECK_THAT(ErrorOf([] { OutShape("transpose", {{"axes", "(1,0)"}}, TShape({2, 3, 4})); }),
             Catch::Contains("has 2 entries but the input has 3 dimensions"));
}
