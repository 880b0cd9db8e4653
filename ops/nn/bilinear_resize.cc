// _contrib_BilinearResize2D (MXNet 1.9.1's contrib/bilinear_resize): bilinear resampling of
// NCHW input to a new height and width. With align_corners (the default) the corner pixels'
// centres map onto each other, src = dst * (in - 1) / (out - 1); without, src = (dst + 0.5) *
// in / out - 0.5 clamped at 0. The upper neighbour is clamped to the last row / column. Same
// size copies. mode='like' takes the size from a second input `like`, which gets a zero
// gradient. MXNet's quirk in mode 'size' is kept: scale_width is used only when scale_height
// is given.
#include <algorithm>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
enum ResizeMode { kSize, kOddScale, kLike, kToEvenDown, kToEvenUp, kToOddDown, kToOddUp };

struct BilinearResizeParam : Parameter<BilinearResizeParam> {
  int height;
  int width;
  std::optional<float> scale_height;
  std::optional<float> scale_width;
  int mode;
  bool align_corners;
  static void Declare(ParamDeclarer<BilinearResizeParam>& d) {
    d.field("height", &BilinearResizeParam::height).set_default(1).lower_bound(1)
        .describe("output height (required, but ignored if scale_height is defined or mode is "
                  "not \"size\")");
    d.field("width", &BilinearResizeParam::width).set_default(1).lower_bound(1)
        .describe("output width (required, but ignored if scale_width is defined or mode is not "
                  "\"size\")");
    d.field("scale_height", &BilinearResizeParam::scale_height).set_default(std::nullopt)
        .describe("sampling scale of the height (optional, used in modes \"scale\" and "
                  "\"odd_scale\")");
    d.field("scale_width", &BilinearResizeParam::scale_width).set_default(std::nullopt)
        .describe("sampling scale of the width (optional, used in modes \"scale\" and "
                  "\"odd_scale\")");
    d.field("mode", &BilinearResizeParam::mode)
        .add_enum("size", kSize).add_enum("odd_scale", kOddScale).add_enum("like", kLike)
        .add_enum("to_even_down", kToEvenDown).add_enum("to_even_up", kToEvenUp)
        .add_enum("to_odd_down", kToOddDown).add_enum("to_odd_up", kToOddUp)
        .set_default(kSize)
        .describe("resizing mode. \"size\": height and width, or the input's size times "
                  "scale_height / scale_width; \"odd_scale\": an odd size s becomes "
                  "(s - 1) * scale + 1, an even one s * scale; \"like\": the height and width of "
                  "the second input; \"to_even_down\", \"to_even_up\", \"to_odd_down\", "
                  "\"to_odd_up\": the nearest even or odd size below or above (unchanged when "
                  "already even or odd).");
    d.field("align_corners", &BilinearResizeParam::align_corners).set_default(true)
        .describe("With align_corners = True, the interpolating doesn't proportionally align the "
                  "output and input pixels, and thus the output values can depend on the input "
                  "size.");
  }
};

const char* const kOp = "_contrib_BilinearResize2D";

float RequiredScale(const std::optional<float>& s, const char* name, const char* mode) {
  if (!s) throw ShapeError(StrCat(kOp, ": mode '", mode, "' needs ", name));
  return *s;
}

// The output size of one spatial axis of input size n (-1 when n is unknown).
int64_t ResizedDim(const BilinearResizeParam& p, int64_t n, bool is_height) {
  const std::optional<float>& scale = is_height ? p.scale_height : p.scale_width;
  const char* scale_name = is_height ? "scale_height" : "scale_width";
  switch (p.mode) {
    case kSize:
      if (!p.scale_height) return is_height ? p.height : p.width;
      if (n < 0) return -1;
      return static_cast<int>(RequiredScale(scale, scale_name, "size") * static_cast<float>(n));
    case kOddScale: {
      float s = RequiredScale(scale, scale_name, "odd_scale");
      if (n < 0) return -1;
      return n % 2 == 0 ? static_cast<int>(static_cast<float>(n) * s)
                        : static_cast<int>(static_cast<float>(n - 1) * s) + 1;
    }
    case kToEvenDown: return n < 0 ? -1 : (n % 2 == 0 ? n : n - 1);
    case kToEvenUp: return n < 0 ? -1 : (n % 2 == 0 ? n : n + 1);
    case kToOddDown: return n < 0 ? -1 : (n % 2 == 1 ? n : n - 1);
    case kToOddUp: return n < 0 ? -1 : (n % 2 == 1 ? n : n + 1);
    default: return -1;  // kLike: from the second input
  }
}

void InferShapeResize(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<BilinearResizeParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4) throw ShapeError(StrCat(kOp, ": input must be 4-D (NCHW), got ", d));
  TShape o = d;
  if (p.mode == kLike) {
    const TShape& like = (*in)[1];
    if (!like.ndim_known()) return;
    if (like.ndim() != 4) throw ShapeError(StrCat(kOp, ": input 'like' must be 4-D (NCHW), got ", like));
    o[2] = like[2];
    o[3] = like[3];
  } else {
    o[2] = ResizedDim(p, d[2], true);
    o[3] = ResizedDim(p, d[3], false);
  }
  for (int i = 2; i < 4; ++i)
    if (o[i] == 0 || o[i] < -1)
      throw ShapeError(StrCat(kOp, ": the output size ", o, " of input ", d, " is empty or negative"));
  ShapeAssignCheck(out, 0, o);
}

