// Python-style modulo with a scalar: _mod_scalar (x mod s) and _rmod_scalar (s mod x); the result
// takes the divisor's sign and anything mod 0 is 0 (MXNet's mshadow_op::mod / rmod).
// Gradients as MXNet's mod_grad (1) and rmod_grad (-floor(s / x)).
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
[[maybe_unused]] const bool registered = [] {
  auto& reg = OpRegistry::Global();
  math::RegisterScalar(reg.Register("_mod_scalar").add_alias("_ModScalar").describe("x mod scalar (Python-style)."),
                       [](auto a, auto b) { return math::Mod(a, b); }, [](float, float) { return 1.0f; });
  math::RegisterScalar(reg.Register("_rmod_scalar").add_alias("_RModScalar").describe("scalar mod x (Python-style)."),
                       [](auto x, auto s) { return math::Mod(s, x); },
                       [](auto x, auto s) { return -std::floor(s / x); });
  return true;
}();
}  // namespace

}  // namespace symbind
