// InstanceNorm: forward against a naive reference, gradients, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("InstanceNorm forward matches a naive reference", "[ops][InstanceNorm]") {
  NDArray x = RandomArray(TShape({2, 3, 2, 3}), 21, -2.0f, 2.0f), g = RandomArray(TShape({3}), 22),
          b = RandomArray(TShape({3}), 23);
  auto exec = BindSingleOp("InstanceNorm", {{"eps", "0.01"}}, {{"data", x}, {"gamma", g}, {"beta", b}}, {}, OpReq::kNull);
  exec->Forward(false);
  NDArray want(x.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      double m = 0, v = 0;
      for (int64_t j = 0; j < 6; ++j) m += x.GetFlat((n * 3 + c) * 6 + j);
      m /= 6;
      for (int64_t j = 0; j < 6; ++j) v += std::pow(x.GetFlat((n * 3 + c) * 6 + j) - m, 2);
      v /= 6;
      for (int64_t j = 0; j < 6; ++j) {
        int64_t at = (n * 3 + c) * 6 + j;
        want.SetFlat(at, static_cast<float>((x.GetFlat(at) - m) / std::sqrt(v + 0.01) * g.GetFlat(c) + b.GetFlat(c)));
      }
    }
  RequireClose(exec->outputs()[0], want);
  CHECK(exec->outputs().size() == 1);
}

TEST_CASE("InstanceNorm gradients, shapes and errors", "[ops][InstanceNorm][grad]") {
  CheckGradients("InstanceNorm", {},
                 {{"data", RandomArray(TShape({2, 2, 3}), 24, -2.0f, 2.0f)}, {"gamma", RandomArray(TShape({2}), 25)},
                  {"beta", RandomArray(TShape({2}), 26)}});
  Symbol s = Symbol::Create("InstanceNorm", "in0", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "in0_gamma", "in0_beta"});
  auto r = InferShape(s, {{"data", TShape({4, 5, 6})}});
  CHECK(r.arg_shapes[1] == TShape({5}));
  CHECK(r.out_shapes[0] == TShape({4, 5, 6}));
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({4, 5})}}), Catch::Contains("rank >= 3"));
}
