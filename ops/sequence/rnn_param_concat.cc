// _rnn_param_concat (alias _npi_rnn_param_concat): the Concat that Gluon's fused RNN layers use
// to build RNN's packed parameter vector. It computes exactly as Concat (it runs Concat's
// kernels); only shape inference differs, as in MXNet's RNNParamConcatShape: besides Concat's
// one input inferred from the output, two inputs unknown on the concat axis (the first layer's
// i2h weights of both directions, whose input size is unknown) share what remains equally.
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct RNNParamConcatParam : Parameter<RNNParamConcatParam> {
  int num_args;
  int dim;
  static void Declare(ParamDeclarer<RNNParamConcatParam>& d) {
    d.field("num_args", &RNNParamConcatParam::num_args).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of inputs to be concated.");
    d.field("dim", &RNNParamConcatParam::dim).set_default(1).describe("the dimension to be concated.");
  }
};

// The node as a Concat node, to run Concat's registered functions.
NodeAttrs AsConcat(const NodeAttrs& attrs) {
  static const Op& concat = OpRegistry::Global().Get("Concat");
  NodeAttrs c;
  c.op = &concat;
  c.name = attrs.name;
  c.dict = attrs.dict;
  concat.ParseAttrs(&c);
  return c;
}

void InferShapeRNNParamConcat(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const NodeAttrs concat = AsConcat(attrs);
  const TShape& o = (*out)[0];
  if (o.ndim_known()) {
    const int axis = NormalizeAxis(attrs.param<RNNParamConcatParam>().dim, o.ndim(),
                                                 "_rnn_param_concat");
    std::vector<size_t> unknown;
    int64_t known = 0;
    for (size_t i = 0; i < in->size(); ++i) {
      const TShape& s = (*in)[i];
      if (!s.ndim_known() || s[axis] < 0) unknown.push_back(i);
      else known += s[axis];
    }
    if (unknown.size() == 2 && o[axis] >= 0) {
      const int64_t rest = o[axis] - known;
      if (rest < 0 || rest % 2 != 0)
        throw ShapeError(StrCat("_rnn_param_concat: the output has ", o[axis], " entries on axis ", axis,
                                ", which leaves ", rest, " for the two unknown inputs (must be even and >= 0)"));
      TShape s = o;
      s[axis] = rest / 2;
      for (size_t i : unknown) ShapeAssignCheck(in, i, s);
    }
  }
  concat.op->infer_shape(concat, in, out);
}
}  // namespace

SYMBIND_REGISTER_OP(_rnn_param_concat)
    .add_alias("_npi_rnn_param_concat")
    .describe("Joins input arrays along a given axis, as Concat; used to pack RNN parameters. Two "
              "inputs unknown on the axis are inferred from the output as equal halves.")
    .set_params<RNNParamConcatParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("arg", a.param<RNNParamConcatParam>().num_args); })
    .set_infer_shape(InferShapeRNNParamConcat)
    .set_forward([](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const NodeAttrs concat = AsConcat(attrs);
      concat.op->forward(ctx, concat, in, req, out);
    })
    .set_backward([](const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
      const NodeAttrs concat = AsConcat(attrs);
      concat.op->backward(ctx, concat, a);
    });

}  // namespace symbind
