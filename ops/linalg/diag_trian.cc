// Diagonals and triangles of square matrices as vectors and back, as MXNet's la_op:
// _linalg_extractdiag / _linalg_makediag and _linalg_extracttrian / _linalg_maketrian. Each pair
// is one map between a matrix position and a vector index, read one way or the other; each op's
// gradient is its partner's forward.
#include <cstdlib>

#include <symbind/ops/linalg/linalg_util.h>

namespace symbind {

namespace {
using namespace linalg;

const char* const kOffsetDoc =
    "Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a "
    "negative/positive value to diagonals below/above the main diagonal.";

struct DiagParam : Parameter<DiagParam> {
  int offset;
  static void Declare(ParamDeclarer<DiagParam>& d) {
    d.field("offset", &DiagParam::offset).set_default(0).describe(kOffsetDoc);
  }
};

struct TrianParam : Parameter<TrianParam> {
  int offset;
  bool lower;
  static void Declare(ParamDeclarer<TrianParam>& d) {
    d.field("offset", &TrianParam::offset).set_default(0).describe(kOffsetDoc);
    d.field("lower", &TrianParam::lower).set_default(true)
        .describe("Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. "
                  "Only relevant when offset=0");
  }
};

// For matrices of size n and a diagonal or triangle at `offset`: the matrix position (r * n + c)
// of each vector element, in MXNet's order (a lower triangle row by row, an upper one column by
// column), and for each position the vector element there or -1.
struct VectorMap {
  int64_t n = 0;
  std::vector<int64_t> position;
  std::vector<int64_t> element;
};

VectorMap DiagMap(int64_t n, int offset) {
  VectorMap m;
  m.n = n;
  const int64_t k = offset, len = n - std::abs(k);
  for (int64_t i = 0; i < len; ++i) m.position.push_back((i - std::min<int64_t>(k, 0)) * n + i + std::max<int64_t>(k, 0));
  m.element.assign(static_cast<size_t>(n * n), -1);
  for (size_t i = 0; i < m.position.size(); ++i) m.element[static_cast<size_t>(m.position[i])] = static_cast<int64_t>(i);
  return m;
}

VectorMap TrianMap(int64_t n, int offset, bool lower) {
  VectorMap m;
  m.n = n;
  const int64_t k = std::abs(offset), len = n - k;
  const bool upper = offset > 0 || (offset == 0 && !lower);
  // Row rr of the triangle (rr >= cc) sits k rows below (lower) or k columns right (upper).
  for (int64_t rr = 0; rr < len; ++rr)
    for (int64_t cc = 0; cc <= rr; ++cc) m.position.push_back(upper ? cc * n + rr + k : (rr + k) * n + cc);
  m.element.assign(static_cast<size_t>(n * n), -1);
  for (size_t i = 0; i < m.position.size(); ++i) m.element[static_cast<size_t>(m.position[i])] = static_cast<int64_t>(i);
  return m;
}

// vec[b, i] = mat[b, position[i]] as req says.
template <typename T>
void Extract(const VectorMap& m, const T* mat, int64_t batch, T* vec, OpReq req) {
  const int64_t len = static_cast<int64_t>(m.position.size());
  MapWithReq(vec, batch * len, req, [&](int64_t i) { return mat[(i / len) * m.n * m.n + m.position[static_cast<size_t>(i % len)]]; });
}

// mat[b, p] = vec[b, element[p]], 0 where no element lies, as req says.
template <typename T>
void Make(const VectorMap& m, const T* vec, int64_t batch, T* mat, OpReq req) {
  const int64_t len = static_cast<int64_t>(m.position.size()), nn = m.n * m.n;
  MapWithReq(mat, batch * nn, req, [&](int64_t i) {
    const int64_t e = m.element[static_cast<size_t>(i % nn)];
    return e < 0 ? T(0) : vec[(i / nn) * len + e];
  });
}

// The map of a node: `diag` picks the op pair, n is the matrices' size.
VectorMap MapOf(const NodeAttrs& attrs, bool diag, int64_t n) {
  if (diag) return DiagMap(n, attrs.param<DiagParam>().offset);
  const auto& p = attrs.param<TrianParam>();
  return TrianMap(n, p.offset, p.lower);
}
int OffsetOf(const NodeAttrs& attrs, bool diag) {
  return diag ? attrs.param<DiagParam>().offset : attrs.param<TrianParam>().offset;
}

// Forward only, as MXNet.
void InferExtractShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out, bool diag) {
  const TShape& a = (*in)[0];
  if (!a.ndim_known()) return;
  RequireSquare(attrs, a, "A");
  const int nd = a.ndim();
  if (a[nd - 1] < 0) return;
  const int offset = OffsetOf(attrs, diag);
  const int64_t len = a[nd - 1] - std::abs(offset);
  if (len <= 0)
    throw ShapeError(StrCat(OpName(attrs), ": illegal offset ", offset, " for matrices of size ", a[nd - 1]));
  std::vector<int64_t> o(a.dims().begin(), a.dims().end() - 1);
  o[static_cast<size_t>(nd - 2)] = diag ? len : len * (len + 1) / 2;
  ShapeAssignCheck(out, 0, TShape(o));
}

void InferMakeShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out, bool diag) {
  const TShape& a = (*in)[0];
  if (!a.ndim_known()) return;
  if (a.ndim() < 1)
    throw ShapeError(StrCat(OpName(attrs), ": input A must have at least one dimension, got ", a));
  const int nd = a.ndim();
  if (a[nd - 1] < 0) return;
  int64_t len = a[nd - 1];
  if (!diag) {
    const int64_t m = static_cast<int64_t>(std::floor(0.5 + (std::sqrt(8.0 * static_cast<double>(len) + 1.0) - 1.0) * 0.5));
    if (m * (m + 1) / 2 != len)
      throw ShapeError(StrCat(OpName(attrs), ": the last axis of input A must hold a triangle, m * (m + 1) / 2 "
                              "elements, got ", len));
    len = m;
  }
  std::vector<int64_t> o(a.dims());
  o.push_back(0);
  o[static_cast<size_t>(nd - 1)] = o[static_cast<size_t>(nd)] = len + std::abs(OffsetOf(attrs, diag));
  ShapeAssignCheck(out, 0, TShape(o));
}

