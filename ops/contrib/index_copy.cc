// _contrib_index_copy: old_tensor with its rows (slices along axis 0) index_vector[i] replaced
// by row i of new_tensor. Gradients: new_tensor gets the head gradient's rows at the indices,
// old_tensor the head gradient with those rows zeroed; the indices get none (zero).
#include <cstring>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

void InferIndexCopyShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape &old_t = (*in)[0], &idx = (*in)[1], &new_t = (*in)[2];
  if (idx.ndim_known() && idx.ndim() != 1)
    throw ShapeError(StrCat("_contrib_index_copy: index_vector must be 1-D, got ", idx));
  if (!old_t.ndim_known() || !new_t.ndim_known()) return;
  bool ok = old_t.ndim() == new_t.ndim() && old_t.ndim() >= 1 && new_t[0] <= old_t[0];
  for (int i = 1; ok && i < old_t.ndim(); ++i) ok = old_t[i] == new_t[i];
  if (!ok)
    throw ShapeError(StrCat("_contrib_index_copy: new_tensor ", new_t, " must have old_tensor's ", old_t,
                            " shape but for a first dimension no larger"));
  if (idx.ndim_known() && idx[0] != new_t[0])
    throw ShapeError(StrCat("_contrib_index_copy: index_vector ", idx, " must hold one index per row of new_tensor ",
                            new_t));
}

// The rows index_vector names, checked against old_tensor's first dimension.
std::vector<int64_t> Rows(const NDArray& idx, int64_t n) {
  return ResolveIndices(idx, n, kRaise, "_contrib_index_copy");
}

SYMBIND_REGISTER_OP(_contrib_index_copy)
    .describe("Copies the elements of a `new_tensor` into the `old_tensor`: for each i, row index_vector[i] of "
              "the output is row i of new_tensor; the other rows are old_tensor's.")
    .set_arguments({"old_tensor", "index_vector", "new_tensor"})
    .add_argument_doc("old_tensor", "Old tensor")
    .add_argument_doc("index_vector", "Index vector")
    .add_argument_doc("new_tensor", "New tensor to be copied")
    .set_any_dtype_inputs({"index_vector"})
    .set_infer_shape(InferIndexCopyShape)
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      for (size_t i : {size_t{0}, size_t{2}}) TypeAssignCheck(out, 0, (*in)[i]);
      for (size_t i : {size_t{0}, size_t{2}}) TypeAssignCheck(in, i, (*out)[0]);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const int64_t n = in[0].shape()[0], row = n > 0 ? in[0].Size() / n : 0;
      const std::vector<int64_t> rows = Rows(in[1], n);
      std::vector<float> v(in[0].fdata(), in[0].fdata() + in[0].Size());
      const float* src = in[2].fdata();
      for (size_t i = 0; i < rows.size(); ++i)
        std::memcpy(v.data() + rows[i] * row, src + i * row, sizeof(float) * row);
      AssignWithReq(out[0].fdata(), v.data(), out[0].Size(), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      const NDArray& g = a.out_grads[0];
      const int64_t n = g.shape()[0], row = n > 0 ? g.Size() / n : 0;
      const std::vector<int64_t> rows = Rows(a.inputs[1], n);
      const float* gd = g.fdata();
      if (float* d_old = InGradOrNull(a, 0)) {
        std::vector<float> v(gd, gd + g.Size());
        for (int64_t r : rows) std::fill(v.begin() + r * row, v.begin() + (r + 1) * row, 0.0f);
        AssignWithReq(d_old, v.data(), g.Size(), a.req[0]);
      }
      ZeroWithReq(a.in_grads[1], a.req[1]);
      if (float* d_new = InGradOrNull(a, 2))
        for (size_t i = 0; i < rows.size(); ++i)
          AssignWithReq(d_new + i * row, gd + rows[i] * row, row, a.req[2]);
    });

}  // namespace

}  // namespace symbind
