// add_n / ElementWiseSum: variadic element-wise sum against a naive one, gradients, shapes.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("add_n sums its inputs element-wise", "[ops][add_n][grad]") {
  for (int n : {1, 2, 4}) {
    INFO(n << " inputs");
    std::map<std::string, NDArray> in;
    NDArray want(TShape({3, 5}));
    for (int k = 0; k < n; ++k) {
      NDArray a = RandomArray(TShape({3, 5}), 20 + k);
      in["arg" + std::to_string(k)] = a;
      for (int64_t i = 0; i < a.Size(); ++i) want.SetFlat(i, want.GetFlat(i) + a.GetFlat(i));
    }
    KwArgs p{{"num_args", std::to_string(n)}};
    RequireClose(RunForward("add_n", p, in), want);
    RequireClose(RunForward("ElementWiseSum", p, in), want);
    CheckGradients("add_n", p, in);
  }
}

TEST_CASE("add_n shapes: any input fills the others, num_args is checked", "[ops][add_n][shape]") {
  Symbol s = Symbol::Create("add_n", "s", {{"num_args", "3"}},
                            {{"arg0", Symbol::Variable("a")}, {"arg1", Symbol::Variable("b")}, {"arg2", Symbol::Variable("c")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"a", "b", "c"});
  auto r = InferShape(s, {{"b", TShape({2, 7})}});
  CHECK(r.arg_shapes[0] == TShape({2, 7}));
  CHECK(r.arg_shapes[2] == TShape({2, 7}));
  CHECK_THROWS_AS(InferShape(s, {{"a", TShape({2, 7})}, {"c", TShape({7, 2})}}), ShapeError);
  CHECK_THROWS_AS(Symbol::Create("add_n", "z", {{"num_args", "0"}}, {}), ParamError);
}
