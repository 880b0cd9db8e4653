// _contrib_AdaptiveAvgPooling2D (MXNet 1.9.1's contrib/adaptive_avg_pooling): averages NCHW
// input over windows that tile each spatial axis into output_size bins. Bin o of an axis of
// size I into O bins covers [floor(o * I / O), ceil((o + 1) * I / O)); neighbouring bins may
// overlap. The gradient spreads each output gradient evenly over its window.
#include <cmath>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
struct AdaptiveAvgPoolParam : Parameter<AdaptiveAvgPoolParam> {
  TShape output_size;
  static void Declare(ParamDeclarer<AdaptiveAvgPoolParam>& d) {
    d.field("output_size", &AdaptiveAvgPoolParam::output_size)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("int (output size) or a tuple of int for output (height, width).");
  }
};

// MXNet's START_IND / END_IND (computed in float, as MXNet does).
int64_t BinStart(int64_t o, int64_t out, int64_t in) {
  return static_cast<int64_t>(std::floor(static_cast<float>(o * in) / static_cast<float>(out)));
}
int64_t BinEnd(int64_t o, int64_t out, int64_t in) {
  return static_cast<int64_t>(std::ceil(static_cast<float>((o + 1) * in) / static_cast<float>(out)));
}

void InferShapeAdaptiveAvgPool(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("_contrib_AdaptiveAvgPooling2D: input must be 4-D (NCHW), got ", d));
  const TShape& os = attrs.param<AdaptiveAvgPoolParam>().output_size;
  TShape o = d;
  // MXNet: () and any tuple longer than 2 give 1x1; (s,) gives sxs.
  o[2] = os.ndim() == 1 || os.ndim() == 2 ? os[0] : 1;
  o[3] = os.ndim() == 1 ? os[0] : (os.ndim() == 2 ? os[1] : 1);
  if (o[2] < 1 || o[3] < 1)
    throw ShapeError(StrCat("_contrib_AdaptiveAvgPooling2D: output_size ", os.ToStringAsWritten(),
                            " must be positive"));
  ShapeAssignCheck(out, 0, o);
}

// Calls fn(plane, oh, ow, h0, h1, w0, w1) for every output element, parallel over planes.
template <typename F>
void ForEachBin(const TShape& is, const TShape& os, const F& fn) {
  const int64_t planes = is[0] * is[1], H = is[2], W = is[3], OH = os[2], OW = os[3];
  ParallelFor(planes, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, H * W)),
              [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          fn(p, oh, ow, BinStart(oh, OH, H), BinEnd(oh, OH, H), BinStart(ow, OW, W), BinEnd(ow, OW, W));
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_AdaptiveAvgPooling2D)
    .set_monitor_numbered_inputs()
    .describe("Applies a 2D adaptive average pooling over a 4D input with the shape of (NCHW). "
              "The pooling kernel and stride sizes are automatically chosen for desired output "
              "sizes.")
    .set_params<AdaptiveAvgPoolParam>()
    .set_infer_shape(InferShapeAdaptiveAvgPool)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const TShape& is = in[0].shape();
      const TShape& os = out[0].shape();
      const float* x = in[0].fdata();
      float* y = out[0].fdata();
      const bool add = req[0] == OpReq::kAdd;
      ForEachBin(is, os, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        const float* plane = x + p * is[2] * is[3];
        float sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += plane[h * is[3] + w];
        float v = sum / static_cast<float>(w1 - w0) / static_cast<float>(h1 - h0);
        float& dst = y[(p * os[2] + oh) * os[3] + ow];
        dst = add ? dst + v : v;
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kNull) return;
      const TShape& is = a.inputs[0].shape();
      const TShape& os = a.out_grads[0].shape();
      const float* g = a.out_grads[0].fdata();
      if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
      float* dx = a.in_grads[0].fdata();
      ForEachBin(is, os, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        float v = g[(p * os[2] + oh) * os[3] + ow] / static_cast<float>((h1 - h0) * (w1 - w0));
        float* plane = dx + p * is[2] * is[3];
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) plane[h * is[3] + w] += v;
      });
    });

}  // namespace symbind
