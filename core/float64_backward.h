// Ops whose backward kernels compute in float64 when their arrays are float64, instead of in
// the float32 copies the executors give every other backward (executor/kernel_call.h). The
// linear-algebra ops need it: MXNet's tests check their float64 gradients to 1e-6, past what a
// float32 Cholesky or eigensolver can reach. A table beside Op rather than a field of it, so
// that core/op.h, which every source file includes, stays as it is.
//
//   SetFloat64Backward(OpRegistry::Global().Get("_linalg_potrf"));  // at registration
//   if (HasFloat64Backward(op)) ...                                  // in the executors
#pragma once
#include <set>

#include "op.h"

namespace symbind {

// Filled by static initialisers while ops register, read only afterwards.
inline std::set<const Op*>& Float64BackwardOps() {
  static std::set<const Op*> ops;
  return ops;
}
inline Op& SetFloat64Backward(Op& op) {
  Float64BackwardOps().insert(&op);
  return op;
}
inline bool HasFloat64Backward(const Op& op) { return Float64BackwardOps().count(&op) > 0; }

}  // namespace symbind
