// Element-wise unary math: exp/log family, powers and roots, abs/sign/negative, rounding.
// Rounding and sign are piecewise constant: their gradient is zero, as in MXNet.
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
float Sign(float x) { return x < 0 ? -1.0f : (x > 0 ? 1.0f : 0.0f); }

Op& Declare(const char* name, const char* doc) {
  return OpRegistry::Global().Register(name).describe(doc).set_infer_shape(SameShape);
}

template <typename F>
Op& WithForward(Op& op, F f) {
  return op.set_forward([f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    const float* x = in[0].fdata();
    MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return f(x[i]); });
  });
}

// y = f(x) with dy/dx = df(x, y).
template <typename F, typename DF>
Op& RegisterUnary(const char* name, const char* doc, F f, DF df) {
  return WithForward(Declare(name, doc), f)
      .set_backward([df](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
        const float* x = a.inputs[0].fdata();
        const float* y = a.outputs[0].fdata();
        const float* g = a.out_grads[0].fdata();
        MapWithReq(a.in_grads[0].fdata(), a.inputs[0].Size(), a.req[0],
                   [&](int64_t i) { return g[i] * df(x[i], y[i]); });
      });
}

// A piecewise-constant op: zero gradient.
template <typename F>
void RegisterFlat(const char* name, const char* doc, F f) {
  WithForward(Declare(name, doc), f)
      .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
        ZeroWithReq(a.in_grads[0], a.req[0]);
      });
}

SYMBIND_REGISTER_OP_FAMILY(unary_math) {
  RegisterUnary("exp", "Returns element-wise exponential value of the input.",
                [](float x) { return std::exp(x); }, [](float, float y) { return y; });
  RegisterUnary("expm1", "Returns ``exp(x) - 1`` computed element-wise on the input.",
                [](float x) { return std::expm1(x); }, [](float x, float) { return std::exp(x); });
  RegisterUnary("log", "Returns element-wise Natural logarithmic value of the input.",
                [](float x) { return std::log(x); }, [](float x, float) { return 1.0f / x; });
  RegisterUnary("log10", "Returns element-wise Base-10 logarithmic value of the input.",
                [](float x) { return std::log10(x); },
                [](float x, float) { return 1.0f / (x * std::log(10.0f)); });
  RegisterUnary("log2", "Returns element-wise Base-2 logarithmic value of the input.",
                [](float x) { return std::log2(x); },
                [](float x, float) { return 1.0f / (x * std::log(2.0f)); });
  RegisterUnary("log1p", "Returns element-wise ``log(1 + x)`` value of the input.",
                [](float x) { return std::log1p(x); }, [](float x, float) { return 1.0f / (1.0f + x); });
  RegisterUnary("sqrt", "Returns element-wise square-root value of the input.",
                [](float x) { return std::sqrt(x); }, [](float, float y) { return 0.5f / y; });
  RegisterUnary("rsqrt", "Returns element-wise inverse square-root value of the input.",
                [](float x) { return 1.0f / std::sqrt(x); },
                [](float x, float) { return -0.5f / (std::sqrt(x) * x); });
  RegisterUnary("cbrt", "Returns element-wise cube-root value of the input.",
                [](float x) { return std::cbrt(x); }, [](float, float y) { return 1.0f / (3.0f * y * y); });
  RegisterUnary("rcbrt", "Returns element-wise inverse cube-root value of the input.",
                [](float x) { return 1.0f / std::cbrt(x); },
                [](float x, float) { return -1.0f / (3.0f * std::cbrt(x) * x); });
  RegisterUnary("square", "Returns element-wise squared value of the input.",
                [](float x) { return x * x; }, [](float x, float) { return 2.0f * x; });
  RegisterUnary("reciprocal", "Returns the reciprocal of the argument, element-wise.",
                [](float x) { return 1.0f / x; }, [](float x, float) { return -1.0f / (x * x); });
  RegisterUnary("abs", "Returns element-wise absolute value of the input.",
                [](float x) { return std::fabs(x); }, [](float x, float) { return Sign(x); });
  RegisterUnary("negative", "Numerical negative of the argument, element-wise.",
                [](float x) { return -x; }, [](float, float) { return -1.0f; });

  RegisterFlat("sign", "Returns element-wise sign of the input.", Sign);
  RegisterFlat("round", "Returns element-wise rounded value to the nearest integer of the input (halfway cases away from zero).",
               [](float x) { return std::round(x); });
  // MXNet's rint: halfway cases go to the lower integer (floor), not to even.
  RegisterFlat("rint", "Returns element-wise rounded value to the nearest integer of the input.",
               [](float x) {
                 float f = std::floor(x), c = std::ceil(x);
                 return (x - f) <= (c - x) ? f : c;
               });
  RegisterFlat("ceil", "Returns element-wise ceiling of the input.", [](float x) { return std::ceil(x); });
  RegisterFlat("floor", "Returns element-wise floor of the input.", [](float x) { return std::floor(x); });
  RegisterFlat("trunc", "Return the element-wise truncated value of the input.",
               [](float x) { return std::trunc(x); });
  RegisterFlat("fix", "Returns element-wise rounded value to the nearest integer towards zero of the input.",
               [](float x) { return std::trunc(x); });
}
}  // namespace

}  // namespace symbind
