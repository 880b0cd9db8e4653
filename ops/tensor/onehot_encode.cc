// _onehot_encode (MXNet's legacy NDArray function behind mx.nd.onehot_encode): for index vector
// lhs (n) and array rhs (n, k), an (n, k) array with 1 at (i, lhs[i]) and 0 elsewhere; the
// Python package passes rhs as the output too. Indices are truncated to integers; one outside
// [0, k) is an error (MXNet writes out of bounds). Not differentiable, as in MXNet.
#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(_onehot_encode)
    .set_monitor_numbered_inputs()
    .describe("One-hot encodes the indices lhs into an array shaped like rhs: 1 at (i, lhs[i]), 0 elsewhere.")
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "Indices, one per row of rhs.")
    .add_argument_doc("rhs", "An array of shape (rows, depth): the result's shape.")
    .set_dtype_generic()  // indices read as double, values written in any dtype
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, (*in)[1]);
      TypeAssignCheck(in, 1, (*out)[0]);
    })
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& idx = (*in)[0];
      const TShape& like = (*in)[1];
      if (idx.ndim_known() && idx.ndim() != 1)
        throw ShapeError(StrCat("_onehot_encode: the indices (lhs) must be 1-D, got shape ", idx));
      if (like.ndim_known() && like.ndim() != 2)
        throw ShapeError(StrCat("_onehot_encode: rhs must be 2-D (rows, depth), got shape ", like));
      if (idx.is_known() && like.is_known() && idx[0] != like[0])
        throw ShapeError(StrCat("_onehot_encode: ", idx[0], " indices for ", like[0], " rows of rhs ", like));
      ShapeAssignCheck(out, 0, like);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const int64_t rows = out[0].shape()[0], depth = out[0].shape()[1];
      const std::vector<int64_t> idx = ResolveIndices(in[0], depth, kRaise, "_onehot_encode");
      std::vector<double> v(static_cast<size_t>(rows * depth), 0.0);
      for (int64_t i = 0; i < rows; ++i) v[static_cast<size_t>(i * depth + idx[static_cast<size_t>(i)])] = 1.0;
      WriteValuesWithReq(v, out[0], req[0]);
    });

}  // namespace symbind
