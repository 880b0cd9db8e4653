// Standalone activation ops sigmoid, tanh and relu (MXNet's elementwise unary forms of
// Activation). Their gradients are computed from the output, as MXNet's
// _backward_sigmoid / _backward_tanh / _backward_relu do.
#include <cmath>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
// f(x) and f'(x) expressed through y = f(x).
template <typename F, typename DFromY>
void RegisterUnaryActivation(const char* name, const char* doc, F f, DFromY df) {
  OpRegistry::Global().Register(name)
      .describe(doc)
      .set_infer_shape(SameShape)
      .set_forward([f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const float* x = in[0].fdata();
        MapWithReq(out[0].fdata(), in[0].Size(), req[0], [&](int64_t i) { return f(x[i]); });
      })
      .set_backward([df](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
        if (a.req[0] == OpReq::kNull) return;
        const float *y = a.outputs[0].fdata(), *dy = a.out_grads[0].fdata();
        MapWithReq(InGradOrNull(a, 0), a.inputs[0].Size(), a.req[0],
                   [&](int64_t i) { return dy[i] * df(y[i]); });
      });
}

SYMBIND_REGISTER_OP_FAMILY(unary_activations) {
  RegisterUnaryActivation(
      "sigmoid", "Computes sigmoid of x element-wise: y = 1 / (1 + exp(-x)).",
      [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, [](float y) { return y * (1.0f - y); });
  RegisterUnaryActivation(
      "tanh", "Returns the hyperbolic tangent of the input array, computed element-wise.",
      [](float x) { return std::tanh(x); }, [](float y) { return 1.0f - y * y; });
  // MXNet's relu passes NaN through (IsNan(x) || x > 0 ? x : 0), and so does its gradient
  // (IsNan(y) ? y : y > 0).
  RegisterUnaryActivation(
      "relu", "Computes rectified linear activation: max(x, 0).",
      [](float x) { return std::isnan(x) || x > 0 ? x : 0.0f; },
      [](float y) { return std::isnan(y) ? y : y > 0 ? 1.0f : 0.0f; });
}
}  // namespace

}  // namespace symbind
