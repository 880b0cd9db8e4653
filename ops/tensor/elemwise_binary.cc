// Element-wise binary ops on equal shapes, and ops with a scalar operand.
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
using math::RegisterBinary;
using math::RegisterScalar;

const auto one = [](float, float) { return 1.0f; };
const auto minus_one = [](float, float) { return -1.0f; };

SYMBIND_REGISTER_OP_FAMILY(elemwise_binary) {
  auto& reg = OpRegistry::Global();
  RegisterBinary(reg.Register("elemwise_add").add_alias("_Plus").add_alias("_plus")
                     .add_alias("_add").describe("Adds arguments element-wise."),
                 [](auto l, auto r) { return l + r; }, one, one)
      .set_integer_backward();
  RegisterBinary(reg.Register("elemwise_sub").add_alias("_Minus").add_alias("_minus")
                     .add_alias("_sub").describe("Subtracts arguments element-wise."),
                 [](auto l, auto r) { return l - r; }, one, minus_one)
      .set_integer_backward();
  RegisterBinary(reg.Register("elemwise_mul").add_alias("_Mul").add_alias("_mul")
                     .describe("Multiplies arguments element-wise."),
                 [](auto l, auto r) { return l * r; }, [](auto, auto r) { return r; },
                 [](auto l, auto) { return l; })
      .set_integer_backward();
  RegisterBinary(reg.Register("elemwise_div").add_alias("_Div").add_alias("_div")
                     .describe("Divides arguments element-wise."),
                 [](auto l, auto r) { return math::Div(l, r); }, [](auto, auto r) { return 1.0f / r; },
                 [](auto l, auto r) { return -l / (r * r); });
  // Python-style modulo (the divisor's sign; x mod 0 is 0).
  Op& mod = RegisterBinary(reg.Register("_mod").add_alias("_Mod").describe("Element-wise modulo (Python-style)."),
                           [](auto l, auto r) { return math::Mod(l, r); }, one,
                           [](auto l, auto r) { return -std::floor(l / r); });
  mod.set_backward(math::ZeroGradientForIntegers(mod.backward));

  RegisterScalar(reg.Register("_plus_scalar").add_alias("_PlusScalar").describe("x + scalar"),
                 [](auto x, auto s) { return x + s; }, one)
      .set_integer_backward();
  RegisterScalar(reg.Register("_minus_scalar").add_alias("_MinusScalar").describe("x - scalar"),
                 [](auto x, auto s) { return x - s; }, one)
      .set_integer_backward();
  RegisterScalar(reg.Register("_rminus_scalar").add_alias("_RMinusScalar").describe("scalar - x"),
                 [](auto x, auto s) { return s - x; }, minus_one)
      .set_integer_backward();
  RegisterScalar(reg.Register("_mul_scalar").add_alias("_MulScalar").describe("x * scalar"),
                 [](auto x, auto s) { return x * s; }, [](auto, auto s) { return s; });
  RegisterScalar(reg.Register("_div_scalar").add_alias("_DivScalar").describe("x / scalar"),
                 [](auto x, auto s) { return math::Div(x, s); }, [](auto, auto s) { return 1.0f / s; });
  RegisterScalar(reg.Register("_rdiv_scalar").add_alias("_RDivScalar").describe("scalar / x"),
                 [](auto x, auto s) { return math::Div(s, x); }, [](auto x, auto s) { return -s / (x * x); });

  // Ties send the gradient to lhs (MXNet's ge/lt and le/gt pairs).
  RegisterBinary(reg.Register("_maximum").add_alias("_Maximum").describe("Element-wise maximum."),
                 [](auto l, auto r) { return math::Maximum(l, r); },
                 [](auto l, auto r) { return math::Bool(l >= r); },
                 [](auto l, auto r) { return math::Bool(l < r); });
  RegisterBinary(reg.Register("_minimum").add_alias("_Minimum").describe("Element-wise minimum."),
                 [](auto l, auto r) { return math::Minimum(l, r); },
                 [](auto l, auto r) { return math::Bool(l <= r); },
                 [](auto l, auto r) { return math::Bool(l > r); });
  RegisterBinary(reg.Register("_power").add_alias("_Power").describe("lhs ** rhs element-wise."),
                 [](auto a, auto b) { return math::Power(a, b); }, [](auto a, auto b) { return math::PowerGradL(a, b); }, [](auto a, auto b) { return math::PowerGradR(a, b); });
  RegisterBinary(reg.Register("_hypot").add_alias("_Hypot")
                     .describe("Given the legs of a right triangle, returns its hypotenuse."),
                 [](auto a, auto b) { return math::Hypot(a, b); }, [](auto l, auto r) { return l / std::hypot(l, r); },
                 [](auto l, auto r) { return r / std::hypot(l, r); });

  RegisterScalar(reg.Register("_maximum_scalar").add_alias("_MaximumScalar").describe("max(x, scalar)"),
                 [](auto x, auto s) { return math::Maximum(x, s); },
                 [](auto x, auto s) { return math::Bool(x >= s); });
  RegisterScalar(reg.Register("_minimum_scalar").add_alias("_MinimumScalar").describe("min(x, scalar)"),
                 [](auto x, auto s) { return math::Minimum(x, s); },
                 [](auto x, auto s) { return math::Bool(x <= s); });
  RegisterScalar(reg.Register("_power_scalar").add_alias("_PowerScalar").describe("x ** scalar"),
                 [](auto a, auto b) { return math::Power(a, b); }, [](auto a, auto b) { return math::PowerGradL(a, b); });
  RegisterScalar(reg.Register("_rpower_scalar").add_alias("_RPowerScalar").describe("scalar ** x"),
                 [](auto x, auto s) { return std::pow(s, x); },
                 [](auto x, auto s) { return std::pow(s, x) * std::log(s); });
  RegisterScalar(reg.Register("_hypot_scalar").add_alias("_HypotScalar").describe("hypot(x, scalar)"),
                 [](auto a, auto b) { return math::Hypot(a, b); }, [](auto x, auto s) { return x / std::hypot(x, s); });
}
}  // namespace

}  // namespace symbind
