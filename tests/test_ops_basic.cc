// Forward against naive references and gradients against finite differences for the
// walking-skeleton ops.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("FullyConnected forward matches a naive matmul", "[ops][fc]") {
  for (bool flatten : {true, false}) {
    NDArray x = RandomArray(TShape({3, 2, 4}), 1), w = RandomArray(TShape({5, flatten ? 8 : 4}), 2),
            b = RandomArray(TShape({5}), 3);
    NDArray y = RunForward("FullyConnected", {{"num_hidden", "5"}, {"flatten", flatten ? "True" : "False"}},
                           {{"data", x}, {"weight", w}, {"bias", b}});
    int64_t rows = flatten ? 3 : 6, k = flatten ? 8 : 4;
    NDArray want(flatten ? TShape({3, 5}) : TShape({3, 2, 5}));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < 5; ++j) {
        double s = b.GetFlat(j);
        for (int64_t i = 0; i < k; ++i) s += x.GetFlat(r * k + i) * w.GetFlat(j * k + i);
        want.SetFlat(r * 5 + j, static_cast<float>(s));
      }
    RequireClose(y, want);
  }
}

TEST_CASE("FullyConnected gradients", "[ops][fc][grad]") {
  CheckGradients("FullyConnected", {{"num_hidden", "3"}},
                 {{"data", RandomArray(TShape({2, 4}), 4)}, {"weight", RandomArray(TShape({3, 4}), 5)},
                  {"bias", RandomArray(TShape({3}), 6)}});
  CheckGradients("FullyConnected", {{"num_hidden", "2"}, {"no_bias", "True"}, {"flatten", "False"}},
                 {{"data", RandomArray(TShape({2, 3, 4}), 7)}, {"weight", RandomArray(TShape({2, 4}), 8)}});
}

TEST_CASE("FullyConnected infers weight and bias shapes", "[ops][fc][shape]") {
  Symbol fc = Symbol::Create("FullyConnected", "fc1", {{"num_hidden", "10"}},
                             {{"data", Symbol::Variable("data")}});
  auto r = InferShape(fc, {{"data", TShape({7, 3, 5})}});
  CHECK(r.arg_shapes == std::vector<TShape>{TShape({7, 3, 5}), TShape({10, 15}), TShape({10})});
  CHECK(r.out_shapes[0] == TShape({7, 10}));
  CHECK(fc.ListArguments() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias"});
}

namespace {
float NaiveAct(const std::string& t, float x) {
  if (t == "relu") return std::max(x, 0.0f);
  if (t == "sigmoid") return 1.0f / (1.0f + std::exp(-x));
  if (t == "tanh") return std::tanh(x);
  if (t == "softrelu") return std::log(1.0f + std::exp(x));
  return x / (1.0f + std::fabs(x));
}
}  // namespace

TEST_CASE("Activation forward and gradients", "[ops][activation][grad]") {
  for (std::string t : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    INFO(t);
    NDArray x = RandomArray(TShape({3, 5}), 9, -2.0f, 2.0f);
    // Keep relu's kink away from the finite-difference step.
    for (int64_t i = 0; i < x.Size(); ++i)
      if (std::fabs(x.GetFlat(i)) < 0.05f) x.SetFlat(i, 0.3f);
    NDArray y = RunForward("Activation", {{"act_type", t}}, {{"data", x}});
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, NaiveAct(t, x.GetFlat(i)));
    RequireClose(y, want);
    CheckGradients("Activation", {{"act_type", t}}, {{"data", x}});
  }
}

