// where: picks x or y element-wise (or row-wise) by a condition of any dtype.
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// where
// As MXNet's WhereOpShape: nothing is inferred until the condition's shape is fully known.
void InferShapeWhere(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  if (!(*in)[0].is_known()) return;
  for (int pass = 0; pass < 2; ++pass) {
    ShapeAssignCheck(in, 1, (*in)[2]);
    ShapeAssignCheck(in, 1, (*out)[0]);
    ShapeAssignCheck(in, 2, (*in)[1]);
    ShapeAssignCheck(out, 0, (*in)[1]);
  }
  const TShape& c = (*in)[0];
  const TShape& x = (*in)[1];
  if (!c.ndim_known() || !x.ndim_known()) return;
  if (c.ndim() == x.ndim()) {
    ShapeAssignCheck(in, 0, x);
    ShapeAssignCheck(in, 1, (*in)[0]);
    ShapeAssignCheck(in, 2, (*in)[0]);
    ShapeAssignCheck(out, 0, (*in)[0]);
  } else if (c.ndim() == 1) {
    if (x.ndim() == 0 || (c[0] >= 0 && x[0] >= 0 && c[0] != x[0]))
      throw ShapeError(StrCat("where: a 1-D condition must have the length of x's first axis: "
                              "condition ", c, ", x ", x));
  } else {
    throw ShapeError(StrCat("where: condition must have the shape of x or be 1-D over its first "
                            "axis: condition ", c, ", x ", x));
  }
}

void InferTypeWhere(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  int t = (*in)[1] >= 0 ? (*in)[1] : ((*in)[2] >= 0 ? (*in)[2] : (*out)[0]);
  if (t < 0) return;
  TypeAssignCheck(in, 1, t);  // the condition may be of any type
  TypeAssignCheck(in, 2, t);
  TypeAssignCheck(out, 0, t);
}

// Per element of x: is the condition true? (condition same shape, or 1-D over axis 0).
std::vector<char> WhereMask(const NDArray& cond, const TShape& xs) {
  std::vector<double> c = ValuesAsDouble(cond);
  int64_t n = xs.Size();
  std::vector<char> m(static_cast<size_t>(n));
  bool rows = cond.shape().ndim() != xs.ndim();
  int64_t inner = rows ? n / std::max<int64_t>(xs[0], 1) : 1;
  for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i)] = c[static_cast<size_t>(rows ? i / inner : i)] != 0.0;
  return m;
}

}  // namespace

SYMBIND_REGISTER_OP(where)
    .describe("Returns elements of x where condition is non-zero, else of y. The condition has x's "
              "shape or is 1-D over x's first axis.")
    .set_arguments({"condition", "x", "y"})
    .set_infer_shape(InferShapeWhere)
    .set_infer_type(InferTypeWhere)
    .set_any_dtype_inputs({"condition"})
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      std::vector<char> m = WhereMask(in[0], in[1].shape());
      const float* x = in[1].fdata();
      const float* y = in[2].fdata();
      MapWithReq(out[0].fdata(), out[0].Size(), req[0],
                 [&](int64_t i) { return m[static_cast<size_t>(i)] ? x[i] : y[i]; });
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      std::vector<char> m = WhereMask(a.inputs[0], a.inputs[1].shape());
      const float* g = a.out_grads[0].fdata();
      ZeroWithReq(a.in_grads[0], a.req[0]);  // the condition gets a zero gradient
      if (a.req[1] != OpReq::kNull)
        MapWithReq(InGradOrNull(a, 1), a.inputs[1].Size(), a.req[1],
                   [&](int64_t i) { return m[static_cast<size_t>(i)] ? g[i] : 0.0f; });
      if (a.req[2] != OpReq::kNull)
        MapWithReq(InGradOrNull(a, 2), a.inputs[2].Size(), a.req[2],
                   [&](int64_t i) { return m[static_cast<size_t>(i)] ? 0.0f : g[i]; });
    });

}  // namespace symbind
