// BlockGrad (identity forward, zero gradient) and _copy (identity both ways).
#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(BlockGrad)
    .add_alias("stop_gradient")
    .describe("Stops gradient computation: the output is the input, the gradient is zero.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardZero);

SYMBIND_REGISTER_OP(_copy)
    .add_alias("identity")
    .add_alias("_copyto")  // MXNet's NDArray::CopyTo invokes it with the target as output
    .describe("Returns a copy of the input.")
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

}  // namespace symbind
