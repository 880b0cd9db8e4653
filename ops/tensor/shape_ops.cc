// Ops that change shape or layout without arithmetic: Flatten, Reshape, transpose, expand_dims,
// squeeze, tile, repeat; and the value-preserving unary ops Cast, BlockGrad, _copy,
// zeros_like, ones_like, clip.
#include <algorithm>
#include <cstring>

#include <symbind/ops/shape_util.h>

namespace symbind {

namespace {
using shape_detail::CopyWithReq;
using shape_detail::GatherBackward;
using shape_detail::GatherForward;
using shape_detail::IndexMap;
using shape_detail::KnownProduct;
using shape_detail::NormalizeAxis;
using shape_detail::SameShapeInfer;
using shape_detail::Strides;
using shape_detail::ZeroWithReq;

void ForwardCopy(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  CopyWithReq(out[0], in[0], req[0]);
}

void BackwardCopy(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  CopyWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
}

// Gradient that is identically zero (BlockGrad, zeros_like, ones_like).
void BackwardZero(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  for (size_t i = 0; i < a.in_grads.size(); ++i) ZeroWithReq(a.in_grads[i], a.req[i]);
}

// Fills the single unknown dim of `in` from the element count of a known `out`
// (MXNet's ReverseReshapeInferShape), and checks the counts agree when both are known.
void ReverseReshape(std::vector<TShape>* in, const TShape& out, const char* op) {
  TShape& d = (*in)[0];
  if (!out.is_known() || !d.ndim_known()) return;
  if (d.is_known()) {
    if (d.Size() != out.Size())
      throw ShapeError(StrCat(op, ": target shape ", out, " has ", out.Size(),
                              " elements but the input ", d, " has ", d.Size()));
    return;
  }
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < d.ndim(); ++i) {
    if (d[i] < 0) {
      if (unknown >= 0) return;  // more than one unknown dim
      unknown = i;
    } else {
      known = CheckedMul(known, d[i], op, ": input ", d);
    }
  }
  if (known == 0 || out.Size() % known != 0)
    throw ShapeError(StrCat(op, ": cannot infer the input shape ", d, " from the output ", out));
  TShape filled = d;
  filled[unknown] = out.Size() / known;
  ShapeAssignCheck(in, 0, filled);
}

// ---------------------------------------------------------------------------------------------
// Reshape
struct ReshapeParam : Parameter<ReshapeParam> {
  TShape shape;
  bool reverse;
  TShape target_shape;
  bool keep_highest;
  static void Declare(ParamDeclarer<ReshapeParam>& d) {
    d.field("shape", &ReshapeParam::shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("The target shape");
    d.field("reverse", &ReshapeParam::reverse).set_default(false)
        .describe("If true then the special values are inferred from right to left");
    d.field("target_shape", &ReshapeParam::target_shape).set_default(TShape(std::vector<int64_t>{}))
        .describe("(Deprecated! Use ``shape`` instead.) Target new shape. One and only one dim can "
                  "be 0, in which case it will be inferred from the rest of dims");
    d.field("keep_highest", &ReshapeParam::keep_highest).set_default(false)
        .describe("(Deprecated! Use ``shape`` instead.) Whether keep the highest dim unchanged.If "
                  "set to true, then the first dim in target_shape is ignored,and always fixed as "
                  "input");
  }
};

// MXNet's InferReshapeShape: 0 copies a dim, -1 infers one, -2 copies the rest, -3 merges two,
// -4 splits one into the next two entries (one may be -1). `reverse` applies right to left.
TShape InferReshapeShape(const TShape& spec, const TShape& dshape, bool reverse) {
  std::vector<int64_t> src(dshape.dims()), par(spec.dims());
  if (reverse) {
    std::reverse(src.begin(), src.end());
    std::reverse(par.begin(), par.end());
  }
  auto fail = [&](const std::string& why) {
    return ShapeError(StrCat("Reshape: cannot reshape ", dshape, " with shape=", spec.ToStringAsWritten(),
                             reverse ? " (reverse)" : "", ": ", why));
  };
  std::vector<int64_t> out;
  size_t si = 0;
  int inf = -1;
  for (size_t i = 0; i < par.size(); ++i) {
    int64_t v = par[i];
    if (v == 0) {
      if (si >= src.size()) throw fail("0 refers past the last input dim");
      out.push_back(src[si++]);
    } else if (v == -1) {
      if (inf >= 0) throw fail("one and only one dim can be inferred (-1)");
      inf = static_cast<int>(out.size());
      out.push_back(1);
      ++si;
    } else if (v == -2) {
      while (si < src.size()) out.push_back(src[si++]);
    } else if (v == -3) {
      if (si + 1 >= src.size()) throw fail("-3 needs two input dims to merge");
      int64_t d1 = src[si++], d2 = src[si++];
      out.push_back(d1 < 0 || d2 < 0 ? -1 : CheckedMul(d1, d2, "Reshape: -3 merging ", d1, " and ", d2));
    } else if (v == -4) {
      if (i + 2 >= par.size()) throw fail("-4 must be followed by two dims");
      if (si >= src.size()) throw fail("-4 refers past the last input dim");
      int64_t d0 = src[si++], d1 = par[++i], d2 = par[++i];
      if (d1 == -1 && d2 == -1) throw fail("split dims cannot both be -1");
      if (d1 == 0 || d2 == 0 || d1 < -1 || d2 < -1) throw fail("split dims must be positive or -1");
      if (d1 == -1 && d0 >= 0) d1 = d0 / d2;
      if (d2 == -1 && d0 >= 0) d2 = d0 / d1;
      if (d0 >= 0 && CheckedMul(d1, d2, "Reshape: -4 split dims ", d1, " and ", d2) != d0)
        throw fail(StrCat("split dims ", d1, ", ", d2, " do not divide original dim ", d0));
      out.push_back(d1);
      out.push_back(d2);
    } else if (v > 0) {
      out.push_back(v);
      ++si;
    } else {
      throw fail(StrCat("invalid special value ", v));
    }
  }
  if (inf >= 0) {
    if (dshape.is_known()) {
      int64_t rest = 1;
      for (int64_t x : out) rest = CheckedMul(rest, x < 0 ? 1 : x, "Reshape: target shape ", spec.ToStringAsWritten());
      bool any_unknown = std::any_of(out.begin(), out.end(), [](int64_t x) { return x < 0; });
      if (rest == 0 || any_unknown || dshape.Size() % rest != 0)
        throw fail(StrCat("the inferred dim does not divide the input size ", dshape.Size()));
      out[static_cast<size_t>(inf)] = dshape.Size() / rest;
    } else {
      out[static_cast<size_t>(inf)] = -1;
    }
  }
  if (reverse) std::reverse(out.begin(), out.end());
  return TShape(out);
}

void InferShapeReshape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ReshapeParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  TShape o;
  if (p.shape.ndim() > 0) {
    o = InferReshapeShape(p.shape, d, p.reverse);
  } else if (p.target_shape.ndim() > 0) {
    // Legacy: 0 marks the one dim to infer; keep_highest pins dim 0 to the input's.
    o = p.target_shape;
    if (p.keep_highest) o[0] = d[0];
    int zeros = 0, at = 0;
    for (int i = p.keep_highest ? 1 : 0; i < o.ndim(); ++i)
      if (o[i] == 0) {
        ++zeros;
        at = i;
      }
    if (zeros == 1 && d.is_known()) {
      o[at] = 1;
      int64_t rest = o.Size();
      if (rest == 0 || d.Size() % rest != 0)
        throw ShapeError(StrCat("Reshape: target_shape ", p.target_shape, " does not divide the "
                                "input size ", d.Size()));
      o[at] = d.Size() / rest;
    }
  } else {
    // Neither shape nor target_shape: only the output can tell.
    ReverseReshape(in, (*out)[0], "Reshape");
    return;
  }
  ReverseReshape(in, o, "Reshape");
  ShapeAssignCheck(out, 0, o);
  ReverseReshape(in, (*out)[0], "Reshape");
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// expand_dims, squeeze
struct ExpandDimParam : Parameter<ExpandDimParam> {
  int axis;
  static void Declare(ParamDeclarer<ExpandDimParam>& d) {
    d.field("axis", &ExpandDimParam::axis)
        .describe("Position where new axis is to be inserted. Suppose that the input `NDArray`'s "
                  "dimension is `ndim`, the range of the inserted axis is `[-ndim, ndim]`");
  }
};

void InferShapeExpandDims(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  int axis = attrs.param<ExpandDimParam>().axis;
  const TShape& d = (*in)[0];
  const TShape& o = (*out)[0];
  int indim = d.ndim_known() ? d.ndim() : (o.ndim_known() ? o.ndim() - 1 : -1);
  if (indim < 0) return;
  int a = axis < 0 ? axis + indim + 1 : axis;
  if (a < 0 || a > indim)
    throw ShapeError(StrCat("expand_dims: axis must be in the range [", -indim - 1, ", ", indim,
                            "] (", axis, " provided)"));
  TShape fwd = TShape::Filled(indim + 1, -1), back = TShape::Filled(indim, -1);
  fwd[a] = 1;
  for (int i = 0; i < indim; ++i) {
    int j = i < a ? i : i + 1;
    if (d.ndim_known()) fwd[j] = d[i];
    if (o.ndim_known()) back[i] = o[j];
  }
  ShapeAssignCheck(out, 0, fwd);
  ShapeAssignCheck(in, 0, back);
}

struct SqueezeParam : Parameter<SqueezeParam> {
  std::optional<TShape> axis;
  static void Declare(ParamDeclarer<SqueezeParam>& d) {
    d.field("axis", &SqueezeParam::axis).set_default(std::nullopt)
        .describe("Selects a subset of the single-dimensional entries in the shape. If an axis is "
                  "selected with shape entry greater than one, an error is raised.");
  }
};

void InferShapeSqueeze(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SqueezeParam>();
  const TShape& d = (*in)[0];
  if (!d.is_known()) return;
  std::vector<bool> drop(static_cast<size_t>(d.ndim()), false);
  if (p.axis) {
    for (int i = 0; i < p.axis->ndim(); ++i) {
      int a = NormalizeAxis((*p.axis)[i], d.ndim(), "squeeze");
      if (d[a] != 1)
        throw ShapeError(StrCat("squeeze: cannot select an axis to squeeze out which has size=",
                                d[a], " not equal to one (axis ", (*p.axis)[i], " of ", d, ")"));
      if (drop[a]) throw ShapeError(StrCat("squeeze: duplicate value in axis ", *p.axis));
      drop[a] = true;
    }
  } else {
    for (int i = 0; i < d.ndim(); ++i) drop[i] = d[i] == 1;
  }
  std::vector<int64_t> o;
  for (int i = 0; i < d.ndim(); ++i)
    if (!drop[i]) o.push_back(d[i]);
  if (o.empty()) o.push_back(1);  // MXNet keeps (1,) when everything is squeezed
  ShapeAssignCheck(out, 0, TShape(o));
}

// ---------------------------------------------------------------------------------------------
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
  for (int i = 0; i < reps.ndim(); ++i)
    if (reps[i] < 0) throw ShapeError(StrCat("tile: reps must be non-negative, got ", reps));
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

const auto kTransposeMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  return TransposeMap(a.param<TransposeParam>(), i, o);
};
const auto kTileMap = [](const NodeAttrs&, const TShape& i, const TShape& o) { return TileMap(i, o); };
const auto kRepeatMap = [](const NodeAttrs& a, const TShape& i, const TShape& o) {
  return RepeatMap(a.param<RepeatParam>(), i, o);
};

// ---------------------------------------------------------------------------------------------
// Cast, clip
struct CastParam : Parameter<CastParam> {
  int dtype;
  static void Declare(ParamDeclarer<CastParam>& d) {
    shape_detail::AddDTypeEnums(d.field("dtype", &CastParam::dtype), true)
        .describe("Output data type.");
  }
};

// dst (per req) = src converted to dst's dtype. Adding goes through double.
void ConvertWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull) return;
  size_t n = static_cast<size_t>(src.Size());
  if (req != OpReq::kAdd) {
    ConvertElements(src.raw_data(), src.dtype(), dst.raw_data(), dst.dtype(), n);
    return;
  }
  std::vector<double> a(n), b(n);
  ConvertElements(src.raw_data(), src.dtype(), a.data(), DType::kFloat64, n);
  ConvertElements(dst.raw_data(), dst.dtype(), b.data(), DType::kFloat64, n);
  for (size_t i = 0; i < n; ++i) b[i] += a[i];
  ConvertElements(b.data(), DType::kFloat64, dst.raw_data(), dst.dtype(), n);
}

