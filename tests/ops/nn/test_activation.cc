// Activation: every act_type forward and gradient.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

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

TEST_CASE("Activation relu backward: dy * (x > 0), same bits for NaN, infinities and signed zeros",
          "[ops][activation][grad]") {
  // Long enough for the vectorised loop and its tail; every x class meets every dy class.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {nan, -nan, inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f, 2.5f, -1.5f, 1e30f};
  const std::vector<float> dys = {nan, inf, -inf, 0.0f, -0.0f, -3.0f, 0.5f};
  const int64_t n = static_cast<int64_t>(xs.size() * dys.size()) * 3 + 5;
  NDArray x(TShape({n})), dy(TShape({n})), before(TShape({n}));
  for (int64_t i = 0; i < n; ++i) {
    x.SetFlat(i, xs[static_cast<size_t>(i) % xs.size()]);
    dy.SetFlat(i, dys[static_cast<size_t>(i / static_cast<int64_t>(xs.size())) % dys.size()]);
    before.SetFlat(i, 0.25f * static_cast<float>(i % 9) - 1.0f);
  }
  for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
    auto exec = BindSingleOp("Activation", {{"act_type", "relu"}}, {{"data", x}}, {}, req);
    NDArray dx = exec->grad_arrays()[0];  // a handle to the executor's gradient storage
    before.CopyTo(&dx);
    exec->Forward(true);
    exec->Backward({dy});
    for (int64_t i = 0; i < n; ++i) {
      const float d = dy.GetFlat(i) * (x.GetFlat(i) > 0 ? 1.0f : 0.0f);
      const float want = req == OpReq::kAdd ? before.GetFlat(i) + d : d;
      const float got = dx.GetFlat(i);
      INFO("i " << i << " x " << x.GetFlat(i) << " dy " << dy.GetFlat(i) << " got " << got << " want " << want);
      CHECK(std::memcmp(&got, &want, sizeof(float)) == 0);
    }
  }
}
