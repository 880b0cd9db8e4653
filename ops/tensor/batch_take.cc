// batch_take (MXNet 1.9.1's indexing_op, deprecated there in favour of pick): for data a whose
// last axis has M entries and indices of a's other dims' size, output[i] = a[i, indices[i]]
// with a viewed as (size / M, M). Indices are clipped to [0, M - 1], as MXNet's kernel does.
// No gradient (MXNet registers none), so a graph that needs one through it fails at bind.
#include <symbind/ops/op_util.h>

namespace symbind {

SYMBIND_REGISTER_OP(batch_take)
    .describe("Takes one element per row: output[i] = a[i, indices[i]] for a of shape (d0, ..., M) "
              "viewed as (d0 * ..., M), indices clipped to [0, M - 1]. Deprecated in MXNet: use pick.")
    .set_arguments({"a", "indices"})
    .add_argument_doc("a", "The input array, at least 2-D; its last axis is indexed.")
    .add_argument_doc("indices", "One index per row of a (any dtype; int32 by default), shaped like the output.")
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[1]);
      ShapeAssignCheck(in, 1, (*out)[0]);
      const TShape& a = (*in)[0];
      if (!a.ndim_known()) return;
      if (a.ndim() < 2) throw ShapeError(StrCat("batch_take: a must be at least 2-D, got ", a));
      if (a.is_known() && (*out)[0].is_known() && a[a.ndim() - 1] > 0 &&
          a.Size() / a[a.ndim() - 1] != (*out)[0].Size())
        throw ShapeError(StrCat("batch_take: indices ", (*out)[0], " must have one entry per row of a ", a,
                                " (", a.Size() / a[a.ndim() - 1], ")"));
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, (*in)[0]);
      TypeAssignCheck(in, 0, (*out)[0]);
      if ((*in)[1] < 0) TypeAssignCheck(in, 1, static_cast<int>(DType::kInt32));
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const TShape& s = in[0].shape();
      const int64_t m = s[s.ndim() - 1];
      const std::vector<double> idx = ValuesAsDouble(in[1]);
      ComputeInDType(attrs.op->name.c_str(), {in[0]}, req, out,
                     [&](auto tag, const std::vector<NDArray>& x, const std::vector<OpReq>& r,
                         const std::vector<NDArray>& y) {
        using T = decltype(tag);
        const T* a = x[0].data<T>();
        MapWithReq(y[0].data<T>(), y[0].Size(), r[0], [&](int64_t i) {
          const double j = std::min(std::max(idx[static_cast<size_t>(i)], 0.0), static_cast<double>(m - 1));
          return a[i * m + static_cast<int64_t>(j)];
        });
      });
    });

}  // namespace symbind
