// diag: the k-th diagonal of a matrix (or of the axis1/axis2 sub-arrays of an N-D array, as
// numpy.diagonal), or a 2-D matrix with a 1-D input on its k-th diagonal (numpy.diag).
// Both are one index map (tensor/index_map.h) gathered or scattered.
#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include <symbind/ops/tensor/index_map.h>

namespace symbind {

namespace {

struct DiagParam : Parameter<DiagParam> {
  int k, axis1, axis2;
  static void Declare(ParamDeclarer<DiagParam>& d) {
    d.field("k", &DiagParam::k).set_default(0)
        .describe("Diagonal in question. The default is 0. Use k>0 for diagonals above the main diagonal, "
                  "and k<0 for diagonals below the main diagonal. If input has shape (S0 S1) k must be "
                  "between -S0 and S1");
    d.field("axis1", &DiagParam::axis1).set_default(0)
        .describe("The first axis of the sub-arrays of interest. Ignored when the input is a 1-D array.");
    d.field("axis2", &DiagParam::axis2).set_default(1)
        .describe("The second axis of the sub-arrays of interest. Ignored when the input is a 1-D array.");
  }
};

TShape DiagShape(const TShape& in, const DiagParam& p) {
  if (in.ndim() == 0) throw ShapeError("diag: the input must have at least one dimension");
  if (in.ndim() == 1) {
    const int64_t s = in[0] + std::abs(static_cast<int64_t>(p.k));
    return TShape({s, s});
  }
  const int a1 = NormalizeAxis(p.axis1, in.ndim(), "diag"), a2 = NormalizeAxis(p.axis2, in.ndim(), "diag");
  if (a1 == a2) throw ShapeError(StrCat("diag: axis1 and axis2 cannot refer to the same axis ", a1));
  const int64_t len = std::min(in[a1] - std::max(0, -p.k), in[a2] - std::max(0, p.k));
  if (len < 0)
    throw ShapeError(StrCat("diag: diagonal k=", p.k, " does not exist in an input of shape ", in,
                            " (axes ", a1, " and ", a2, ")"));
  std::vector<int64_t> dims;
  for (int i = 0; i < in.ndim(); ++i)
    if (i != a1 && i != a2) dims.push_back(in[i]);
  dims.push_back(len);
  return TShape(dims);
}

void InferDiagShape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  if (!(*in)[0].ndim_known()) return;
  ShapeAssignCheck(out, 0, DiagShape((*in)[0], attrs.param<DiagParam>()));
}

// The diagonal read out of the matrix side as a gather (tensor/index_map.h): for an N-D input
// the matrix is the input and the diagonal the output; for a 1-D input the diagonal is the
// input and the matrix (s, s) the output.
IndexMap DiagMap(const TShape& matrix, const TShape& diag, const DiagParam& p) {
  IndexMap m(diag);
  const int64_t row0 = std::max(0, -p.k), col0 = std::max(0, p.k);
  const int a1 = NormalizeAxis(p.axis1, matrix.ndim(), "diag"), a2 = NormalizeAxis(p.axis2, matrix.ndim(), "diag");
  const std::vector<int64_t> st = Strides(matrix);
  size_t d = 0;
  for (int i = 0; i < matrix.ndim(); ++i)
    if (i != a1 && i != a2) m.stride[d++] = st[i];
  m.stride[d] = st[a1] + st[a2];
  m.base = row0 * st[a1] + col0 * st[a2];
  return m;
}

// dst = the diagonal of src (gather) or src placed on dst's diagonal with zeros elsewhere.
void MoveDiag(const NDArray& src, const NDArray& dst, OpReq req, const DiagParam& param, bool from_1d, bool gather) {
  if (req == OpReq::kNull) return;
  // A 1-D input's matrix is 2-D with axes (0, 1) whatever axis1/axis2 say.
  DiagParam p = param;
  if (from_1d) {
    p.axis1 = 0;
    p.axis2 = 1;
  }
  if (gather) {
    const IndexMap m = DiagMap(src.shape(), dst.shape(), p);
    ComputeInDType("diag", {src}, {req}, {dst}, [&](auto tag, const auto& in, const auto& req, const auto& out) {
      using T = decltype(tag);
      GatherWithReq(m, in[0].template data<T>(), out[0].template data<T>(), req[0]);
    });
  } else {
    const IndexMap m = DiagMap(dst.shape(), src.shape(), p);
    ComputeInDType("diag", {src}, {req}, {dst}, [&](auto tag, const auto& in, const auto& req, const auto& out) {
      using T = decltype(tag);
      ScatterGradWithReq(m, in[0].template data<T>(), out[0], req[0], true);
    });
  }
}

SYMBIND_REGISTER_OP(diag)
    .describe("Extracts a diagonal or constructs a diagonal array. For a 1-D input, a 2-D array with "
              "the input on its k-th diagonal; for N-D, the k-th diagonals of the sub-arrays along "
              "axis1 and axis2, in a last axis.")
    .set_params<DiagParam>()
    .add_argument_doc("data", "Input ndarray")
    .set_infer_shape(InferDiagShape)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const bool from_1d = in[0].shape().ndim() == 1;
      MoveDiag(in[0], out[0], req[0], attrs.param<DiagParam>(), from_1d, !from_1d);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const bool from_1d = a.inputs[0].shape().ndim() == 1;
      MoveDiag(a.out_grads[0], a.in_grads[0], a.req[0], attrs.param<DiagParam>(), from_1d, from_1d);
    });

}  // namespace

}  // namespace symbind
