// Spatial ops on NCHW data: UpSampling (nearest / bilinear), Crop, Pad.
#include <algorithm>
#include <cmath>

#include <symbind/ops/shape_util.h>

namespace symbind {

namespace {
using shape_detail::ZeroWithReq;

// ---------------------------------------------------------------------------------------------
// UpSampling
enum UpSampleType { kNearest, kBilinear };
enum MultiInputMode { kConcat, kSum };

struct UpSamplingParam : Parameter<UpSamplingParam> {
  int scale;
  int num_filter;
  int sample_type;
  int multi_input_mode;
  int num_args;
  int64_t workspace;
  static void Declare(ParamDeclarer<UpSamplingParam>& d) {
    d.field("scale", &UpSamplingParam::scale).lower_bound(1).describe("Up sampling scale");
    d.field("num_filter", &UpSamplingParam::num_filter).set_default(0)
        .describe("Input filter. Only used by bilinear sample_type. Since bilinear upsampling "
                  "uses deconvolution, num_filters is set to the number of channels.");
    d.field("sample_type", &UpSamplingParam::sample_type)
        .add_enum("nearest", kNearest).add_enum("bilinear", kBilinear)
        .describe("upsampling method");
    d.field("multi_input_mode", &UpSamplingParam::multi_input_mode)
        .add_enum("concat", kConcat).add_enum("sum", kSum).set_default(kConcat)
        .describe("How to handle multiple input. concat means concatenate upsampled images along "
                  "the channel dimension. sum means add all images together, only available for "
                  "nearest neighbor upsampling.");
    d.field("num_args", &UpSamplingParam::num_args).lower_bound(1)
        .describe("Number of inputs to be upsampled. For nearest neighbor upsampling, this can be "
                  "1-N; the size of output will be(scale*h_0,scale*w_0) and all other inputs will "
                  "be upsampled to thesame size. For bilinear upsampling this must be 2; 1 input "
                  "and 1 weight.");
    d.field("workspace", &UpSamplingParam::workspace).set_default(512).lower_bound(0)
        .describe("Tmp workspace for deconvolution (MB)");
  }
};

// The deconvolution MXNet runs for bilinear upsampling: kernel 2s - s%2, stride s,
// pad ceil((s-1)/2), one group per channel, no bias.
struct BilinearGeom {
  int64_t kernel, stride, pad;
  explicit BilinearGeom(int s)
      : kernel(2 * s - s % 2), stride(s), pad(static_cast<int64_t>(std::ceil((s - 1) / 2.0))) {}
};

void InferShapeUpSampling(const NodeAttrs& attrs, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  const auto& p = attrs.param<UpSamplingParam>();
  const TShape& d = (*in)[0];
  if (p.sample_type == kNearest) {
    for (auto& s : *in) {
      if (!s.ndim_known()) return;
      if (s.ndim() != 4)
        throw ShapeError(StrCat("UpSamplingNearest: input data should be 4D in (batch, channel, "
                                "y, x), got ", s));
      if (!s.is_known()) return;
    }
    int64_t oh = CheckedMul(d[2], p.scale, "UpSampling: height ", d), ow = CheckedMul(d[3], p.scale, "UpSampling: width ", d);
    TShape o({d[0], 0, oh, ow});
    for (size_t i = 0; i < in->size(); ++i) {
      const TShape& s = (*in)[i];
      if (s[2] == 0 || s[3] == 0 || oh % s[2] != 0 || ow % s[3] != 0 || oh / s[2] != ow / s[3])
        throw ShapeError(StrCat("UpSamplingNearest: input ", i, " of shape ", s,
                                " cannot be upsampled by one integer scale to the output size (",
                                oh, ", ", ow, ")"));
      if (s[0] != d[0])
        throw ShapeError(StrCat("UpSamplingNearest: input ", i, " has batch size ", s[0],
                                ", expected ", d[0]));
      if (p.multi_input_mode == kSum) {
        if (i > 0 && o[1] != s[1])
          throw ShapeError(StrCat("UpSamplingNearest: number of channels must be the same when "
                                  "multi_input_mode==sum: input ", i, " has ", s[1], ", expected ",
                                  o[1]));
        o[1] = s[1];
      } else {
        o[1] = CheckedAdd(o[1], s[1], "UpSamplingNearest: channels");
      }
    }
    ShapeAssignCheck(out, 0, o);
    return;
  }
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("UpSamplingBilinear: input data should be 4D in (batch, channel, y, "
                            "x), got ", d));
  if (!d.is_known()) return;
  if (p.num_filter != d[1])
    throw ShapeError(StrCat("UpSamplingBilinear: num_filter must equal the number of channels: "
                            "num_filter=", p.num_filter, ", channels=", d[1]));
  BilinearGeom g(p.scale);
  ShapeAssignCheck(in, 1, TShape({d[1], 1, g.kernel, g.kernel}));
  ShapeAssignCheck(out, 0, TShape({d[0], d[1], CheckedMul(d[2], p.scale, "UpSampling: height ", d),
                                   CheckedMul(d[3], p.scale, "UpSampling: width ", d)}));
}

// Nearest: output plane (oh, ow) from an input plane (h, w) with factor f.
void NearestForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<UpSamplingParam>();
  if (req[0] == OpReq::kNull) return;
  const TShape& os = out[0].shape();
  int64_t N = os[0], OC = os[1], OH = os[2], OW = os[3];
  float* y = out[0].fdata();
  // Every output element is a function of the inputs; build it per (n, oc) plane.
  // Sum mode adds every input; concat mode picks the input owning channel oc.
  std::vector<int64_t> chan_begin(in.size() + 1, 0);
  for (size_t i = 0; i < in.size(); ++i)
    chan_begin[i + 1] = chan_begin[i] + (p.multi_input_mode == kSum ? 0 : in[i].shape()[1]);
  ParallelFor(N * OC, std::max<int64_t>(1, kElementwiseGrain / (OH * OW)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      int64_t n = plane / OC, oc = plane % OC;
      float* dst = y + plane * OH * OW;
      for (int64_t k = 0; k < OH * OW; ++k) {
        int64_t oy = k / OW, ox = k % OW;
        float v = 0.0f;
        for (size_t i = 0; i < in.size(); ++i) {
          const TShape& s = in[i].shape();
          int64_t c;
          if (p.multi_input_mode == kSum) {
            c = oc;
          } else {
            if (oc < chan_begin[i] || oc >= chan_begin[i + 1]) continue;
            c = oc - chan_begin[i];
          }
          int64_t f = OH / s[2];
          v += in[i].fdata()[((n * s[1] + c) * s[2] + oy / f) * s[3] + ox / f];
        }
        if (req[0] == OpReq::kAdd) dst[k] += v;
        else dst[k] = v;
      }
    }
  });
}

