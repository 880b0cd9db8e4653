// _linalg_potrf (Cholesky factor of symmetric positive definite matrices) and _linalg_potri
// (the inverse of A from its Cholesky factor), as MXNet's la_op. With lower=false the factor is
// upper triangular, A = U^T U; the kernels then work on L = U^T.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

struct CholeskyParam : Parameter<CholeskyParam> {
  bool lower;
  static void Declare(ParamDeclarer<CholeskyParam>& d) {
    d.field("lower", &CholeskyParam::lower).set_default(true)
        .describe("True if the triangular matrix is lower triangular, false if it is upper triangular.");
  }
};

// The lower triangular factor of one matrix as stored: L itself, or U^T.
template <typename T, typename X>
Matrix<T> AsLower(const X& x, bool lower) {
  if (lower) return Triangle<T>(x, true);
  return Triangle<T>(x, false).transpose();
}
template <typename T>
Matrix<T> StoredFromLower(const Matrix<T>& l, bool lower) {
  if (lower) return l;
  return l.transpose();
}

void PotrfForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const bool lower = attrs.param<CholeskyParam>().lower;
  MapMatrices(attrs, inputs, reqs, outputs, [&](auto tag, const auto& A, int64_t b) {
    using T = decltype(tag);
    // The triangle the factor is read from: lower, or upper (the lower one of A^T).
    Eigen::LLT<Matrix<T>, Eigen::Lower> llt(lower ? Matrix<T>(A) : Matrix<T>(A.transpose()));
    if (llt.info() != Eigen::Success)
      throw Error(StrCat(OpName(attrs), ": matrix ", b, " of input A is not symmetric positive definite "
                         "(the Cholesky factorization failed)"));
    return StoredFromLower(Matrix<T>(llt.matrixL()), lower);
  });
}

// dA = 0.5 L^-T copyLTU(L^T dL) L^-1, symmetric (MXNet's formula).
void PotrfBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const bool lower = attrs.param<CholeskyParam>().lower;
  const MatrixBatch m = BatchOf(args.inputs[0].shape());
  BackwardPerMatrix(attrs, args, m.count(), m.rows, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const Matrix<T> l = AsLower<T>(MatrixAt(a.outputs[0].template data<T>(), m, b), lower);
    const Matrix<T> dl = StoredFromLower(Matrix<T>(MatrixAt(a.out_grads[0].template data<T>(), m, b)), lower);
    const Matrix<T> s = SymmetricFromLower<T>(l.transpose() * dl);
    // L^-T s L^-1 = L^-T (L^-T s^T)^T, s symmetric.
    const Matrix<T> w = SolveTriangular<T>(l, true, true, s, false);
    const Matrix<T> da = SolveTriangular<T>(l, true, true, Matrix<T>(w.transpose()), false).transpose();
    Assign(MatrixAt(a.in_grads[0].template data<T>(), m, b), static_cast<T>(0.5) * da, a.req[0]);
  });
}

void PotriForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const bool lower = attrs.param<CholeskyParam>().lower;
  MapMatrices(attrs, inputs, reqs, outputs, [&](auto tag, const auto& A, int64_t b) {
    using T = decltype(tag);
    const Matrix<T> l = AsLower<T>(A, lower);
    for (int64_t i = 0; i < l.rows(); ++i)
      if (l(i, i) == T(0))
        throw Error(StrCat(OpName(attrs), ": matrix ", b, " of input A is singular (zero diagonal element ", i, ")"));
    const Matrix<T> linv = SolveTriangular<T>(l, true, false, Matrix<T>::Identity(l.rows(), l.rows()), false);
    return Matrix<T>(linv.transpose() * linv);
  });
}

// dL = -tril(A^-1 (dOut + dOut^T) L^-T) with A^-1 the output (MXNet's formula).
void PotriBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const bool lower = attrs.param<CholeskyParam>().lower;
  const MatrixBatch m = BatchOf(args.inputs[0].shape());
  BackwardPerMatrix(attrs, args, m.count(), m.rows, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const Matrix<T> l = AsLower<T>(MatrixAt(a.inputs[0].template data<T>(), m, b), lower);
    auto dOut = MatrixAt(a.out_grads[0].template data<T>(), m, b);
    const Matrix<T> s = MatrixAt(a.outputs[0].template data<T>(), m, b) * (dOut + dOut.transpose());
    const Matrix<T> g = -Triangle<T>(SolveTriangular<T>(l, true, true, s, true), true);
    Assign(MatrixAt(a.in_grads[0].template data<T>(), m, b), StoredFromLower(g, lower), a.req[0]);
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_potrf)
    .add_alias("linalg_potrf")
    .describe("Performs Cholesky factorization of a symmetric positive-definite matrix: A = L * L^T with L "
              "lower triangular (lower=true, read from A's lower triangle), or A = U^T * U with U upper "
              "triangular (lower=false, read from A's upper triangle); the other triangle of the output is "
              "zero. Leading dimensions are batch dimensions. Fails, naming the matrix, when one is not "
              "positive definite.")
    .set_params<CholeskyParam>()
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of input matrices to be decomposed")
    .set_infer_shape(InferSquareSameShape)
    .set_infer_type(InferFloatType)
    .set_forward(PotrfForward)
    .set_backward(PotrfBackward);

SYMBIND_REGISTER_LINALG_OP(_linalg_potri)
    .add_alias("linalg_potri")
    .describe("Performs matrix inversion from a Cholesky factorization: out = (A * A^T)^-1 for A lower "
              "triangular (lower=true), out = (A^T * A)^-1 for A upper triangular (lower=false); only that "
              "triangle of A is read. Leading dimensions are batch dimensions.")
    .set_params<CholeskyParam>()
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of lower triangular matrices")
    .set_infer_shape(InferSquareSameShape)
    .set_infer_type(InferFloatType)
    .set_forward(PotriForward)
    .set_backward(PotriBackward);

}  // namespace symbind
