// _contrib_box_iou: the intersection over union of every box of lhs with every box of rhs.
#include <symbind/ops/contrib/box_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct BoxIouParam : Parameter<BoxIouParam> {
  int format;
  static void Declare(ParamDeclarer<BoxIouParam>& d) {
    box::BoxFormatField(d.field("format", &BoxIouParam::format), box::kCorner, "The box");
  }
};

void CheckBoxes(const TShape& s, const char* name) {
  if (s.ndim() < 2 || s[s.ndim() - 1] != 4)
    throw ShapeError(StrCat("_contrib_box_iou: ", name, " must have at least 2 dims and 4 values per box (last axis), got shape ", s));
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_box_iou)
    .add_alias("box_iou")
    .describe(R"(Bounding box overlap of two arrays of boxes: the intersection over union of each
box of lhs (shape (..., 4)) with each box of rhs (shape (..., 4)), 0 where they do not
intersect. The output's shape is lhs's without its last axis followed by rhs's without its
last axis. A box of negative width or height has no area. Not differentiable (zero gradient,
as MXNet's).)")
    .set_params<BoxIouParam>()
    .set_arguments({"lhs", "rhs"})
    .add_argument_doc("lhs", "The first input")
    .add_argument_doc("rhs", "The second input")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape &l = (*in)[0], &r = (*in)[1];
      if (!l.ndim_known() || !r.ndim_known()) return;
      CheckBoxes(l, "lhs");
      CheckBoxes(r, "rhs");
      std::vector<int64_t> dims(l.dims().begin(), l.dims().end() - 1);
      dims.insert(dims.end(), r.dims().begin(), r.dims().end() - 1);
      ShapeAssignCheck(out, 0, TShape(dims));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 1, (*in)[0]);
      TypeAssignCheck(in, 0, (*in)[1]);
      InferTypeFromData(a, in, out);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const int format = attrs.param<BoxIouParam>().format;
      ComputeInDType("_contrib_box_iou", in, req, out, [&](auto tag, const auto& in, const auto& req, const auto& out) {
        using T = decltype(tag);
        const int64_t nl = in[0].Size() / 4, nr = in[1].Size() / 4;
        const T *l = in[0].template data<T>(), *r = in[1].template data<T>();
        MapWithReq(out[0].template data<T>(), nl * nr, req[0], [&](int64_t i) {
          return box::IntersectionOverUnion(l + (i / nr) * 4, r + (i % nr) * 4, format);
        });
      });
    })
    .set_zero_gradient();

}  // namespace symbind
