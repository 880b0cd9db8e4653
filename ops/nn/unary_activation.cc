// Standalone activation ops sigmoid, tanh and relu (MXNet's elementwise unary forms of
// Activation). Their gradients are computed from the output, as MXNet's
// _backward_sigmoid / _backward_tanh / _backward_relu do.
#include <cmath>
#include <type_traits>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
// f(x) and f'(x) expressed through y = f(x). Forward in the input's dtype (ComputeInDType),
// gradients in float32 or float64 (finite differences in float64 check to 1e-7).
template <typename F, typename DFromY>
void RegisterUnaryActivation(const char* name, const char* doc, F f, DFromY df) {
  OpRegistry::Global().Register(name)
      .describe(doc)
      .set_infer_shape(SameShape)
      .set_monitor_numbered_inputs()
      .set_dtype_generic()
      .set_float64_backward()
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        ComputeInDType(attrs.op->name.c_str(), in, req, out,
                       [&](auto tag, const auto& in, const auto& req, const auto& out) {
                         using T = decltype(tag);
                         const T* x = in[0].template data<T>();
                         MapWithReq(out[0].template data<T>(), in[0].Size(), req[0],
                                    [&](int64_t i) { return f(x[i]); });
                       });
      })
      .set_backward([df](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        if (a.req[0] == OpReq::kNull) return;
        math::RequireFloatGradient(a, attrs);
        math::BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          using T = decltype(tag);
          const T *y = b.outputs[0].template data<T>(), *dy = b.out_grads[0].template data<T>();
          MapWithReq(b.in_grads[0].template data<T>(), b.inputs[0].Size(), b.req[0],
                     [&](int64_t i) { return static_cast<T>(dy[i] * df(y[i])); });
        });
      });
}

// Integer inputs compute through double and truncate, as MXNet's integer kernels do.
template <typename T>
T Sigmoid(T x) {
  if constexpr (std::is_floating_point_v<T>) return T(1) / (T(1) + std::exp(-x));
  else return static_cast<T>(1 / (1 + std::exp(-static_cast<double>(x))));
}
template <typename T>
T Tanh(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::tanh(x);
  else return static_cast<T>(std::tanh(static_cast<double>(x)));
}
template <typename T>
T Relu(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x) || x > 0 ? x : T(0);
  else return x > 0 ? x : T(0);
}

SYMBIND_REGISTER_OP_FAMILY(unary_activations) {
  RegisterUnaryActivation(
      "sigmoid", "Computes sigmoid of x element-wise: y = 1 / (1 + exp(-x)).",
      [](auto x) { return Sigmoid(x); }, [](auto y) { return y * (1 - y); });
  RegisterUnaryActivation(
      "tanh", "Returns the hyperbolic tangent of the input array, computed element-wise.",
      [](auto x) { return Tanh(x); }, [](auto y) { return 1 - y * y; });
  // MXNet's relu passes NaN through (IsNan(x) || x > 0 ? x : 0), and so does its gradient
  // (IsNan(y) ? y : y > 0).
  RegisterUnaryActivation(
      "relu", "Computes rectified linear activation: max(x, 0).", [](auto x) { return Relu(x); },
      [](auto y) { return std::isnan(y) ? y : y > 0 ? decltype(y)(1) : decltype(y)(0); });
}
}  // namespace

}  // namespace symbind
