// Shared by the linear-algebra ops (MXNet's _linalg_*): tensors seen as batches of row-major
// matrices mapped into Eigen, dtype dispatch (float32 and float64 natively, float16 through
// float32 copies), writing as OpReq says, and the shape checks they share.
//
//   ForwardInFloatType(attrs, in, req, out, [&](auto tag, const auto& in, const auto& req, const auto& out) {
//     using T = decltype(tag);
//     const MatrixBatch m = BatchOf(in[0].shape());
//     ForEachMatrix(m, [&](int64_t b) { Assign(MatrixAt(out[0].template data<T>(), m, b), ..., req[0]); });
//   });
#pragma once
#include <Eigen/Dense>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/math_util.h>

namespace symbind {
namespace linalg {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <typename T>
using MatrixMap = Eigen::Map<Matrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// A tensor seen as a batch of matrices: rows along `axis`, columns along the last axis, the
// batch over every other axis. Element (o, r, i, c) sits at ((o * rows + r) * inner + i) * cols + c.
struct MatrixBatch {
  int64_t outer = 1, rows = 0, inner = 1, cols = 0;
  int64_t count() const { return outer * inner; }
  int64_t offset(int64_t b) const { return (b / inner) * rows * inner * cols + (b % inner) * cols; }
  int64_t row_stride() const { return inner * cols; }
};

// The matrices of `s` (ndim >= 2) with rows along `axis` (< ndim - 1, negative from the end).
inline MatrixBatch BatchOf(const TShape& s, int axis = -2) {
  const int nd = s.ndim();
  if (axis < 0) axis += nd;
  MatrixBatch m;
  m.outer = s.ProdDims(0, axis);
  m.rows = s[axis];
  m.inner = s.ProdDims(axis + 1, nd - 1);
  m.cols = s[nd - 1];
  return m;
}

// A batch of `count` vectors of length n (the last axis).
inline MatrixBatch VectorBatchOf(const TShape& s) {
  MatrixBatch m;
  m.cols = s.ndim() == 0 ? 1 : s[s.ndim() - 1];
  m.rows = 1;
  m.outer = m.cols == 0 ? 0 : s.Size() / m.cols;
  return m;
}

template <typename T>
MatrixMap<T> MatrixAt(T* data, const MatrixBatch& m, int64_t b) {
  return MatrixMap<T>(data + m.offset(b), m.rows, m.cols, Eigen::OuterStride<>(m.row_stride()));
}

// dst = value or dst += value as req says. Values are evaluated before they are written, so
// dst may be one of their operands.
template <typename T, typename Expr>
void Assign(MatrixMap<T> dst, const Expr& value, OpReq req) {
  if (req == OpReq::kNull) return;
  Matrix<T> v = value;
  if (req == OpReq::kAdd) dst += v;
  else dst = v;
}

// op(X) op(Y) with op a transpose where the flag says.
template <typename T, typename X, typename Y>
Matrix<T> Product(const X& x, bool tx, const Y& y, bool ty) {
  if (tx && ty) return x.transpose() * y.transpose();
  if (tx) return x.transpose() * y;
  if (ty) return x * y.transpose();
  return x * y;
}

// The lower (or upper) triangle of a square matrix, zeros elsewhere.
template <typename T, typename X>
Matrix<T> Triangle(const X& x, bool lower) {
  if (lower) return x.template triangularView<Eigen::Lower>();
  return x.template triangularView<Eigen::Upper>();
}

// The symmetric matrix whose lower triangle (with the diagonal) is that of x (MXNet's copyLTU).
template <typename T>
Matrix<T> SymmetricFromLower(const Matrix<T>& x) {
  Matrix<T> s = x.template triangularView<Eigen::Lower>();
  s.template triangularView<Eigen::StrictlyUpper>() = x.template triangularView<Eigen::StrictlyLower>().transpose();
  return s;
}

// op(t)^-1 b (or b op(t)^-1 when rightside) for t triangular (lower when t_lower).
template <typename T>
Matrix<T> SolveTriangular(const Matrix<T>& t, bool t_lower, bool transpose, const Matrix<T>& b, bool rightside) {
  // Left solves only: b op(t)^-1 = (op(t)^-T b^T)^T.
  const bool solve_transpose = transpose != rightside;
  Matrix<T> x = rightside ? Matrix<T>(b.transpose()) : b;
  if (t_lower && !solve_transpose) t.template triangularView<Eigen::Lower>().solveInPlace(x);
  else if (t_lower) t.transpose().template triangularView<Eigen::Upper>().solveInPlace(x);
  else if (!solve_transpose) t.template triangularView<Eigen::Upper>().solveInPlace(x);
  else t.transpose().template triangularView<Eigen::Lower>().solveInPlace(x);
  if (rightside) return x.transpose();
  return x;
}

// Runs fn(b) for every matrix of the batch, in parallel over fixed chunks of matrices.
template <typename F>
void ForEachMatrix(int64_t count, int64_t n, const F& fn) {
  const int64_t work = std::max<int64_t>(1, n * n * std::max<int64_t>(n, 1));
  ParallelFor(count, GrainFor(work), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b);
  });
}

using math::BackwardInFloatType;

inline const char* OpName(const NodeAttrs& attrs) { return attrs.op ? attrs.op->name.c_str() : "linalg"; }