void NearestBackward(const UpSamplingParam& p, const BackwardArgs& a) {
  const NDArray& g = a.out_grads[0];
  const TShape& os = g.shape();
  int64_t OC = os[1], OH = os[2], OW = os[3];
  const float* gy = g.fdata();
  int64_t cbegin = 0;
  for (size_t i = 0; i < a.in_grads.size(); ++i) {
    const TShape& s = a.inputs[i].shape();
    int64_t C = s[1], H = s[2], W = s[3], f = OH / H;
    int64_t coff = p.multi_input_mode == kSum ? 0 : cbegin;
    cbegin += C;
    if (a.req[i] == OpReq::kNull) continue;
    float* gx = a.in_grads[i].fdata();
    OpReq r = a.req[i];
    ParallelFor(s[0] * C, std::max<int64_t>(1, kElementwiseGrain / (OH * OW)), [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        int64_t n = plane / C, c = plane % C;
        const float* src = gy + (n * OC + c + coff) * OH * OW;
        for (int64_t y = 0; y < H; ++y)
          for (int64_t x = 0; x < W; ++x) {
            float acc = 0.0f;
            for (int64_t dy = 0; dy < f; ++dy)
              for (int64_t dx = 0; dx < f; ++dx) acc += src[(y * f + dy) * OW + x * f + dx];
            float& dst = gx[plane * H * W + y * W + x];
            dst = r == OpReq::kAdd ? dst + acc : acc;
          }
      }
    });
  }
}

// Bilinear = grouped transposed convolution, one group per channel:
// out[n,c,y*s-p+ky, x*s-p+kx] += data[n,c,y,x] * w[c,0,ky,kx]. Computed as a gather per output
// element so the planes can run in parallel.
void BilinearForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<UpSamplingParam>();
  if (req[0] == OpReq::kNull) return;
  BilinearGeom g(p.scale);
  const TShape& s = in[0].shape();
  int64_t C = s[1], H = s[2], W = s[3], OH = out[0].shape()[2], OW = out[0].shape()[3];
  const float* x = in[0].fdata();
  const float* w = in[1].fdata();
  float* y = out[0].fdata();
  int64_t K = g.kernel, S = g.stride, P = g.pad;
  ParallelFor(s[0] * C, std::max<int64_t>(1, kElementwiseGrain / (OH * OW * 4)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      int64_t c = plane % C;
      const float* xp = x + plane * H * W;
      const float* wp = w + c * K * K;
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          float acc = 0.0f;
          for (int64_t ky = (oy + P) % S; ky < K; ky += S) {
            int64_t iy = (oy + P - ky) / S;
            if (iy < 0 || iy >= H) continue;
            for (int64_t kx = (ox + P) % S; kx < K; kx += S) {
              int64_t ix = (ox + P - kx) / S;
              if (ix < 0 || ix >= W) continue;
              acc += xp[iy * W + ix] * wp[ky * K + kx];
            }
          }
          float& dst = y[plane * OH * OW + oy * OW + ox];
          dst = req[0] == OpReq::kAdd ? dst + acc : acc;
        }
    }
  });
}

