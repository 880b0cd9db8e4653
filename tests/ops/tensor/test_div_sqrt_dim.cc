// _contrib_div_sqrt_dim: data / sqrt(last dim), gradients, shapes both ways.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_contrib_div_sqrt_dim scales by the square root of the last dimension", "[ops][div_sqrt_dim][grad]") {
  for (TShape s : {TShape({2, 3, 4}), TShape({5}), TShape({2, 9})}) {
    INFO(s);
    NDArray x = RandomArray(s, 3);
    NDArray want(s);
    for (int64_t i = 0; i < x.Size(); ++i)
      want.SetFlat(i, static_cast<float>(x.GetFlat(i) / std::sqrt(static_cast<double>(s[s.ndim() - 1]))));
    RequireClose(RunForward("_contrib_div_sqrt_dim", {}, {{"data", x}}), want);
    CheckGradients("_contrib_div_sqrt_dim", {}, {{"data", x}});
  }
  Symbol sym = Symbol::Create("_contrib_div_sqrt_dim", "d", {}, {{"data", Symbol::Variable("x")}});
  Symbol twice = Symbol::Create("elemwise_add", "a", {}, {{"lhs", sym}, {"rhs", Symbol::Variable("y")}});
  CHECK(InferShape(twice, {{"y", TShape({3, 4})}}).arg_shapes[0] == TShape({3, 4}));
}
