// SwapAxis (alias swapaxes; MXNet 1.9.1's swapaxis): exchanges two axes, negative axes counting
// from the end. Shapes infer both ways; the gradient swaps the head gradient back.
#include <utility>
#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>


namespace symbind {

namespace {

struct SwapAxisParam : Parameter<SwapAxisParam> {
  int dim1;
  int dim2;
  static void Declare(ParamDeclarer<SwapAxisParam>& d) {
    d.field("dim1", &SwapAxisParam::dim1).set_default(0).describe("the first axis to be swapped.");
    d.field("dim2", &SwapAxisParam::dim2).set_default(0).describe("the second axis to be swapped.");
  }
};

std::pair<int, int> SwappedAxes(const SwapAxisParam& p, int ndim) {
  return {NormalizeAxis(p.dim1, ndim, "SwapAxis (dim1)"), NormalizeAxis(p.dim2, ndim, "SwapAxis (dim2)")};
}

void InferShapeSwapAxis(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SwapAxisParam>();
  for (auto [from, to] : {std::pair{in, out}, std::pair{out, in}}) {
    const TShape& s = (*from)[0];
    if (!s.ndim_known()) continue;
    auto [a, b] = SwappedAxes(p, s.ndim());
    TShape t = s;
    std::swap(t[a], t[b]);
    ShapeAssignCheck(to, 0, t);
  }
}

IndexMap SwapAxisMap(const NodeAttrs& attrs, const TShape& in_shape, const TShape& out_shape) {
  auto [a, b] = SwappedAxes(attrs.param<SwapAxisParam>(), in_shape.ndim());
  std::vector<int64_t> st = Strides(in_shape);
  std::swap(st[static_cast<size_t>(a)], st[static_cast<size_t>(b)]);
  IndexMap m(out_shape);
  m.stride = st;
  return m;
}
}  // namespace

SYMBIND_REGISTER_OP(SwapAxis)
    .add_alias("swapaxes")
    .add_alias("_npi_swapaxes")
    .describe("Interchanges two axes of an array.")
    .set_params<SwapAxisParam>()
    .set_infer_shape(InferShapeSwapAxis)
    .set_dtype_generic()
    .set_forward(GatherForward(SwapAxisMap))
    .set_backward(GatherBackward(SwapAxisMap, true));

}  // namespace symbind
