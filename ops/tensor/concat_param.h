// Concat's parameters and shape inference, shared by Concat (ops/tensor/concat.cc) and
// _contrib_quantized_concat (ops/quantization/quantized_concat.cc).
#pragma once
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

struct ConcatParam : Parameter<ConcatParam> {
  int num_args;
  int dim;
  static void Declare(ParamDeclarer<ConcatParam>& d) {
    d.field("num_args", &ConcatParam::num_args).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of inputs to be concated.");
    d.field("dim", &ConcatParam::dim).set_default(1).describe("the dimension to be concated.");
  }
};

// Shapes inferred both ways: every input and the output agree except on the axis, where the
// output's size is the sum of the inputs'.
void InferShapeConcat(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out);

}  // namespace symbind
