// How the executors call an operator's kernels (executor.cc, backward.cc, invoke.cc,
// autograd.cc): float16, bfloat16 and float64 arrays reach kernels that read float32 only
// through float32 copies, as MXNet's half_t arithmetic computes in float32.
//
//   CallForward(op, ctx, attrs, inputs, req, outputs);   // instead of op.forward(...)
//   CallBackward(op, ctx, attrs, args);                   // instead of op.backward(...)
//
// Forward converts for ops that are not dtype_generic; backward converts for every op (the
// backward kernels compute in float32) except float64 arrays for ops that set
// Op::float64_backward. Integer arrays (indices, labels) are passed as they
// are. When every array is float32 or an integer type, the kernel is called directly.
// Every array a call writes (outputs, input gradients) must be writable: a read-only one
// throws Error naming the node, the op and the output, before the kernel runs.
#pragma once
#include <vector>

#include <symbind/core/op.h>

namespace symbind {

void CallForward(const Op& op, const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& outputs);
void CallBackward(const Op& op, const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& args);

}  // namespace symbind
