// Pad: pads the spatial axes of a 4-D or 5-D array (constant, edge or reflect).
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// Pad
enum PadMode { kPadConstant, kPadEdge, kPadReflect };

struct PadParam : Parameter<PadParam> {
  int mode;
  TShape pad_width;
  double constant_value;
  static void Declare(ParamDeclarer<PadParam>& d) {
    d.field("mode", &PadParam::mode)
        .add_enum("constant", kPadConstant).add_enum("edge", kPadEdge)
        .add_enum("reflect", kPadReflect)
        .describe("Padding type to use. \"constant\" pads with `constant_value` \"edge\" pads using "
                  "the edge values of the input array \"reflect\" pads by reflecting values with "
                  "respect to the edges.");
    d.field("pad_width", &PadParam::pad_width)
        .describe("Widths of the padding regions applied to the edges of each axis. It is a tuple "
                  "of integer padding widths for each axis of the format ``(before_1, after_1, ... "
                  ", before_N, after_N)``. It should be of length ``2*N`` where ``N`` is the number "
                  "of dimensions of the array.This is equivalent to pad_width in numpy.pad, but "
                  "flattened.");
    d.field("constant_value", &PadParam::constant_value).set_default(0.0).allow_non_finite()
        .describe("The value used for padding when `mode` is \"constant\".");
  }
};

void InferShapePad(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<PadParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  int rank = d.ndim();
  if (rank != 4 && rank != 5)
    throw ShapeError(StrCat("Pad: only 4-D or 5-D input is supported, got ", d));
  if (p.pad_width.ndim() != 2 * rank)
    throw ShapeError(StrCat("Pad: input shape vs padding spec mismatch: pad_width ", p.pad_width,
                            " has ", p.pad_width.ndim(), " entries, expected ", 2 * rank));
  for (int i = 0; i < 4; ++i)
    if (p.pad_width[i] != 0)
      throw ShapeError(StrCat("Pad: padding on the first two axes (N, C) must be zero, got "
                              "pad_width ", p.pad_width));
  TShape o = d;
  for (int i = 0; i < rank; ++i) {
    int64_t before = p.pad_width[2 * i], after = p.pad_width[2 * i + 1];
    if (before < 0 || after < 0)
      throw ShapeError(StrCat("Pad: pad widths must be non-negative, got ", p.pad_width));
    if (i >= 2 && p.mode == kPadReflect && d[i] >= 0 && (before >= d[i] || after >= d[i]))
      throw ShapeError(StrCat("Pad: reflection padding only supports padding sizes smaller than "
                              "the input size: axis ", i, " has size ", d[i], ", pad_width ",
                              p.pad_width));
    if (i >= 2 && p.mode == kPadEdge && d[i] == 0 && before + after > 0)
      throw ShapeError(StrCat("Pad: edge padding of an empty axis ", i));
    o[i] = d[i] < 0 ? -1
                    : CheckedAdd(CheckedAdd(d[i], before, "Pad: axis ", i, " of ", d, " with pad_width ",
                                            p.pad_width.ToStringAsWritten()),
                                 after, "Pad: axis ", i, " of ", d, " with pad_width ",
                                 p.pad_width.ToStringAsWritten());
  }
  ShapeAssignCheck(out, 0, o);
}

// Source index along one axis of size n for output position j with `before` padding,
// or -1 for the constant fill.
inline int64_t PadSource(int mode, int64_t j, int64_t before, int64_t n) {
  int64_t i = j - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case kPadEdge: return i < 0 ? 0 : n - 1;
    case kPadReflect: return i < 0 ? -i : 2 * (n - 1) - i;
    default: return -1;
  }
}

// Spatial geometry of a padded 4-D/5-D array as (D, H, W) planes (D = 1 for 4-D).
struct PadGeom {
  int64_t planes, D, H, W, OD, OH, OW, bd, bh, bw;
  PadGeom(const TShape& in, const TShape& pw) {
    bool five = in.ndim() == 5;
    planes = in[0] * in[1];
    D = five ? in[2] : 1;
    H = in[in.ndim() - 2];
    W = in[in.ndim() - 1];
    bd = five ? pw[4] : 0;
    bh = pw[2 * in.ndim() - 4];
    bw = pw[2 * in.ndim() - 2];
    OD = five ? D + pw[4] + pw[5] : 1;
    OH = H + pw[2 * in.ndim() - 4] + pw[2 * in.ndim() - 3];
    OW = W + pw[2 * in.ndim() - 2] + pw[2 * in.ndim() - 1];
  }
  // The flat source offset within a plane for output (z, y, x), or -1.
  int64_t Source(int mode, int64_t z, int64_t y, int64_t x) const {
    int64_t sz = PadSource(mode, z, bd, D), sy = PadSource(mode, y, bh, H),
            sx = PadSource(mode, x, bw, W);
    if (sz < 0 || sy < 0 || sx < 0) return -1;
    return (sz * H + sy) * W + sx;
  }
};

void PadForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<PadParam>();
  if (req[0] == OpReq::kNull) return;
  PadGeom g(in[0].shape(), p.pad_width);
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  float cval = static_cast<float>(p.constant_value);
  int64_t osize = g.OD * g.OH * g.OW, isize = g.D * g.H * g.W;
  ParallelFor(g.planes, std::max<int64_t>(1, kElementwiseGrain / (osize + 1)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const float* src = x + plane * isize;
      float* dst = y + plane * osize;
      for (int64_t k = 0; k < osize; ++k) {
        int64_t s = g.Source(p.mode, k / (g.OH * g.OW), (k / g.OW) % g.OH, k % g.OW);
        float v = s < 0 ? cval : src[s];
        dst[k] = req[0] == OpReq::kAdd ? dst[k] + v : v;
      }
    }
  });
}

// Every output position sends its gradient to its source (edge and reflect accumulate).
void PadBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<PadParam>();
  if (a.req[0] == OpReq::kNull) return;
  PadGeom g(a.inputs[0].shape(), p.pad_width);
  const float* gy = a.out_grads[0].fdata();
  float* gx = a.in_grads[0].fdata();
  int64_t osize = g.OD * g.OH * g.OW, isize = g.D * g.H * g.W;
  OpReq r = a.req[0];
  ParallelFor(g.planes, std::max<int64_t>(1, kElementwiseGrain / (osize + 1)), [&](int64_t b, int64_t e) {
    std::vector<float> acc(static_cast<size_t>(isize));
    for (int64_t plane = b; plane < e; ++plane) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      const float* src = gy + plane * osize;
      for (int64_t k = 0; k < osize; ++k) {
        int64_t s = g.Source(p.mode, k / (g.OH * g.OW), (k / g.OW) % g.OH, k % g.OW);
        if (s >= 0) acc[static_cast<size_t>(s)] += src[k];
      }
      float* dst = gx + plane * isize;
      for (int64_t i = 0; i < isize; ++i) dst[i] = r == OpReq::kAdd ? dst[i] + acc[i] : acc[i];
    }
  });
}

}  // namespace

SYMBIND_REGISTER_OP(Pad)
    .add_alias("pad")
    .describe("Pads an input array (4-D or 5-D, spatial axes only) with a constant, its edge "
              "values or its reflection.")
    .set_params<PadParam>()
    .set_infer_shape(InferShapePad)
    .set_forward(PadForward)
    .set_backward(PadBackward);

}  // namespace symbind