void BilinearBackward(const UpSamplingParam& p, const BackwardArgs& a) {
  BilinearGeom g(p.scale);
  const TShape& s = a.inputs[0].shape();
  int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  const TShape& os = a.out_grads[0].shape();
  int64_t OH = os[2], OW = os[3], K = g.kernel, S = g.stride, P = g.pad;
  const float* gy = a.out_grads[0].fdata();
  const float* x = a.inputs[0].fdata();
  const float* w = a.inputs[1].fdata();
  if (a.req[0] != OpReq::kNull) {
    float* gx = a.in_grads[0].fdata();
    OpReq r = a.req[0];
    ParallelFor(N * C, std::max<int64_t>(1, kElementwiseGrain / (OH * OW * 4)), [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const float* wp = w + (plane % C) * K * K;
        const float* gp = gy + plane * OH * OW;
        for (int64_t iy = 0; iy < H; ++iy)
          for (int64_t ix = 0; ix < W; ++ix) {
            float acc = 0.0f;
            for (int64_t ky = 0; ky < K; ++ky) {
              int64_t oy = iy * S - P + ky;
              if (oy < 0 || oy >= OH) continue;
              for (int64_t kx = 0; kx < K; ++kx) {
                int64_t ox = ix * S - P + kx;
                if (ox >= 0 && ox < OW) acc += gp[oy * OW + ox] * wp[ky * K + kx];
              }
            }
            float& dst = gx[plane * H * W + iy * W + ix];
            dst = r == OpReq::kAdd ? dst + acc : acc;
          }
      }
    });
  }
  if (a.req[1] != OpReq::kNull) {
    float* gw = a.in_grads[1].fdata();
    OpReq r = a.req[1];
    // One task per (channel, kernel tap): sums over batch and positions in a fixed order.
    ParallelFor(C * K * K, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        int64_t c = t / (K * K), ky = (t / K) % K, kx = t % K;
        double acc = 0.0;
        for (int64_t n = 0; n < N; ++n) {
          const float* xp = x + (n * C + c) * H * W;
          const float* gp = gy + (n * C + c) * OH * OW;
          for (int64_t iy = 0; iy < H; ++iy) {
            int64_t oy = iy * S - P + ky;
            if (oy < 0 || oy >= OH) continue;
            for (int64_t ix = 0; ix < W; ++ix) {
              int64_t ox = ix * S - P + kx;
              if (ox >= 0 && ox < OW) acc += static_cast<double>(xp[iy * W + ix]) * gp[oy * OW + ox];
            }
          }
        }
        float v = static_cast<float>(acc);
        gw[t] = r == OpReq::kAdd ? gw[t] + v : v;
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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
    d.field("constant_value", &PadParam::constant_value).set_default(0.0)
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

SYMBIND_REGISTER_OP(UpSampling)
    .describe("Upsamples the given input data (nearest neighbour, or bilinear through a grouped "
              "deconvolution with a given kernel).")
    .set_params<UpSamplingParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      const auto& p = a.param<UpSamplingParam>();
      if (p.sample_type == kBilinear) return std::vector<std::string>{"data", "weight"};
      std::vector<std::string> names;
      for (int i = 0; i < p.num_args; ++i) names.push_back("arg" + std::to_string(i));
      return names;
    })
    .set_infer_shape(InferShapeUpSampling)
    .set_forward([](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (attrs.param<UpSamplingParam>().sample_type == kNearest) NearestForward(ctx, attrs, in, req, out);
      else BilinearForward(ctx, attrs, in, req, out);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<UpSamplingParam>();
      if (p.sample_type == kNearest) NearestBackward(p, a);
      else BilinearBackward(p, a);
    });

SYMBIND_REGISTER_OP(Crop)
    .describe("Crops the 2nd and 3rd dim of input data to h_w, or to the spatial size of a "
              "second input (crop_like). Deprecated in MXNet in favour of slice.")
    .set_params<CropParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      // MXNet names them arg0 (data) and arg1 (crop_like).
      std::vector<std::string> names;
      for (int i = 0; i < a.param<CropParam>().num_args; ++i) names.push_back("arg" + std::to_string(i));
      return names;
    })
    .set_infer_shape(InferShapeCrop)
    .set_forward(CropForward)
    .set_backward(CropBackward);

SYMBIND_REGISTER_OP(Pad)
    .add_alias("pad")
    .describe("Pads an input array (4-D or 5-D, spatial axes only) with a constant, its edge "
              "values or its reflection.")
    .set_params<PadParam>()
    .set_infer_shape(InferShapePad)
    .set_forward(PadForward)
    .set_backward(PadBackward);

}  // namespace symbind
