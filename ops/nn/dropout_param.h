// Dropout's parameters, shared by Dropout (ops/nn/dropout.cc) and the graph passes that remove
// it for inference (predict/quantize.cc).
#pragma once
#include <optional>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

enum DropoutMode { kDropoutTraining, kDropoutAlways };

struct DropoutParam : Parameter<DropoutParam> {
  float p;
  int mode;
  TShape axes;
  std::optional<bool> cudnn_off;
  static void Declare(ParamDeclarer<DropoutParam>& d) {
    d.field("p", &DropoutParam::p).set_default(0.5f).set_range(0, 1)
        .describe("Fraction of the input that gets dropped out during training time.");
    d.field("mode", &DropoutParam::mode)
        .add_enum("training", kDropoutTraining).add_enum("always", kDropoutAlways).set_default(kDropoutTraining)
        .describe("Whether to only turn on dropout during training or to also turn on for inference.");
    d.field("axes", &DropoutParam::axes).set_default(TShape(std::vector<int64_t>{}))
        .describe("Axes for variational dropout kernel.");
    d.field("cudnn_off", &DropoutParam::cudnn_off).set_default(std::optional<bool>(false))
        .describe("Whether to turn off cudnn in dropout operator. This option is ignored if axes is specified.");
  }
};

}  // namespace symbind
