// Concat: joins arrays along an axis (shapes inferred both ways).
#include <vector>

#include <symbind/ops/kernels/concat.h>
#include <symbind/ops/tensor/concat_param.h>

namespace symbind {

void InferShapeConcat(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ConcatParam>();
  // Everything but the concat axis agrees across inputs and output.
  TShape common;
  int axis = -1;
  auto merge = [&](const TShape& s, const std::string& what) {
    if (!s.ndim_known()) return;
    if (s.ndim() == 0) throw ShapeError("Concat: zero-dimensional arrays cannot be concatenated");
    axis = NormalizeAxis(p.dim, s.ndim(), "Concat");
    TShape t = s;
    t[axis] = -1;
    TShape merged;
    if (!UnifyShapes(common, t, &merged))
      throw ShapeError(StrCat("Concat: incompatible shape for ", what, ": expected ", common,
                              " (any size on axis ", axis, "), got ", s));
    common = merged;
  };
  for (size_t i = 0; i < in->size(); ++i) merge((*in)[i], "arg" + std::to_string(i));
  merge((*out)[0], "the output");
  if (!common.ndim_known()) return;
  int64_t total = 0;
  int unknown = -1, n_unknown = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    ShapeAssignCheck(in, i, common);
    int64_t d = (*in)[i][axis];
    if (d < 0) {
      ++n_unknown;
      unknown = static_cast<int>(i);
    } else {
      total = CheckedAdd(total, d, "Concat: total size on axis ", axis);
    }
  }
  TShape o = common;
  if (n_unknown == 0) {
    o[axis] = total;
  } else if (n_unknown == 1 && (*out)[0].ndim_known() && (*out)[0][axis] >= 0) {
    // One input's concat dim follows from the output's.
    int64_t rest = (*out)[0][axis] - total;
    if (rest < 0)
      throw ShapeError(StrCat("Concat: the output has ", (*out)[0][axis], " entries on axis ", axis,
                              " but the known inputs already have ", total));
    TShape s = (*in)[static_cast<size_t>(unknown)];
    s[axis] = rest;
    ShapeAssignCheck(in, static_cast<size_t>(unknown), s);
    o[axis] = (*out)[0][axis];
  }
  ShapeAssignCheck(out, 0, o);
}

SYMBIND_REGISTER_OP(Concat)
    .add_alias("concat")
    .describe("Joins input arrays along a given axis.")
    .set_params<ConcatParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("arg", a.param<ConcatParam>().num_args); })
    .set_infer_shape(InferShapeConcat)
    .set_join_axis([](const NodeAttrs& attrs, int ndim) {
      return NormalizeAxis(attrs.param<ConcatParam>().dim, ndim, "Concat");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      int axis = NormalizeAxis(attrs.param<ConcatParam>().dim, out[0].shape().ndim(), "Concat");
      ConcatCopy(out[0], in, axis, true, req);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const NDArray& g = a.out_grads[0];
      int axis = NormalizeAxis(attrs.param<ConcatParam>().dim, g.shape().ndim(), "Concat");
      // Parts with req null are skipped; the input stands in for their width.
      std::vector<NDArray> parts;
      for (size_t i = 0; i < a.in_grads.size(); ++i)
        parts.push_back(a.req[i] == OpReq::kNull ? a.inputs[i] : a.in_grads[i]);
      ConcatCopy(g, parts, axis, false, a.req);
    });

}  // namespace symbind
