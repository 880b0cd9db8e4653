// _mod_scalar / _rmod_scalar: Python-style modulo against a naive reference (a - floor(a/b)*b,
// 0 for b == 0), gradients by finite differences away from the jumps.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
double FlooredMod(double a, double b) { return b == 0 ? 0 : a - std::floor(a / b) * b; }

// +-(0.35 + 0.1 k): away from zero and from the jumps of x mod 0.7 and 2.37 mod x.
NDArray AwayFromJumps(const TShape& shape, uint64_t seed) {
  NDArray a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> k(0, 20), sign(0, 1);
  for (int64_t i = 0; i < a.Size(); ++i)
    a.SetFlat(i, static_cast<float>((sign(rng) ? 1 : -1) * (0.35 + 0.1 * k(rng))));
  return a;
}
}  // namespace

TEST_CASE("_mod_scalar and _rmod_scalar forward match floored modulo", "[ops][mod]") {
  NDArray x(TShape({8}), {-5.5f, 5.5f, -3, 3, 0, 0.25f, -0.25f, 7});
  for (double s : {2.0, -2.0, 0.75, 0.0}) {
    INFO("scalar " << s);
    NDArray want(x.shape()), want_r(x.shape());
    for (int64_t i = 0; i < x.Size(); ++i) {
      want.SetFlat(i, static_cast<float>(FlooredMod(x.GetFlat(i), s)));
      want_r.SetFlat(i, static_cast<float>(FlooredMod(s, x.GetFlat(i))));
    }
    RequireClose(RunForward("_mod_scalar", {{"scalar", std::to_string(s)}}, {{"data", x}}), want);
    RequireClose(RunForward("_rmod_scalar", {{"scalar", std::to_string(s)}}, {{"data", x}}), want_r);
  }
  CHECK(OpRegistry::Global().Get("_ModScalar").name == "_mod_scalar");
  CHECK(OpRegistry::Global().Get("_RModScalar").name == "_rmod_scalar");
}

TEST_CASE("_mod_scalar and _rmod_scalar gradients", "[ops][mod][grad]") {
  NDArray x = AwayFromJumps(TShape({3, 5}), 9);
  CheckGradients("_mod_scalar", {{"scalar", "0.7"}}, {{"data", x}});
  CheckGradients("_rmod_scalar", {{"scalar", "2.37"}}, {{"data", x}});
}
