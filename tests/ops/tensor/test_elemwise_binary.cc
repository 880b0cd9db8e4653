// Element-wise binary and scalar ops: forward against naive references and gradients.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
using BinFn = std::function<double(double, double)>;

struct BinCase {
  std::string op;
  BinFn f;
  bool grad = true;
};

}  // namespace

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

TEST_CASE("element-wise maximum, minimum, power, hypot", "[ops][elemwise][grad]") {
  std::vector<BinCase> cases = {{"_maximum", [](double a, double b) { return std::max(a, b); }},
                                {"_minimum", [](double a, double b) { return std::min(a, b); }},
                                {"_power", [](double a, double b) { return std::pow(a, b); }},
                                {"_hypot", [](double a, double b) { return std::hypot(a, b); }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray l = GridArray(TShape({3, 4}), 9, 0.05, 3, 15), r = GridArray(TShape({3, 4}), 10, 0.0, 3, 15);
    NDArray want(l.shape());
    for (int64_t i = 0; i < l.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(l.GetFlat(i), r.GetFlat(i))));
    RequireClose(RunForward(c.op, {}, {{"lhs", l}, {"rhs", r}}), want);
    CheckGradients(c.op, {}, {{"lhs", l}, {"rhs", r}});
  }
  for (std::string alias : {"_Maximum", "_Minimum", "_Power", "_Hypot"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
  // Same-shape ops: a shape mismatch is an error.
  Symbol s = Symbol::Create("_maximum", "m", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
  CHECK_THROWS_AS(InferShape(s, {{"l", TShape({2, 3})}, {"r", TShape({3, 2})}}), ShapeError);
}

TEST_CASE("scalar maximum, minimum, power, rpower, hypot", "[ops][scalar][grad]") {
  std::vector<BinCase> cases = {{"_maximum_scalar", [](double x, double s) { return std::max(x, s); }},
                                {"_minimum_scalar", [](double x, double s) { return std::min(x, s); }},
                                {"_power_scalar", [](double x, double s) { return std::pow(x, s); }},
                                {"_rpower_scalar", [](double x, double s) { return std::pow(s, x); }},
                                {"_hypot_scalar", [](double x, double s) { return std::hypot(x, s); }}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray x = GridArray(TShape({2, 5}), 11, 0.05, 3, 15);
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(x.GetFlat(i), 1.1)));
    RequireClose(RunForward(c.op, {{"scalar", "1.1"}}, {{"data", x}}), want);
    CheckGradients(c.op, {{"scalar", "1.1"}}, {{"data", x}});
  }
  for (std::string alias : {"_MaximumScalar", "_MinimumScalar", "_PowerScalar", "_RPowerScalar", "_HypotScalar"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
}


TEST_CASE("binary and scalar ops differentiate float64 in double", "[ops][elemwise][scalar][grad][float64]") {
  // MXNet's test_binary_math_operators compares float64 gradients of pow to 1e-7.
  NDArray l = RandomArray(TShape({3, 4}), 21, 0.2f, 5.0f), r = AwayFromZero(TShape({3, 4}), 22, -4.0f, 4.0f);
  const std::vector<BinCase> binary = {{"elemwise_mul", [](double a, double b) { return a * b; }},
                                       {"elemwise_div", [](double a, double b) { return a / b; }},
                                       {"_power", [](double a, double b) { return std::pow(a, b); }},
                                       {"_hypot", [](double a, double b) { return std::hypot(a, b); }},
                                       {"_mod", [](double a, double b) { return a - b * std::floor(a / b); }}};
  for (auto& c : binary)
    CheckFloat64Elementwise(c.op, {}, {{"lhs", l}, {"rhs", r}},
                            [&f = c.f](const std::vector<double>& v) { return f(v[0], v[1]); });
  const std::vector<BinCase> scalar = {{"_mul_scalar", [](double x, double s) { return x * s; }},
                                       {"_rdiv_scalar", [](double x, double s) { return s / x; }},
                                       {"_power_scalar", [](double x, double s) { return std::pow(x, s); }},
                                       {"_rpower_scalar", [](double x, double s) { return std::pow(s, x); }},
                                       {"_hypot_scalar", [](double x, double s) { return std::hypot(x, s); }}};
  for (auto& c : scalar)
    CheckFloat64Elementwise(c.op, {{"scalar", "1.1"}}, {{"data", l}},
                            [&f = c.f](const std::vector<double>& v) { return f(v[0], 1.1); });
}
