// Element-wise binary ops on equal shapes, and ops with a scalar operand.
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {

// Registers a binary op with forward f(l, r) and partial derivatives dl(l, r), dr(l, r).
template <typename F, typename DL, typename DR>
void RegisterBinary(Op& op, F f, DL dl, DR dr) {
  op.set_arguments({"lhs", "rhs"})
      .set_forward_inplace()
      .set_infer_shape(AllSameShape)
      .set_forward([f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const float* l = in[0].fdata();
        const float* r = in[1].fdata();
        MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return f(l[i], r[i]); });
      })
      .set_backward([dl, dr](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
        const float* l = a.inputs[0].fdata();
        const float* r = a.inputs[1].fdata();
        const float* g = a.out_grads[0].fdata();
        int64_t n = a.inputs[0].Size();
        if (a.req[0] != OpReq::kNull)
          MapWithReq(a.in_grads[0].fdata(), n, a.req[0], [&](int64_t i) { return g[i] * dl(l[i], r[i]); });
        if (a.req[1] != OpReq::kNull)
          MapWithReq(a.in_grads[1].fdata(), n, a.req[1], [&](int64_t i) { return g[i] * dr(l[i], r[i]); });
      });
}

struct ScalarParam : Parameter<ScalarParam> {
  double scalar;
  bool is_int;
  static void Declare(ParamDeclarer<ScalarParam>& d) {
    d.field("scalar", &ScalarParam::scalar).set_default(1.0).describe("Scalar input value.");
    d.field("is_int", &ScalarParam::is_int).set_default(true)
        .describe("Indicate whether scalar input is int type (accepted for compatibility).");
  }
};

// Registers x -> f(x, s) with derivative df(x, s) (by x).
template <typename F, typename DF>
void RegisterScalar(Op& op, F f, DF df) {
  op.set_params<ScalarParam>()
      .set_infer_shape(SameShape)
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        float s = static_cast<float>(attrs.param<ScalarParam>().scalar);
        const float* x = in[0].fdata();
        MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return f(x[i], s); });
      })
      .set_backward([df](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        float s = static_cast<float>(attrs.param<ScalarParam>().scalar);
        const float* x = a.inputs[0].fdata();
        const float* g = a.out_grads[0].fdata();
        if (a.req[0] == OpReq::kNull) return;
        MapWithReq(a.in_grads[0].fdata(), a.inputs[0].Size(), a.req[0],
                   [&](int64_t i) { return g[i] * df(x[i], s); });
      });
}

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
