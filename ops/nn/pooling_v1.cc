// Pooling_v1: MXNet's legacy 2-D pooling, found in old model files. Its arithmetic differs from
// Pooling's, so it has its own kernel:
// - padding is zeros for every pool type, so a max-pooling window reaching into the padding
//   takes max(0, ...);
// - windows are clipped to the padded input; avg divides by the full kernel area (the whole
//   input for global_pool), even where a 'full' window overhangs;
// - max-pooling gradients go to every input equal to the window's maximum (ties included).
// MXNet's v1 forward supports 2-D (NCHW) only; so does this one.
#include <algorithm>
#include <cmath>
#include <limits>

#include <symbind/ops/nn/conv_util.h>

namespace symbind {

namespace {
using namespace conv;

struct PoolingV1Param : Parameter<PoolingV1Param> {
  TShape kernel, stride, pad;
  int pool_type;
  int pooling_convention;
  bool global_pool;
  static void Declare(ParamDeclarer<PoolingV1Param>& d) {
    const TShape empty(std::vector<int64_t>{});
    d.field("kernel", &PoolingV1Param::kernel).set_default(empty)
        .describe("pooling kernel size: (y, x) or (d, y, x)");
    DeclarePoolTypeAndGlobalPool(d, /*with_lp=*/false);
    DeclarePoolingConvention(d, /*with_same=*/false);
    d.field("stride", &PoolingV1Param::stride).set_default(empty)
        .describe("stride: for pooling (y, x) or (d, y, x)");
    d.field("pad", &PoolingV1Param::pad).set_default(empty).describe("pad for pooling: (y, x) or (d, y, x)");
  }
  // Stride defaults to 1s and pad to 0s; the kernel may be omitted for global pooling.
  static PoolingV1Param Parse(const KwArgs& kw) {
    PoolingV1Param p = Parameter<PoolingV1Param>::Parse(kw);
    if (p.global_pool) return p;
    if (p.kernel.ndim() == 0) throw ParamError("Pooling_v1: kernel is required unless global_pool is set");
    NormalizeSpatialParams("Pooling_v1", &p.kernel, &p.stride, nullptr, &p.pad);
    if (p.kernel.ndim() != 2)
      throw ParamError(StrCat("Pooling_v1: only 2-D kernels (y, x) are implemented (as in MXNet's v1), got kernel ",
                              p.kernel));
    return p;
  }
};

const PoolingV1Param& P(const NodeAttrs& a) { return a.param<PoolingV1Param>(); }

// Window geometry on one (H, W) plane, in padded coordinates.
struct WindowsV1 {
  int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw;
  // Window (oy, ox) covers padded rows [y0, y1) and columns [x0, x1).
  int64_t y0(int64_t oy) const { return oy * sh; }
  int64_t y1(int64_t oy) const { return std::min(oy * sh + kh, H + 2 * ph); }
  int64_t x0(int64_t ox) const { return ox * sw; }
  int64_t x1(int64_t ox) const { return std::min(ox * sw + kw, W + 2 * pw); }
};

WindowsV1 Windows(const PoolingV1Param& p, const TShape& d, const TShape& o) {
  if (p.global_pool) return {d[2], d[3], o[2], o[3], d[2], d[3], 1, 1, 0, 0};
  return {d[2], d[3], o[2], o[3], p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.pad[0], p.pad[1]};
}

void InferPoolingV1Shape(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = P(attrs);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("Pooling_v1: input data should be 4D in (batch, channel, y, x), got ", d));
  TShape o = d;
  if (p.global_pool) {
    o[2] = o[3] = 1;
  } else {
    for (int i = 0; i < 2; ++i) {
      if (d[2 + i] < 0) continue;
      const int64_t padded = PaddedSize("Pooling_v1", d[2 + i], p.pad[i], i);
      if (p.kernel[i] > padded)
        throw ShapeError(StrCat("Pooling_v1: kernel size (", p.kernel[i], ") exceeds input (", d[2 + i],
                                " padded to ", padded, ") in spatial dim ", i, "; data shape ", d));
      const int64_t span = padded - p.kernel[i];
      // Ceiling division written as (a - 1) / s + 1 so a huge stride cannot overflow.
      o[2 + i] = 1 + (p.pooling_convention == kValid || span == 0 ? span / p.stride[i]
                                                                  : (span - 1) / p.stride[i] + 1);
      CheckWindowEnd("Pooling_v1", o[2 + i], p.stride[i], p.kernel[i], i);
    }
  }
  ShapeAssignCheck(out, 0, o);
}

// The input value at padded position (py, px): zero in the padding.
inline float PaddedAt(const float* plane, const WindowsV1& g, int64_t py, int64_t px) {
  const int64_t y = py - g.ph, x = px - g.pw;
  return y >= 0 && y < g.H && x >= 0 && x < g.W ? plane[y * g.W + x] : 0.0f;
}

float PoolWindow(const float* plane, const WindowsV1& g, int type, int64_t oy, int64_t ox) {
  float acc = type == kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t py = g.y0(oy); py < g.y1(oy); ++py)
    for (int64_t px = g.x0(ox); px < g.x1(ox); ++px) {
      const float v = PaddedAt(plane, g, py, px);
      acc = type == kMax ? std::max(acc, v) : acc + v;
    }
  return type == kAvg ? acc / static_cast<float>(g.kh * g.kw) : acc;
}

