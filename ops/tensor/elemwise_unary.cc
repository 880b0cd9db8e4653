// Element-wise unary math: exp/log family, powers and roots, abs/sign/negative, rounding,
// trigonometric and hyperbolic functions, softsign, erf/erfinv, gamma/gammaln, logical_not.
// Rounding, sign and logical_not are piecewise constant: their gradient is zero, as in MXNet.
#include <cmath>
#include <limits>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
template <typename T>
T Sign(T x) { return static_cast<T>(x < 0 ? -1 : (x > 0 ? 1 : 0)); }

constexpr double kPi = 3.14159265358979323846;

// The digamma function psi = d/dx ln|gamma(x)|: reflection below 0, the recurrence
// psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series. Poles give NaN.
double Digamma(double x) {
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x < 0) return Digamma(1 - x) - kPi / std::tan(kPi * x);
  double shift = 0;
  for (; x < 6; x += 1) shift -= 1 / x;
  const double r = 1 / (x * x);
  const double series =
      r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))));
  return shift + std::log(x) - 0.5 / x - series;
}

// The inverse error function: Winitzki's closed-form estimate refined by Newton steps on erf
// in double. erfinv(+-1) = +-inf; |y| > 1 is NaN.
double ErfInv(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(y) == 1) return y * std::numeric_limits<double>::infinity();
  constexpr double a = 0.147;
  const double l = std::log(1 - y * y), t = 2 / (kPi * a) + l / 2;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - l / a) - t), y);
  for (int k = 0; k < 4; ++k) x -= (std::erf(x) - y) / (2 / std::sqrt(kPi) * std::exp(-x * x));
  return x;
}

Op& Declare(const char* name, const char* doc) {
  return OpRegistry::Global().Register(name).describe(doc).set_infer_shape(SameShape).set_monitor_numbered_inputs();
}

// Forward in the input's dtype (ComputeInDType).
template <typename F>
Op& WithForward(Op& op, F f) {
  return op.set_dtype_generic().set_forward([f](const OpContext&, const NodeAttrs& attrs,
                                                const std::vector<NDArray>& in, const std::vector<OpReq>& req,
                                                const std::vector<NDArray>& out) {
    ComputeInDType(attrs.op->name.c_str(), in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                             const auto& out) {
      using T = decltype(tag);
      const T* x = in[0].template data<T>();
      MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) { return f(x[i]); });
    });
  });
}

