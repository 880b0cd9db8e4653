// reset_arrays: sets num_arrays arrays to zero in place and has no outputs. Gluon's
// Parameter.zero_grad and Trainer call it to clear gradients in one call.
#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct ResetArraysParam : Parameter<ResetArraysParam> {
  int num_arrays;
  static void Declare(ParamDeclarer<ResetArraysParam>& d) {
    d.field("num_arrays", &ResetArraysParam::num_arrays).set_range(1, Graph::kMaxNodeOutputs)
        .describe("number of input arrays.");
  }
};
}  // namespace

SYMBIND_REGISTER_OP(reset_arrays)
    .describe("Sets multiple arrays to zero, in place (the inputs are written; there is no output).")
    .set_params<ResetArraysParam>()
    .set_key_var_num_args("num_arrays")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("array_", a.param<ResetArraysParam>().num_arrays); })
    // No visible output, as MXNet; one hidden empty output gives the node an entry that
    // graphs and imperative calls order and run it by.
    .set_num_visible_outputs([](const NodeAttrs&) { return 0; })
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({0}));
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
      TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
    })
    .set_dtype_generic()  // Fill writes zeros of any dtype
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>&, const std::vector<NDArray>&) {
      for (const NDArray& a : in) a.Fill(0.0f);
    });

}  // namespace symbind
