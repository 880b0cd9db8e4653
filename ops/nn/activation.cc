// Activation: relu, sigmoid, tanh, softrelu, softsign.
#include <cmath>
#include <type_traits>

#include <symbind/ops/nn/activation_param.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
// The act type is a template argument so each loop is branch-free and vectorises.
template <int T>
float Apply(float x) {
  if constexpr (T == kRelu) return x > 0 ? x : 0.0f;
  else if constexpr (T == kSigmoid) return 1.0f / (1.0f + std::exp(-x));
  else if constexpr (T == kTanh) return std::tanh(x);
  else if constexpr (T == kSoftReLU) return x > 20.0f ? x : std::log1p(std::exp(x));
  else return x / (1.0f + std::fabs(x));
}

// d act / d x, from the input x and the output y.
template <int T>
float Derivative(float x, float y) {
  if constexpr (T == kRelu) return x > 0 ? 1.0f : 0.0f;
  else if constexpr (T == kSigmoid) return y * (1.0f - y);
  else if constexpr (T == kTanh) return 1.0f - y * y;
  else if constexpr (T == kSoftReLU) return 1.0f / (1.0f + std::exp(-x));
  else {
    float d = 1.0f + std::fabs(x);
    return 1.0f / (d * d);
  }
}

// dx[b:e] (= or +=) dy * Derivative<kRelu>, vectorised. By default (trapping math) GCC may not
// run the compare and multiply for every element, so it branched per element and stayed scalar
// (14x the forward); without trapping math it computes the same values branch-free. ivdep: dx
// may be dy's own buffer (in-place backward), and element i reads only index i before writing it.
#if defined(__clang__)
#define SYMBIND_RELU_GRAD_FLAGS
#define SYMBIND_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define SYMBIND_RELU_GRAD_FLAGS __attribute__((optimize("no-trapping-math")))
#define SYMBIND_IVDEP _Pragma("GCC ivdep")
#endif
SYMBIND_RELU_GRAD_FLAGS void ReluBackward(float* dx, const float* dy, const float* x, int64_t b,
                                          int64_t e, bool add) {
  if (add) {
    SYMBIND_IVDEP
    for (int64_t i = b; i < e; ++i) dx[i] += dy[i] * (x[i] > 0 ? 1.0f : 0.0f);
  } else {
    SYMBIND_IVDEP
    for (int64_t i = b; i < e; ++i) dx[i] = dy[i] * (x[i] > 0 ? 1.0f : 0.0f);
  }
}

// Calls f(std::integral_constant<int, t>{}).
template <typename F>
void WithActType(int t, const F& f) {
  switch (t) {
    case kRelu: return f(std::integral_constant<int, kRelu>{});
    case kSigmoid: return f(std::integral_constant<int, kSigmoid>{});
    case kTanh: return f(std::integral_constant<int, kTanh>{});
    case kSoftReLU: return f(std::integral_constant<int, kSoftReLU>{});
    default: return f(std::integral_constant<int, kSoftSign>{});
  }
}

}  // namespace

SYMBIND_REGISTER_OP(Activation)
    .set_monitor_numbered_inputs()
    .set_forward_inplace()
    .describe("Applies an activation function element-wise to the input.")
    .set_params<ActivationParam>()
    .set_infer_shape(SameShape)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      int t = attrs.param<ActivationParam>().act_type;
      const float* x = in[0].fdata();
      WithActType(t, [&](auto act) {
        MapWithReq(out[0].fdata(), in[0].Size(), req[0], [&](int64_t i) { return Apply<act()>(x[i]); });
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      int t = attrs.param<ActivationParam>().act_type;
      const float* x = a.inputs[0].fdata();
      const float* y = a.outputs[0].fdata();
      const float* dy = a.out_grads[0].fdata();
      if (a.req[0] == OpReq::kNull) return;
      if (t == kRelu)
        return ParallelFor(a.inputs[0].Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
          ReluBackward(a.in_grads[0].fdata(), dy, x, b, e, a.req[0] == OpReq::kAdd);
        });
      WithActType(t, [&](auto act) {
        MapWithReq(InGradOrNull(a, 0), a.inputs[0].Size(), a.req[0],
                   [&](int64_t i) { return dy[i] * Derivative<act()>(x[i], y[i]); });
      });
    });

}  // namespace symbind
