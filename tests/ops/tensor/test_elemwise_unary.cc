// The element-wise unary table: forward against std:: references and gradients, row by row.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// erf is increasing: bisect erf(x) = y on [-6, 6].
double InverseErfByBisection(double y) {
  double lo = -6, hi = 6;
  for (int k = 0; k < 100; ++k) {
    double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct UnaryCase {
  std::string op;
  std::function<double(double)> f;
  double lo, hi;
  bool flat = false;  // piecewise constant: zero gradient
};
}  // namespace

TEST_CASE("unary math forward and gradients", "[ops][unary][grad]") {
  std::vector<UnaryCase> cases = {
      {"exp", [](double x) { return std::exp(x); }, -2, 2},
      {"expm1", [](double x) { return std::exp(x) - 1; }, -2, 2},
      {"log", [](double x) { return std::log(x); }, 0.3, 3},
      {"log10", [](double x) { return std::log(x) / std::log(10.0); }, 0.3, 3},
      {"log2", [](double x) { return std::log(x) / std::log(2.0); }, 0.3, 3},
      {"log1p", [](double x) { return std::log(1 + x); }, -0.5, 2},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0.3, 3},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.3, 3},
      {"cbrt", [](double x) { return std::cbrt(x); }, 0.3, 3},
      {"rcbrt", [](double x) { return 1 / std::cbrt(x); }, 0.3, 3},
      {"square", [](double x) { return x * x; }, -2, 2},
      {"reciprocal", [](double x) { return 1 / x; }, 0.3, 3},
      {"abs", [](double x) { return std::fabs(x); }, -2, 2},
      {"negative", [](double x) { return -x; }, -2, 2},
      {"softsign", [](double x) { return x / (1 + std::fabs(x)); }, -3, 3},
      {"sign", [](double x) { return double((x > 0) - (x < 0)); }, -2, 2, true},
      {"floor", [](double x) { return std::floor(x); }, -3, 3, true},
      {"ceil", [](double x) { return std::ceil(x); }, -3, 3, true},
      {"round", [](double x) { return x < 0 ? -std::floor(-x + 0.5) : std::floor(x + 0.5); }, -3, 3, true},
      {"rint", [](double x) { return x - std::floor(x) <= 0.5 ? std::floor(x) : std::ceil(x); }, -3, 3, true},
      {"trunc", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true},
      {"fix", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true},
      {"sin", [](double x) { return std::sin(x); }, -3, 3},
      {"cos", [](double x) { return std::cos(x); }, -3, 3},
      {"tan", [](double x) { return std::sin(x) / std::cos(x); }, -1.2, 1.2},
      {"arcsin", [](double x) { return std::atan2(x, std::sqrt(1 - x * x)); }, -0.9, 0.9},
      {"arccos", [](double x) { return std::atan2(std::sqrt(1 - x * x), x); }, -0.9, 0.9},
      {"arctan", [](double x) { return std::asin(x / std::sqrt(1 + x * x)); }, -3, 3},
      {"degrees", [](double x) { return x * 180 / M_PI; }, -3, 3},
      {"radians", [](double x) { return x * M_PI / 180; }, -3, 3},
      {"sinh", [](double x) { return (std::exp(x) - std::exp(-x)) / 2; }, -2, 2},
      {"cosh", [](double x) { return (std::exp(x) + std::exp(-x)) / 2; }, -2, 2},
      {"arcsinh", [](double x) { return std::log(x + std::sqrt(x * x + 1)); }, -3, 3},
      {"arccosh", [](double x) { return std::log(x + std::sqrt(x * x - 1)); }, 1.3, 3},
      {"arctanh", [](double x) { return 0.5 * std::log((1 + x) / (1 - x)); }, -0.8, 0.8},
      {"erf", [](double x) { return std::erf(x); }, -2, 2},
      {"erfinv", InverseErfByBisection, -0.9, 0.9},
      {"gamma", [](double x) { return std::exp(std::lgamma(x)); }, 0.3, 3},
      {"gammaln", [](double x) { return std::lgamma(x); }, 0.3, 3},
      {"logical_not", [](double x) { return double(x == 0); }, -2, 2, true}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray x = RandomArray(TShape({3, 4}), 12, static_cast<float>(c.lo), static_cast<float>(c.hi));
    // Keep every value away from kinks and jumps (multiples of 0.5, zero).
    for (int64_t i = 0; i < x.Size(); ++i) {
      float v = x.GetFlat(i);
      if (std::fabs(v * 2 - std::round(v * 2)) < 0.04f) x.SetFlat(i, v + 0.05f);
    }
    NDArray want(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) want.SetFlat(i, static_cast<float>(c.f(x.GetFlat(i))));
    RequireClose(RunForward(c.op, {}, {{"data", x}}), want);
    CheckGradients(c.op, {}, {{"data", x}});
    if (c.flat) continue;
    // float64 differentiates in double: central differences of the reference to 1e-8.
    NDArray x64 = x.AsType(DType::kFloat64);
    auto exec = BindSingleOp(c.op, {}, {{"data", x64}});
    exec->Forward(true);
    NDArray head(x.shape(), DType::kFloat64);
    for (int64_t i = 0; i < x.Size(); ++i) head.data<double>()[i] = 0.5 + 0.1 * static_cast<double>(i);
    exec->Backward({head});
    const NDArray& g = exec->grad_arrays()[0];
    REQUIRE(g.dtype() == DType::kFloat64);
    for (int64_t i = 0; i < x.Size(); ++i) {
      const double v = x64.data<double>()[i], h = 1e-6;
      const double want_g = head.data<double>()[i] * (c.f(v + h) - c.f(v - h)) / (2 * h);
      CHECK(std::fabs(g.data<double>()[i] - want_g) <= 1e-8 * std::max(1.0, std::fabs(want_g)));
    }
  }
  // Halfway cases: round goes away from zero, rint to the lower integer (MXNet's rint).
  NDArray h(TShape({4}), {0.5f, 1.5f, -0.5f, 2.5f});
  RequireClose(RunForward("round", {}, {{"data", h}}), NDArray(TShape({4}), {1, 2, -1, 3}));
  RequireClose(RunForward("rint", {}, {{"data", h}}), NDArray(TShape({4}), {0, 1, -1, 2}));
  RequireClose(RunForward("fix", {}, {{"data", NDArray(TShape({2}), {-1.7f, 1.7f})}}),
               NDArray(TShape({2}), {-1, 1}));
  // logical_not on exact zeros; erfinv at and beyond +-1; gamma at a pole and of negatives.
  RequireClose(RunForward("logical_not", {}, {{"data", NDArray(TShape({3}), {-2, 0, 1})}}),
               NDArray(TShape({3}), {0, 1, 0}));
  NDArray e = RunForward("erfinv", {}, {{"data", NDArray(TShape({4}), {1, -1, 1.5f, 0})}});
  CHECK(e.GetFlat(0) == INFINITY);
  CHECK(e.GetFlat(1) == -INFINITY);
  CHECK(std::isnan(e.GetFlat(2)));
  CHECK(e.GetFlat(3) == 0.0f);
  NDArray neg(TShape({2}), {-0.5f, -1.5f});
  RequireClose(RunForward("gamma", {}, {{"data", neg}}),
               NDArray(TShape({2}), {static_cast<float>(std::tgamma(-0.5)), static_cast<float>(std::tgamma(-1.5))}));
  CheckGradients("gamma", {}, {{"data", neg}});
  CheckGradients("gammaln", {}, {{"data", neg}});
  for (std::string alias : {"_npx_erf", "_npx_erfinv", "_npx_gamma", "_npx_gammaln"})
    CHECK(OpRegistry::Global().Find(alias) != nullptr);
  // Unary ops infer shapes both ways.
  Symbol s = Symbol::Create("exp", "e", {}, {{"data", Symbol::Variable("x")}});
  CHECK(InferShape(s, {{"x", TShape({2, 7})}}).out_shapes[0] == TShape({2, 7}));
}

