// BlockGrad (identity forward, zero gradient), _copy (identity both ways) and _copyto (a copy
// into the output given, converted to its dtype).
#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(BlockGrad)
    .set_monitor_numbered_inputs()
    .add_alias("stop_gradient")
    .describe("Stops gradient computation: the output is the input, the gradient is zero.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_zero_gradient();

SYMBIND_REGISTER_OP(_copy)
    .set_monitor_numbered_inputs()
    .add_alias("identity")
    .describe("Returns a copy of the input.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

// MXNet's NDArray.copyto / NDArray::CopyTo invoke _copyto with the target as output, which may
// have another dtype: the output's dtype is the caller's (type inference leaves it open, so
// Invoke takes the array given, float32 when none is) and the values are converted to it.
SYMBIND_REGISTER_OP(_copyto)
    .set_monitor_numbered_inputs()
    .describe("Copies the input into the output, converting the values to the output's dtype.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>*, std::vector<int>*) {})
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      if (req[0] == OpReq::kAdd)
        throw Error(StrCat(InOperator(attrs), ": the output can only be written, not added to"));
      NDArray dst = out[0];
      in[0].CopyTo(&dst);
    });

}  // namespace symbind
