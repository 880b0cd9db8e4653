// LayerNorm: forward along any axis with its mean and std outputs, gradients, errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("LayerNorm forward along any axis, with mean and std outputs", "[ops][LayerNorm]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 29, -2.0f, 2.0f);
  for (int axis : {-1, 1, 0}) {
    INFO("axis " << axis);
    int ra = axis < 0 ? 2 : axis;
    const auto [outer, C, inner] = SplitAtAxis(x.shape(), ra);
    NDArray g = RandomArray(TShape({C}), 30), b = RandomArray(TShape({C}), 31);
    auto exec = BindSingleOp("LayerNorm", {{"axis", std::to_string(axis)}, {"output_mean_var", "True"}},
                             {{"data", x}, {"gamma", g}, {"beta", b}}, {}, OpReq::kNull);
    exec->Forward(false);
    REQUIRE(exec->outputs().size() == 3);
    NDArray want(x.shape());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double m = 0, v = 0;
        for (int64_t k = 0; k < C; ++k) m += x.GetFlat((o * C + k) * inner + i);
        m /= C;
        for (int64_t k = 0; k < C; ++k) v += std::pow(x.GetFlat((o * C + k) * inner + i) - m, 2);
        v /= C;
        for (int64_t k = 0; k < C; ++k) {
          int64_t at = (o * C + k) * inner + i;
          want.SetFlat(at, static_cast<float>((x.GetFlat(at) - m) / std::sqrt(v + 1e-5) * g.GetFlat(k) + b.GetFlat(k)));
        }
        CHECK(exec->outputs()[1].GetFlat(o * inner + i) == Approx(m).margin(1e-5));
        CHECK(exec->outputs()[2].GetFlat(o * inner + i) == Approx(std::sqrt(v + 1e-5)).epsilon(1e-4));
      }
    RequireClose(exec->outputs()[0], want, 1e-4f);
    TShape moments = x.shape();
    moments[ra] = 1;
    CHECK(exec->outputs()[1].shape() == moments);
  }
}

TEST_CASE("LayerNorm gradients, shapes and errors", "[ops][LayerNorm][grad]") {
  for (std::string axis : {"-1", "1"}) {
    INFO(axis);
    NDArray x = RandomArray(TShape({2, 3, 2}), 32, -2.0f, 2.0f);
    int64_t C = axis == "1" ? 3 : 2;
    CheckGradients("LayerNorm", {{"axis", axis}},
                   {{"data", x}, {"gamma", RandomArray(TShape({C}), 33)}, {"beta", RandomArray(TShape({C}), 34)}});
  }
  Symbol s = Symbol::Create("LayerNorm", "ln", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"ln_output"});
  auto r = InferShape(s, {{"data", TShape({3, 7})}});
  CHECK(r.arg_shapes[1] == TShape({7}));
  Symbol bad = Symbol::Create("LayerNorm", "ln", {{"axis", "2"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(bad, {{"data", TShape({3, 7})}}), Catch::Contains("out of range"));
}
