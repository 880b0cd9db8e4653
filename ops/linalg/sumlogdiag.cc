// _linalg_sumlogdiag: the sum of the natural logarithms of each matrix's diagonal, as MXNet's la_op.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

// Forward only: one value per matrix, (1,) for a single matrix.
void InferSumLogDiagShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  if (!a.ndim_known()) return;
  RequireSquare(attrs, a, "A");
  ShapeAssignCheck(out, 0, LeadingDims(a, 2));
}

void SumLogDiagForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                       const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  ForwardInFloatType(attrs, inputs, reqs, outputs, [&](auto tag, const auto& in, const auto& req, const auto& out) {
    using T = decltype(tag);
    const MatrixBatch m = BatchOf(in[0].shape());
    const T* a = in[0].template data<T>();
    MapWithReq(out[0].template data<T>(), m.count(), req[0], [&](int64_t b) {
      T sum = 0;
      for (int64_t i = 0; i < m.rows; ++i) sum += std::log(a[b * m.rows * m.cols + i * (m.cols + 1)]);
      return sum;
    });
  });
}

// dA = dOut / A on the diagonal, 0 elsewhere.
void SumLogDiagBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  if (args.req[0] == OpReq::kNull) return;
  BackwardInFloatType(attrs, args, [&](auto tag, const BackwardArgs& a) {
    using T = decltype(tag);
    const MatrixBatch m = BatchOf(a.inputs[0].shape());
    const T* x = a.inputs[0].template data<T>();
    const T* dy = a.out_grads[0].template data<T>();
    const int64_t nn = m.rows * m.cols;
    MapWithReq(a.in_grads[0].template data<T>(), a.inputs[0].Size(), a.req[0], [&](int64_t i) {
      const int64_t r = (i % nn) / m.cols, c = i % m.cols;
      return r == c ? dy[i / nn] / x[i] : T(0);
    });
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_sumlogdiag)
    .add_alias("linalg_sumlogdiag")
    .describe("Computes the sum of the logarithms of the diagonal elements of a square matrix: "
              "out = sum_i log(A_ii), one value per matrix of the batch (shape (1,) for a single matrix).")
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of square matrices")
    .set_infer_shape(InferSumLogDiagShape)
    .set_infer_type(InferFloatType)
    .set_forward(SumLogDiagForward)
    .set_backward(SumLogDiagBackward);

}  // namespace symbind
