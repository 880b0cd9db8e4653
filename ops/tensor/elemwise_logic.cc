// Comparisons and logical ops on two equal-shape arrays (_equal, ..., _logical_xor) and against a
// scalar (_equal_scalar, ..., _logical_xor_scalar). As in MXNet 1.x, outputs keep the input's
// float type and hold 0 or 1; the gradient is zero (MakeZeroGradNodes).
#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
using math::Bool;

void ZeroGradients(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  for (size_t k = 0; k < a.in_grads.size(); ++k) ZeroWithReq(a.in_grads[k], a.req[k]);
}

const auto no_grad = [](float, float) { return 0.0f; };

// One logic function in both forms: `name` on arrays, `name`_scalar against a scalar.
template <typename F>
void RegisterLogic(const std::string& name, const std::string& alias, const std::string& scalar_alias,
                   const std::string& what, F f) {
  auto& reg = OpRegistry::Global();
  math::RegisterBinary(reg.Register(name).add_alias(alias).describe(StrCat(what, ", element-wise (1 or 0).")),
                       f, no_grad, no_grad)
      .set_backward(ZeroGradients);
  math::RegisterScalar(reg.Register(name + "_scalar").add_alias(scalar_alias)
                           .describe(StrCat(what, " against a scalar, element-wise (1 or 0).")),
                       f, no_grad)
      .set_backward(ZeroGradients);
}

[[maybe_unused]] const bool registered = [] {
  RegisterLogic("_equal", "_Equal", "_EqualScalar", "lhs == rhs", [](auto l, auto r) { return Bool(l == r); });
  RegisterLogic("_not_equal", "_Not_Equal", "_NotEqualScalar", "lhs != rhs",
                [](auto l, auto r) { return Bool(l != r); });
  RegisterLogic("_greater", "_Greater", "_GreaterScalar", "lhs > rhs", [](auto l, auto r) { return Bool(l > r); });
  RegisterLogic("_greater_equal", "_Greater_Equal", "_GreaterEqualScalar", "lhs >= rhs",
                [](auto l, auto r) { return Bool(l >= r); });
  RegisterLogic("_lesser", "_Lesser", "_LesserScalar", "lhs < rhs", [](auto l, auto r) { return Bool(l < r); });
  RegisterLogic("_lesser_equal", "_Lesser_Equal", "_LesserEqualScalar", "lhs <= rhs",
                [](auto l, auto r) { return Bool(l <= r); });
  RegisterLogic("_logical_and", "_Logical_And", "_LogicalAndScalar", "lhs and rhs (non-zero is true)",
                [](auto l, auto r) { return Bool(l != 0 && r != 0); });
  RegisterLogic("_logical_or", "_Logical_Or", "_LogicalOrScalar", "lhs or rhs (non-zero is true)",
                [](auto l, auto r) { return Bool(l != 0 || r != 0); });
  RegisterLogic("_logical_xor", "_Logical_Xor", "_LogicalXorScalar", "lhs xor rhs (non-zero is true)",
                [](auto l, auto r) { return Bool((l != 0) != (r != 0)); });
  return true;
}();
}  // namespace

}  // namespace symbind
