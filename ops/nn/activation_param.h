// Activation's parameters, shared by Activation (ops/nn/activation.cc) and
// _contrib_quantized_act (ops/quantization/quantized_act.cc).
#pragma once
#include <symbind/core/param.h>

namespace symbind {

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

}  // namespace symbind
