// _identity_with_attr_like_rhs: lhs unchanged, shapes tied both ways, gradient.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_identity_with_attr_like_rhs passes lhs through and ties its shape to rhs",
          "[ops][identity_with_attr_like_rhs]") {
  NDArray x = RandomArray(TShape({3, 4}), 1);
  NDArray y = RunForward("_identity_with_attr_like_rhs", {}, {{"lhs", x}, {"rhs", NDArray(TShape({3, 4}))}});
  RequireClose(y, x, 0, 0);
  CheckGradients("_identity_with_attr_like_rhs", {}, {{"lhs", x}, {"rhs", RandomArray(TShape({3, 4}), 2)}});

  // MXNet's use: broadcast_add(w, shift) hides w's shape; tying the sum to w and feeding it to
  // FullyConnected as its weight lets the weight's shape flow back to w.
  Symbol w = Symbol::Variable("weight");
  Symbol shifted = Symbol::Create("broadcast_add", "add", {}, {{"lhs", w}, {"rhs", Symbol::Variable("shift")}});
  Symbol tied = Symbol::Create("_identity_with_attr_like_rhs", "tie", {}, {{"lhs", shifted}, {"rhs", w}});
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "11"}, {"no_bias", "true"}},
                             {{"data", Symbol::Variable("data")}, {"weight", tied}});
  auto r = InferShape(fc, {{"data", TShape({7, 100})}, {"shift", TShape({1})}});
  REQUIRE(fc.ListArguments()[1] == "weight");
  CHECK(r.arg_shapes[1] == TShape({11, 100}));
  CHECK_THAT(ErrorOf([] {
               Symbol s = Symbol::Create("_identity_with_attr_like_rhs", "t", {}, {});
               InferShape(s, {{"t_lhs", TShape({2, 3})}, {"t_rhs", TShape({3, 2})}});
             }),
             Catch::Contains("t"));
}
