// reshape_like (MXNet 1.9.1's elemwise_unary_op_basic): lhs's data with dims
// [lhs_begin, lhs_end) replaced by rhs's dims [rhs_begin, rhs_end) (by default: rhs's whole
// shape). Shapes infer forward only, as MXNet. The lhs gradient is the reshaped head
// gradient; rhs, of any dtype, only lends its shape (zero gradient).
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct ReshapeLikeParam : Parameter<ReshapeLikeParam> {
  std::optional<int> lhs_begin, lhs_end, rhs_begin, rhs_end;
  static void Declare(ParamDeclarer<ReshapeLikeParam>& d) {
    d.field("lhs_begin", &ReshapeLikeParam::lhs_begin).set_default(std::nullopt)
        .describe("Defaults to 0. The beginning index along which the lhs dimensions are to be "
                  "reshaped. Supports negative indices.");
    d.field("lhs_end", &ReshapeLikeParam::lhs_end).set_default(std::nullopt)
        .describe("Defaults to None. The ending index along which the lhs dimensions are to be "
                  "used for reshaping. Supports negative indices.");
    d.field("rhs_begin", &ReshapeLikeParam::rhs_begin).set_default(std::nullopt)
        .describe("Defaults to 0. The beginning index along which the rhs dimensions are to be "
                  "used for reshaping. Supports negative indices.");
    d.field("rhs_end", &ReshapeLikeParam::rhs_end).set_default(std::nullopt)
        .describe("Defaults to None. The ending index along which the rhs dimensions are to be "
                  "used for reshaping. Supports negative indices.");
  }
};

// MXNet's ReshapeLikeRangeCanonicalize: [begin, end) within [0, ndim], begin < end.
std::pair<int, int> DimRange(int ndim, const char* side, const std::optional<int>& begin,
                             const std::optional<int>& end) {
  int b = begin.value_or(0), e = end.value_or(ndim);
  if (b < 0) b += ndim;
  if (end && e < 0) e += ndim;
  if (b < 0 || e > ndim || b >= e)
    throw ShapeError(StrCat("reshape_like: invalid ", side, "_begin=", begin ? StrCat(*begin) : "None",
                            ", ", side, "_end=", end ? StrCat(*end) : "None", " for ", side,
                            " of ", ndim, " dimensions (expected 0 <= begin < end <= ", ndim, ")"));
  return {b, e};
}

void InferShapeReshapeLike(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ReshapeLikeParam>();
  const TShape& l = (*in)[0];
  const TShape& r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  auto [lb, le] = DimRange(l.ndim(), "lhs", p.lhs_begin, p.lhs_end);
  auto [rb, re] = DimRange(r.ndim(), "rhs", p.rhs_begin, p.rhs_end);
  std::vector<int64_t> o(l.dims().begin(), l.dims().begin() + lb);
  o.insert(o.end(), r.dims().begin() + rb, r.dims().begin() + re);
  o.insert(o.end(), l.dims().begin() + le, l.dims().end());
  TShape os(o);
  if (l.is_known() && os.is_known() && l.Size() != os.Size())
    throw ShapeError(StrCat("reshape_like: cannot reshape lhs with shape ", l, " to new shape ", os,
                            " because they have different size"));
  ShapeAssignCheck(out, 0, os);
}
}  // namespace

SYMBIND_REGISTER_OP(reshape_like)
    .add_alias("_npx_reshape_like")
    .describe("Reshape some or all dimensions of `lhs` to have the same shape as some or all "
              "dimensions of `rhs`.")
    .set_params<ReshapeLikeParam>()
    .set_arguments({"lhs", "rhs"})
    .set_infer_shape(InferShapeReshapeLike)
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"rhs"})  // only its shape is read (MXNet)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      CopyWithReq(out[0], in[0], req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      ZeroWithReq(a.in_grads[1], a.req[1]);
      CopyWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
    });

}  // namespace symbind
