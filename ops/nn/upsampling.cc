// UpSampling of NCHW data: nearest (any number of inputs, concatenated or summed) and bilinear
// (a per-channel transposed convolution with a learnable weight, as MXNet runs it).
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

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
    d.field("num_args", &UpSamplingParam::num_args).set_range(1, Graph::kMaxNodeOutputs)
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
  // One input per output plane (concat mode, or a single input) written, not added: each input
  // row becomes one output row of f-fold repeated values, copied f - 1 times (the general loop
  // below divides twice per element, a noticeable share of RetinaFace-MobileNet's time).
  const bool one_source = req[0] == OpReq::kWrite && (p.multi_input_mode != kSum || in.size() == 1);
  ParallelFor(N * OC, std::max<int64_t>(1, kElementwiseGrain / (OH * OW)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      int64_t n = plane / OC, oc = plane % OC;
      float* dst = y + plane * OH * OW;
      if (one_source) {
        size_t i = 0;
        while (oc >= chan_begin[i + 1] && i + 1 < in.size()) ++i;
        const TShape& s = in[i].shape();
        const int64_t H = s[2], W = s[3], f = OH / H;
        const float* src = in[i].fdata() + ((n * s[1] + oc - chan_begin[i]) * H) * W;
        for (int64_t iy = 0; iy < H; ++iy, src += W) {
          float* row = dst + iy * f * OW;
          for (int64_t x = 0; x < W; ++x) std::fill_n(row + x * f, f, src[x]);
          for (int64_t dy = 1; dy < f; ++dy) std::copy_n(row, OW, row + dy * OW);
        }
        continue;
      }
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

}  // namespace

SYMBIND_REGISTER_OP(UpSampling)
    .describe("Upsamples the given input data (nearest neighbour, or bilinear through a grouped "
              "deconvolution with a given kernel).")
    .set_params<UpSamplingParam>()
    .set_key_var_num_args("num_args")
    .set_arguments([](const NodeAttrs& a) {
      const auto& p = a.param<UpSamplingParam>();
      if (p.sample_type == kBilinear) return std::vector<std::string>{"data", "weight"};
      return NumberedNames("arg", p.num_args);
    })
    .set_input_initializer("weight", R"(["bilinear", {}])")
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

}  // namespace symbind
