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
                 [](float l, float r) { return l + r; }, one, one);
  RegisterBinary(reg.Register("elemwise_sub").add_alias("_Minus").add_alias("_minus")
                     .add_alias("_sub").describe("Subtracts arguments element-wise."),
                 [](float l, float r) { return l - r; }, one, minus_one);
  RegisterBinary(reg.Register("elemwise_mul").add_alias("_Mul").add_alias("_mul")
                     .describe("Multiplies arguments element-wise."),
                 [](float l, float r) { return l * r; }, [](float, float r) { return r; },
                 [](float l, float) { return l; });
  RegisterBinary(reg.Register("elemwise_div").add_alias("_Div").add_alias("_div")
                     .describe("Divides arguments element-wise."),
                 [](float l, float r) { return l / r; }, [](float, float r) { return 1.0f / r; },
                 [](float l, float r) { return -l / (r * r); });

  RegisterScalar(reg.Register("_plus_scalar").add_alias("_PlusScalar").describe("x + scalar"),
                 [](float x, float s) { return x + s; }, one);
  RegisterScalar(reg.Register("_minus_scalar").add_alias("_MinusScalar").describe("x - scalar"),
                 [](float x, float s) { return x - s; }, one);
  RegisterScalar(reg.Register("_rminus_scalar").add_alias("_RMinusScalar").describe("scalar - x"),
                 [](float x, float s) { return s - x; }, minus_one);
  RegisterScalar(reg.Register("_mul_scalar").add_alias("_MulScalar").describe("x * scalar"),
                 [](float x, float s) { return x * s; }, [](float, float s) { return s; });
  RegisterScalar(reg.Register("_div_scalar").add_alias("_DivScalar").describe("x / scalar"),
                 [](float x, float s) { return x / s; }, [](float, float s) { return 1.0f / s; });
  RegisterScalar(reg.Register("_rdiv_scalar").add_alias("_RDivScalar").describe("scalar / x"),
                 [](float x, float s) { return s / x; }, [](float x, float s) { return -s / (x * x); });

  // Ties send the gradient to lhs (MXNet's ge/lt and le/gt pairs).
  RegisterBinary(reg.Register("_maximum").add_alias("_Maximum").describe("Element-wise maximum."),
                 [](float l, float r) { return l > r ? l : r; },
                 [](float l, float r) { return math::Bool(l >= r); },
                 [](float l, float r) { return math::Bool(l < r); });
  RegisterBinary(reg.Register("_minimum").add_alias("_Minimum").describe("Element-wise minimum."),
                 [](float l, float r) { return l < r ? l : r; },
                 [](float l, float r) { return math::Bool(l <= r); },
                 [](float l, float r) { return math::Bool(l > r); });
  RegisterBinary(reg.Register("_power").add_alias("_Power").describe("lhs ** rhs element-wise."),
                 math::Power, math::PowerGradL, math::PowerGradR);
  RegisterBinary(reg.Register("_hypot").add_alias("_Hypot")
                     .describe("Given the legs of a right triangle, returns its hypotenuse."),
                 math::Hypot, [](float l, float r) { return l / std::hypot(l, r); },
                 [](float l, float r) { return r / std::hypot(l, r); });

  RegisterScalar(reg.Register("_maximum_scalar").add_alias("_MaximumScalar").describe("max(x, scalar)"),
                 [](float x, float s) { return x > s ? x : s; },
                 [](float x, float s) { return math::Bool(x >= s); });
  RegisterScalar(reg.Register("_minimum_scalar").add_alias("_MinimumScalar").describe("min(x, scalar)"),
                 [](float x, float s) { return x < s ? x : s; },
                 [](float x, float s) { return math::Bool(x <= s); });
  RegisterScalar(reg.Register("_power_scalar").add_alias("_PowerScalar").describe("x ** scalar"),
                 math::Power, math::PowerGradL);
  RegisterScalar(reg.Register("_rpower_scalar").add_alias("_RPowerScalar").describe("scalar ** x"),
                 [](float x, float s) { return std::pow(s, x); },
                 [](float x, float s) { return std::pow(s, x) * std::log(s); });
  RegisterScalar(reg.Register("_hypot_scalar").add_alias("_HypotScalar").describe("hypot(x, scalar)"),
                 math::Hypot, [](float x, float s) { return x / std::hypot(x, s); });
}
}  // namespace

}  // namespace symbind
