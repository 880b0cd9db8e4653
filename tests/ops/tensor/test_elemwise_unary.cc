// The element-wise unary table: forward against std:: references and gradients, row by row.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
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
      {"sign", [](double x) { return double((x > 0) - (x < 0)); }, -2, 2, true},
      {"floor", [](double x) { return std::floor(x); }, -3, 3, true},
      {"ceil", [](double x) { return std::ceil(x); }, -3, 3, true},
      {"round", [](double x) { return x < 0 ? -std::floor(-x + 0.5) : std::floor(x + 0.5); }, -3, 3, true},
      {"rint", [](double x) { return x - std::floor(x) <= 0.5 ? std::floor(x) : std::ceil(x); }, -3, 3, true},
      {"trunc", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true},
      {"fix", [](double x) { return x < 0 ? std::ceil(x) : std::floor(x); }, -3, 3, true}};
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
  }
  // Halfway cases: round goes away from zero, rint to the lower integer (MXNet's rint).
  NDArray h(TShape({4}), {0.5f, 1.5f, -0.5f, 2.5f});
  RequireClose(RunForward("round", {}, {{"data", h}}), NDArray(TShape({4}), {1, 2, -1, 3}));
  RequireClose(RunForward("rint", {}, {{"data", h}}), NDArray(TShape({4}), {0, 1, -1, 2}));
  RequireClose(RunForward("fix", {}, {{"data", NDArray(TShape({2}), {-1.7f, 1.7f})}}),
               NDArray(TShape({2}), {-1, 1}));
  // Unary ops infer shapes both ways.
  Symbol s = Symbol::Create("exp", "e", {}, {{"data", Symbol::Variable("x")}});
  CHECK(InferShape(s, {{"x", TShape({2, 7})}}).out_shapes[0] == TShape({2, 7}));
}

