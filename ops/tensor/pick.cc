// pick (MXNet 1.9.1's broadcast_reduce_op_index): out[..] = data[.., index[..], ..] along one
// axis, index values truncated to integers and clipped or wrapped. The index input may be of
// any dtype (MXNet passes float indices); it has the data's shape without the axis, or with
// the axis of size 1 (keepdims). The gradient goes to the picked elements; index gets zero.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct PickParam : Parameter<PickParam> {
  std::optional<int> axis;
  bool keepdims;
  int mode;
  static void Declare(ParamDeclarer<PickParam>& d) {
    d.field("axis", &PickParam::axis).set_default(std::optional<int>(-1))
        .describe("int or None. The axis to picking the elements. Negative values means indexing "
                  "from right to left. If is `None`, the elements in the index w.r.t the "
                  "flattened input will be picked.");
    d.field("keepdims", &PickParam::keepdims).set_default(false)
        .describe("If true, the axis where we pick the elements is left in the result as "
                  "dimension with size one.");
    d.field("mode", &PickParam::mode).add_enum("wrap", kWrap).add_enum("clip", kClip)
        .set_default(kClip)
        .describe("Specify how out-of-bound indices behave. Default is \"clip\". \"clip\" means "
                  "clip to the range. So, if all indices mentioned are too large, they are "
                  "replaced by the index that addresses the last element along an axis.  "
                  "\"wrap\" means to wrap around.");
  }
};

// MXNet's ReduceAxisShapeImpl for one given axis: a 1-D input picks into shape (1,).
TShape PickedShape(const TShape& s, int axis, bool keepdims) {
  if (s.ndim() == 1) return TShape({1});
  std::vector<int64_t> o;
  for (int i = 0; i < s.ndim(); ++i)
    if (i != axis) o.push_back(s[i]);
    else if (keepdims) o.push_back(1);
  return TShape(o);
}

int PickAxis(const PickParam& p, const TShape& s) {
  if (!p.axis) throw ShapeError("pick: axis=None is not supported by pick yet. Must specify an axis.");
  return NormalizeAxis(*p.axis, s.ndim(), "pick");
}

void InferShapePick(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<PickParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  int axis = PickAxis(p, d);
  ShapeAssignCheck(out, 0, PickedShape(d, axis, p.keepdims));
  const TShape& idx = (*in)[1];
  if (!idx.ndim_known()) return;
  ShapeAssignCheck(in, 1, PickedShape(d, axis, idx.ndim() == d.ndim()));
}

// For output element t = (o, i): the flat data offset it picks.
std::vector<int64_t> PickedOffsets(const PickParam& p, const NDArray& data, const NDArray& index) {
  AxisLayout s = LayoutAround(data.shape(), PickAxis(p, data.shape()));
  if (s.n == 0 && index.Size() > 0) throw Error("pick: cannot pick from an empty axis");
  std::vector<int64_t> j = ResolveIndices(index, s.n, p.mode, "pick");
  for (int64_t t = 0; t < static_cast<int64_t>(j.size()); ++t)
    j[static_cast<size_t>(t)] = ((t / s.inner) * s.n + j[static_cast<size_t>(t)]) * s.inner + t % s.inner;
  return j;
}
}  // namespace

SYMBIND_REGISTER_OP(pick)
    .add_alias("choose_element_0index")
    .add_alias("_npx_pick")
    .describe("Picks elements from an input array according to the input indices along the "
              "given axis: out[i, j] = data[i, index[i, j], j] style, indices clipped or wrapped.")
    .set_params<PickParam>()
    .set_arguments({"data", "index"})
    .set_infer_shape(InferShapePick)
    .set_infer_type(InferTypeFromData)
    .set_any_dtype_inputs({"index"})
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      std::vector<int64_t> off = PickedOffsets(attrs.param<PickParam>(), in[0], in[1]);
      const float* x = in[0].fdata();
      MapWithReq(out[0].fdata(), out[0].Size(), req[0],
                 [&](int64_t t) { return x[off[static_cast<size_t>(t)]]; });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      ZeroWithReq(a.in_grads[1], a.req[1]);
      if (a.req[0] == OpReq::kNull) return;
      std::vector<int64_t> off = PickedOffsets(attrs.param<PickParam>(), a.inputs[0], a.inputs[1]);
      ZeroWithReq(a.in_grads[0], a.req[0]);
      const float* g = a.out_grads[0].fdata();
      float* dx = a.in_grads[0].fdata();
      for (size_t t = 0; t < off.size(); ++t) dx[off[t]] += g[t];
    });

}  // namespace symbind
