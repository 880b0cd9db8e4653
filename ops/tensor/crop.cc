// Crop: cuts a (h, w) window out of every NCHW plane, sized by h_w or by a second input.
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// Crop
struct CropParam : Parameter<CropParam> {
  int num_args;
  TShape offset;
  TShape h_w;
  bool center_crop;
  static void Declare(ParamDeclarer<CropParam>& d) {
    d.field("num_args", &CropParam::num_args).set_range(1, 3)
        .describe("Number of inputs for crop, if equals one, then we will use the h_wfor crop "
                  "height and width, else if equals two, then we will use the heightand width of "
                  "the second input symbol, we name crop_like here");
    d.field("offset", &CropParam::offset).set_default(TShape({0, 0}))
        .describe("crop offset coordinate: (y, x)");
    d.field("h_w", &CropParam::h_w).set_default(TShape({0, 0}))
        .describe("crop height and width: (h, w)");
    d.field("center_crop", &CropParam::center_crop).set_default(false)
        .describe("If set to true, then it will use be the center_crop,or it will crop using the "
                  "shape of crop_like");
  }
};

// (y, x) offset of the crop window (MXNet: floor((H-h)/2) when centred, else `offset`).
std::pair<int64_t, int64_t> CropOffset(const CropParam& p, const TShape& d, int64_t h, int64_t w) {
  if (h > d[2] || w > d[3])
    throw ShapeError(StrCat("Crop: the crop size (", h, ", ", w, ") exceeds the input's spatial "
                            "size (", d[2], ", ", d[3], ")"));
  if (p.center_crop) return {(d[2] - h) / 2, (d[3] - w) / 2};
  if (p.offset.ndim() != 2)
    throw ShapeError(StrCat("Crop: offset must have 2 entries (y, x), got ", p.offset));
  if (p.offset[0] < 0 || p.offset[0] > d[2] - h || p.offset[1] < 0 || p.offset[1] > d[3] - w)
    throw ShapeError(StrCat("Crop: offset ", p.offset, " does not fit: with input (", d[2], ", ",
                            d[3], ") and crop (", h, ", ", w, ") it must lie in [0, ", d[2] - h,
                            "] x [0, ", d[3] - w, "]"));
  return {p.offset[0], p.offset[1]};
}

void InferShapeCrop(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<CropParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("Crop: input data should be 4D in batch-num_filter-y-x, got ", d));
  int64_t h, w;
  if (p.num_args == 1) {
    if (p.h_w.ndim() != 2)
      throw ShapeError(StrCat("Crop: h_w must have 2 entries (h, w), got ", p.h_w));
    h = p.h_w[0];
    w = p.h_w[1];
    if (h < 1 || w < 1)
      throw ShapeError(StrCat("Crop: with num_args=1 the crop size h_w must be at least (1, 1), "
                              "got ", p.h_w));
  } else if (p.num_args == 2) {
    const TShape& like = (*in)[1];
    if (!like.ndim_known()) return;
    if (like.ndim() < 4)
      throw ShapeError(StrCat("Crop: crop_like should be 4D in batch-num_filter-y-x, got ", like));
    h = like[2];
    w = like[3];
  } else {
    return;  // MXNet accepts num_args=3 but cannot infer a shape for it
  }
  TShape o = d;
  o[2] = h;
  o[3] = w;
  if (d.is_known() && h >= 0 && w >= 0) CropOffset(p, d, h, w);
  ShapeAssignCheck(out, 0, o);
}

// Copies a (h, w) window at (oy, ox) of every (H, W) plane: forward (big -> small) or, for
// the gradient, back into the window (small -> big, added or written).
void CropForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const TShape& d = in[0].shape();
  const TShape& o = out[0].shape();
  const auto oy_ox = CropOffset(attrs.param<CropParam>(), d, o[2], o[3]);
  const auto oy = oy_ox.first;
  const auto ox = oy_ox.second;
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  int64_t H = d[2], W = d[3], h = o[2], w = o[3];
  ParallelFor(d[0] * d[1], std::max<int64_t>(1, kElementwiseGrain / (h * w + 1)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane)
      for (int64_t i = 0; i < h; ++i) {
        const float* src = x + plane * H * W + (i + oy) * W + ox;
        float* dst = y + plane * h * w + i * w;
        for (int64_t j = 0; j < w; ++j) dst[j] = req[0] == OpReq::kAdd ? dst[j] + src[j] : src[j];
      }
  });
}

void CropBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<CropParam>();
  // crop_like only lends its shape: its gradient is zero.
  if (p.num_args > 1)
    for (size_t i = 1; i < a.in_grads.size(); ++i) ZeroWithReq(a.in_grads[i], a.req[i]);
  if (a.req[0] == OpReq::kNull) return;
  const TShape& d = a.inputs[0].shape();
  const TShape& o = a.out_grads[0].shape();
  const auto oy_ox = CropOffset(p, d, o[2], o[3]);
  const auto oy = oy_ox.first;
  const auto ox = oy_ox.second;
  ZeroWithReq(a.in_grads[0], a.req[0]);
  const float* g = a.out_grads[0].fdata();
  float* gx = a.in_grads[0].fdata();
  int64_t H = d[2], W = d[3], h = o[2], w = o[3];
  ParallelFor(d[0] * d[1], std::max<int64_t>(1, kElementwiseGrain / (h * w + 1)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane)
      for (int64_t i = 0; i < h; ++i) {
        float* dst = gx + plane * H * W + (i + oy) * W + ox;
        const float* src = g + plane * h * w + i * w;
        for (int64_t j = 0; j < w; ++j) dst[j] += src[j];
      }
  });
}

}  // namespace

SYMBIND_REGISTER_OP(Crop)
    .describe("Crops the 2nd and 3rd dim of input data to h_w, or to the spatial size of a "
              "second input (crop_like). Deprecated in MXNet in favour of slice.")
    .set_params<CropParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      // MXNet names them arg0 (data) and arg1 (crop_like).
      return NumberedNames("arg", a.param<CropParam>().num_args);
    })
    .set_infer_shape(InferShapeCrop)
    .set_forward(CropForward)
    .set_backward(CropBackward);

}  // namespace symbind
