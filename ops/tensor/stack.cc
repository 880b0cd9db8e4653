// stack (MXNet 1.9.1's matrix_op): joins num_args arrays of one shape along a new axis
// (-ndim-1 <= axis <= ndim). Inputs are named arg0, arg1, ... Shapes infer both ways (the
// inputs from each other and from the output); the gradient slices the head gradient.
#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct StackParam : Parameter<StackParam> {
  int axis;
  int num_args;
  static void Declare(ParamDeclarer<StackParam>& d) {
    d.field("axis", &StackParam::axis).set_default(0)
        .describe("The axis in the result array along which the input arrays are stacked.");
    d.field("num_args", &StackParam::num_args).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of inputs to be stacked.");
  }
};

void InferShapeStack(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<StackParam>();
  const TShape& o = (*out)[0];
  if (o.ndim_known()) {
    int axis = NormalizeAxis(p.axis, o.ndim(), "stack");
    std::vector<int64_t> d = o.dims();
    d.erase(d.begin() + axis);
    for (size_t i = 0; i < in->size(); ++i) ShapeAssignCheck(in, i, TShape(d));
  }
  TShape d;  // the inputs' common shape, as far as known
  for (size_t i = 0; i < in->size(); ++i) {
    TShape merged;
    if (!UnifyShapes(d, (*in)[i], &merged))
      throw ShapeError(StrCat("stack: all inputs must have the same shape; input arg", i, " is ",
                              (*in)[i], " but an earlier input is ", d));
    d = merged;
  }
  if (!d.ndim_known()) return;
  for (size_t i = 0; i < in->size(); ++i) ShapeAssignCheck(in, i, d);
  int axis = NormalizeAxis(p.axis, d.ndim() + 1, "stack");
  std::vector<int64_t> od = d.dims();
  od.insert(od.begin() + axis, p.num_args);
  ShapeAssignCheck(out, 0, TShape(od));
}

// (leading, trailing) of the output around the stacking axis.
std::pair<int64_t, int64_t> Around(const StackParam& p, const TShape& out) {
  int axis = NormalizeAxis(p.axis, out.ndim(), "stack");
  return {out.ProdDims(0, axis), out.ProdDims(axis + 1, out.ndim())};
}
}  // namespace

SYMBIND_REGISTER_OP(stack)
    .describe("Join a sequence of arrays along a new axis.")
    .set_params<StackParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      std::vector<std::string> names;
      for (int i = 0; i < a.param<StackParam>().num_args; ++i) names.push_back("arg" + std::to_string(i));
      return names;
    })
    .set_infer_shape(InferShapeStack)
    .set_dtype_generic()  // moves elements of any dtype; the backward computes in float32
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      // Plain variables, not a structured binding: lambdas capture them (C++17, clang).
      const int64_t trail = Around(attrs.param<StackParam>(), out[0].shape()).second;
      const int64_t n = static_cast<int64_t>(in.size());
      ComputeInDType("stack", in, req, out,
                     [&](auto tag, const std::vector<NDArray>& xs, const std::vector<OpReq>& r,
                         const std::vector<NDArray>& ys) {
        using T = decltype(tag);
        std::vector<const T*> src;
        for (auto& a : xs) src.push_back(a.template data<T>());
        MapWithReq(ys[0].data<T>(), ys[0].Size(), r[0], [&](int64_t t) {
          int64_t i = (t / trail) % n;
          return src[static_cast<size_t>(i)][(t / (trail * n)) * trail + t % trail];
        });
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto [lead, trail_size] = Around(attrs.param<StackParam>(), a.out_grads[0].shape());
      const int64_t trail = trail_size;  // captured below
      const int64_t n = static_cast<int64_t>(a.in_grads.size());
      const float* g = a.out_grads[0].fdata();
      for (int64_t i = 0; i < n; ++i) {
        if (a.req[static_cast<size_t>(i)] == OpReq::kNull) continue;
        const NDArray& gi = a.in_grads[static_cast<size_t>(i)];
        MapWithReq(gi.fdata(), lead * trail, a.req[static_cast<size_t>(i)],
                   [&](int64_t t) { return g[((t / trail) * n + i) * trail + t % trail]; });
      }
    });

}  // namespace symbind
