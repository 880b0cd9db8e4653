// LeakyReLU, softmax / log_softmax / SoftmaxActivation, standalone sigmoid / tanh / relu and
// Dropout: forward against naive references, gradients, shapes, randomness, errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Values in [lo, hi) with |x| >= 0.05, so finite differences stay clear of the kink at 0.
NDArray AwayFromZero(const TShape& s, uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  NDArray a = RandomArray(s, seed, lo, hi);
  for (int64_t i = 0; i < a.Size(); ++i)
    if (std::fabs(a.GetFlat(i)) < 0.05f) a.SetFlat(i, a.GetFlat(i) < 0 ? -0.3f : 0.3f);
  return a;
}

NDArray MapNaive(const NDArray& x, const std::function<double(double)>& f) {
  NDArray y(x.shape());
  for (int64_t i = 0; i < x.Size(); ++i) y.SetFlat(i, static_cast<float>(f(x.GetFlat(i))));
  return y;
}

const double kAlpha = 1.6732632423543772848170429916717, kLambda = 1.0507009873554804934193349852946;
}  // namespace

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
namespace {
// Naive (log-)softmax along `axis` of x / t.
NDArray NaiveSoftmax(const NDArray& x, int axis, double t, bool log) {
  const TShape& s = x.shape();
  int64_t outer = 1, inner = 1, n = s[axis];
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) inner *= s[i];
  NDArray y(s);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double z = 0;
      for (int64_t k = 0; k < n; ++k) z += std::exp(x.GetFlat((o * n + k) * inner + i) / t);
      for (int64_t k = 0; k < n; ++k) {
        int64_t at = (o * n + k) * inner + i;
        double v = x.GetFlat(at) / t;
        y.SetFlat(at, static_cast<float>(log ? v - std::log(z) : std::exp(v) / z));
      }
    }
  return y;
}
}  // namespace

TEST_CASE("softmax and log_softmax forward along an axis with temperature", "[ops][softmax]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 11, -3.0f, 3.0f);
  for (bool log : {false, true}) {
    std::string op = log ? "log_softmax" : "softmax";
    INFO(op);
    RequireClose(RunForward(op, {}, {{"data", x}}), NaiveSoftmax(x, 2, 1.0, log));
    RequireClose(RunForward(op, {{"axis", "1"}}, {{"data", x}}), NaiveSoftmax(x, 1, 1.0, log));
    RequireClose(RunForward(op, {{"axis", "0"}, {"temperature", "2.5"}}, {{"data", x}}),
                 NaiveSoftmax(x, 0, 2.5, log));
    RequireClose(RunForward(op, {{"axis", "-2"}, {"temperature", "None"}, {"use_length", "False"}}, {{"data", x}}),
                 NaiveSoftmax(x, 1, 1.0, log));
  }
}

TEST_CASE("softmax and log_softmax gradients", "[ops][softmax][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 2}), 12, -2.0f, 2.0f);
  for (std::string op : {"softmax", "log_softmax"}) {
    INFO(op);
    CheckGradients(op, {}, {{"data", x}});
    CheckGradients(op, {{"axis", "1"}, {"temperature", "0.7"}}, {{"data", x}});
  }
}

TEST_CASE("softmax dtype, shapes and errors", "[ops][softmax][shape]") {
  NDArray x = RandomArray(TShape({2, 3}), 13);
  NDArray y = RunForward("softmax", {{"dtype", "float64"}}, {{"data", x}});
  CHECK(y.dtype() == DType::kFloat64);
  RequireClose(y.AsType(DType::kFloat32), NaiveSoftmax(x, 1, 1.0, false));
  CheckGradients("softmax", {{"dtype", "float64"}}, {{"data", x}});

  Symbol s = Symbol::Create("softmax", "sm", {{"axis", "2"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({2, 3})}}), Catch::Contains("axis 2 is out of range"));
  CHECK_THROWS_WITH(Symbol::Create("softmax", "sm", {{"use_length", "True"}}, {}),
                    Catch::Contains("use_length=True"));
  CHECK_THROWS_AS(Symbol::Create("log_softmax", "sm", {{"dtype", "int8"}}, {}), ParamError);
}

