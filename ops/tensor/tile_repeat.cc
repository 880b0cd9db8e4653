// tile (the whole array repeated) and repeat (each element repeated), through index maps.
#include <vector>

#include <symbind/core/shape_semantics.h>
#include <symbind/ops/op_util.h>
#include <symbind/ops/tensor/index_map.h>

namespace symbind {

namespace {

// tile, repeat
struct TileParam : Parameter<TileParam> {
  TShape reps;
  static void Declare(ParamDeclarer<TileParam>& d) {
    d.field("reps", &TileParam::reps)
        .describe("The number of times for repeating the tensor a. Each dim size of reps must be a "
                  "positive integer. If reps has length d, the result will have dimension of "
                  "max(d, a.ndim); If a.ndim < d, a is promoted to be d-dimensional by prepending "
                  "new axes. If a.ndim > d, reps is promoted to a.ndim by pre-pending 1's to it.");
  }
};

void InferShapeTile(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& reps = attrs.param<TileParam>().reps;
  const TShape& d = (*in)[0];
  if (!d.is_known()) return;
  for (int i = 0; i < reps.ndim(); ++i) {
    if (reps[i] < 0) throw ShapeError(StrCat("tile: reps must be non-negative, got ", reps));
    // As MXNet: legacy shapes read a 0 dim as unknown, so an empty result needs NumPy semantics.
    if (reps[i] == 0 && !NumpyShapeSemantics())
      throw ShapeError(StrCat("tile: reps ", reps, " makes an empty array, which needs NumPy shape "
                              "semantics (mx.np_shape(); core/shape_semantics.h)"));
  }
  int n = std::max(d.ndim(), reps.ndim());
  TShape o = TShape::Filled(n, 1);
  for (int i = n - 1, a = d.ndim() - 1, r = reps.ndim() - 1; i >= 0; --i, --a, --r)
    o[i] = CheckedMul(a >= 0 ? d[a] : 1, r >= 0 ? reps[r] : 1, "tile: dim ", i, " of input ", d,
                      " by reps ", reps.ToStringAsWritten());
  ShapeAssignCheck(out, 0, o);
}

IndexMap TileMap(const TShape& in_shape, const TShape& out_shape) {
  std::vector<int64_t> st = Strides(in_shape);
  IndexMap m(out_shape);
  int lead = out_shape.ndim() - in_shape.ndim();
  for (int i = lead; i < out_shape.ndim(); ++i) {
    m.mod[i] = in_shape[i - lead];
    m.stride[i] = st[i - lead];
  }
  return m;
}

struct RepeatParam : Parameter<RepeatParam> {
  int repeats;
  std::optional<int> axis;
  static void Declare(ParamDeclarer<RepeatParam>& d) {
    d.field("repeats", &RepeatParam::repeats).describe("The number of repetitions for each element.");
    d.field("axis", &RepeatParam::axis).set_default(std::nullopt)
        .describe("The axis along which to repeat values. The negative numbers are interpreted "
                  "counting from the backward. By default, use the flattened input array, and "
                  "return a flat output array.");
  }
};

void InferShapeRepeat(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<RepeatParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (p.repeats < 0) throw ShapeError(StrCat("repeat: repeats cannot be a negative number (", p.repeats, ")"));
  int axis = p.axis ? NormalizeAxis(*p.axis, d.ndim(), "repeat") : -1;
  if (p.repeats == 0) {  // MXNet returns an empty 1-D array, with or without axis
    ShapeAssignCheck(out, 0, TShape({0}));
    return;
  }
  if (axis >= 0) {
    TShape o = d;
    if (o[axis] >= 0) o[axis] = CheckedMul(o[axis], p.repeats, "repeat: axis ", axis, " of ", d);
    ShapeAssignCheck(out, 0, o);
  } else if (d.is_known()) {
    ShapeAssignCheck(out, 0, TShape({CheckedMul(d.Size(), p.repeats, "repeat: ", d)}));
  }
}

IndexMap RepeatMap(const RepeatParam& p, const TShape& in_shape, const TShape& out_shape) {
  IndexMap m(out_shape);
  if (!p.axis) {
    m.div[0] = p.repeats;
    m.stride[0] = 1;
    return m;
  }
  int axis = NormalizeAxis(*p.axis, in_shape.ndim(), "repeat");
  std::vector<int64_t> st = Strides(in_shape);
  for (int i = 0; i < out_shape.ndim(); ++i) m.stride[i] = st[i];
  m.div[axis] = p.repeats;
  return m;
}

const auto kTileMap = [](const NodeAttrs&, const TShape& i, const TShape& o) { return TileMap(i, o); };
const auto kRepeatMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  return RepeatMap(a.param<RepeatParam>(), i, o);
};

}  // namespace

SYMBIND_REGISTER_OP(tile)
    .describe("Repeats the whole array multiple times.")
    .set_params<TileParam>()
    .set_infer_shape(InferShapeTile)
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kTileMap))
    .set_backward(GatherBackward(kTileMap, false));

SYMBIND_REGISTER_OP(repeat)
    .describe("Repeats each element of an array after itself (flattened when axis is None).")
    .set_params<RepeatParam>()
    .set_infer_shape(InferShapeRepeat)
    .set_dtype_generic()  // moves elements of any dtype
    .set_forward(GatherForward(kRepeatMap))
    .set_backward(GatherBackward(kRepeatMap, false));

}  // namespace symbind
