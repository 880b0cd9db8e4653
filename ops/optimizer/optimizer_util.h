// What MXNet's optimizer update operators share: the gradient preprocessing (rescale, clip),
// the parameter fields every rule declares alike, the SGD step that sgd_*, mp_sgd_* and multi_*
// all take, and the mixed-precision plumbing of the mp_* ops (weight and grad in float16 or
// float32, a float32 master copy `weight32` and float32 states).
//
// As in MXNet, states (mom, mean, var, n, ..., weight32) are inputs the kernel updates in place
// (MXNet's FMutateInputs); the new weight is output 0, which callers usually alias to `weight`.
// None of these ops is differentiable.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

// clip(g): g limited to [-clip, clip] when clip >= 0 (MXNet's clip_gradient; -1 turns it off).
inline float ClipGradient(float g, float clip) { return clip >= 0 ? std::clamp(g, -clip, clip) : g; }

// The fields named rescale_grad and clip_gradient, with MXNet's defaults and words.
template <typename P>
void DeclareRescaleAndClip(ParamDeclarer<P>& d) {
  d.field("rescale_grad", &P::rescale_grad).set_default(1.0f)
      .describe("Rescale gradient to grad = rescale_grad*grad.");
  d.field("clip_gradient", &P::clip_gradient).set_default(-1.0f)
      .describe("Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
                "gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).");
}

inline const char* const kWeightDecayDoc =
    "Weight decay augments the objective function with a regularization term that penalizes "
    "large weights. The penalty scales with the square of the magnitude of each weight.";

template <typename P>
void DeclareWeightDecay(ParamDeclarer<P>& d) {
  d.field("wd", &P::wd).set_default(0.0f).describe(kWeightDecayDoc);
}

// lazy_update only changes row_sparse gradients, which symbind does not have: accepted, unused.
template <typename P>
void DeclareLazyUpdate(ParamDeclarer<P>& d) {
  d.field("lazy_update", &P::lazy_update).set_default(true)
      .describe("If true, lazy updates are applied if gradient's stype is row_sparse (symbind "
                "arrays are dense, so it has no effect).");
}

// One SGD step with momentum on one element, as MXNet's sgd_mom_update defines it:
//   mom = momentum*mom - lr*wd*w - lr*clip(rescale_grad*g);  w = w + mom
// With momentum 0 and no state this is sgd_update: w = (1 - lr*wd)*w - lr*clip(rescale_grad*g).
struct SgdRule {
  float lr, wd, momentum, rescale_grad, clip_gradient;
  // Returns the new weight; updates *mom when there is a momentum state.
  float Step(float w, float g, float* mom) const {
    const float step = momentum * (mom ? *mom : 0.f) - lr * wd * w -
                       lr * ClipGradient(rescale_grad * g, clip_gradient);
    if (mom) *mom = step;
    return w + step;
  }
};

// --- Mixed precision ------------------------------------------------------------------------

// The values of `a` as float32: `a` itself when it is float32, else a converted copy.
inline NDArray AsFloat32(const NDArray& a) {
  return a.dtype() == DType::kFloat32 ? a : a.AsType(DType::kFloat32);
}

// Runs step(i) for every element i of output `out` (step updates the op's states in place and
// returns the new weight, in float32) and writes the results into `out` as `req` says,
// converting to out's dtype. States are updated even when req is kNull, as in MXNet.
template <typename Step>
void ApplyUpdate(const NDArray& out, OpReq req, const char* op, const Step& step) {
  const bool direct = out.dtype() == DType::kFloat32;
  if (!direct && req == OpReq::kAdd)
    throw Error(StrCat(op, ": adding into a ", DTypeName(out.dtype()),
                       " output is not supported (only float32 outputs accumulate)"));
  NDArray values = direct ? out : NDArray(out.shape(), DType::kFloat32);
  float* y = values.fdata();
  const OpReq write = direct ? req : OpReq::kWrite;
  ParallelFor(out.Size(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) Put(y + i, step(i), write);
  });
  if (!direct && req != OpReq::kNull) {
    NDArray dst = out;
    values.CopyTo(&dst);
  }
}

// The floating dtypes a mixed-precision op's weight and gradient may have.
inline bool IsFloatType(int type) {
  return type == static_cast<int>(DType::kFloat32) || type == static_cast<int>(DType::kFloat16) ||
         type == static_cast<int>(DType::kFloat64) || type == static_cast<int>(DType::kBFloat16);
}

// Type inference of the mp_* ops (MXNet's MP_InferType): inputs for which `is_fp32(i)` holds
// (weight32 and the states) are float32; the others (weight, grad) and every output share one
// floating dtype.
template <typename IsFloat32Input>
void InferMixedPrecisionType(const char* op, std::vector<int>* in, std::vector<int>* out,
                             IsFloat32Input is_fp32) {
  for (size_t i = 0; i < in->size(); ++i)
    if (is_fp32(i)) TypeAssignCheck(in, i, static_cast<int>(DType::kFloat32));
  int shared = -1;
  for (size_t i = 0; i < in->size() && shared < 0; ++i)
    if (!is_fp32(i)) shared = (*in)[i];
  for (size_t i = 0; i < out->size() && shared < 0; ++i) shared = (*out)[i];
  if (shared < 0) return;
  if (!IsFloatType(shared))
    throw TypeError(StrCat(op, ": weight and grad must be float16, bfloat16, float32 or float64, got ",
                           DTypeName(static_cast<DType>(shared))));
  for (size_t i = 0; i < in->size(); ++i)
    if (!is_fp32(i)) TypeAssignCheck(in, i, shared);
  for (size_t i = 0; i < out->size(); ++i) TypeAssignCheck(out, i, shared);
}

// --- Ops updating several weights in one call (multi_*) --------------------------------------

// Input names of a multi-weight op: each of `per_weight` suffixed with the weight's number, weight
// by weight (weight_0, grad_0, mom_0, weight_1, ...).
inline std::vector<std::string> PerWeightNames(const std::vector<std::string>& per_weight, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i)
    for (const std::string& name : per_weight) names.push_back(name + std::to_string(i));
  return names;
}

// nnvm's default output names: "output" for one, output0, output1, ... for several.
inline std::vector<std::string> MultiOutputNames(int n) {
  return n == 1 ? std::vector<std::string>{"output"} : NumberedNames("output", n);
}

// Shapes of a multi-weight op: the first stride*n inputs come in groups of `stride`, each group
// and output k sharing one shape. Inputs after them are the caller's to check.
inline void InferShapePerWeight(int stride, int n, std::vector<TShape>* in, std::vector<TShape>* out) {
  for (int k = 0; k < n; ++k) {
    std::vector<TShape> group(in->begin() + k * stride, in->begin() + (k + 1) * stride);
    std::vector<TShape> result{(*out)[k]};
    AllSameShape(NodeAttrs{}, &group, &result);
    for (int j = 0; j < stride; ++j) ShapeAssignCheck(in, k * stride + j, group[j]);
    ShapeAssignCheck(out, k, result[0]);
  }
}

}  // namespace symbind
