// _linalg_gemm (D = alpha op(A) op(B) + beta C) and _linalg_gemm2 (C = alpha op(A) op(B)) on
// batches of matrices, rows along `axis` and columns along the last axis, as MXNet's la_op.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

// The fields gemm and gemm2 share, in MXNet's order.
template <typename P>
void DeclareProductFields(ParamDeclarer<P>& d) {
  d.field("transpose_a", &P::transpose_a).set_default(false).describe("Multiply with transposed of first input (A).");
  d.field("transpose_b", &P::transpose_b).set_default(false).describe("Multiply with transposed of second input (B).");
  d.field("alpha", &P::alpha).set_default(1.0).describe("Scalar factor multiplied with A*B.");
}

struct GemmParam : Parameter<GemmParam> {
  bool transpose_a;
  bool transpose_b;
  double alpha;
  double beta;
  int axis;
  static void Declare(ParamDeclarer<GemmParam>& d) {
    DeclareProductFields(d);
    d.field("beta", &GemmParam::beta).set_default(1.0).describe("Scalar factor multiplied with C.");
    d.field("axis", &GemmParam::axis).set_default(-2).describe("Axis corresponding to the matrix rows.");
  }
};

struct Gemm2Param : Parameter<Gemm2Param> {
  bool transpose_a;
  bool transpose_b;
  double alpha;
  int axis;
  static void Declare(ParamDeclarer<Gemm2Param>& d) {
    DeclareProductFields(d);
    d.field("axis", &Gemm2Param::axis).set_default(-2).describe("Axis corresponding to the matrix row indices.");
  }
};

// The parameters both ops share (gemm2 is gemm with beta 0 and no C).
struct GemmArgs {
  bool ta, tb;
  double alpha, beta;
  int axis;
};
GemmArgs ArgsOf(const NodeAttrs& attrs) {
  if (attrs.op->name == "_linalg_gemm") {
    const auto& p = attrs.param<GemmParam>();
    return {p.transpose_a, p.transpose_b, p.alpha, p.beta, p.axis};
  }
  const auto& p = attrs.param<Gemm2Param>();
  return {p.transpose_a, p.transpose_b, p.alpha, 0.0, p.axis};
}

// Forward only, as MXNet: the output (and C) from A and B.
void InferGemmShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const GemmArgs g = ArgsOf(attrs);
  const TShape& a = (*in)[0];
  const TShape& b = (*in)[1];
  if (!a.ndim_known() || !b.ndim_known()) return;
  RequireMatrices(attrs, a, "A");
  RequireMatrices(attrs, b, "B");
  const int nd = a.ndim();
  if (b.ndim() != nd)
    throw ShapeError(StrCat(OpName(attrs), ": inputs A and B must have the same number of dimensions, got ", a,
                            " and ", b));
  const int axis = g.axis < 0 ? nd + g.axis : g.axis;
  if (axis < 0 || axis >= nd - 1)
    throw ShapeError(StrCat(OpName(attrs), ": invalid row axis ", g.axis, " for inputs of ", nd, " dimensions"));
  std::vector<int64_t> o(a.dims());
  for (int i = 0; i < nd - 1; ++i) {
    if (i == axis) continue;
    if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i])
      throw ShapeError(StrCat(OpName(attrs), ": shapes of A and B must be the same except on the row/col axes, got ",
                              a, " and ", b));
    if (o[i] < 0) o[i] = b[i];
  }
  const int last = nd - 1;
  const int64_t ka = g.ta ? a[axis] : a[last], kb = g.tb ? b[last] : b[axis];
  if (ka >= 0 && kb >= 0 && ka != kb)
    throw ShapeError(StrCat(OpName(attrs), ": incompatible matrix dimensions for multiplication: ", a, " and ", b,
                            " (transpose_a=", g.ta, ", transpose_b=", g.tb, ")"));
  o[axis] = g.ta ? a[last] : a[axis];
  o[last] = g.tb ? b[axis] : b[last];
  ShapeAssignCheck(out, 0, TShape(o));
  if (in->size() > 2) ShapeAssignCheck(in, 2, TShape(o));
}

void GemmForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const GemmArgs g = ArgsOf(attrs);
  const MatrixBatch ma = BatchOf(inputs[0].shape(), g.axis), mb = BatchOf(inputs[1].shape(), g.axis),
                    mo = BatchOf(outputs[0].shape(), g.axis);
  ForwardPerMatrix(attrs, inputs, reqs, outputs, mo.count(), std::max(mo.rows, mo.cols),
                   [&](auto tag, const auto& in, const auto& req, const auto& out, int64_t b) {
    using T = decltype(tag);
    Matrix<T> d = Product<T>(MatrixAt(in[0].template data<T>(), ma, b), g.ta, MatrixAt(in[1].template data<T>(), mb, b),
                             g.tb) * static_cast<T>(g.alpha);
    if (in.size() > 2) d += static_cast<T>(g.beta) * MatrixAt(in[2].template data<T>(), mo, b);
    Assign(MatrixAt(out[0].template data<T>(), mo, b), d, req[0]);
  });
}

// dA = alpha dD op(B)^T (or alpha op(B) dD^T with transpose_a), dB likewise, dC = beta dD.
void GemmBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const GemmArgs g = ArgsOf(attrs);
  const MatrixBatch ma = BatchOf(args.inputs[0].shape(), g.axis), mb = BatchOf(args.inputs[1].shape(), g.axis),
                    mo = BatchOf(args.out_grads[0].shape(), g.axis);
  BackwardPerMatrix(attrs, args, mo.count(), std::max(mo.rows, mo.cols), [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const T alpha = static_cast<T>(g.alpha);
    auto A = MatrixAt(a.inputs[0].template data<T>(), ma, b);
    auto B = MatrixAt(a.inputs[1].template data<T>(), mb, b);
    auto dD = MatrixAt(a.out_grads[0].template data<T>(), mo, b);
    if (a.req[0] != OpReq::kNull) {
      const Matrix<T> dA = g.ta ? Product<T>(B, g.tb, dD, true) : Product<T>(dD, false, B, !g.tb);
      Assign(MatrixAt(a.in_grads[0].template data<T>(), ma, b), alpha * dA, a.req[0]);
    }
    if (a.req[1] != OpReq::kNull) {
      const Matrix<T> dB = g.tb ? Product<T>(dD, true, A, g.ta) : Product<T>(A, !g.ta, dD, false);
      Assign(MatrixAt(a.in_grads[1].template data<T>(), mb, b), alpha * dB, a.req[1]);
    }
    if (a.req.size() > 2 && a.req[2] != OpReq::kNull)
      Assign(MatrixAt(a.in_grads[2].template data<T>(), mo, b), static_cast<T>(g.beta) * dD, a.req[2]);
  });
}

int64_t GemmMacs(const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>& out) {
  const GemmArgs g = ArgsOf(attrs);
  const MatrixBatch ma = BatchOf(in[0], g.axis);
  return CheckedMul(out[0].Size(), g.ta ? ma.rows : ma.cols, OpName(attrs));
}
}  // namespace

SYMBIND_REGISTER_LINALG_OP(_linalg_gemm)
    .add_alias("linalg_gemm")
    .describe("General matrix multiplication and accumulation: out = alpha * op(A) * op(B) + beta * C, "
              "with op the transpose where transpose_a / transpose_b say, on every matrix of a batch. "
              "The matrices' rows lie along `axis` (default -2, the second-to-last), their columns along "
              "the last axis; every other axis is a batch axis on which all inputs agree.")
    .set_params<GemmParam>()
    .set_arguments({"A", "B", "C"})
    .add_argument_doc("A", "Tensor of input matrices")
    .add_argument_doc("B", "Tensor of input matrices")
    .add_argument_doc("C", "Tensor of input matrices")
    .set_infer_shape(InferGemmShape)
    .set_infer_type(InferFloatType)
    .set_mac_count(GemmMacs)
    .set_forward(GemmForward)
    .set_backward(GemmBackward);

SYMBIND_REGISTER_LINALG_OP(_linalg_gemm2)
    .add_alias("linalg_gemm2")
    .describe("General matrix multiplication: out = alpha * op(A) * op(B), with op the transpose where "
              "transpose_a / transpose_b say, on every matrix of a batch. The matrices' rows lie along "
              "`axis` (default -2), their columns along the last axis; every other axis is a batch axis.")
    .set_params<Gemm2Param>()
    .set_arguments({"A", "B"})
    .add_argument_doc("A", "Tensor of input matrices")
    .add_argument_doc("B", "Tensor of input matrices")
    .set_infer_shape(InferGemmShape)
    .set_infer_type(InferFloatType)
    .set_mac_count(GemmMacs)
    .set_forward(GemmForward)
    .set_backward(GemmBackward);

}  // namespace symbind