// The linear-algebra kernels read float32 and float64 (float16 and bfloat16 through float32).
inline void RequireFloatType(const NodeAttrs& attrs, DType t) {
  if (!IsFloatingType(t))
    throw TypeError(StrCat(OpName(attrs), ": only floating point arrays are supported (float32, float64), got ",
                            DTypeName(t)));
}

// Forward in the dtype of input 0: kernel(T(), in, req, out) with T float or double.
template <typename K>
void ForwardInFloatType(const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>& req,
                        const std::vector<NDArray>& out, const K& kernel) {
  RequireFloatType(attrs, in[0].dtype());
  ComputeInDType(OpName(attrs), in, req, out, [&](auto tag, const auto& ins, const auto& reqs, const auto& outs) {
    if constexpr (std::is_floating_point<decltype(tag)>::value) kernel(tag, ins, reqs, outs);
  });
}

// Forward per matrix: fn(T(), in, req, out, b) for b in [0, count), matrices of size up to n.
template <typename F>
void ForwardPerMatrix(const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>& req,
                      const std::vector<NDArray>& out, int64_t count, int64_t n, const F& fn) {
  ForwardInFloatType(attrs, in, req, out, [&](auto tag, const auto& ins, const auto& reqs, const auto& outs) {
    ForEachMatrix(count, n, [&](int64_t b) { fn(tag, ins, reqs, outs, b); });
  });
}

// Forward of ops mapping each matrix of input 0 to one of output 0: out[b] = fn(T(), A[b], b).
template <typename F>
void MapMatrices(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const std::vector<OpReq>& reqs,
                 const std::vector<NDArray>& outputs, const F& fn) {
  const MatrixBatch mi = BatchOf(inputs[0].shape()), mo = BatchOf(outputs[0].shape());
  ForwardPerMatrix(attrs, inputs, reqs, outputs, mi.count(), std::max(mi.rows, mi.cols),
                   [&](auto tag, const auto& in, const auto& req, const auto& out, int64_t b) {
    using T = decltype(tag);
    Assign(MatrixAt(out[0].template data<T>(), mo, b), fn(tag, MatrixAt(in[0].template data<T>(), mi, b), b), req[0]);
  });
}

// Backward per matrix: fn(T(), a, b) for b in [0, count), matrices of size up to n. Nothing
// runs when no input wants a gradient.
template <typename F>
void BackwardPerMatrix(const NodeAttrs& attrs, const BackwardArgs& args, int64_t count, int64_t n, const F& fn) {
  bool wanted = false;
  for (OpReq r : args.req) wanted = wanted || r != OpReq::kNull;
  if (!wanted) return;
  BackwardInFloatType(attrs, args, [&](auto tag, const BackwardArgs& a) {
    ForEachMatrix(count, n, [&](int64_t b) { fn(tag, a, b); });
  });
}

// Marks a linear-algebra op: its kernels read every floating dtype themselves, forward and
// backward.
inline Op& LinalgOp(Op& op) {
  return op.set_dtype_generic().set_float64_backward();
}

// SYMBIND_REGISTER_OP for the linear-algebra ops (LinalgOp).
#define SYMBIND_REGISTER_LINALG_OP(Name)                                                   \
  static ::symbind::Op& SYMBIND_OP_CONCAT(symbind_linalg_registration_, __COUNTER__) = \
      ::symbind::linalg::LinalgOp(::symbind::OpRegistry::Global().Register(#Name))

// Type inference: one floating type for every input and output.
inline void InferFloatType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  InferSameType(attrs, in, out);
  for (const auto* v : {in, out})
    for (int t : *v)
      if (t >= 0) RequireFloatType(attrs, static_cast<DType>(t));
}

// Shape checks; each names the op and the input.
inline void RequireMatrices(const NodeAttrs& attrs, const TShape& s, const char* input) {
  if (s.ndim() < 2)
    throw ShapeError(StrCat(OpName(attrs), ": input ", input, " must be a tensor of matrices (ndim >= 2), got ", s));
}
inline void RequireSquare(const NodeAttrs& attrs, const TShape& s, const char* input) {
  RequireMatrices(attrs, s, input);
  const int nd = s.ndim();
  if (s[nd - 1] >= 0 && s[nd - 2] >= 0 && s[nd - 1] != s[nd - 2])
    throw ShapeError(StrCat(OpName(attrs), ": input ", input, " must be a tensor of square matrices, got ", s));
}

// Square matrices in, the same shape out (inferred both ways).
inline void InferSquareSameShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  if ((*in)[0].ndim_known()) RequireSquare(attrs, (*in)[0], "A");
  if ((*out)[0].ndim_known()) RequireSquare(attrs, (*out)[0], "A");
  if ((*in)[0].ndim_known()) ShapeAssignCheck(out, 0, (*in)[0]);
  if ((*out)[0].ndim_known()) ShapeAssignCheck(in, 0, (*out)[0]);
}

// The leading (batch) dims of s, without its last `drop` dims; (1,) when none are left (MXNet's
// shape for one matrix reduced to a scalar).
inline TShape LeadingDims(const TShape& s, int drop) {
  std::vector<int64_t> d(s.dims().begin(), s.dims().end() - drop);
  if (d.empty()) d.push_back(1);
  return TShape(d);
}

}  // namespace linalg
}  // namespace symbind
