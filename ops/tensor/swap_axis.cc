// SwapAxis (alias swapaxes): exchanges two axes, as Gluon's RNN layers export for layout NTC
// (swapaxes(data, 0, 1) around RNN) and CRNN models use. Negative axes count from the end. The
// gradient swaps the same axes back (a gather through IndexMap, as transpose).
#include <symbind/ops/shape_util.h>

namespace symbind {

namespace {
using namespace shape_detail;

struct SwapAxisParam : Parameter<SwapAxisParam> {
  int dim1;
  int dim2;
  static void Declare(ParamDeclarer<SwapAxisParam>& d) {
    d.field("dim1", &SwapAxisParam::dim1).set_default(0).describe("the first axis to be swapped.");
    d.field("dim2", &SwapAxisParam::dim2).set_default(0).describe("the second axis to be swapped.");
  }
};

// The input's axes with dim1 and dim2 exchanged.
std::vector<int> SwappedAxes(const SwapAxisParam& p, int ndim) {
  std::vector<int> axes(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) axes[static_cast<size_t>(i)] = i;
  std::swap(axes[static_cast<size_t>(NormalizeAxis(p.dim1, ndim, "SwapAxis"))],
            axes[static_cast<size_t>(NormalizeAxis(p.dim2, ndim, "SwapAxis"))]);
  return axes;
}

const auto kSwapMap = [](const NodeAttrs& a, const TShape& in, const TShape& out) {
  const std::vector<int> axes = SwappedAxes(a.param<SwapAxisParam>(), in.ndim());
  const std::vector<int64_t> strides = Strides(in);
  IndexMap m(out);
  for (size_t d = 0; d < axes.size(); ++d) m.stride[d] = strides[static_cast<size_t>(axes[d])];
  return m;
};
}  // namespace

SYMBIND_REGISTER_OP(SwapAxis)
    .add_alias("swapaxes")
    .describe("Interchanges two axes of an array.")
    .set_params<SwapAxisParam>()
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      // The swap is its own inverse, so either side gives the other.
      const auto& p = attrs.param<SwapAxisParam>();
      auto swapped = [&](const TShape& s) {
        const std::vector<int> axes = SwappedAxes(p, s.ndim());
        std::vector<int64_t> dims;
        for (int a : axes) dims.push_back(s[a]);
        return TShape(dims);
      };
      if ((*in)[0].ndim_known()) ShapeAssignCheck(out, 0, swapped((*in)[0]));
      if ((*out)[0].ndim_known()) ShapeAssignCheck(in, 0, swapped((*out)[0]));
    })
    .set_forward(GatherForward(kSwapMap))
    .set_backward(GatherBackward(kSwapMap, true));

}  // namespace symbind
