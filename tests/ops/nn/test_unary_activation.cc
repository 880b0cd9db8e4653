// Standalone sigmoid, tanh and relu: forward and gradients.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

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
  // ... and so does its gradient, as MXNet's relu_grad.
  auto exec = BindSingleOp("relu", {}, {{"data", nan}});
  exec->Forward(true);
  exec->Backward({NDArray(TShape({1}), {1.0f})});
  CHECK(std::isnan(exec->grad_arrays()[0].GetFlat(0)));
  // relu has no parameters: as in MXNet, a key given to it is kept and changes nothing.
  NDArray signs(TShape({2}), {-1.0f, 2.0f});
  NDArray y = RunForward("relu", {{"slope", "1"}}, {{"data", signs}});
  CHECK((y.GetFlat(0) == 0.0f && y.GetFlat(1) == 2.0f));
}

TEST_CASE("sigmoid, tanh and relu compute float64 in double", "[ops][unary_activation][grad][float64]") {
  // MXNet's test_unary_math_operators checks float64 finite differences to 1e-5 with a step of
  // 1e-6: a float32 forward misses that by far.
  NDArray x = AwayFromZero(TShape({3, 4}), 17);
  const std::vector<std::pair<std::string, std::function<double(double)>>> ref{
      {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"relu", [](double v) { return v > 0 ? v : 0; }}};
  for (auto& [op, f] : ref)
    CheckFloat64Elementwise(op, {}, {{"data", x}}, [&f = f](const std::vector<double>& v) { return f(v[0]); });
}