void ForwardPoolingV1(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = P(attrs);
  const WindowsV1 g = Windows(p, in[0].shape(), out[0].shape());
  const float* x = in[0].fdata();
  const int64_t isize = g.H * g.W, osize = g.OH * g.OW;
  MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) {
    const int64_t plane = i / osize, r = i % osize;
    return PoolWindow(x + plane * isize, g, p.pool_type, r / g.OW, r % g.OW);
  });
}

void BackwardPoolingV1(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const auto& p = P(attrs);
  const WindowsV1 g = Windows(p, a.inputs[0].shape(), a.out_grads[0].shape());
  const float *x = a.inputs[0].fdata(), *y = a.outputs[0].fdata(), *dy = a.out_grads[0].fdata();
  const int64_t isize = g.H * g.W, osize = g.OH * g.OW, planes = a.inputs[0].Size() / std::max<int64_t>(isize, 1);
  std::vector<float> dx(static_cast<size_t>(a.inputs[0].Size()), 0.0f);
  const float avg_scale = 1.0f / static_cast<float>(g.kh * g.kw);
  ParallelFor(planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      const float* xp = x + n * isize;
      float* gp = dx.data() + n * isize;
      for (int64_t oy = 0; oy < g.OH; ++oy)
        for (int64_t ox = 0; ox < g.OW; ++ox) {
          const int64_t o = n * osize + oy * g.OW + ox;
          const float share = p.pool_type == kAvg ? dy[o] * avg_scale : dy[o];
          for (int64_t py = std::max(g.y0(oy), g.ph); py < std::min(g.y1(oy), g.ph + g.H); ++py)
            for (int64_t px = std::max(g.x0(ox), g.pw); px < std::min(g.x1(ox), g.pw + g.W); ++px) {
              const int64_t k = (py - g.ph) * g.W + (px - g.pw);
              if (p.pool_type != kMax || xp[k] == y[o]) gp[k] += share;
            }
        }
    }
  });
  MapWithReq(InGradOrNull(a, 0), a.inputs[0].Size(), a.req[0], [&](int64_t i) { return dx[static_cast<size_t>(i)]; });
}
}  // namespace

SYMBIND_REGISTER_OP(Pooling_v1)
    .describe(R"(Legacy 2-D pooling (MXNet's Pooling_v1) of NCHW input: max, avg or sum.

Output sizes: valid: floor((x+2*p-k)/s)+1; full: ceil((x+2*p-k)/s)+1; global_pool pools the
whole plane. Padding is zeros for every pool type (max pooling sees them); avg divides by the
kernel area.)")
    .set_params<PoolingV1Param>()
    .set_infer_shape(InferPoolingV1Shape)
    .set_forward(ForwardPoolingV1)
    .set_backward(BackwardPoolingV1);

}  // namespace symbind
