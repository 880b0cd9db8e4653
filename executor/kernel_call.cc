#include "kernel_call.h"

#include <cstring>

namespace symbind {

namespace {

bool ComputesInFloat32(DType t) { return IsFloatingType(t) && t != DType::kFloat32; }
bool IsIntegerType(DType t) { return !IsFloatingType(t) && t != DType::kBool; }

bool Any(const std::vector<NDArray>& arrays, bool (*which)(DType)) {
  for (const NDArray& a : arrays)
    if (!a.is_none() && which(a.dtype())) return true;
  return false;
}
bool AnyConverted(const std::vector<NDArray>& arrays) { return Any(arrays, ComputesInFloat32); }

// Whether an op with a float64 backward must still get float32 copies (of float16, bfloat16).
bool AnyHalf(const std::vector<NDArray>& arrays) {
  return Any(arrays, [](DType t) { return ComputesInFloat32(t) && t != DType::kFloat64; });
}

// Copies in `to` of the arrays `which` selects; the others as they are.
std::vector<NDArray> InputCopies(const std::vector<NDArray>& arrays, bool (*which)(DType), DType to) {
  std::vector<NDArray> out;
  out.reserve(arrays.size());
  for (const NDArray& a : arrays) out.push_back(!a.is_none() && which(a.dtype()) ? a.AsType(to) : a);
  return out;
}
std::vector<NDArray> Float32Inputs(const std::vector<NDArray>& arrays) {
  return InputCopies(arrays, ComputesInFloat32, DType::kFloat32);
}

// Output buffers in `to` for the arrays `which` selects: a copy of the current values where the
// kernel adds to them.
std::vector<NDArray> OutputCopies(const std::vector<NDArray>& arrays, const std::vector<OpReq>& req,
                                  bool (*which)(DType), DType to) {
  std::vector<NDArray> out;
  out.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i];
    if (a.is_none() || !which(a.dtype())) out.push_back(a);
    else if (i < req.size() && req[i] == OpReq::kAdd) out.push_back(a.AsType(to));
    else out.push_back(NDArray(a.shape(), to, a.ctx()));
  }
  return out;
}
std::vector<NDArray> Float32Outputs(const std::vector<NDArray>& arrays, const std::vector<OpReq>& req) {
  return OutputCopies(arrays, req, ComputesInFloat32, DType::kFloat32);
}

// The computed copies back into the arrays `which` selected, converted to their dtypes.
void CopyBack(const std::vector<NDArray>& computed, const std::vector<NDArray>& arrays, const std::vector<OpReq>& req,
              bool (*which)(DType) = ComputesInFloat32) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].is_none() || !which(arrays[i].dtype())) continue;
    if (i < req.size() && req[i] == OpReq::kNull) continue;
    NDArray dst = arrays[i];
    computed[i].CopyTo(&dst);
  }
}

// Kernels write through raw pointers, so a read-only array given as an output (weights mapped
// from a .symbind file, a ReadOnlyView that every predictor shares) would fault or silently
// change what others read. Every kernel call passes here, whoever bound its outputs.
void CheckWritable(const Op& op, const NodeAttrs& attrs, const char* role, const std::vector<OpReq>& req,
                   const std::vector<NDArray>& arrays) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].is_none() || !arrays[i].read_only() || (i < req.size() && req[i] == OpReq::kNull)) continue;
    arrays[i].storage()->CheckWritable(StrCat("operator ", attrs.name, " (", op.name, ") ", role, " ", i).c_str());
  }
}

// Kernels write through raw pointers: the versions of what a call may have written move, so that
// forms kernels derived from those arrays (packed weights) are made again. Outputs always; in
// training, inputs too (BatchNorm updates its moving statistics in place). Marked when the call
// ends, returning or throwing.
struct MarkWrittenOnExit {
  const std::vector<NDArray>& written;
  const std::vector<NDArray>* also_written = nullptr;
  ~MarkWrittenOnExit() {
    for (const NDArray& a : written) a.MarkWritten();
    if (also_written)
      for (const NDArray& a : *also_written) a.MarkWritten();
  }
};

}  // namespace

void CallForward(const Op& op, const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& outputs) {
  CheckWritable(op, attrs, "output", req, outputs);
  const MarkWrittenOnExit mark{outputs, ctx.is_train ? &inputs : nullptr};
  if (op.dtype_generic || (!AnyConverted(inputs) && !AnyConverted(outputs)))
    return op.forward(ctx, attrs, inputs, req, outputs);
  const std::vector<NDArray> out32 = Float32Outputs(outputs, req);
  const std::vector<NDArray> in32 = Float32Inputs(inputs);
  op.forward(ctx, attrs, in32, req, out32);
  CopyBack(out32, outputs, req);
  // Inputs the op updates in place (optimizer states, as MXNet's FMutateInputs) go back too;
  // the others are left as they are, without a float32 round trip.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in32[i].SharesStorageWith(inputs[i]) || inputs[i].read_only()) continue;
    const NDArray original = inputs[i].AsType(DType::kFloat32);
    if (std::memcmp(original.raw_data(), in32[i].raw_data(), original.bytes()) == 0) continue;
    NDArray dst = inputs[i];
    in32[i].CopyTo(&dst);
  }
}

void CallBackward(const Op& op, const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& args) {
  CheckWritable(op, attrs, "input gradient", args.req, args.in_grads);
  const MarkWrittenOnExit mark{args.in_grads};
  if (op.integer_backward && (Any(args.out_grads, IsIntegerType) || Any(args.inputs, IsIntegerType) ||
                              Any(args.outputs, IsIntegerType) || Any(args.in_grads, IsIntegerType))) {
    // Exact while the values stay below 2^53 (2^24 in float32), as MXNet's integer arithmetic is.
    const DType t = op.float64_backward ? DType::kFloat64 : DType::kFloat32;
    const std::vector<NDArray> in_grads = OutputCopies(args.in_grads, args.req, IsIntegerType, t);
    op.backward(ctx, attrs,
                BackwardArgs{InputCopies(args.out_grads, IsIntegerType, t), InputCopies(args.inputs, IsIntegerType, t),
                             InputCopies(args.outputs, IsIntegerType, t), args.req, in_grads});
    return CopyBack(in_grads, args.in_grads, args.req, IsIntegerType);
  }
  if (op.float64_backward && !AnyHalf(args.out_grads) && !AnyHalf(args.inputs) && !AnyHalf(args.outputs) &&
      !AnyHalf(args.in_grads))
    return op.backward(ctx, attrs, args);
  if (!AnyConverted(args.out_grads) && !AnyConverted(args.inputs) && !AnyConverted(args.outputs) &&
      !AnyConverted(args.in_grads))
    return op.backward(ctx, attrs, args);
  const std::vector<NDArray> out_grads = Float32Inputs(args.out_grads), inputs = Float32Inputs(args.inputs),
                             outputs = Float32Inputs(args.outputs);
  const std::vector<NDArray> in_grads = Float32Outputs(args.in_grads, args.req);
  op.backward(ctx, attrs, BackwardArgs{out_grads, inputs, outputs, args.req, in_grads});
  CopyBack(in_grads, args.in_grads, args.req);
}

}  // namespace symbind
