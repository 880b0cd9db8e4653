// _contrib_index_array: for an input of shape (d_1, ..., d_n), an int64 array of shape
// (d_1, ..., d_n, m) holding each element's own multi-index, restricted to `axes` (m of them)
// when given. Only the input's shape is read; the gradient is zero, as in MXNet.
#include <optional>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct IndexArrayParam : Parameter<IndexArrayParam> {
  std::optional<TShape> axes;
  static void Declare(ParamDeclarer<IndexArrayParam>& d) {
    d.field("axes", &IndexArrayParam::axes).set_default(std::nullopt)
        .describe("The axes to include in the index array. Supports negative values.");
  }
};

// The axes the output lists, normalised.
std::vector<int> SelectedAxes(const NodeAttrs& attrs, int ndim) {
  const auto& p = attrs.param<IndexArrayParam>();
  std::vector<int> axes;
  if (!p.axes) {
    for (int i = 0; i < ndim; ++i) axes.push_back(i);
  } else {
    for (int64_t a : p.axes->dims()) axes.push_back(NormalizeAxis(a, ndim, "_contrib_index_array"));
  }
  return axes;
}

SYMBIND_REGISTER_OP(_contrib_index_array)
    .describe("Returns an array of indexes of the input array: for an input of shape (d_1, ..., d_n), "
              "idx[i_1, ..., i_n, :] = [i_1, ..., i_n], or with `axes`, "
              "idx[i_1, ..., i_n, j] = i_{axes[j]}.")
    .set_params<IndexArrayParam>()
    .add_argument_doc("data", "Input data")
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.ndim_known()) return;
      std::vector<int64_t> dims(d.dims().begin(), d.dims().end());
      dims.push_back(static_cast<int64_t>(SelectedAxes(attrs, d.ndim()).size()));
      ShapeAssignCheck(out, 0, TShape(dims));
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
      TypeAssignCheck(out, 0, static_cast<int>(DType::kInt64));
    })
    .set_dtype_generic()  // reads only the shape
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const TShape& s = in[0].shape();
      const std::vector<int> axes = SelectedAxes(attrs, s.ndim());
      const std::vector<int64_t> st = Strides(s);
      const int64_t n = in[0].Size(), m = static_cast<int64_t>(axes.size());
      std::vector<double> v(static_cast<size_t>(n * m));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) v[i * m + j] = static_cast<double>((i / st[axes[j]]) % s[axes[j]]);
      WriteValuesWithReq(v, out[0], req[0]);
    })
    .set_zero_gradient();

}  // namespace

}  // namespace symbind
