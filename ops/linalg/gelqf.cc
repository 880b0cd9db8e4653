// _linalg_gelqf: LQ factorization A = L Q of wide matrices (rows <= columns), Q with orthonormal
// rows and L lower triangular, as MXNet's la_op (LAPACK's gelqf + orglq: Householder
// reflections, so L's diagonal may be negative).
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

// Both ways, as MXNet: Q and L from A, or A from Q.
void InferGelqfShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  if (a.ndim_known()) {
    RequireMatrices(attrs, a, "A");
    const int nd = a.ndim();
    if (a[nd - 2] >= 0 && a[nd - 1] >= 0 && a[nd - 2] > a[nd - 1])
      throw ShapeError(StrCat(OpName(attrs), ": input A must have no more rows than columns (last dimension >= "
                              "second to last), got ", a));
    ShapeAssignCheck(out, 0, a);
    std::vector<int64_t> l(a.dims());
    l[static_cast<size_t>(nd - 1)] = a[nd - 2];
    ShapeAssignCheck(out, 1, TShape(l));
    return;
  }
  const TShape& q = (*out)[0];
  if (q.ndim_known() && q.ndim() >= 2) ShapeAssignCheck(in, 0, q);
}

void GelqfForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const MatrixBatch ma = BatchOf(inputs[0].shape()), ml = BatchOf(outputs[1].shape());
  const int64_t m = ma.rows, n = ma.cols;
  ForwardPerMatrix(attrs, inputs, reqs, outputs, ma.count(), n,
                   [&](auto tag, const auto& in, const auto& req, const auto& out, int64_t b) {
    using T = decltype(tag);
    using ColMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    // A^T = Q_r R (QR of the transpose), so A = R^T Q_r^T: L = R^T, Q = the first m columns of Q_r, transposed.
    Eigen::HouseholderQR<ColMajor> qr(ColMajor(MatrixAt(in[0].template data<T>(), ma, b).transpose()));
    const Matrix<T> r = qr.matrixQR().topLeftCorner(m, m).template triangularView<Eigen::Upper>();
    const ColMajor q = qr.householderQ() * ColMajor::Identity(n, m);
    Assign(MatrixAt(out[0].template data<T>(), ma, b), q.transpose(), req[0]);
    Assign(MatrixAt(out[1].template data<T>(), ml, b), r.transpose(), req[1]);
  });
}

// dA = L^-T (dQ + copyLTU(M) Q), M = L^T dL - dQ Q^T (MXNet's formula).
void GelqfBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const MatrixBatch ma = BatchOf(args.inputs[0].shape()), ml = BatchOf(args.outputs[1].shape());
  BackwardPerMatrix(attrs, args, ma.count(), ma.cols, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    auto Q = MatrixAt(a.outputs[0].template data<T>(), ma, b);
    const Matrix<T> l = MatrixAt(a.outputs[1].template data<T>(), ml, b);
    auto dQ = MatrixAt(a.out_grads[0].template data<T>(), ma, b);
    auto dL = MatrixAt(a.out_grads[1].template data<T>(), ml, b);
    const Matrix<T> mm = l.transpose() * dL - dQ * Q.transpose();
    const Matrix<T> x = dQ + SymmetricFromLower<T>(mm) * Q;
    Assign(MatrixAt(a.in_grads[0].template data<T>(), ma, b), SolveTriangular<T>(l, true, true, x, false), a.req[0]);
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_gelqf)
    .add_alias("linalg_gelqf")
    .describe("LQ factorization for general matrix: A = L * Q for A of shape (x, y) with x <= y, Q of "
              "shape (x, y) with orthonormal rows (Q * Q^T = I) and L of shape (x, x) lower triangular. "
              "Outputs Q and L; leading dimensions are batch dimensions. L's diagonal may be negative "
              "(Householder reflections, as LAPACK's gelqf).")
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of input matrices to be factorized")
    .set_outputs({"output0", "output1"})  // nnvm's default names for two outputs
    .set_infer_shape(InferGelqfShape)
    .set_infer_type(InferFloatType)
    .set_forward(GelqfForward)
    .set_backward(GelqfBackward);

}  // namespace symbind
