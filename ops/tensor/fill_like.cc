// zeros_like and ones_like: an array of the input's shape and dtype filled with 0 or 1.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// Forward of zeros_like / ones_like: the output filled with `v`.
ForwardFn FillForward(float v) {
  return [v](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    ComputeInDType(attrs.op->name.c_str(), {}, req, out, [v](auto tag, const auto&, const auto& reqs, const auto& outs) {
      using T = decltype(tag);
      MapWithReq(outs[0].template data<T>(), outs[0].Size(), reqs[0], [v](int64_t) { return static_cast<T>(v); });
    });
  };
}

}  // namespace

SYMBIND_REGISTER_OP(zeros_like)
    .set_monitor_numbered_inputs()
    .describe("Returns an array of zeros with the same shape and type as the input.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_forward(FillForward(0.0f))
    .set_zero_gradient();

SYMBIND_REGISTER_OP(ones_like)
    .set_monitor_numbered_inputs()
    .describe("Returns an array of ones with the same shape and type as the input.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_forward(FillForward(1.0f))
    .set_zero_gradient();

}  // namespace symbind
