// SliceChannel (split): cuts an array into equal parts along an axis, optionally squeezing it.
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/kernels/concat.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// SliceChannel
struct SliceChannelParam : Parameter<SliceChannelParam> {
  int num_outputs;
  int axis;
  bool squeeze_axis;
  static void Declare(ParamDeclarer<SliceChannelParam>& d) {
    // Bounded like every node's outputs (Graph::kMaxNodeOutputs) so that a huge count is
    // refused before any per-output name or array exists.
    d.field("num_outputs", &SliceChannelParam::num_outputs).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of splits. Note that this should evenly divide the length of the `axis`.");
    d.field("axis", &SliceChannelParam::axis).set_default(1).describe("Axis along which to split.");
    d.field("squeeze_axis", &SliceChannelParam::squeeze_axis).set_default(false)
        .describe("If true, Removes the axis with length 1 from the shapes of the output arrays. "
                  "**Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 only "
                  "along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` "
                  "only if ``input.shape[axis] == num_outputs``.");
  }
};

void InferShapeSliceChannel(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SliceChannelParam>();
  int64_t n = p.num_outputs;
  // The input shape an output shape implies.
  auto back_from = [&](const TShape& o, int axis) {
    std::vector<int64_t> back = o.dims();
    if (p.squeeze_axis) back.insert(back.begin() + axis, n);
    else if (back[axis] >= 0) back[axis] = CheckedMul(back[axis], n, "SliceChannel: input size on axis ", axis);
    return TShape(back);
  };
  if (!(*in)[0].ndim_known()) {
    // MXNet stops here; we also take the input from a known output.
    for (const TShape& s : *out) {
      if (!s.ndim_known()) continue;
      int nd = s.ndim() + (p.squeeze_axis ? 1 : 0);
      ShapeAssignCheck(in, 0, back_from(s, NormalizeAxis(p.axis, nd, "SliceChannel")));
      break;
    }
    if (!(*in)[0].ndim_known()) return;
  }
  const TShape d = (*in)[0];
  int axis = NormalizeAxis(p.axis, d.ndim(), "SliceChannel");
  if (d[axis] >= 0 && d[axis] % n != 0)
    throw ShapeError(StrCat("SliceChannel: you are trying to split the ", axis,
                            "-th axis of input tensor with shape ", d, " into num_outputs=", n,
                            " evenly sized chunks, but this is not possible because ", n,
                            " does not evenly divide ", d[axis]));
  if (p.squeeze_axis && d[axis] >= 0 && d[axis] != n)
    throw ShapeError(StrCat("SliceChannel: if squeeze_axis is True, the size of the sliced axis "
                            "must be the same as num_outputs. Input shape=", d, ", axis=", axis,
                            ", num_outputs=", n, "."));
  std::vector<int64_t> o = d.dims();
  if (o[axis] >= 0) o[axis] /= n;
  if (p.squeeze_axis) o.erase(o.begin() + axis);
  // Every output has one shape: what any of them knows, all of them take.
  TShape common(o);
  for (size_t i = 0; i < out->size(); ++i) {
    TShape merged;
    if ((*out)[i].ndim_known() && UnifyShapes(common, (*out)[i], &merged)) common = merged;
  }
  for (size_t i = 0; i < out->size(); ++i) ShapeAssignCheck(out, i, common);
  // Back to the input from the outputs.
  ShapeAssignCheck(in, 0, back_from(common, axis));
}

}  // namespace

SYMBIND_REGISTER_OP(SliceChannel)
    .add_alias("split")
    .describe("Splits an array along a particular axis into multiple sub-arrays.")
    .set_params<SliceChannelParam>()
    .set_numbered_outputs("output", [](const NodeAttrs& a) { return a.param<SliceChannelParam>().num_outputs; })
    .set_infer_shape(InferShapeSliceChannel)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<SliceChannelParam>();
      int axis = NormalizeAxis(p.axis, in[0].shape().ndim(), "SliceChannel");
      TShape part = in[0].shape();
      part[axis] /= p.num_outputs;
      std::vector<NDArray> parts;
      for (auto& o : out) parts.push_back(o.Reshape(part));
      ConcatCopy(in[0], parts, axis, false, req);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<SliceChannelParam>();
      const TShape& d = a.inputs[0].shape();
      int axis = NormalizeAxis(p.axis, d.ndim(), "SliceChannel");
      TShape part = d;
      part[axis] /= p.num_outputs;
      std::vector<NDArray> parts;
      for (auto& g : a.out_grads) parts.push_back(g.Reshape(part));
      ConcatCopy(a.in_grads[0], parts, axis, true, a.req);
    });

}  // namespace symbind