// extract = true: matrices in, vectors out; false: vectors in, matrices out.
template <bool extract>
void ForwardOf(bool diag, const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const std::vector<OpReq>& reqs,
               const std::vector<NDArray>& outputs) {
  ForwardInFloatType(attrs, inputs, reqs, outputs, [&](auto tag, const auto& in, const auto& req, const auto& out) {
    using T = decltype(tag);
    const TShape& ms = extract ? in[0].shape() : out[0].shape();
    const int64_t n = ms[ms.ndim() - 1], batch = n == 0 ? 0 : ms.Size() / (n * n);
    const VectorMap m = MapOf(attrs, diag, n);
    if (extract) Extract(m, in[0].template data<T>(), batch, out[0].template data<T>(), req[0]);
    else Make(m, in[0].template data<T>(), batch, out[0].template data<T>(), req[0]);
  });
}

template <bool extract>
void BackwardOf(bool diag, const NodeAttrs& attrs, const BackwardArgs& args) {
  if (args.req[0] == OpReq::kNull) return;
  BackwardInFloatType(attrs, args, [&](auto tag, const BackwardArgs& a) {
    using T = decltype(tag);
    const TShape& ms = extract ? a.inputs[0].shape() : a.out_grads[0].shape();
    const int64_t n = ms[ms.ndim() - 1], batch = n == 0 ? 0 : ms.Size() / (n * n);
    const VectorMap m = MapOf(attrs, diag, n);
    if (extract) Make(m, a.out_grads[0].template data<T>(), batch, a.in_grads[0].template data<T>(), a.req[0]);
    else Extract(m, a.out_grads[0].template data<T>(), batch, a.in_grads[0].template data<T>(), a.req[0]);
  });
}

// Registers one op of the four: diag or triangle, extracting or making.
template <bool extract, typename Param>
void RegisterVectorMapOp(const char* name, const char* description, const char* input_doc) {
  const bool diag = std::is_same<Param, DiagParam>::value;
  Op& op = OpRegistry::Global().Register(name);
  LinalgOp(op)
      .add_alias(op.name.substr(1))
      .describe(description)
      .add_argument_doc("A", input_doc)
      .set_params<Param>()
      .set_arguments({"A"})
      .set_infer_shape([diag](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
        if (extract) InferExtractShape(attrs, in, out, diag);
        else InferMakeShape(attrs, in, out, diag);
      })
      .set_infer_type(InferFloatType)
      .set_forward([diag](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        ForwardOf<extract>(diag, attrs, in, req, out);
      })
      .set_backward([diag](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        BackwardOf<extract>(diag, attrs, a);
      });
}
}  // namespace

SYMBIND_REGISTER_OP_FAMILY(linalg_diag_trian) {
  RegisterVectorMapOp<true, DiagParam>(
      "_linalg_extractdiag",
      "Extracts the diagonal entries of a square matrix: out[..., i] = A[..., i - min(offset, 0), "
      "i + max(offset, 0)], the diagonal `offset` above (positive) or below (negative) the main one. "
      "Leading dimensions are batch dimensions.",
      "Tensor of square matrices");
  RegisterVectorMapOp<false, DiagParam>(
      "_linalg_makediag",
      "Constructs square matrices from their diagonal entries: the vector along the last axis becomes "
      "the diagonal `offset` above (positive) or below (negative) the main one, every other entry is "
      "zero. Leading dimensions are batch dimensions.",
      "Tensor of diagonal entries");
  RegisterVectorMapOp<true, TrianParam>(
      "_linalg_extracttrian",
      "Extracts a triangular sub-matrix of a square matrix into a vector: the lower triangle (offset < 0, "
      "or offset = 0 and lower=true) row by row, else the upper one column by column; the triangle starts "
      "|offset| diagonals off the main one. Leading dimensions are batch dimensions.",
      "Tensor of square matrices");
  RegisterVectorMapOp<false, TrianParam>(
      "_linalg_maketrian",
      "Constructs square matrices from triangles stored as vectors (in extracttrian's order), every other "
      "entry zero: the vector's m * (m + 1) / 2 entries fill a triangle of size m, |offset| diagonals off "
      "the main one. Leading dimensions are batch dimensions.",
      "Tensor of triangular matrices stored as vectors");
}

}  // namespace symbind
