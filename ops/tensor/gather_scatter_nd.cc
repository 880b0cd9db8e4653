// gather_nd and scatter_nd (MXNet 1.9.1's indexing_op). indices has shape (M, Y0, ..): column
// y names the element (or slice) data[indices[0, y], .., indices[M-1, y], ...]. gather_nd
// reads them into shape (Y0, .., X_M, ..); scatter_nd writes data of that shape into a zero
// array of `shape`. Indices may be of any dtype and are truncated to integers; gather_nd
// accepts -dim <= i < dim (negative counts from the end, as MXNet's kernel wraps), scatter_nd
// 0 <= i < dim; anything else is an error (MXNet reads out of bounds). Duplicate scatter
// targets keep the last write (MXNet: undefined). Gradients: gather_nd's is a scatter-add,
// scatter_nd's a gather; indices get zero.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct ScatterNDParam : Parameter<ScatterNDParam> {
  TShape shape;
  static void Declare(ParamDeclarer<ScatterNDParam>& d) {
    d.field("shape", &ScatterNDParam::shape).describe("Shape of output.");
  }
};

constexpr int kMaxIndexedDims = 10;  // MXNet's limit

// The gathered shape of `indices` into an array of shape `full`, checked as MXNet does.
TShape GatheredShape(const TShape& full, const TShape& idx, const char* op, const char* full_name) {
  if (idx.ndim() < 2)
    throw ShapeError(StrCat(op, " requires index tensor to have at least 2 dimensions, got ", idx));
  if (idx[0] < 0) return TShape();
  if (idx[0] > full.ndim())
    throw ShapeError(StrCat(op, ": number of indices ", idx[0], " exceeds the ", full_name,
                            " dimension ", full.ndim(), " (", full, ")"));
  if (idx[0] > kMaxIndexedDims)
    throw ShapeError(StrCat(op, " supports indexing along at most ", kMaxIndexedDims,
                            " dimensions, got ", idx[0]));
  std::vector<int64_t> o(idx.dims().begin() + 1, idx.dims().end());
  o.insert(o.end(), full.dims().begin() + idx[0], full.dims().end());
  return TShape(o);
}

// Per column y of indices: the flat offset of its slice in `full`, and the slice length.
struct Slices {
  std::vector<int64_t> offset;
  int64_t length = 1;
};
Slices ResolveSlices(const TShape& full, const NDArray& indices, bool allow_negative, const char* op) {
  const int64_t M = indices.shape()[0];
  const int64_t N = M == 0 ? 0 : indices.Size() / M;
  std::vector<double> v = ValuesAsDouble(indices);
  Slices s;
  s.length = full.ProdDims(static_cast<int>(M), full.ndim());
  s.offset.assign(static_cast<size_t>(M == 0 ? indices.shape().ProdDims(1, indices.shape().ndim()) : N), 0);
  for (int64_t y = 0; y < N; ++y) {
    int64_t off = 0;
    for (int64_t m = 0; m < M; ++m) {
      int64_t dim = full[static_cast<int>(m)];
      int64_t i = TruncateIndex(v[static_cast<size_t>(m * N + y)]);
      if (allow_negative && i < 0) i += dim;
      if (i < 0 || i >= dim)
        throw IndexError(StrCat(op, ": index ", v[static_cast<size_t>(m * N + y)], " at indices[", m, ", ", y,
                           "] is out of bounds for axis ", m, " of size ", dim,
                           allow_negative ? " (expected -size <= index < size)"
                                          : " (expected 0 <= index < size)"));
      off = off * dim + i;
    }
    s.offset[static_cast<size_t>(y)] = off * s.length;
  }
  return s;
}

// dst slice y (contiguous, in gathered order) = src slice at offset y.
template <typename T>
void GatherSlices(const Slices& s, const T* src, T* dst, OpReq req) {
  const int64_t L = s.length;
  MapWithReq(dst, static_cast<int64_t>(s.offset.size()) * L, req,
             [&](int64_t t) { return src[s.offset[static_cast<size_t>(t / L)] + t % L]; });
}

// dst at offset y (+)= src slice y, serially so duplicate targets resolve in order.
template <typename T>
void ScatterSlices(const Slices& s, const T* src, T* dst, bool add) {
  const int64_t L = s.length;
  for (size_t y = 0; y < s.offset.size(); ++y)
    for (int64_t j = 0; j < L; ++j) {
      T& d = dst[s.offset[y] + j];
      d = add ? static_cast<T>(d + src[static_cast<int64_t>(y) * L + j]) : src[static_cast<int64_t>(y) * L + j];
    }
}
}  // namespace

