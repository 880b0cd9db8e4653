// MakeLoss and make_loss: identity forward, the normalised constant gradient.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("MakeLoss forward is identity, gradient is grad_scale normalised", "[ops][makeloss][grad]") {
  NDArray x = RandomArray(TShape({4, 3}), 1);
  // Keep elements clear of valid_thresh so the valid count is locally constant.
  for (int64_t i = 0; i < x.Size(); ++i)
    if (std::fabs(x.GetFlat(i) - 0.1f) < 0.01f) x.SetFlat(i, 0.3f);
  RequireClose(RunForward("MakeLoss", {}, {{"data", x}}), x);
  int64_t valid = 0;
  for (int64_t i = 0; i < x.Size(); ++i) valid += x.GetFlat(i) > 0.1f;
  REQUIRE(valid > 0);
  struct Case {
    KwArgs p;
    double scale;
  };
  for (auto& c : {Case{{}, 1.0}, Case{{{"grad_scale", "2.5"}}, 2.5},
                  Case{{{"grad_scale", "3"}, {"normalization", "batch"}}, 3.0 / 4},
                  Case{{{"normalization", "valid"}, {"valid_thresh", "0.1"}}, 1.0 / valid}}) {
    INFO("scale " << c.scale);
    CheckGradients("MakeLoss", c.p, {{"data", x}},
                   WithLoss([&](const std::vector<NDArray>& o) { return c.scale * Sum(o[0]); }, {}));
  }
  // valid with nothing above the threshold divides by 1, not 0.
  auto exec = BindSingleOp("MakeLoss", {{"normalization", "valid"}, {"valid_thresh", "5"}}, {{"data", x}});
  exec->Forward(true);
  exec->Backward();
  CHECK(exec->grad_arrays()[0].GetFlat(0) == 1.0f);
  CHECK_THROWS_AS(RunForward("MakeLoss", {{"normalization", "mean"}}, {{"data", x}}), ParamError);
  CHECK(OpRegistry::Global().Get("MakeLoss").is_loss);
}

TEST_CASE("make_loss: identity forward, gradient of ones", "[ops][makeloss][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 2);
  RequireClose(RunForward("make_loss", {}, {{"data", x}}), x);
  CheckGradients("make_loss", {}, {{"data", x}},
                 WithLoss([](const std::vector<NDArray>& o) { return Sum(o[0]); }, {}));
  Symbol s = Symbol::Create("make_loss", "ml", {}, {{"data", Symbol::Variable("x")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"ml_loss"});
  // Both heads pass float64 through exactly (finite differences in float64 rely on it).
  NDArray x64(TShape({2}), DType::kFloat64);
  x64.data<double>()[0] = 1.0 + 1e-12;
  x64.data<double>()[1] = -3.0;
  for (const char* op : {"make_loss", "MakeLoss"}) {
    NDArray y = RunForward(op, {}, {{"data", x64}});
    REQUIRE(y.dtype() == DType::kFloat64);
    CHECK(y.data<double>()[0] == 1.0 + 1e-12);
    CHECK(y.data<double>()[1] == -3.0);
  }
}
