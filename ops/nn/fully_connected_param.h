// FullyConnected's parameters and shape inference, shared by FullyConnected
// (ops/nn/fully_connected.cc) and _contrib_quantized_fully_connected
// (ops/quantization/quantized_fully_connected.cc).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

struct FullyConnectedParam : Parameter<FullyConnectedParam> {
  int num_hidden;
  bool no_bias;
  bool flatten;
  static void Declare(ParamDeclarer<FullyConnectedParam>& d) {
    d.field("num_hidden", &FullyConnectedParam::num_hidden).lower_bound(1)
        .describe("Number of hidden nodes of the output.");
    d.field("no_bias", &FullyConnectedParam::no_bias).set_default(false)
        .describe("Whether to disable bias parameter.");
    d.field("flatten", &FullyConnectedParam::flatten).set_default(true)
        .describe("Whether to collapse all but the first axis of the input data tensor.");
  }
};

// (batch, input features) of the data as the op sees it.
inline std::pair<int64_t, int64_t> FlatDims(const TShape& s, bool flatten) {
  if (flatten) return {s[0], s.ProdDims(1, s.ndim())};
  return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1]};
}

inline void InferShapeFC(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<FullyConnectedParam>();
  const TShape& d = (*in)[0];
  if (!p.no_bias) ShapeAssignCheck(in, 2, TShape({p.num_hidden}));
  if (d.ndim_known()) {
    if (d.ndim() < 1) throw ShapeError("FullyConnected needs data of rank >= 1");
    int64_t features = -1;
    if (p.flatten) {
      bool known = true;
      for (int i = 1; i < d.ndim(); ++i) known &= d[i] >= 0;
      if (known) features = d.ProdDims(1, d.ndim());
      ShapeAssignCheck(out, 0, TShape({d[0], p.num_hidden}));
    } else {
      features = d[d.ndim() - 1];
      TShape o = d;
      o[o.ndim() - 1] = p.num_hidden;
      ShapeAssignCheck(out, 0, o);
    }
    ShapeAssignCheck(in, 1, TShape({p.num_hidden, features}));
    // Leading dims unknown in data flow back from a known output (MXNet's batch inference).
    const TShape& o = (*out)[0];
    if (o.ndim_known()) {
      TShape filled = (*in)[0];
      const int lead = p.flatten ? 1 : filled.ndim() - 1;
      for (int i = 0; i < lead && i < o.ndim(); ++i)
        if (filled[i] < 0) filled[i] = o[i];
      ShapeAssignCheck(in, 0, filled);
    }
  } else if ((*out)[0].ndim_known() && p.flatten) {
    // The batch size flows back from the output (MXNet infers data's first dim this way).
    const TShape& o = (*out)[0];
    const TShape& w = (*in)[1];
    if (w.ndim() == 2 && w[1] >= 0) ShapeAssignCheck(in, 0, TShape({o[0], w[1]}));
  }
}

}  // namespace symbind
