// _linalg_syrk: out = alpha A A^T (or alpha A^T A with transpose), as MXNet's la_op.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

struct SyrkParam : Parameter<SyrkParam> {
  bool transpose;
  double alpha;
  static void Declare(ParamDeclarer<SyrkParam>& d) {
    d.field("transpose", &SyrkParam::transpose).set_default(false).describe("Use transpose of input matrix.");
    d.field("alpha", &SyrkParam::alpha).set_default(1.0).describe("Scalar factor to be applied to the result.");
  }
};

// Forward only, as MXNet.
void InferSyrkShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  if (!a.ndim_known()) return;
  RequireMatrices(attrs, a, "A");
  const int nd = a.ndim();
  std::vector<int64_t> o(a.dims());
  o[nd - 2] = o[nd - 1] = attrs.param<SyrkParam>().transpose ? a[nd - 1] : a[nd - 2];
  ShapeAssignCheck(out, 0, TShape(o));
}

void SyrkForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const auto& p = attrs.param<SyrkParam>();
  MapMatrices(attrs, inputs, reqs, outputs, [&](auto tag, const auto& A, int64_t) {
    using T = decltype(tag);
    return Matrix<T>(static_cast<T>(p.alpha) * Product<T>(A, p.transpose, A, !p.transpose));
  });
}

// dA = alpha (dOut + dOut^T) A, or alpha A (dOut + dOut^T) with transpose.
void SyrkBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const auto& p = attrs.param<SyrkParam>();
  const MatrixBatch ma = BatchOf(args.inputs[0].shape()), mo = BatchOf(args.out_grads[0].shape());
  BackwardPerMatrix(attrs, args, ma.count(), std::max(ma.rows, ma.cols), [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    auto A = MatrixAt(a.inputs[0].template data<T>(), ma, b);
    auto dB = MatrixAt(a.out_grads[0].template data<T>(), mo, b);
    const Matrix<T> s = dB + dB.transpose();
    const Matrix<T> da = p.transpose ? Matrix<T>(A * s) : Matrix<T>(s * A);
    Assign(MatrixAt(a.in_grads[0].template data<T>(), ma, b), static_cast<T>(p.alpha) * da, a.req[0]);
  });
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_syrk)
    .add_alias("linalg_syrk")
    .describe("Multiplication of a matrix with its transpose: out = alpha * A * A^T, or alpha * A^T * A with "
              "transpose=true. Leading dimensions are batch dimensions.")
    .set_params<SyrkParam>()
    .set_arguments({"A"})
    .add_argument_doc("A", "Tensor of input matrices")
    .set_infer_shape(InferSyrkShape)
    .set_infer_type(InferFloatType)
    .set_mac_count([](const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
      const MatrixBatch m = BatchOf(in[0]);
      return CheckedMul(out[0].Size(), attrs.param<SyrkParam>().transpose ? m.rows : m.cols, OpName(attrs));
    })
    .set_forward(SyrkForward)
    .set_backward(SyrkBackward);

}  // namespace symbind
