// _linalg_trmm (multiplication by a triangular matrix) and _linalg_trsm (solving with one), as
// MXNet's la_op: out = alpha op(A) B, or alpha B op(A) with rightside; trsm has op(A)^-1 in place
// of op(A). Only A's lower (or upper) triangle is read, and its gradient lies in that triangle.
#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

struct TriangularParam : Parameter<TriangularParam> {
  bool transpose;
  bool rightside;
  bool lower;
  double alpha;
  static void Declare(ParamDeclarer<TriangularParam>& d) {
    d.field("transpose", &TriangularParam::transpose).set_default(false)
        .describe("Use transposed of the triangular matrix");
    d.field("rightside", &TriangularParam::rightside).set_default(false)
        .describe("Multiply triangular matrix from the right to non-triangular one.");
    d.field("lower", &TriangularParam::lower).set_default(true)
        .describe("True if the triangular matrix is lower triangular, false if it is upper triangular.");
    d.field("alpha", &TriangularParam::alpha).set_default(1.0).describe("Scalar factor to be applied to the result.");
  }
};

// Both ways, as MXNet: out from A and B, or A and B from out.
void InferTriangularShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<TriangularParam>();
  const TShape& a = (*in)[0];
  const TShape& b = (*in)[1];
  if (a.ndim_known() && b.ndim_known()) {
    RequireSquare(attrs, a, "A");
    RequireMatrices(attrs, b, "B");
    const int nd = a.ndim();
    if (b.ndim() != nd)
      throw ShapeError(StrCat(OpName(attrs), ": inputs A and B must have the same number of dimensions, got ", a,
                              " and ", b));
    std::vector<int64_t> o(b.dims());
    for (int i = 0; i < nd - 2; ++i) {
      if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i])
        throw ShapeError(StrCat(OpName(attrs), ": shapes of A and B must be the same except on the last two axes, got ",
                                a, " and ", b));
      if (o[i] < 0) o[i] = a[i];
    }
    const int64_t n = a[nd - 1], shared = p.rightside ? b[nd - 1] : b[nd - 2];
    if (n >= 0 && shared >= 0 && n != shared)
      throw ShapeError(StrCat(OpName(attrs), ": incompatible matrix dimensions for multiplication: ", a, " and ", b,
                              " (rightside=", p.rightside, ")"));
    ShapeAssignCheck(out, 0, TShape(o));
    return;
  }
  const TShape& o = (*out)[0];
  if (!o.ndim_known() || o.ndim() < 2) return;
  const int nd = o.ndim();
  const int64_t n = p.rightside ? o[nd - 1] : o[nd - 2];
  std::vector<int64_t> sa(o.dims());
  sa[nd - 2] = sa[nd - 1] = n;
  ShapeAssignCheck(in, 0, TShape(sa));
  ShapeAssignCheck(in, 1, o);
}

// The triangle of one matrix of A, refusing a zero on its diagonal.
template <typename T, typename X>
Matrix<T> InvertibleTriangle(const NodeAttrs& attrs, const X& x, bool lower, int64_t b) {
  Matrix<T> t = Triangle<T>(x, lower);
  for (int64_t i = 0; i < t.rows(); ++i)
    if (t(i, i) == T(0))
      throw Error(StrCat(OpName(attrs), ": matrix ", b, " of input A is singular (zero diagonal element ", i, ")"));
  return t;
}

// trmm's forward, or trsm's with `solve`.
template <bool solve>
void TriangularForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                       const std::vector<OpReq>& reqs, const std::vector<NDArray>& outputs) {
  const auto& p = attrs.param<TriangularParam>();
  const MatrixBatch ma = BatchOf(inputs[0].shape()), mb = BatchOf(inputs[1].shape());
  ForwardPerMatrix(attrs, inputs, reqs, outputs, mb.count(), std::max(mb.rows, mb.cols),
                   [&](auto tag, const auto& in, const auto& req, const auto& out, int64_t b) {
    using T = decltype(tag);
    auto A = MatrixAt(in[0].template data<T>(), ma, b);
    const Matrix<T> B = MatrixAt(in[1].template data<T>(), mb, b);
    Matrix<T> c;
    if (solve) c = SolveTriangular<T>(InvertibleTriangle<T>(attrs, A, p.lower, b), p.lower, p.transpose, B, p.rightside);
    else if (p.rightside) c = Product<T>(B, false, Triangle<T>(A, p.lower), p.transpose);
    else c = Product<T>(Triangle<T>(A, p.lower), p.transpose, B, false);
    Assign(MatrixAt(out[0].template data<T>(), mb, b), static_cast<T>(p.alpha) * c, req[0]);
  });
}

