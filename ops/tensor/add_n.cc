// add_n (alias ElementWiseSum): the element-wise sum of num_args equal-shape inputs, added in
// input order, in the inputs' dtype. Every input's gradient is the head gradient.
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
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& inputs,
                    const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
      ComputeInDType("add_n", inputs, reqs, outputs, [](auto tag, const auto& in, const auto& req, const auto& out) {
        using T = decltype(tag);
        std::vector<const T*> x;
        for (auto& a : in) x.push_back(a.template data<T>());
        MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) {
          T s = x[0][i];
          for (size_t k = 1; k < x.size(); ++k) s = static_cast<T>(s + x[k][i]);
          return s;
        });
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      const float* g = a.out_grads[0].fdata();
      for (size_t k = 0; k < a.in_grads.size(); ++k)
        MapWithReq(InGradOrNull(a, k), a.out_grads[0].Size(), a.req[k], [&](int64_t i) { return g[i]; });
    });

}  // namespace symbind