// y = f(x) with dy/dx = df(x, y).
template <typename F, typename DF>
Op& RegisterUnary(const char* name, const char* doc, F f, DF df) {
  return WithForward(Declare(name, doc), f)
      .set_float64_backward()
      .set_backward([df](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        if (a.req[0] == OpReq::kNull) return;
        // Integer inputs have no gradient; float64 differentiates in double (finite differences
        // in float64 check to 1e-7), float32 as before.
        if (!IsFloatingType(a.inputs[0].dtype())) math::RequireFloat32Gradient(a, attrs);
        math::BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          using T = decltype(tag);
          const T* x = b.inputs[0].template data<T>();
          const T* y = b.outputs[0].template data<T>();
          const T* g = b.out_grads[0].template data<T>();
          MapWithReq(b.in_grads[0].template data<T>(), b.inputs[0].Size(), b.req[0],
                     [&](int64_t i) { return static_cast<T>(g[i] * df(x[i], y[i])); });
        });
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
                [](auto x) { return std::exp(x); }, [](auto, auto y) { return y; });
  RegisterUnary("expm1", "Returns ``exp(x) - 1`` computed element-wise on the input.",
                [](auto x) { return std::expm1(x); }, [](auto x, auto) { return std::exp(x); });
  RegisterUnary("log", "Returns element-wise Natural logarithmic value of the input.",
                [](auto x) { return std::log(x); }, [](auto x, auto) { return 1.0f / x; });
  RegisterUnary("log10", "Returns element-wise Base-10 logarithmic value of the input.",
                [](auto x) { return std::log10(x); },
                [](auto x, auto) { return 1.0f / (x * std::log(decltype(x)(10))); });
  RegisterUnary("log2", "Returns element-wise Base-2 logarithmic value of the input.",
                [](auto x) { return std::log2(x); },
                [](auto x, auto) { return 1.0f / (x * std::log(decltype(x)(2))); });
  RegisterUnary("log1p", "Returns element-wise ``log(1 + x)`` value of the input.",
                [](auto x) { return std::log1p(x); }, [](auto x, auto) { return 1.0f / (1.0f + x); });
  RegisterUnary("sqrt", "Returns element-wise square-root value of the input.",
                [](auto x) { return std::sqrt(x); }, [](auto, auto y) { return 0.5f / y; });
  RegisterUnary("rsqrt", "Returns element-wise inverse square-root value of the input.",
                [](auto x) { return 1.0f / std::sqrt(x); },
                [](auto x, auto) { return -0.5f / (std::sqrt(x) * x); });
  RegisterUnary("cbrt", "Returns element-wise cube-root value of the input.",
                [](auto x) { return std::cbrt(x); }, [](auto, auto y) { return 1.0f / (3.0f * y * y); });
  RegisterUnary("rcbrt", "Returns element-wise inverse cube-root value of the input.",
                [](auto x) { return 1.0f / std::cbrt(x); },
                [](auto x, auto) { return -1.0f / (3.0f * std::cbrt(x) * x); });
  RegisterUnary("square", "Returns element-wise squared value of the input.",
                [](auto x) { return x * x; }, [](auto x, auto) { return 2.0f * x; });
  RegisterUnary("reciprocal", "Returns the reciprocal of the argument, element-wise.",
                [](auto x) { return 1.0f / x; }, [](auto x, auto) { return -1.0f / (x * x); });
  RegisterUnary("abs", "Returns element-wise absolute value of the input.",
                [](auto x) { return std::fabs(x); }, [](auto x, auto) { return Sign(x); });
  RegisterUnary("softsign", "Computes softsign of x element-wise: y = x / (1 + abs(x)).",
                [](auto x) { return x / (1 + std::fabs(x)); },
                [](auto x, auto) { return 1.0f / ((1.0f + std::fabs(x)) * (1.0f + std::fabs(x))); });
  RegisterUnary("negative", "Numerical negative of the argument, element-wise.",
                [](auto x) { return -x; }, [](auto, auto) { return -1.0f; });

  RegisterUnary("sin", "Computes the element-wise sine of the input array (radians).",
                [](auto x) { return std::sin(x); }, [](auto x, auto) { return std::cos(x); });
  RegisterUnary("cos", "Computes the element-wise cosine of the input array (radians).",
                [](auto x) { return std::cos(x); }, [](auto x, auto) { return -std::sin(x); });
  // MXNet's tan_grad is 1 + y^2, from the output.
  RegisterUnary("tan", "Computes the element-wise tangent of the input array (radians).",
                [](auto x) { return std::tan(x); }, [](auto, auto y) { return 1.0f + y * y; });
  RegisterUnary("arcsin", "Returns element-wise inverse sine of the input array, in [-pi/2, pi/2].",
                [](auto x) { return std::asin(x); },
                [](auto x, auto) { return 1.0f / std::sqrt(1.0f - x * x); });
  RegisterUnary("arccos", "Returns element-wise inverse cosine of the input array, in [0, pi].",
                [](auto x) { return std::acos(x); },
                [](auto x, auto) { return -1.0f / std::sqrt(1.0f - x * x); });
  RegisterUnary("arctan", "Returns element-wise inverse tangent of the input array, in (-pi/2, pi/2).",
                [](auto x) { return std::atan(x); }, [](auto x, auto) { return 1.0f / (1.0f + x * x); });
  RegisterUnary("degrees", "Converts each element of the input array from radians to degrees.",
                [](auto x) { return (180.0 / kPi) * x; },
                [](auto x, auto) { return static_cast<decltype(x)>(180.0 / kPi); });
  RegisterUnary("radians", "Converts each element of the input array from degrees to radians.",
                [](auto x) { return (kPi / 180.0) * x; },
                [](auto x, auto) { return static_cast<decltype(x)>(kPi / 180.0); });
  RegisterUnary("sinh", "Returns the hyperbolic sine of the input array, computed element-wise.",
                [](auto x) { return std::sinh(x); }, [](auto x, auto) { return std::cosh(x); });
  RegisterUnary("cosh", "Returns the hyperbolic cosine of the input array, computed element-wise.",
                [](auto x) { return std::cosh(x); }, [](auto x, auto) { return std::sinh(x); });
  RegisterUnary("arcsinh", "Returns the element-wise inverse hyperbolic sine of the input array.",
                [](auto x) { return std::asinh(x); },
                [](auto x, auto) { return 1.0f / std::hypot(x, 1.0f); });
  RegisterUnary("arccosh", "Returns the element-wise inverse hyperbolic cosine of the input array.",
                [](auto x) { return std::acosh(x); },
                [](auto x, auto) { return 1.0f / std::sqrt(x * x - 1.0f); });
  RegisterUnary("arctanh", "Returns the element-wise inverse hyperbolic tangent of the input array.",
                [](auto x) { return std::atanh(x); }, [](auto x, auto) { return 1.0f / (1.0f - x * x); });
  RegisterUnary("erf", "Returns element-wise gauss error function of the input.",
                [](auto x) { return std::erf(x); },
                [](auto x, auto) { return static_cast<decltype(x)>(2 / std::sqrt(kPi)) * std::exp(-x * x); })
      .add_alias("_npx_erf");
  // MXNet's erfinv_grad is sqrt(pi)/2 * exp(y^2), from the output.
  RegisterUnary("erfinv", "Returns element-wise inverse gauss error function of the input.",
                [](auto x) { return ErfInv(x); },
                [](auto, auto y) { return static_cast<decltype(y)>(std::sqrt(kPi) / 2) * std::exp(y * y); })
      .add_alias("_npx_erfinv");
  RegisterUnary("gamma", "Returns the gamma function (extension of the factorial function to the reals), "
                "computed element-wise on the input array.",
                [](auto x) { return std::tgamma(x); },
                [](auto x, auto y) { return static_cast<decltype(x)>(y * Digamma(x)); })
      .add_alias("_npx_gamma");
  RegisterUnary("gammaln", "Returns element-wise log of the absolute value of the gamma function of the input.",
                [](auto x) { return std::lgamma(x); }, [](auto x, auto) { return static_cast<decltype(x)>(Digamma(x)); })
      .add_alias("_npx_gammaln");

  RegisterFlat("logical_not", "Returns the result of logical NOT (!) function: 1 where the input is 0, else 0.",
               [](auto x) { return x != 0 ? 0.0f : 1.0f; });
  RegisterFlat("sign", "Returns element-wise sign of the input.", [](auto x) { return Sign(x); });
  RegisterFlat("round", "Returns element-wise rounded value to the nearest integer of the input (halfway cases away from zero).",
               [](auto x) { return std::round(x); });
  // MXNet's rint: halfway cases go to the lower integer (floor), not to even.
  RegisterFlat("rint", "Returns element-wise rounded value to the nearest integer of the input.",
               [](auto x) {
                 auto f = std::floor(x), c = std::ceil(x);
                 return (x - f) <= (c - x) ? f : c;
               });
  RegisterFlat("ceil", "Returns element-wise ceiling of the input.", [](auto x) { return std::ceil(x); });
  RegisterFlat("floor", "Returns element-wise floor of the input.", [](auto x) { return std::floor(x); });
  RegisterFlat("trunc", "Return the element-wise truncated value of the input.",
               [](auto x) { return std::trunc(x); });
  RegisterFlat("fix", "Returns element-wise rounded value to the nearest integer towards zero of the input.",
               [](auto x) { return std::trunc(x); });
}
}  // namespace

}  // namespace symbind
