// _linalg_inverse: the inverse of each square matrix, as MXNet's la_op.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

void InverseForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                    const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  MapMatrices(attrs, inputs, reqs, outputs, [&](auto tag, const auto& A, int64_t b) {
    using T = decltype(tag);
    const Eigen::PartialPivLU<Matrix<T>> lu{Matrix<T>(A)};
    const auto diag = lu.matrixLU().diagonal();
    for (int64_t i = 0; i < diag.size(); ++i)
      if (diag(i) == T(0)) throw Error(StrCat(OpName(attrs), ": matrix ", b, " of input A is singular"));
    return Matrix<T>(lu.inverse());
  });
}

// dA = -B^T dB B^T with B = A^-1 the output.
void InverseBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const MatrixBatch m = BatchOf(args.inputs[0].shape());
  BackwardPerMatrix(attrs, args, m.count(), m.rows, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    auto inv = MatrixAt(a.outputs[0].template data<T>(), m, b);
    auto dB = MatrixAt(a.out_grads[0].template data<T>(), m, b);
    Assign(MatrixAt(a.in_grads[0].template data<T>(), m, b), -(inv.transpose() * dB * inv.transpose()), a.req[0]);
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_inverse)
    .add_alias("linalg_inverse")
    .add_alias("_npi_inv")
    .describe("Compute the inverse of a matrix: out = A^-1 for every square matrix of the batch (leading "
              "dimensions are batch dimensions). A singular matrix is an error.")
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of square matrix")
    .set_infer_shape(InferSquareSameShape)
    .set_infer_type(InferFloatType)
    .set_mac_count([](const NodeAttrs&, const std::vector<TShape>& in, const std::vector<TShape>&) {
      const MatrixBatch m = BatchOf(in[0]);
      return CheckedMul(in[0].Size(), m.rows, "_linalg_inverse");
    })
    .set_forward(InverseForward)
    .set_backward(InverseBackward);

}  // namespace symbind
