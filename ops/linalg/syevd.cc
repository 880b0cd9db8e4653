// _linalg_syevd: eigendecomposition of symmetric matrices, A = U^T diag(L) U with U's rows the
// eigenvectors and L the eigenvalues in ascending order, as MXNet's la_op.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

// Both ways, as MXNet: U and L from A, or A from U.
void InferSyevdShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  if (a.ndim_known()) {
    RequireSquare(attrs, a, "A");
    ShapeAssignCheck(out, 0, a);
    ShapeAssignCheck(out, 1, TShape(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 1)));
    return;
  }
  const TShape& u = (*out)[0];
  if (u.ndim_known() && u.ndim() >= 2) {
    RequireSquare(attrs, u, "U");
    ShapeAssignCheck(in, 0, u);
  }
}

// MXNet's sign convention: each eigenvector's entry of largest magnitude (the first of ties) is positive.
template <typename T, typename Row>
void FixSign(Row row) {
  int64_t k = 0;
  for (int64_t j = 1; j < row.size(); ++j)
    if (std::abs(row(j)) > std::abs(row(k))) k = j;
  if (row(k) < T(0)) row = -row;
}

void SyevdForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const MatrixBatch m = BatchOf(inputs[0].shape()), ml = VectorBatchOf(outputs[1].shape());
  ForwardPerMatrix(attrs, inputs, reqs, outputs, m.count(), m.rows,
                   [&](auto tag, const auto& in, const auto& req, const auto& out, int64_t b) {
    using T = decltype(tag);
    using ColMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    // Reads the lower triangle only.
    Eigen::SelfAdjointEigenSolver<ColMajor> es(ColMajor(MatrixAt(in[0].template data<T>(), m, b)));
    if (es.info() != Eigen::Success)
      throw Error(StrCat(OpName(attrs), ": the eigensolver did not converge on matrix ", b, " of input A"));
    Matrix<T> u = es.eigenvectors().transpose();
    for (int64_t i = 0; i < m.rows; ++i) FixSign<T>(u.row(i));
    Assign(MatrixAt(out[0].template data<T>(), m, b), u, req[0]);
    Assign(MatrixAt(out[1].template data<T>(), ml, b), es.eigenvalues().transpose(), req[1]);
  });
}

// dA = U^T Y U with Y_ii = dL_i and, for i != j, Y_ij = (X_ij - X_ji) / (2 (L_i - L_j)) with
// X = dU U^T (i > j; the gap floored at a tiny eps, as MXNet).
void SyevdBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const MatrixBatch m = BatchOf(args.inputs[0].shape()), ml = VectorBatchOf(args.outputs[1].shape());
  BackwardPerMatrix(attrs, args, m.count(), m.rows, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const T eps = std::is_same<T, float>::value ? T(1e-30) : T(1e-100);
    auto U = MatrixAt(a.outputs[0].template data<T>(), m, b);
    auto L = MatrixAt(a.outputs[1].template data<T>(), ml, b);
    auto dL = MatrixAt(a.out_grads[1].template data<T>(), ml, b);
    const Matrix<T> x = MatrixAt(a.out_grads[0].template data<T>(), m, b) * U.transpose();
    Matrix<T> y(m.rows, m.rows);
    for (int64_t i = 0; i < m.rows; ++i) {
      y(i, i) = dL(0, i);
      for (int64_t j = 0; j < i; ++j) {
        const T gap = std::max(L(0, i) - L(0, j), eps);
        y(i, j) = y(j, i) = (x(i, j) - x(j, i)) / (T(2) * gap);
      }
    }
    Assign(MatrixAt(a.in_grads[0].template data<T>(), m, b), U.transpose() * y * U, a.req[0]);
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_syevd)
    .describe("Eigendecomposition for symmetric matrix: A = U^T * diag(L) * U, with U orthonormal (its rows "
              "the eigenvectors, each signed so that its entry of largest magnitude is positive) and L the "
              "eigenvalues in ascending order. Only A's lower triangle is read. Outputs U and L; leading "
              "dimensions are batch dimensions.")
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of input matrices to be factorized")
    .set_outputs({"output0", "output1"})  // nnvm's default names for two outputs
    .set_infer_shape(InferSyevdShape)
    .set_infer_type(InferFloatType)
    .set_forward(SyevdForward)
    .set_backward(SyevdBackward);

}  // namespace symbind
