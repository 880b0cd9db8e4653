// GroupNorm: forward against a naive reference, gradients, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("GroupNorm forward matches a naive reference", "[ops][GroupNorm]") {
  // 2 instances, 4 channels in 2 groups, 3 spatial elements: each group holds 6 elements.
  NDArray x = RandomArray(TShape({2, 4, 3}), 31, -2.0f, 2.0f), g = RandomArray(TShape({2}), 32),
          b = RandomArray(TShape({2}), 33);
  auto exec = BindSingleOp("GroupNorm", {{"num_groups", "2"}, {"eps", "0.01"}, {"output_mean_var", "true"}},
                           {{"data", x}, {"gamma", g}, {"beta", b}}, {}, OpReq::kNull);
  exec->Forward(false);
  NDArray want(x.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t grp = 0; grp < 2; ++grp) {
      const int64_t base = (n * 2 + grp) * 6;
      double m = 0, v = 0;
      for (int64_t j = 0; j < 6; ++j) m += x.GetFlat(base + j);
      m /= 6;
      for (int64_t j = 0; j < 6; ++j) v += std::pow(x.GetFlat(base + j) - m, 2);
      v /= 6;
      const double sd = std::sqrt(v + 0.01);
      for (int64_t j = 0; j < 6; ++j)
        want.SetFlat(base + j, static_cast<float>((x.GetFlat(base + j) - m) / sd * g.GetFlat(grp) + b.GetFlat(grp)));
      CHECK(exec->outputs()[1].GetFlat(n * 2 + grp) == Approx(m).margin(1e-6));
      CHECK(exec->outputs()[2].GetFlat(n * 2 + grp) == Approx(sd).epsilon(1e-6));
    }
  RequireClose(exec->outputs()[0], want);
}

TEST_CASE("GroupNorm gradients, shapes and errors", "[ops][GroupNorm][grad]") {
  CheckGradients("GroupNorm", {{"num_groups", "2"}},
                 {{"data", RandomArray(TShape({2, 4, 3}), 34, -2.0f, 2.0f)}, {"gamma", RandomArray(TShape({2}), 35)},
                  {"beta", RandomArray(TShape({2}), 36)}});
  Symbol s = Symbol::Create("GroupNorm", "gn", {{"num_groups", "3"}}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "gn_gamma", "gn_beta"});
  CHECK(s.ListOutputs() == std::vector<std::string>{"gn_output"});
  auto r = InferShape(s, {{"data", TShape({4, 6, 5})}});
  CHECK(r.arg_shapes[1] == TShape({3}));
  CHECK(r.out_shapes[0] == TShape({4, 6, 5}));
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({4, 5, 5})}}), Catch::Contains("do not split into 3 groups"));
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({4, 6})}}), Catch::Contains("rank >= 3"));
}