struct ClipParam : Parameter<ClipParam> {
  float a_min, a_max;
  static void Declare(ParamDeclarer<ClipParam>& d) {
    d.field("a_min", &ClipParam::a_min).describe("Minimum value");
    d.field("a_max", &ClipParam::a_max).describe("Maximum value");
    d.check([](const ClipParam& p) { return p.a_min <= p.a_max; },
            "clip: a_min must not exceed a_max", {"a_min", "a_max"});
  }
};

// Forward of zeros_like / ones_like: the output filled with `v`.
ForwardFn FillForward(float v) {
  return [v](const OpContext&, const NodeAttrs&, const std::vector<NDArray>&,
             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    MapWithReq(out[0].fdata(), out[0].Size(), req[0], [v](int64_t) { return v; });
  };
}
}  // namespace

SYMBIND_REGISTER_OP(Flatten)
    .add_alias("flatten")
    .describe("Flattens the input to 2-D: (d0, d1*d2*...).")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.ndim_known()) return;
      if (d.ndim() < 1) throw ShapeError("Flatten needs data of rank >= 1");
      ShapeAssignCheck(out, 0, TShape({d[0], KnownProduct(d, 1, d.ndim())}));
    })
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(Reshape)
    .add_alias("reshape")
    .describe("Reshapes the input array (special values 0, -1, -2, -3, -4; reverse).")
    .set_params<ReshapeParam>()
    .set_infer_shape(InferShapeReshape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(expand_dims)
    .describe("Inserts a new axis of size 1 into the array shape.")
    .set_params<ExpandDimParam>()
    .set_infer_shape(InferShapeExpandDims)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(squeeze)
    .describe("Removes single-dimensional entries from the shape of an array.")
    .set_params<SqueezeParam>()
    .set_infer_shape(InferShapeSqueeze)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(transpose)
    .describe("Permutes the dimensions of an array (reversed when axes is empty).")
    .set_params<TransposeParam>()
    .set_infer_shape(InferShapeTranspose)
    .set_forward(GatherForward(kTransposeMap))
    .set_backward(GatherBackward(kTransposeMap, true));

SYMBIND_REGISTER_OP(tile)
    .describe("Repeats the whole array multiple times.")
    .set_params<TileParam>()
    .set_infer_shape(InferShapeTile)
    .set_forward(GatherForward(kTileMap))
    .set_backward(GatherBackward(kTileMap, false));

SYMBIND_REGISTER_OP(repeat)
    .describe("Repeats each element of an array after itself (flattened when axis is None).")
    .set_params<RepeatParam>()
    .set_infer_shape(InferShapeRepeat)
    .set_forward(GatherForward(kRepeatMap))
    .set_backward(GatherBackward(kRepeatMap, false));

SYMBIND_REGISTER_OP(Cast)
    .add_alias("cast")
    .describe("Casts all elements of the input to a new type.")
    .set_params<CastParam>()
    .set_infer_shape(SameShapeInfer)
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(out, 0, attrs.param<CastParam>().dtype);
      (void)in;  // any input type
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      ConvertWithReq(out[0], in[0], req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      // The gradient is cast back to the input's type.
      ConvertWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
    });