TEST_CASE("Elementwise binary ops forward and gradients", "[ops][elemwise][grad]") {
  struct Case {
    std::string op;
    std::function<float(float, float)> f;
  };
  std::vector<Case> cases = {{"elemwise_add", [](float a, float b) { return a + b; }},
                             {"elemwise_sub", [](float a, float b) { return a - b; }},
                             {"elemwise_mul", [](float a, float b) { return a * b; }},
                             {"elemwise_div", [](float a, float b) { return a / b; }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray l = RandomArray(TShape({2, 3}), 10), r = RandomArray(TShape({2, 3}), 11, 0.5f, 2.0f);
    NDArray y = RunForward(c.op, {}, {{"lhs", l}, {"rhs", r}});
    NDArray want(l.shape());
    for (int64_t i = 0; i < l.Size(); ++i) want.SetFlat(i, c.f(l.GetFlat(i), r.GetFlat(i)));
    RequireClose(y, want);
    CheckGradients(c.op, {}, {{"lhs", l}, {"rhs", r}});
  }
  for (std::string alias : {"_Plus", "_Minus", "_Mul", "_Div", "_plus", "_minus", "_mul", "_div"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
}

TEST_CASE("Scalar ops forward and gradients", "[ops][scalar][grad]") {
  struct Case {
    std::string op;
    std::function<float(float, float)> f;
  };
  std::vector<Case> cases = {{"_plus_scalar", [](float x, float s) { return x + s; }},
                             {"_minus_scalar", [](float x, float s) { return x - s; }},
                             {"_rminus_scalar", [](float x, float s) { return s - x; }},
                             {"_mul_scalar", [](float x, float s) { return x * s; }},
                             {"_div_scalar", [](float x, float s) { return x / s; }},
                             {"_rdiv_scalar", [](float x, float s) { return s / x; }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray x = RandomArray(TShape({4}), 12, 0.5f, 2.0f);
    NDArray y = RunForward(c.op, {{"scalar", "2.5"}}, {{"data", x}});
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, c.f(x.GetFlat(i), 2.5f));
    RequireClose(y, want);
    CheckGradients(c.op, {{"scalar", "2.5"}}, {{"data", x}});
  }
}

TEST_CASE("Flatten forward and gradient", "[ops][flatten][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 13);
  NDArray y = RunForward("Flatten", {}, {{"data", x}});
  CHECK(y.shape() == TShape({2, 12}));
  RequireClose(y, x.Reshape(TShape({2, 12})));
  CheckGradients("Flatten", {}, {{"data", x}});
}

namespace {
// Cross-entropy of softmax rows against integer labels: the loss whose gradient SoftmaxOutput's
// backward produces (with normalization null and grad_scale 1).
double CrossEntropy(const NDArray& prob, const NDArray& label, int64_t k, int64_t inner) {
  double loss = 0;
  int64_t groups = prob.Size() / k;
  for (int64_t g = 0; g < groups; ++g) {
    int64_t o = g / inner, i = g % inner;
    int64_t c = static_cast<int64_t>(label.GetFlat(g));
    loss -= std::log(prob.GetFlat(o * k * inner + c * inner + i));
  }
  return loss;
}
}  // namespace

TEST_CASE("SoftmaxOutput forward is softmax", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({3, 4}), 14, -3.0f, 3.0f);
  NDArray label(TShape({3}), {0, 3, 1});
  NDArray y = RunForward("SoftmaxOutput", {}, {{"data", x}, {"label", label}});
  for (int64_t r = 0; r < 3; ++r) {
    double z = 0;
    for (int64_t c = 0; c < 4; ++c) z += std::exp(x.GetFlat(r * 4 + c));
    for (int64_t c = 0; c < 4; ++c)
      CHECK(y.GetFlat(r * 4 + c) == Approx(std::exp(x.GetFlat(r * 4 + c)) / z).epsilon(1e-5));
  }
}

TEST_CASE("SoftmaxOutput gradient is the cross-entropy gradient", "[ops][softmax_output][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 15, -2.0f, 2.0f);
  NDArray label(TShape({3}), {0, 3, 1});
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  opt.loss = [&](const std::vector<NDArray>& outs) { return CrossEntropy(outs[0], label, 4, 1); };
  CheckGradients("SoftmaxOutput", {}, {{"data", x}, {"label", label}}, opt);

  // grad_scale and batch normalisation scale the same gradient.
  opt.loss = [&](const std::vector<NDArray>& outs) { return 0.5 * CrossEntropy(outs[0], label, 4, 1) / 3; };
  CheckGradients("SoftmaxOutput", {{"grad_scale", "0.5"}, {"normalization", "batch"}},
                 {{"data", x}, {"label", label}}, opt);

  // multi_output: softmax over axis 1 at every position.
  NDArray xm = RandomArray(TShape({2, 3, 2}), 16);
  NDArray lm(TShape({2, 2}), {0, 2, 1, 1});
  // MXNet normalises multi_output gradients by the spatial size (2 here) by default.
  opt.loss = [&](const std::vector<NDArray>& outs) { return CrossEntropy(outs[0], lm, 3, 2) / 2; };
  CheckGradients("SoftmaxOutput", {{"multi_output", "True"}}, {{"data", xm}, {"label", lm}}, opt);
}

TEST_CASE("SoftmaxOutput ignore_label with valid normalisation", "[ops][softmax_output]") {
  NDArray x = RandomArray(TShape({3, 4}), 17);
  NDArray label(TShape({3}), {1, -1, 2});
  auto exec = BindSingleOp("SoftmaxOutput",
                           {{"use_ignore", "True"}, {"ignore_label", "-1"}, {"normalization", "valid"}},
                           {{"data", x}, {"label", label}}, {"label"});
  exec->Forward(true);
  exec->Backward();
  const NDArray& g = exec->grad_arrays()[0];
  const NDArray& p = exec->outputs()[0];
  for (int64_t c = 0; c < 4; ++c) {
    CHECK(g.At({1, c}) == 0.0f);  // ignored row
    CHECK(g.At({0, c}) == Approx((p.At({0, c}) - (c == 1)) / 2).margin(1e-6));  // 2 valid rows
  }
}

TEST_CASE("Regression outputs", "[ops][regression][grad]") {
  NDArray x = RandomArray(TShape({4, 2}), 18), t = RandomArray(TShape({4, 2}), 19);
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  opt.loss = [&](const std::vector<NDArray>& outs) {
    double s = 0;  // 0.5 * squared error / outputs per sample
    for (int64_t i = 0; i < 8; ++i) s += 0.5 * std::pow(outs[0].GetFlat(i) - t.GetFlat(i), 2) / 2;
    return s;
  };
  CHECK(RunForward("LinearRegressionOutput", {}, {{"data", x}, {"label", t}}).GetFlat(3) == x.GetFlat(3));
  CheckGradients("LinearRegressionOutput", {}, {{"data", x}, {"label", t}}, opt);
}