SYMBIND_REGISTER_OP(gather_nd)
    .add_alias("_npi_gather_nd")
    .add_alias("_npx_gather_nd")
    .describe("Gathers elements or slices from data into an array of shape (Y0, .., X_M, ..) "
              "given indices of shape (M, Y0, ..).")
    .set_arguments({"data", "indices"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      if (!(*in)[0].ndim_known() || !(*in)[1].ndim_known()) return;
      TShape o = GatheredShape((*in)[0], (*in)[1], "gather_nd", "data");
      if (o.ndim_known()) ShapeAssignCheck(out, 0, o);
    })
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"indices"})
    .set_dtype_generic()  // data of any dtype, forward and backward (MXNet indexes int arrays too)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      Slices s = ResolveSlices(in[0].shape(), in[1], true, "gather_nd");
      ComputeInDType("gather_nd", {in[0]}, req, out,
                     [&](auto tag, const std::vector<NDArray>& x, const std::vector<OpReq>& r,
                         const std::vector<NDArray>& y) {
        using T = decltype(tag);
        GatherSlices(s, x[0].data<T>(), y[0].data<T>(), r[0]);
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      Slices s = ResolveSlices(a.inputs[0].shape(), a.inputs[1], true, "gather_nd");
      ZeroWithReq(a.in_grads[0], a.req[0]);
      SwitchNumericType(a.out_grads[0].dtype(), "gather_nd", [&](auto tag) {
        using T = decltype(tag);
        ScatterSlices(s, a.out_grads[0].data<T>(), a.in_grads[0].data<T>(), true);
      });
    });

SYMBIND_REGISTER_OP(scatter_nd)
    .describe("Scatters data into a new zero array of the given shape at the positions indices "
              "(M, Y0, ..) name; the inverse of gather_nd.")
    .set_params<ScatterNDParam>()
    .set_arguments({"data", "indices"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& shape = attrs.param<ScatterNDParam>().shape;
      ShapeAssignCheck(out, 0, shape);
      const TShape& idx = (*in)[1];
      if (!idx.ndim_known()) return;
      TShape want = GatheredShape(shape, idx, "scatter_nd", "output");
      if (!want.ndim_known()) return;
      const TShape& d = (*in)[0];
      if (d.ndim_known() && d.ndim() != want.ndim())
        throw ShapeError(StrCat("Invalid data, indices, and output shape combination for "
                                "scatter_nd: ", d, ", ", idx, ", ", shape));
      ShapeAssignCheck(in, 0, want);
    })
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"indices"})
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      Slices s = ResolveSlices(out[0].shape(), in[1], false, "scatter_nd");
      ZeroWithReq(out[0], req[0]);
      ScatterSlices(s, in[0].fdata(), out[0].fdata(), req[0] == OpReq::kAdd);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      Slices s = ResolveSlices(a.out_grads[0].shape(), a.inputs[1], false, "scatter_nd");
      GatherSlices(s, a.out_grads[0].fdata(), a.in_grads[0].fdata(), a.req[0]);
    });

// MXNet's setitem with advanced indices (x[[0, 2]] = v): lhs with the slices at indices set to
// rhs. Internal; no gradient (MXNet registers none).
SYMBIND_REGISTER_OP(_scatter_set_nd)
    .add_alias("_npi_scatter_set_nd")
    .describe("lhs with the elements or slices at indices (M, Y0, ..) replaced by rhs; the others "
              "keep lhs's values. For NDArray setitem with advanced indices.")
    .set_params<ScatterNDParam>()
    .set_arguments({"lhs", "rhs", "indices"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
      ShapeAssignCheck(in, 0, (*out)[0]);
      const TShape& full = (*in)[0];
      if (!full.ndim_known() || !(*in)[2].ndim_known()) return;
      TShape want = GatheredShape(full, (*in)[2], "_scatter_set_nd", "lhs");
      if (want.ndim_known()) ShapeAssignCheck(in, 1, want);
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, (*in)[0]);
      TypeAssignCheck(in, 0, (*out)[0]);
      TypeAssignCheck(in, 1, (*in)[0]);
    })
    .set_any_dtype_inputs({"indices"})
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      Slices s = ResolveSlices(out[0].shape(), in[2], true, "_scatter_set_nd");
      NDArray dst = out[0];
      if (!in[0].SharesStorageWith(dst)) in[0].CopyTo(&dst);
      SwitchNumericType(dst.dtype(), "_scatter_set_nd", [&](auto tag) {
        using T = decltype(tag);
        ScatterSlices(s, in[1].data<T>(), dst.data<T>(), false);
      });
    });

}  // namespace symbind