// dA = alpha op(dOut) op'(B) or alpha op'(B) op(dOut) in A's triangle; dB = alpha op(A)^T dOut
// (or dOut op(A)^T with rightside).
void TrmmBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const auto& p = attrs.param<TriangularParam>();
  const MatrixBatch ma = BatchOf(args.inputs[0].shape()), mb = BatchOf(args.inputs[1].shape());
  BackwardPerMatrix(attrs, args, mb.count(), std::max(mb.rows, mb.cols), [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const T alpha = static_cast<T>(p.alpha);
    auto B = MatrixAt(a.inputs[1].template data<T>(), mb, b);
    auto dC = MatrixAt(a.out_grads[0].template data<T>(), mb, b);
    if (a.req[0] != OpReq::kNull) {
      const Matrix<T> da = p.rightside == p.transpose ? Product<T>(dC, p.transpose, B, !p.transpose)
                                                      : Product<T>(B, !p.transpose, dC, p.transpose);
      Assign(MatrixAt(a.in_grads[0].template data<T>(), ma, b), alpha * Triangle<T>(da, p.lower), a.req[0]);
    }
    if (a.req[1] != OpReq::kNull) {
      const Matrix<T> t = Triangle<T>(MatrixAt(a.inputs[0].template data<T>(), ma, b), p.lower);
      const Matrix<T> db = p.rightside ? Product<T>(dC, false, t, !p.transpose) : Product<T>(t, !p.transpose, dC, false);
      Assign(MatrixAt(a.in_grads[1].template data<T>(), mb, b), alpha * db, a.req[1]);
    }
  });
}

// dB = alpha op(A)^-T dOut (or dOut op(A)^-T with rightside); dA = -(1/alpha) times
// op(dB) op'(C) or op'(C) op(dB), in A's triangle (MXNet's formula, C the output).
void TrsmBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& args) {
  const auto& p = attrs.param<TriangularParam>();
  const MatrixBatch ma = BatchOf(args.inputs[0].shape()), mb = BatchOf(args.inputs[1].shape());
  BackwardPerMatrix(attrs, args, mb.count(), std::max(mb.rows, mb.cols), [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const Matrix<T> t = InvertibleTriangle<T>(attrs, MatrixAt(a.inputs[0].template data<T>(), ma, b), p.lower, b);
    const Matrix<T> db = static_cast<T>(p.alpha) *
        SolveTriangular<T>(t, p.lower, !p.transpose, Matrix<T>(MatrixAt(a.out_grads[0].template data<T>(), mb, b)),
                           p.rightside);
    if (a.req[1] != OpReq::kNull) Assign(MatrixAt(a.in_grads[1].template data<T>(), mb, b), db, a.req[1]);
    if (a.req[0] == OpReq::kNull) return;
    auto C = MatrixAt(a.outputs[0].template data<T>(), mb, b);
    const Matrix<T> da = p.rightside == p.transpose ? Product<T>(db, p.transpose, C, !p.transpose)
                                                    : Product<T>(C, !p.transpose, db, p.transpose);
    Assign(MatrixAt(a.in_grads[0].template data<T>(), ma, b), static_cast<T>(-1.0 / p.alpha) * Triangle<T>(da, p.lower),
           a.req[0]);
  });
}

// One multiply-add per element of the triangle for each column (row with rightside) of B.
int64_t TriangularMacs(const NodeAttrs& attrs, const std::vector<TShape>& in, const std::vector<TShape>&) {
  const MatrixBatch ma = BatchOf(in[0]);
  const int64_t tri = ma.rows * (ma.rows + 1) / 2;
  return CheckedMul(CheckedMul(ma.count(), tri, OpName(attrs)),
                    attrs.param<TriangularParam>().rightside ? in[1][in[1].ndim() - 2] : in[1][in[1].ndim() - 1],
                    OpName(attrs));
}

// What trmm and trsm share: parameters, inputs, shape and type inference.
Op& RegisterTriangularOp(const char* name) {
  return LinalgOp(OpRegistry::Global().Register(name))
      .set_params<TriangularParam>()
      .set_arguments({"A", "B"})
      .add_argument_doc("A", "Tensor of lower triangular matrices")
      .add_argument_doc("B", "Tensor of matrices")
      .set_infer_shape(InferTriangularShape)
      .set_infer_type(InferFloatType)
      .set_mac_count(TriangularMacs);
}
}  // namespace

SYMBIND_REGISTER_OP_FAMILY(linalg_triangular) {
  RegisterTriangularOp("_linalg_trmm")
      .add_alias("linalg_trmm")
      .describe("Performs multiplication with a lower triangular matrix: out = alpha * op(A) * B, or "
                "out = alpha * B * op(A) with rightside=true, op(A) = A^T when transpose=true. Only the lower "
                "triangle of A is read (the upper one with lower=false). Leading dimensions are batch dimensions.")
      .set_forward(TriangularForward<false>)
      .set_backward(TrmmBackward);
  RegisterTriangularOp("_linalg_trsm")
      .add_alias("linalg_trsm")
      .describe("Solves matrix equations involving a lower triangular matrix: out = alpha * op(A)^-1 * B, or "
                "out = alpha * B * op(A)^-1 with rightside=true, op(A) = A^T when transpose=true. Only the lower "
                "triangle of A is read (the upper one with lower=false); a zero on its diagonal is an error. "
                "Leading dimensions are batch dimensions.")
      .set_forward(TriangularForward<true>)
      .set_backward(TrsmBackward);
}

}  // namespace symbind
