// Flatten, Reshape, expand_dims and squeeze: the same bytes under a new shape (the output is a
// copy, or the input itself when the executor runs it in place).
#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

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

}  // namespace

SYMBIND_REGISTER_OP(Flatten)
    .set_monitor_numbered_inputs()
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
    .set_monitor_numbered_inputs()
    .add_alias("reshape")
    .describe("Reshapes the input array (special values 0, -1, -2, -3, -4; reverse).")
    .set_params<ReshapeParam>()
    .set_infer_shape(InferShapeReshape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

SYMBIND_REGISTER_OP(expand_dims)
    .set_monitor_numbered_inputs()
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

}  // namespace symbind
