// _identity_with_attr_like_rhs (MXNet 1.9.1's elemwise_unary_op_basic): lhs unchanged, with
// the shape constraint that it has rhs's shape. The constraint runs both ways, which is what
// the op is for: a graph whose broadcast hides a weight's shape gets it back from the weight's
// other use. The lhs gradient is the head gradient; rhs only lends its shape (zero gradient).
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

void InferShapeLikeRhs(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  // lhs, rhs and the output all have one shape: what any of them knows, all take.
  TShape common;
  for (const TShape* s : {&(*in)[0], &(*in)[1], &(*out)[0]}) {
    if (!s->ndim_known()) continue;
    TShape merged;
    if (!common.ndim_known()) common = *s;
    else if (UnifyShapes(common, *s, &merged)) common = merged;
  }
  if (!common.ndim_known()) return;
  ShapeAssignCheck(in, 0, common);
  ShapeAssignCheck(in, 1, common);
  ShapeAssignCheck(out, 0, common);
}

}  // namespace

SYMBIND_REGISTER_OP(_identity_with_attr_like_rhs)
    .describe("Returns lhs unchanged, constrained to the shape of rhs (shape inference runs both "
              "ways through it).")
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "First input.")
    .add_argument_doc("rhs", "Second input: only its shape is used.")
    .set_infer_shape(InferShapeLikeRhs)
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"rhs"})
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      CopyWithReq(out[0], in[0], req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      ZeroWithReq(a.in_grads[1], a.req[1]);
      CopyWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
    });

}  // namespace symbind