// One output coordinate's source: lower index, step to the upper neighbour (0 or 1) and the
// upper weight, in float as MXNet's kernel computes them.
struct Tap {
  int64_t lo;
  int64_t step;
  float w1;
};
std::vector<Tap> Taps(int64_t in, int64_t out, bool align_corners) {
  float scale = 0.0f;
  if (out > 1)
    scale = align_corners ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    float src;
    if (align_corners) {
      src = scale * static_cast<float>(i);
    } else {
      src = static_cast<float>(scale * (static_cast<double>(i) + 0.5) - 0.5);
      if (src < 0) src = 0;
    }
    int64_t lo = static_cast<int64_t>(src);
    taps[static_cast<size_t>(i)] = {lo, lo < in - 1 ? 1 : 0, src - static_cast<float>(lo)};
  }
  return taps;
}

struct Plan {
  int64_t planes, H, W, OH, OW;
  std::vector<Tap> th, tw;
};
Plan MakePlan(const TShape& is, const TShape& os, bool align_corners) {
  Plan pl{is[0] * is[1], is[2], is[3], os[2], os[3], {}, {}};
  // Same size copies (MXNet's special case; the taps would give the same result).
  bool same = pl.H == pl.OH && pl.W == pl.OW;
  pl.th = same ? Taps(pl.H, pl.H, true) : Taps(pl.H, pl.OH, align_corners);
  pl.tw = same ? Taps(pl.W, pl.W, true) : Taps(pl.W, pl.OW, align_corners);
  return pl;
}

template <typename F>
void ForEachPlane(const Plan& pl, const F& fn) {
  ParallelFor(pl.planes, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, pl.OH * pl.OW)),
              [&](int64_t b, int64_t e) {
                for (int64_t p = b; p < e; ++p) fn(p);
              });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_BilinearResize2D)
    .describe("Performs 2D resizing (upsampling or downsampling) of 4D input data using "
              "bilinear interpolation.")
    .set_params<BilinearResizeParam>()
    .set_arguments([](const NodeAttrs& a) {
      return a.param<BilinearResizeParam>().mode == kLike ? std::vector<std::string>{"data", "like"}
                                                          : std::vector<std::string>{"data"};
    })
    .set_infer_shape(InferShapeResize)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      Plan pl = MakePlan(in[0].shape(), out[0].shape(), attrs.param<BilinearResizeParam>().align_corners);
      const float* x = in[0].fdata();
      float* y = out[0].fdata();
      const bool add = req[0] == OpReq::kAdd;
      ForEachPlane(pl, [&](int64_t p) {
        const float* src = x + p * pl.H * pl.W;
        float* dst = y + p * pl.OH * pl.OW;
        for (int64_t oh = 0; oh < pl.OH; ++oh) {
          const Tap& h = pl.th[static_cast<size_t>(oh)];
          const float h0 = 1.0f - h.w1;
          const float* r0 = src + h.lo * pl.W;
          const float* r1 = r0 + h.step * pl.W;
          for (int64_t ow = 0; ow < pl.OW; ++ow) {
            const Tap& w = pl.tw[static_cast<size_t>(ow)];
            const float w0 = 1.0f - w.w1;
            float v = h0 * (w0 * r0[w.lo] + w.w1 * r0[w.lo + w.step]) +
                      h.w1 * (w0 * r1[w.lo] + w.w1 * r1[w.lo + w.step]);
            float& d = dst[oh * pl.OW + ow];
            d = add ? d + v : v;
          }
        }
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.in_grads.size() > 1 && (a.req[1] == OpReq::kWrite || a.req[1] == OpReq::kWriteInplace))
        a.in_grads[1].Fill(0.0f);  // 'like' lends only its size
      if (a.req[0] == OpReq::kNull) return;
      Plan pl = MakePlan(a.inputs[0].shape(), a.out_grads[0].shape(),
                         attrs.param<BilinearResizeParam>().align_corners);
      if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
      const float* g = a.out_grads[0].fdata();
      float* dx = a.in_grads[0].fdata();
      ForEachPlane(pl, [&](int64_t p) {
        float* dst = dx + p * pl.H * pl.W;
        const float* src = g + p * pl.OH * pl.OW;
        for (int64_t oh = 0; oh < pl.OH; ++oh) {
          const Tap& h = pl.th[static_cast<size_t>(oh)];
          const float h0 = 1.0f - h.w1;
          float* r0 = dst + h.lo * pl.W;
          float* r1 = r0 + h.step * pl.W;
          for (int64_t ow = 0; ow < pl.OW; ++ow) {
            const Tap& w = pl.tw[static_cast<size_t>(ow)];
            const float w0 = 1.0f - w.w1;
            const float go = src[oh * pl.OW + ow];
            r0[w.lo] += h0 * w0 * go;
            r0[w.lo + w.step] += h0 * w.w1 * go;
            r1[w.lo] += h.w1 * w0 * go;
            r1[w.lo + w.step] += h.w1 * w.w1 * go;
          }
        }
      });
    });

}  // namespace symbind
