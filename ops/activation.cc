// Activation: relu, sigmoid, tanh, softrelu, softsign.
#include <cmath>

#include "kernel_util.h"

namespace symbind {

namespace {
enum ActType { kRelu, kSigmoid, kTanh, kSoftReLU, kSoftSign };

struct ActivationParam : Parameter<ActivationParam> {
  int act_type;
  static void Declare(ParamDeclarer<ActivationParam>& d) {
    d.field("act_type", &ActivationParam::act_type)
        .add_enum("relu", kRelu).add_enum("sigmoid", kSigmoid).add_enum("tanh", kTanh)
        .add_enum("softrelu", kSoftReLU).add_enum("softsign", kSoftSign)
        .describe("Activation function to be applied.");
  }
};

float Apply(int t, float x) {
  switch (t) {
    case kRelu: return x > 0 ? x : 0.0f;
    case kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case kTanh: return std::tanh(x);
    case kSoftReLU: return x > 20.0f ? x : std::log1p(std::exp(x));
    default: return x / (1.0f + std::fabs(x));
  }
}

// d act / d x, from the input x and the output y.
float Derivative(int t, float x, float y) {
  switch (t) {
    case kRelu: return x > 0 ? 1.0f : 0.0f;
    case kSigmoid: return y * (1.0f - y);
    case kTanh: return 1.0f - y * y;
    case kSoftReLU: return 1.0f / (1.0f + std::exp(-x));
    default: {
      float d = 1.0f + std::fabs(x);
      return 1.0f / (d * d);
    }
  }
}

void SameShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(Activation)
    .describe("Applies an activation function element-wise to the input.")
    .set_params<ActivationParam>()
    .set_infer_shape(SameShape)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      int t = attrs.param<ActivationParam>().act_type;
      const float* x = in[0].fdata();
      MapWithReq(out[0].fdata(), in[0].Size(), req[0], [&](int64_t i) { return Apply(t, x[i]); });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      int t = attrs.param<ActivationParam>().act_type;
      const float* x = a.inputs[0].fdata();
      const float* y = a.outputs[0].fdata();
      const float* dy = a.out_grads[0].fdata();
      if (a.req[0] == OpReq::kNull) return;
      MapWithReq(a.in_grads[0].fdata(), a.inputs[0].Size(), a.req[0],
                 [&](int64_t i) { return dy[i] * Derivative(t, x[i], y[i]); });
    });

}  // namespace symbind
