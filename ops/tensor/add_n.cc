// add_n (alias ElementWiseSum): the element-wise sum of num_args equal-shape inputs, added in
// input order. Every input's gradient is the head gradient.
#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct AddNParam : Parameter<AddNParam> {
  int num_args;
  static void Declare(ParamDeclarer<AddNParam>& d) {
    d.field("num_args", &AddNParam::num_args).set_range(1, Graph::kMaxNodeOutputs).describe("Number of inputs to be summed.");
  }
};

// All inputs and the output share one shape; what any of them knows fills the others.
void InferAddNShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  for (size_t k = 0; k < in->size(); ++k) ShapeAssignCheck(out, 0, (*in)[k]);
  for (size_t k = 0; k < in->size(); ++k) ShapeAssignCheck(in, k, (*out)[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(add_n)
    .add_alias("ElementWiseSum")
    .describe("Adds all input arguments element-wise: add_n(a_1, ..., a_n) = a_1 + ... + a_n.")
    .set_params<AddNParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      std::vector<std::string> names;
      for (int k = 0; k < a.param<AddNParam>().num_args; ++k) names.push_back(StrCat("arg", k));
      return names;
    })
    .set_forward_inplace()
    .set_infer_shape(InferAddNShape)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      std::vector<const float*> x;
      for (auto& a : in) x.push_back(a.fdata());
      MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) {
        float s = x[0][i];
        for (size_t k = 1; k < x.size(); ++k) s += x[k][i];
        return s;
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      const float* g = a.out_grads[0].fdata();
      for (size_t k = 0; k < a.in_grads.size(); ++k)
        MapWithReq(InGradOrNull(a, k), a.out_grads[0].Size(), a.req[k], [&](int64_t i) { return g[i]; });
    });

}  // namespace symbind
