// _mod (alias _Mod), _mod_scalar / _rmod_scalar: Python-style modulo against a naive reference (a - floor(a/b)*b,
// 0 for b == 0), gradients by finite differences away from the jumps.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
double FlooredMod(double a, double b) { return b == 0 ? 0 : a - std::floor(a / b) * b; }

std::vector<double> AsDoubles(const NDArray& a) {
  NDArray d = a.AsType(DType::kFloat64);
  return std::vector<double>(d.data<double>(), d.data<double>() + d.Size());
}

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

TEST_CASE("_mod forward matches floored modulo in every dtype", "[ops][mod]") {
  NDArray a(TShape({6}), {-5.5f, 5.5f, 7, -7, 3, 4});
  NDArray b(TShape({6}), {2, -2, 3, 3, 0, -1});
  NDArray want(a.shape());
  for (int64_t i = 0; i < a.Size(); ++i) want.SetFlat(i, static_cast<float>(FlooredMod(a.GetFlat(i), b.GetFlat(i))));
  RequireClose(RunForward("_mod", {}, {{"lhs", a}, {"rhs", b}}), want);
  CHECK(OpRegistry::Global().Get("_Mod").name == "_mod");
  // Integers: -7 mod 3 is 2 (the divisor's sign), 3 mod 0 is 0.
  NDArray ai = a.AsType(DType::kInt32), bi = b.AsType(DType::kInt32);
  NDArray got = RunForward("_mod", {}, {{"lhs", ai}, {"rhs", bi}});
  REQUIRE(got.dtype() == DType::kInt32);
  const std::vector<double> v = AsDoubles(got);
  CHECK(v == std::vector<double>{FlooredMod(-5, 2), FlooredMod(5, -2), 1, 2, 0, 0});
}

TEST_CASE("_mod gradients: 1 and -floor(l / r) in float32 and float64, zero for integers", "[ops][mod][grad]") {
  NDArray l = AwayFromJumps(TShape({2, 3}), 3), r = AwayFromJumps(TShape({2, 3}), 4);
  // Push l / r away from the integers where floor jumps.
  for (int64_t i = 0; i < l.Size(); ++i) r.SetFlat(i, r.GetFlat(i) * 7.3f);
  CheckGradients("_mod", {}, {{"lhs", l}, {"rhs", r}});
  for (DType t : {DType::kFloat64, DType::kInt32}) {
    INFO(DTypeName(t));
    auto exec = BindSingleOp("_mod", {}, {{"lhs", l.AsType(t)}, {"rhs", r.AsType(t)}});
    exec->Forward(true);
    NDArray head = RandomArray(TShape({2, 3}), 5).AsType(t);
    exec->Backward({head});
    const std::vector<double> gl = AsDoubles(exec->grad_arrays()[0]), gr = AsDoubles(exec->grad_arrays()[1]);
    const std::vector<double> lv = AsDoubles(l.AsType(t)), rv = AsDoubles(r.AsType(t)), hv = AsDoubles(head);
    for (size_t i = 0; i < gl.size(); ++i) {
      const bool is_int = t == DType::kInt32;
      CHECK(gl[i] == Approx(is_int ? 0 : hv[i]));
      CHECK(gr[i] == Approx(is_int ? 0 : -hv[i] * std::floor(lv[i] / rv[i])));
    }
  }
}
