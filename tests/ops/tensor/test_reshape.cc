// Flatten, Reshape, expand_dims, squeeze: special values, inference both ways, gradients.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Flatten forward and gradient", "[ops][flatten][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 13);
  NDArray y = RunForward("Flatten", {}, {{"data", x}});
  CHECK(y.shape() == TShape({2, 12}));
  RequireClose(y, x.Reshape(TShape({2, 12})));
  CheckGradients("Flatten", {}, {{"data", x}});
}

TEST_CASE("Reshape special values", "[ops][Reshape][shape]") {
  struct Case {
    TShape in;
    std::string shape;
    bool reverse;
    TShape want;
  };
  // MXNet's documented examples.
  std::vector<Case> cases = {
      {TShape({2, 3, 4}), "(4,0,2)", false, TShape({4, 3, 2})},
      {TShape({2, 3, 4}), "(2,0,0)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(6,1,-1)", false, TShape({6, 1, 4})},
      {TShape({2, 3, 4}), "(3,-1,8)", false, TShape({3, 1, 8})},
      {TShape({2, 3, 4}), "(-1,)", false, TShape({24})},
      {TShape({2, 3, 4}), "(-2,)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(2,-2)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(-2,1,1)", false, TShape({2, 3, 4, 1, 1})},
      {TShape({2, 3, 4, 5}), "(-3,-3)", false, TShape({6, 20})},
      {TShape({2, 3, 4}), "(0,-3)", false, TShape({2, 12})},
      {TShape({2, 3, 4, 5}), "(-3,-2)", false, TShape({6, 4, 5})},
      {TShape({2, 3, 4}), "(-4,1,2,-2)", false, TShape({1, 2, 3, 4})},
      {TShape({2, 3, 4}), "(2,-4,-1,3,-2)", false, TShape({2, 1, 3, 4})},
      // -1 consumes a source dim, so the 0 after it copies dim 1 (MXNet's documented example).
      {TShape({10, 5, 4}), "(-1,0)", false, TShape({40, 5})},
      {TShape({10, 5, 4}), "(-1,0)", true, TShape({50, 4})},
  };
  for (auto& c : cases) {
    INFO(c.in << " shape=" << c.shape << " reverse=" << c.reverse);
    KwArgs p = {{"shape", c.shape}, {"reverse", c.reverse ? "True" : "False"}};
    CHECK(OutShape("Reshape", p, c.in) == c.want);
  }
  // Legacy target_shape (0 = infer) and keep_highest.
  CHECK(OutShape("Reshape", {{"target_shape", "(0,4)"}}, TShape({2, 3, 4})) == TShape({6, 4}));
  CHECK(OutShape("Reshape", {{"target_shape", "(7,0)"}, {"keep_highest", "True"}}, TShape({2, 3, 4})) ==
        TShape({2, 12}));
  // Backward inference: the one unknown input dim from the output.
  Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(-1,6)"}}, {{"data", Symbol::Variable("data")}});
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "3"}}, {{"data", r}});
  auto res = InferShapePartial(fc, {{"data", TShape({-1, 2, 3})}});
  CHECK(res.out_shapes[0].ndim() == 2);
  // Errors.
  CHECK_THAT(ErrorOf([] { OutShape("reshape", {{"shape", "(-1,-1)"}}, TShape({2, 3})); }),
             Catch::Contains("one and only one dim can be inferred"));
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(5,-1)"}}, TShape({2, 3})); }),
             Catch::Contains("does not divide"));
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(4,4)"}}, TShape({2, 3})); }),
             Catch::Contains("has 16 elements but the input (2,3) has 6"));
  // (-3,) alone merges the first two dims and drops the rest: a size mismatch.
  CHECK_THROWS_AS(OutShape("Reshape", {{"shape", "(-3,)"}}, TShape({2, 3, 4, 5})), ShapeError);
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(-4,4,-1)"}}, TShape({6, 3})); }),
             Catch::Contains("do not divide original dim 6"));
}

TEST_CASE("Reshape infers its input from the output", "[ops][Reshape][shape]") {
  Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(0,-1)"}}, {{"data", Symbol::Variable("data")}});
  auto res = InferShapePartial(r, {{"data", TShape({4, -1, 3})}});
  CHECK(res.out_shapes[0] == TShape({4, -1}));
  // Given the output (through a following op) the missing input dim is filled.
  Symbol e = Symbol::Create("elemwise_add", "add", {}, {{"lhs", r}, {"rhs", Symbol::Variable("other")}});
  auto full = InferShape(e, {{"data", TShape({4, -1, 3})}, {"other", TShape({4, 6})}});
  CHECK(full.arg_shapes[0] == TShape({4, 2, 3}));
}

TEST_CASE("Reshape family forward and gradients", "[ops][Reshape][Flatten][expand_dims][squeeze][grad]") {
  NDArray x = RandomArray(TShape({2, 1, 3}), 1);
  struct Case {
    std::string op;
    KwArgs params;
    TShape want;
  };
  std::vector<Case> cases = {{"Reshape", {{"shape", "(3,-1)"}}, TShape({3, 2})},
                             {"Flatten", {}, TShape({2, 3})},
                             {"expand_dims", {{"axis", "-1"}}, TShape({2, 1, 3, 1})},
                             {"expand_dims", {{"axis", "0"}}, TShape({1, 2, 1, 3})},
                             {"squeeze", {}, TShape({2, 3})},
                             {"squeeze", {{"axis", "(1,)"}}, TShape({2, 3})},
                             {"squeeze", {{"axis", "-2"}}, TShape({2, 3})}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray y = RunForward(c.op, c.params, {{"data", x}});
    REQUIRE(y.shape() == c.want);
    for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == x.GetFlat(i));
    CheckGradients(c.op, c.params, {{"data", x}});
  }
}

TEST_CASE("expand_dims and squeeze shapes and errors", "[ops][expand_dims][squeeze][shape]") {
  CHECK(OutShape("expand_dims", {{"axis", "3"}}, TShape({2, 3, 4})) == TShape({2, 3, 4, 1}));
  CHECK(OutShape("expand_dims", {{"axis", "-4"}}, TShape({2, 3, 4})) == TShape({1, 2, 3, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("expand_dims", {{"axis", "4"}}, TShape({2, 3, 4})); }),
             Catch::Contains("axis must be in the range [-4, 3] (4 provided)"));
  // expand_dims infers its input from the output.
  Symbol e = Symbol::Create("expand_dims", "e", {{"axis", "1"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", e}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({5, 1, 7})}}).arg_shapes[0] == TShape({5, 7}));
  CHECK(OutShape("squeeze", {}, TShape({1, 1, 1})) == TShape({1}));
  CHECK(OutShape("squeeze", {{"axis", "None"}}, TShape({1, 3, 1})) == TShape({3}));
  CHECK(OutShape("squeeze", {{"axis", "(0,2)"}}, TShape({1, 3, 1})) == TShape({3}));
  CHECK_THAT(ErrorOf([] { OutShape("squeeze", {{"axis", "(1,)"}}, TShape({1, 3, 1})); }),
             Catch::Contains("size=3 not equal to one"));
  CHECK_THROWS_AS(Symbol::Create("expand_dims", "x", {}, {}), ParamError);  // axis is required
}