TEST_CASE("SoftmaxActivation instance and channel modes", "[ops][SoftmaxActivation][grad]") {
  NDArray x2 = RandomArray(TShape({3, 4}), 14, -2.0f, 2.0f);
  RequireClose(RunForward("SoftmaxActivation", {}, {{"data", x2}}), NaiveSoftmax(x2, 1, 1.0, false));
  NDArray x3 = RandomArray(TShape({2, 3, 2}), 15, -2.0f, 2.0f);
  // instance mode softmaxes over the last axis (MXNet's FlatTo2D), channel mode over axis 1.
  RequireClose(RunForward("SoftmaxActivation", {{"mode", "instance"}}, {{"data", x3}}), NaiveSoftmax(x3, 2, 1.0, false));
  RequireClose(RunForward("SoftmaxActivation", {{"mode", "channel"}}, {{"data", x3}}), NaiveSoftmax(x3, 1, 1.0, false));
  CheckGradients("SoftmaxActivation", {}, {{"data", x2}});
  CheckGradients("SoftmaxActivation", {{"mode", "channel"}}, {{"data", x3}});
  Symbol s = Symbol::Create("SoftmaxActivation", "sa", {{"mode", "channel"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({2, 3})}}), Catch::Contains("at least 3 dimensions"));
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("Standalone sigmoid, tanh and relu", "[ops][unary_activation][grad]") {
  NDArray x = AwayFromZero(TShape({3, 4}), 16);
  std::map<std::string, std::function<double(double)>> ref{
      {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"relu", [](double v) { return v > 0 ? v : 0; }}};
  for (auto& kv : ref) {
    INFO(kv.first);
    RequireClose(RunForward(kv.first, {}, {{"data", x}}), MapNaive(x, kv.second));
    CheckGradients(kv.first, {}, {{"data", x}});
    Symbol s = Symbol::Create(kv.first, "u", {}, {{"data", Symbol::Variable("data")}});
    CHECK(InferShape(s, {{"data", TShape({5, 2})}}).out_shapes[0] == TShape({5, 2}));
  }
  NDArray nan(TShape({1}), {std::nanf("")});
  CHECK(std::isnan(RunForward("relu", {}, {{"data", nan}}).GetFlat(0)));
  CHECK_THROWS_AS(Symbol::Create("relu", "u", {{"slope", "1"}}, {}), ParamError);
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("Dropout is the identity in inference and with p = 0", "[ops][Dropout][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 17);
  RequireClose(RunForward("Dropout", {}, {{"data", x}}), x, 0.0f, 0.0f);
  RequireClose(RunForward("Dropout", {{"p", "0"}}, {{"data", x}}, 0, true), x, 0.0f, 0.0f);
  CheckGradients("Dropout", {{"p", "0.3"}}, {{"data", x}});
  GradCheckOptions train;
  train.is_train = true;
  CheckGradients("Dropout", {{"p", "0"}}, {{"data", x}}, train);
}

TEST_CASE("Dropout training: mask fraction, scaling, reproducibility, gradient", "[ops][Dropout]") {
  NDArray x = RandomArray(TShape({100, 50}), 18, 0.5f, 1.5f);
  for (std::string p : {"0.5", "0.2"}) {
    INFO("p " << p);
    double pv = std::stod(p);
    for (bool always : {false, true}) {
      KwArgs kw{{"p", p}, {"mode", always ? "always" : "training"}, {"cudnn_off", "False"}};
      auto e1 = BindSingleOp("Dropout", kw, {{"data", x}});
      auto e2 = BindSingleOp("Dropout", kw, {{"data", x}});
      e1->Forward(!always);  // mode=always drops in inference too
      e2->Forward(!always);
      const NDArray& y = e1->outputs()[0];
      RequireClose(y, e2->outputs()[0], 0.0f, 0.0f, "same seed, same mask");
      int64_t dropped = 0;
      for (int64_t i = 0; i < x.Size(); ++i) {
        if (y.GetFlat(i) == 0.0f) ++dropped;
        else REQUIRE(y.GetFlat(i) == Approx(x.GetFlat(i) / (1 - pv)).epsilon(1e-6));
      }
      CHECK(static_cast<double>(dropped) / x.Size() == Approx(pv).margin(0.03));
      NDArray head = RandomArray(x.shape(), 19);
      e1->Backward({head});
      for (int64_t i = 0; i < x.Size(); ++i) {
        float want = y.GetFlat(i) == 0.0f ? 0.0f : head.GetFlat(i) / static_cast<float>(1 - pv);
        REQUIRE(e1->grad_arrays()[0].GetFlat(i) == Approx(want).epsilon(1e-6));
      }
      NDArray first = y.Copy();
      e1->Forward(!always);
      bool differs = false;
      for (int64_t i = 0; i < x.Size() && !differs; ++i) differs = first.GetFlat(i) != e1->outputs()[0].GetFlat(i);
      CHECK(differs);  // each run draws a new mask
    }
  }
}

TEST_CASE("Dropout axes share the mask along the given axes", "[ops][Dropout][shape]") {
  NDArray x = RandomArray(TShape({4, 6, 5}), 20, 0.5f, 1.5f);
  NDArray y = RunForward("Dropout", {{"p", "0.5"}, {"axes", "(1,)"}}, {{"data", x}}, 0, true);
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t k = 0; k < 5; ++k) {
      bool kept = y.At({n, 0, k}) != 0.0f;
      for (int64_t c = 0; c < 6; ++c) REQUIRE((y.At({n, c, k}) != 0.0f) == kept);
    }
  Symbol s = Symbol::Create("Dropout", "dp", {{"axes", "(0, 2)"}}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"dp_output"});
  CHECK(InferShape(s, {{"data", TShape({4, 6, 5})}}).out_shapes[0] == TShape({4, 6, 5}));
  Symbol bad = Symbol::Create("Dropout", "dp", {{"axes", "(3,)"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(bad, {{"data", TShape({4, 6, 5})}}), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(Symbol::Create("Dropout", "dp", {{"p", "1.5"}}, {}), Catch::Contains("should be in range"));
}
