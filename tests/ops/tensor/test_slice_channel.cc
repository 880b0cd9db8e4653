// SliceChannel: forward, gradient and shapes.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("SliceChannel forward, gradient and shapes", "[ops][SliceChannel][grad]") {
  NDArray x = RandomArray(TShape({2, 6, 2}), 18);
  auto exec = BindSingleOp("SliceChannel", {{"num_outputs", "3"}}, {{"data", x}}, {}, OpReq::kNull);
  exec->Forward(false);
  REQUIRE(exec->outputs().size() == 3);
  for (int64_t i = 0; i < 3; ++i) {
    const NDArray& o = exec->outputs()[i];
    REQUIRE(o.shape() == TShape({2, 2, 2}));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t k = 0; k < 2; ++k) CHECK(o.GetFlat((n * 2 + c) * 2 + k) == x.GetFlat((n * 6 + i * 2 + c) * 2 + k));
  }
  CHECK(exec->symbol().ListOutputs() == std::vector<std::string>{"op_output0", "op_output1", "op_output2"});
  CheckGradients("SliceChannel", {{"num_outputs", "3"}}, {{"data", x}});
  CheckGradients("split", {{"num_outputs", "2"}, {"axis", "-1"}, {"squeeze_axis", "True"}}, {{"data", x}});
  CHECK(OutShape("SliceChannel", {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "1"}}, TShape({2, 3})) ==
        TShape({3}));
  // The input from an output.
  Symbol s = Symbol::Create("SliceChannel", "s", {{"num_outputs", "2"}, {"axis", "0"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", s[1]}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({3, 4})}}).arg_shapes[0] == TShape({6, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("SliceChannel", {{"num_outputs", "4"}}, TShape({2, 6})); }),
             Catch::Contains("4 does not evenly divide 6"));
  CHECK_THAT(ErrorOf([] { OutShape("SliceChannel", {{"num_outputs", "2"}, {"squeeze_axis", "True"}}, TShape({2, 6})); }),
             Catch::Contains("must be the same as num_outputs"));
}

// ------------------------------------------------------------------------------------------
// slice / slice_axis / slice_like


TEST_CASE("SliceChannel: one known output fixes the others and the input", "[ops][SliceChannel][shape]") {
  // a = (?, 10) split into 10 squeezed outputs; output 1 + c with c = (5,) fixes the batch.
  Symbol a = Symbol::Variable("a");
  Symbol parts = Symbol::Create("SliceChannel", "split",
                                {{"num_outputs", "10"}, {"axis", "1"}, {"squeeze_axis", "true"}}, {{"data", a}});
  Symbol sum = Symbol::Create("elemwise_add", "sum", {}, {{"lhs", parts[1]}, {"rhs", Symbol::Variable("c")}});
  auto r = InferShape(sum, {{"a", TShape({-1, 10})}, {"c", TShape({5})}});
  CHECK(r.arg_shapes[0] == TShape({5, 10}));
}
