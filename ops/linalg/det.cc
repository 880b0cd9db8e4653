// _linalg_det and _linalg_slogdet: determinants from an LU factorization with partial pivoting,
// as MXNet's la_op: det = sign * exp(log|det|), the sign from the row swaps and the diagonal.
// Both keep the factorization as hidden outputs (LU, and the pivots as int32), as MXNet does.
#include <limits>

#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

// Outputs: `values` visible outputs (det, or sign and log|det|), then LU and pivot.
void InferDetShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out, int values) {
  const TShape& a = (*in)[0];
  if (!a.ndim_known()) return;
  RequireSquare(attrs, a, "A");
  for (int i = 0; i < values; ++i) ShapeAssignCheck(out, static_cast<size_t>(i), LeadingDims(a, 2));
  ShapeAssignCheck(out, static_cast<size_t>(values), a);
  ShapeAssignCheck(out, static_cast<size_t>(values + 1), TShape(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 1)));
}

void InferDetType(const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out, int values) {
  int t = (*in)[0];
  for (int i = 0; i <= values && t < 0; ++i) t = (*out)[static_cast<size_t>(i)];
  TypeAssignCheck(out, static_cast<size_t>(values + 1), static_cast<int>(DType::kInt32));
  if (t < 0) return;
  RequireFloatType(attrs, static_cast<DType>(t));
  TypeAssignCheck(in, 0, t);
  for (int i = 0; i <= values; ++i) TypeAssignCheck(out, static_cast<size_t>(i), t);
}

// LU factorization with partial pivoting of one row-major n x n matrix in place (as LAPACK's
// getrf): pivot[k] is the 1-based row swapped with row k. Returns sign(det) and log|det|.
template <typename T>
std::pair<T, T> FactorLU(T* a, int64_t n, int32_t* pivot) {
  T sign = 1, logabs = 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    pivot[k] = static_cast<int32_t>(p + 1);
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      sign = -sign;
    }
    const T d = a[k * n + k];
    sign *= static_cast<T>((T(0) < d) - (d < T(0)));
    logabs += std::log(std::abs(d));
    if (d == T(0)) continue;
    for (int64_t i = k + 1; i < n; ++i) {
      const T f = a[i * n + k] /= d;
      for (int64_t j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return {sign, logabs};
}

// Forward of det (values = 1) or slogdet (values = 2).
void DetForward(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const std::vector<OpReq>& reqs,
                const std::vector<NDArray>& outputs, int values) {
  ForwardInFloatType(attrs, inputs, reqs, outputs, [&](auto tag, const auto& in, const auto& req, const auto& out) {
    using T = decltype(tag);
    const MatrixBatch m = BatchOf(in[0].shape());
    const int64_t n = m.rows, nn = n * n;
    Matrix<T> lu = Eigen::Map<const Matrix<T>>(in[0].template data<T>(), m.count() * n, n);
    std::vector<int32_t> pivot(static_cast<size_t>(m.count() * n));
    std::vector<T> sign(static_cast<size_t>(m.count())), logabs(sign.size());
    ForEachMatrix(m.count(), n, [&](int64_t b) {
      std::tie(sign[static_cast<size_t>(b)], logabs[static_cast<size_t>(b)]) =
          FactorLU(lu.data() + b * nn, n, pivot.data() + b * n);
    });
    if (values == 1) {
      MapWithReq(out[0].template data<T>(), m.count(), req[0],
                 [&](int64_t b) { return sign[static_cast<size_t>(b)] * std::exp(logabs[static_cast<size_t>(b)]); });
    } else {
      MapWithReq(out[0].template data<T>(), m.count(), req[0], [&](int64_t b) { return sign[static_cast<size_t>(b)]; });
      MapWithReq(out[1].template data<T>(), m.count(), req[1], [&](int64_t b) { return logabs[static_cast<size_t>(b)]; });
    }
    MapWithReq(out[values].template data<T>(), m.count() * nn, req[values], [&](int64_t i) { return lu.data()[i]; });
    MapWithReq(out[values + 1].template data<int32_t>(), m.count() * n, req[values + 1],
               [&](int64_t i) { return pivot[static_cast<size_t>(i)]; });
  });
}

// Jacobi's formula: d det = det A^-T, d log|det| = A^-T; no gradient where det = 0 (as MXNet).
void DetBackward(const NodeAttrs& attrs, const BackwardArgs& args, int values) {
  const MatrixBatch m = BatchOf(args.inputs[0].shape());
  BackwardPerMatrix(attrs, args, m.count(), m.rows, [&](auto tag, const BackwardArgs& a, int64_t b) {
    using T = decltype(tag);
    const T head = a.out_grads[values - 1].template data<T>()[b];
    const T value = a.outputs[values - 1].template data<T>()[b];
    const T zero = values == 1 ? T(0) : -std::numeric_limits<T>::infinity();
    auto dA = MatrixAt(a.in_grads[0].template data<T>(), m, b);
    if (value == zero) {
      Assign(dA, Matrix<T>::Zero(m.rows, m.cols), a.req[0]);
      return;
    }
    const Eigen::PartialPivLU<Matrix<T>> lu(Matrix<T>(MatrixAt(a.inputs[0].template data<T>(), m, b)));
    Assign(dA, (values == 1 ? head * value : head) * lu.inverse().transpose(), a.req[0]);
  });
}

// Registers det (values = 1) or slogdet (values = 2).
Op& RegisterDet(Op& op, int values) {
  return LinalgOp(op)
      .set_arguments({"A"})
      .add_argument_doc("A", "Tensor of square matrix")
      .set_outputs(NumberedNames("output", values + 2))
      .set_num_visible_outputs([values](const NodeAttrs&) { return values; })
      .set_infer_shape([values](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferDetShape(attrs, in, out, values);
      })
      .set_infer_type([values](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
        InferDetType(attrs, in, out, values);
      })
      .set_forward([values](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        DetForward(attrs, in, req, out, values);
      })
      .set_backward([values](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        DetBackward(attrs, a, values);
      });
}
}  // namespace

SYMBIND_REGISTER_OP_FAMILY(linalg_det) {
  auto& registry = OpRegistry::Global();
  RegisterDet(registry.Register("_linalg_det"), 1)
      .add_alias("linalg_det")
      .add_alias("_npi_det")
      .describe("Compute the determinant of a matrix, one per square matrix of the batch (shape (1,) for a "
                "single matrix), from an LU factorization with partial pivoting: det = sign * exp(log|det|). "
                "Two hidden outputs keep the factorization (LU, and the 1-based pivot rows as int32).");
  RegisterDet(registry.Register("_linalg_slogdet"), 2)
      .add_alias("linalg_slogdet")
      .add_alias("_npi_slogdet")
      .describe("Compute the sign and log of the absolute value of the determinant of a matrix, one pair per "
                "square matrix of the batch (shape (1,) for a single matrix): outputs sign (-1, 0 or 1) and "
                "log|det| (-inf for a singular matrix). The sign gets no gradient. Two hidden outputs keep the "
                "LU factorization, as det's.");
}

}  // namespace symbind