SYMBIND_REGISTER_OP(BlockGrad)
    .add_alias("stop_gradient")
    .describe("Stops gradient computation: the output is the input, the gradient is zero.")
    .set_infer_shape(SameShapeInfer)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardZero);

SYMBIND_REGISTER_OP(_copy)
    .add_alias("identity")
    .add_alias("_copyto")  // MXNet's NDArray::CopyTo invokes it with the target as output
    .describe("Returns a copy of the input.")
    .set_infer_shape(SameShapeInfer)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(zeros_like)
    .describe("Returns an array of zeros with the same shape and type as the input.")
    .set_infer_shape(SameShapeInfer)
    .set_forward(FillForward(0.0f))
    .set_backward(BackwardZero);

SYMBIND_REGISTER_OP(ones_like)
    .describe("Returns an array of ones with the same shape and type as the input.")
    .set_infer_shape(SameShapeInfer)
    .set_forward(FillForward(1.0f))
    .set_backward(BackwardZero);

SYMBIND_REGISTER_OP(clip)
    .describe("Clips (limits) the values in an array to [a_min, a_max]; the gradient passes where "
              "a_min <= x <= a_max.")
    .set_params<ClipParam>()
    .set_infer_shape(SameShapeInfer)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<ClipParam>();
      const float* x = in[0].fdata();
      MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) {
        return x[i] > p.a_max ? p.a_max : (x[i] < p.a_min ? p.a_min : x[i]);
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<ClipParam>();
      const float* x = a.inputs[0].fdata();
      const float* g = a.out_grads[0].fdata();
      MapWithReq(a.in_grads[0].fdata(), a.in_grads[0].Size(), a.req[0], [&](int64_t i) {
        return x[i] > p.a_max || x[i] < p.a_min ? 0.0f : g[i];
      });
    });

}  // namespace symbind
