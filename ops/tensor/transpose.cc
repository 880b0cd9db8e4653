// transpose: permutes the axes (reversed when axes is empty), through an index map.
#include <vector>

#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>

namespace symbind {

namespace {

// transpose
struct TransposeParam : Parameter<TransposeParam> {
  TShape axes;
  static void Declare(ParamDeclarer<TransposeParam>& d) {
    d.field("axes", &TransposeParam::axes).set_default(TShape(std::vector<int64_t>{}))
        .describe("Target axis order. By default the axes will be inverted.");
  }
};

// The permutation for rank `ndim`: `axes` (negatives allowed) or the reversal.
std::vector<int> TransposeAxes(const TransposeParam& p, int ndim) {
  std::vector<int> ax(static_cast<size_t>(ndim));
  if (p.axes.ndim() == 0) {
    for (int i = 0; i < ndim; ++i) ax[i] = ndim - 1 - i;
    return ax;
  }
  if (p.axes.ndim() != ndim)
    throw ShapeError(StrCat("transpose: axes ", p.axes.ToStringAsWritten(), " has ", p.axes.ndim(),
                            " entries but the input has ", ndim, " dimensions"));
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int i = 0; i < ndim; ++i) {
    ax[i] = NormalizeAxis(p.axes[i], ndim, "transpose");
    if (seen[ax[i]]) throw ShapeError(StrCat("transpose: axes ", p.axes.ToStringAsWritten(), " is not a permutation"));
    seen[ax[i]] = true;
  }
  return ax;
}

void InferShapeTranspose(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<TransposeParam>();
  const TShape& d = (*in)[0];
  const TShape& o = (*out)[0];
  int ndim = d.ndim_known() ? d.ndim() : o.ndim();
  if (ndim < 0) return;
  if (ndim == 0) throw ShapeError("transpose: number of dimensions cannot be 0");
  std::vector<int> ax = TransposeAxes(p, ndim);
  TShape fwd = TShape::Filled(ndim, -1), back = TShape::Filled(ndim, -1);
  for (int i = 0; i < ndim; ++i) {
    if (d.ndim_known()) fwd[i] = d[ax[i]];
    if (o.ndim_known()) back[ax[i]] = o[i];
  }
  ShapeAssignCheck(out, 0, fwd);
  ShapeAssignCheck(in, 0, back);
}

IndexMap TransposeMap(const TransposeParam& p, const TShape& in_shape, const TShape& out_shape) {
  std::vector<int> ax = TransposeAxes(p, in_shape.ndim());
  std::vector<int64_t> st = Strides(in_shape);
  IndexMap m(out_shape);
  for (int i = 0; i < out_shape.ndim(); ++i) m.stride[i] = st[ax[i]];
  return m;
}

const auto kTransposeMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  return TransposeMap(a.param<TransposeParam>(), i, o);
};

}  // namespace

SYMBIND_REGISTER_OP(transpose)
    .set_monitor_numbered_inputs()
    .describe("Permutes the dimensions of an array (reversed when axes is empty).")
    .set_params<TransposeParam>()
    .set_infer_shape(InferShapeTranspose)
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kTransposeMap))
    .set_backward(GatherBackward(kTransposeMap, true));

}  // namespace symbind
