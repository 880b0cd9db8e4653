// reshape_like: MXNet's documented shape examples, data unchanged, gradient.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
TShape Out(const KwArgs& p, const TShape& l, const TShape& r) {
  Symbol s = Symbol::Create("reshape_like", "r", p, {});
  return InferShape(s, {{"r_lhs", l}, {"r_rhs", r}}).out_shapes[0];
}
}  // namespace

TEST_CASE("reshape_like shapes, values and gradient", "[ops][reshape_like]") {
  CHECK(Out({}, TShape({6}), TShape({3, 2})) == TShape({3, 2}));
  CHECK(Out({{"lhs_begin", "0"}, {"lhs_end", "1"}, {"rhs_begin", "0"}, {"rhs_end", "2"}}, TShape({30, 7}),
            TShape({15, 2, 4})) == TShape({15, 2, 7}));
  CHECK(Out({{"lhs_begin", "0"}, {"lhs_end", "2"}, {"rhs_begin", "1"}, {"rhs_end", "2"}}, TShape({3, 5}),
            TShape({1, 15, 4})) == TShape({15}));
  CHECK(Out({{"lhs_begin", "-1"}, {"lhs_end", "None"}, {"rhs_begin", "1"}, {"rhs_end", "None"}}, TShape({30, 12}),
            TShape({4, 2, 2, 3})) == TShape({30, 2, 2, 3}));
  CHECK_THAT(ErrorOf([] { Out({}, TShape({6}), TShape({4, 2})); }), Catch::Contains("different size"));
  CHECK_THAT(ErrorOf([] { Out({{"lhs_begin", "1"}, {"lhs_end", "1"}}, TShape({6}), TShape({6})); }),
             Catch::Contains("invalid lhs_begin=1, lhs_end=1"));
  NDArray x = RandomArray(TShape({2, 6}), 1);
  NDArray y = RunForward("reshape_like", {}, {{"lhs", x}, {"rhs", NDArray(TShape({3, 4}))}});
  REQUIRE(y.shape() == TShape({3, 4}));
  RequireClose(y, x.Reshape(TShape({3, 4})), 0, 0);
  CheckGradients("reshape_like", {}, {{"lhs", x}, {"rhs", RandomArray(TShape({4, 3}), 2)}});
}

TEST_CASE("reshape_like and broadcast_like read only rhs's shape", "[ops][reshape_like][broadcast_to]") {
  NDArray x = RandomArray(TShape({2, 1}), 4);
  NDArray ints(TShape({1, 2, 3}), DType::kInt32);
  NDArray y = RunForward("reshape_like", {{"lhs_begin", "0"}, {"lhs_end", "1"}, {"rhs_begin", "0"}, {"rhs_end", "2"}},
                         {{"lhs", x}, {"rhs", ints}});
  CHECK(y.shape() == TShape({1, 2, 1}));
  NDArray b = RunForward("broadcast_like", {}, {{"lhs", x}, {"rhs", NDArray(TShape({2, 5}), DType::kInt64)}});
  REQUIRE(b.shape() == TShape({2, 5}));
  CHECK(b.dtype() == DType::kFloat32);
  CHECK(b.At({1, 4}) == x.At({1, 0}));
}
