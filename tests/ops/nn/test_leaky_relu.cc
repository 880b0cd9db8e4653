// LeakyReLU: every act_type forward against naive references, gradients, rrelu sampling.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const double kAlpha = 1.6732632423543772848170429916717, kLambda = 1.0507009873554804934193349852946;

}  // namespace

TEST_CASE("LeakyReLU forward for leaky, elu, selu, gelu and rrelu inference", "[ops][LeakyReLU]") {
  NDArray x = RandomArray(TShape({3, 4}), 1, -3.0f, 3.0f);
  RequireClose(RunForward("LeakyReLU", {}, {{"data", x}}),
               MapNaive(x, [](double v) { return v > 0 ? v : 0.25 * v; }));
  RequireClose(RunForward("LeakyReLU", {{"act_type", "elu"}, {"slope", "0.7"}}, {{"data", x}}),
               MapNaive(x, [](double v) { return v > 0 ? v : 0.7 * (std::exp(v) - 1); }));
  RequireClose(RunForward("LeakyReLU", {{"act_type", "selu"}}, {{"data", x}}),
               MapNaive(x, [](double v) { return kLambda * (v > 0 ? v : kAlpha * (std::exp(v) - 1)); }));
  RequireClose(RunForward("LeakyReLU", {{"act_type", "gelu"}}, {{"data", x}}),
               MapNaive(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }));
  RequireClose(RunForward("LeakyReLU", {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.3"}},
                          {{"data", x}}),
               MapNaive(x, [](double v) { return v > 0 ? v : 0.2 * v; }));
}

TEST_CASE("LeakyReLU gradients", "[ops][LeakyReLU][grad]") {
  NDArray x = AwayFromZero(TShape({2, 5}), 2);
  for (std::string t : {"leaky", "elu", "gelu"}) {
    INFO(t);
    CheckGradients("LeakyReLU", {{"act_type", t}, {"slope", "0.4"}}, {{"data", x}});
  }
  // rrelu in inference: a fixed slope.
  CheckGradients("LeakyReLU", {{"act_type", "rrelu"}}, {{"data", x}});
  // selu: MXNet's own test checks finite differences on small inputs only, where its
  // gradient formula lambda * (alpha + y) is close to the true one.
  NDArray small = RandomArray(TShape({3, 4}), 3, -0.1f, 0.1f);
  for (int64_t i = 0; i < small.Size(); ++i)
    if (std::fabs(small.GetFlat(i)) < 0.01f) small.SetFlat(i, 0.01f);
  CheckGradients("LeakyReLU", {{"act_type", "selu"}}, {{"data", small}});
}

TEST_CASE("LeakyReLU selu gradient follows MXNet's selu_grad", "[ops][LeakyReLU][grad]") {
  NDArray x = AwayFromZero(TShape({8}), 4, -3.0f, 3.0f);
  auto exec = BindSingleOp("LeakyReLU", {{"act_type", "selu"}}, {{"data", x}});
  exec->Forward(true);
  NDArray head = RandomArray(TShape({8}), 5);
  exec->Backward({head});
  for (int64_t i = 0; i < 8; ++i) {
    double y = exec->outputs()[0].GetFlat(i);
    double want = head.GetFlat(i) * kLambda * (y > 0 ? 1.0 : kAlpha + y);
    CHECK(exec->grad_arrays()[0].GetFlat(i) == Approx(want).epsilon(1e-5).margin(1e-6));
  }
}

TEST_CASE("LeakyReLU prelu: per-channel gamma, broadcasting, gradients", "[ops][LeakyReLU][grad]") {
  NDArray x = AwayFromZero(TShape({2, 3, 2}), 6);
  NDArray g = RandomArray(TShape({3}), 7, 0.1f, 0.5f);
  NDArray y = RunForward("LeakyReLU", {{"act_type", "prelu"}}, {{"data", x}, {"gamma", g}});
  NDArray want(x.shape());
  for (int64_t i = 0; i < x.Size(); ++i) {
    double v = x.GetFlat(i);
    want.SetFlat(i, static_cast<float>(v > 0 ? v : v * g.GetFlat((i / 2) % 3)));
  }
  RequireClose(y, want);
  CheckGradients("LeakyReLU", {{"act_type", "prelu"}}, {{"data", x}, {"gamma", g}});
  CheckGradients("LeakyReLU", {{"act_type", "prelu"}}, {{"data", x}, {"gamma", NDArray(TShape({1}), {0.3f})}});
  CheckGradients("LeakyReLU", {{"act_type", "prelu"}}, {{"data", x}, {"gamma", RandomArray(TShape({2, 3}), 8)}});

  Symbol s = Symbol::Create("LeakyReLU", "act", {{"act_type", "prelu"}}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "act_gamma"});
  CHECK(InferShape(s, {{"data", TShape({4, 6, 5, 5})}}).arg_shapes[1] == TShape({6}));
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({4, 6, 5, 5})}, {"act_gamma", TShape({5})}}),
                    Catch::Contains("cannot broadcast gamma"));
  Symbol plain = Symbol::Create("LeakyReLU", "act", {}, {{"data", Symbol::Variable("data")}});
  CHECK(plain.ListArguments() == std::vector<std::string>{"data"});
  CHECK_THROWS_AS(Symbol::Create("LeakyReLU", "act", {{"act_type", "swish"}}, {}), ParamError);
}

TEST_CASE("LeakyReLU rrelu training samples slopes from the node seed", "[ops][LeakyReLU]") {
  NDArray x = AwayFromZero(TShape({50, 40}), 9);
  KwArgs kw{{"act_type", "rrelu"}};
  auto e1 = BindSingleOp("LeakyReLU", kw, {{"data", x}});
  auto e2 = BindSingleOp("LeakyReLU", kw, {{"data", x}});
  e1->Forward(true);
  e2->Forward(true);
  RequireClose(e1->outputs()[0], e2->outputs()[0], 0.0f, 0.0f);
  const NDArray& y = e1->outputs()[0];
  double sum = 0;
  int64_t neg = 0;
  for (int64_t i = 0; i < x.Size(); ++i) {
    double v = x.GetFlat(i);
    if (v > 0) {
      CHECK(y.GetFlat(i) == static_cast<float>(v));
      continue;
    }
    double slope = y.GetFlat(i) / v;
    REQUIRE(slope >= 0.125 - 1e-5);
    REQUIRE(slope < 0.334 + 1e-5);
    sum += slope;
    ++neg;
  }
  CHECK(sum / neg == Approx((0.125 + 0.334) / 2).margin(0.01));
  // The backward uses the sampled slopes.
  NDArray head = RandomArray(x.shape(), 10);
  e1->Backward({head});
  for (int64_t i = 0; i < x.Size(); ++i) {
    double slope = x.GetFlat(i) > 0 ? 1.0 : y.GetFlat(i) / x.GetFlat(i);
    REQUIRE(e1->grad_arrays()[0].GetFlat(i) == Approx(head.GetFlat(i) * slope).epsilon(1e-4).margin(1e-6));
  }
  // A second run draws new slopes.
  NDArray first = y.Copy();
  e1->Forward(true);
  bool differs = false;
  for (int64_t i = 0; i < x.Size() && !differs; ++i) differs = first.GetFlat(i) != e1->outputs()[0].GetFlat(i);
  CHECK(differs);
}

