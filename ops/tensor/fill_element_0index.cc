// fill_element_0index (MXNet's legacy NDArray function): a copy of lhs (n, k) with element
// (i, rhs[i]) set to mhs[i] in every row i. Indices are truncated to integers; one outside
// [0, k) is an error (MXNet writes out of bounds). Not differentiable, as in MXNet.
#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(fill_element_0index)
    .set_monitor_numbered_inputs()
    .describe("Fill one element of each line(row for python, column for R/Julia) in lhs according to index "
              "indicated by rhs and values indicated by mhs. This function assume rhs uses 0-based index.")
    .set_arguments({"lhs", "mhs", "rhs"})
    .add_argument_doc("lhs", "Left operand to the function: the (rows, columns) array to copy.")
    .add_argument_doc("mhs", "Middle operand to the function: one value per row.")
    .add_argument_doc("rhs", "Right operand to the function: one 0-based column index per row.")
    .set_dtype_generic()  // values read as double, written in any dtype
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, (*in)[0]);
      TypeAssignCheck(in, 0, (*out)[0]);
    })
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& m = (*in)[0];
      if (m.ndim_known() && m.ndim() != 2)
        throw ShapeError(StrCat("fill_element_0index: lhs must be 2-D, got shape ", m));
      for (size_t k : {size_t{1}, size_t{2}}) {
        const TShape& v = (*in)[k];
        if (v.ndim_known() && v.ndim() != 1)
          throw ShapeError(StrCat("fill_element_0index: ", k == 1 ? "mhs" : "rhs", " must be 1-D, got shape ", v));
        if (v.is_known() && m.is_known() && v[0] != m[0])
          throw ShapeError(StrCat("fill_element_0index: ", k == 1 ? "mhs" : "rhs", " has ", v[0],
                                  " elements for the ", m[0], " rows of lhs ", m));
      }
      ShapeAssignCheck(out, 0, m);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const int64_t rows = in[0].shape()[0], cols = in[0].shape()[1];
      const std::vector<int64_t> idx = ResolveIndices(in[2], cols, kRaise, "fill_element_0index");
      std::vector<double> v = ValuesAsDouble(in[0]);
      const std::vector<double> values = ValuesAsDouble(in[1]);
      for (int64_t i = 0; i < rows; ++i)
        v[static_cast<size_t>(i * cols + idx[static_cast<size_t>(i)])] = values[static_cast<size_t>(i)];
      WriteValuesWithReq(v, out[0], req[0]);
    });

}  // namespace symbind
