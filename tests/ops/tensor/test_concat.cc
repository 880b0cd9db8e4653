// Concat: forward, gradients and shape inference both ways.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Concat forward and gradients", "[ops][Concat][grad]") {
  NDArray a = RandomArray(TShape({2, 1, 3}), 10), b = RandomArray(TShape({2, 2, 3}), 11),
          c = RandomArray(TShape({2, 3, 3}), 12);
  NDArray y = RunForward("Concat", {{"num_args", "3"}, {"dim", "1"}}, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  REQUIRE(y.shape() == TShape({2, 6, 3}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ch = 0; ch < 6; ++ch)
      for (int64_t k = 0; k < 3; ++k) {
        float want = ch < 1 ? a.GetFlat((n * 1 + ch) * 3 + k)
                     : ch < 3 ? b.GetFlat((n * 2 + ch - 1) * 3 + k)
                              : c.GetFlat((n * 3 + ch - 3) * 3 + k);
        CHECK(y.GetFlat((n * 6 + ch) * 3 + k) == want);
      }
  CheckGradients("Concat", {{"num_args", "3"}, {"dim", "1"}}, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  NDArray p = RandomArray(TShape({2, 3, 1}), 13), q = RandomArray(TShape({2, 3, 2}), 14);
  NDArray z = RunForward("concat", {{"num_args", "2"}, {"dim", "-1"}}, {{"arg0", p}, {"arg1", q}});
  REQUIRE(z.shape() == TShape({2, 3, 3}));
  for (int64_t r = 0; r < 6; ++r) {
    CHECK(z.GetFlat(r * 3) == p.GetFlat(r));
    CHECK(z.GetFlat(r * 3 + 1) == q.GetFlat(r * 2));
    CHECK(z.GetFlat(r * 3 + 2) == q.GetFlat(r * 2 + 1));
  }
  CheckGradients("Concat", {{"num_args", "2"}, {"dim", "0"}},
                 {{"arg0", RandomArray(TShape({1, 3}), 15)}, {"arg1", RandomArray(TShape({2, 3}), 16)}});
  // One input without a gradient.
  GradCheckOptions opt;
  opt.no_grad = {"arg0"};
  CheckGradients("Concat", {{"num_args", "2"}}, {{"arg0", p}, {"arg1", RandomArray(TShape({2, 1, 1}), 17)}}, opt);
}

TEST_CASE("Concat shape inference both ways", "[ops][Concat][shape]") {
  Symbol x = Symbol::Variable("x"), y = Symbol::Variable("y"), z = Symbol::Variable("z");
  Symbol c = Symbol::Create("Concat", "cat", {}, {}, {x, y, z});  // num_args from composition
  CHECK(c.ListArguments() == std::vector<std::string>{"x", "y", "z"});
  auto r = InferShape(c, {{"x", TShape({2, 3, 4})}, {"y", TShape({2, 5, 4})}, {"z", TShape({2, 1, 4})}});
  CHECK(r.out_shapes[0] == TShape({2, 9, 4}));
  // Unknown dims of the inputs come from the others, the concat dim of one from the output.
  Symbol out = Symbol::Variable("o");
  Symbol add = Symbol::Create("elemwise_add", "add", {}, {{"lhs", c}, {"rhs", out}});
  auto r2 = InferShape(add, {{"x", TShape({2, 3, 4})}, {"y", TShape({-1, 5, -1})}, {"z", TShape({-1, -1, 4})},
                             {"o", TShape({2, 10, 4})}});
  CHECK(r2.arg_shapes[1] == TShape({2, 5, 4}));
  CHECK(r2.arg_shapes[2] == TShape({2, 2, 4}));
  CHECK_THAT(ErrorOf([&] { InferShape(c, {{"x", TShape({2, 3, 4})}, {"y", TShape({2, 5, 5})}, {"z", TShape({2, 1, 4})}}); }),
             Catch::Contains("Concat: incompatible shape for arg1"));
  CHECK_THAT(ErrorOf([&] { InferShape(Symbol::Create("Concat", "c3", {{"dim", "3"}}, {}, {x, y}), {{"x", TShape({2, 3})}}); }),
             Catch::Contains("axis 3 is out of range"));
}
