// _image_normalize: (x - mean[c]) / std[c] per channel of a (C, H, W) or (N, C, H, W) image
// tensor with 1 or 3 channels; mean and std hold one value for every channel or one per
// channel. Gradient 1 / std[c]. Any float dtype (float16 through float32).
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct NormalizeParam : Parameter<NormalizeParam> {
  std::vector<float> mean, std;
  static void Declare(ParamDeclarer<NormalizeParam>& d) {
    d.field("mean", &NormalizeParam::mean).set_default({0.0f, 0.0f, 0.0f, 0.0f})
        .describe("Sequence of means for each channel. Default value is 0.");
    d.field("std", &NormalizeParam::std).set_default({1.0f, 1.0f, 1.0f, 1.0f})
        .describe("Sequence of standard deviations for each channel. Default value is 1.");
  }
};

void InferNormalize(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 3 && d.ndim() != 4)
    throw ShapeError(StrCat("_image_normalize: the input must be (channels, height, width) or "
                            "(N, channels, height, width), got ", d));
  const int64_t c = d[d.ndim() - 3];
  if (c != 1 && c != 3)
    throw ShapeError(StrCat("_image_normalize: the channel dimension of the input ", d, " must be 1 or 3"));
  const auto& p = attrs.param<NormalizeParam>();
  for (const auto* v : {&p.mean, &p.std})
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != c)
      throw ShapeError(StrCat("_image_normalize: ", v == &p.mean ? "mean" : "std", " must have 1 or ", c,
                              " elements for an input of shape ", d, ", got ", v->size()));
  ShapeAssignCheck(out, 0, d);
}

// The channel of flat element i, and its mean and std.
struct ChannelMap {
  int64_t plane, channels;
  const NormalizeParam& p;
  int64_t Channel(int64_t i) const { return (i / plane) % channels; }
  float Mean(int64_t i) const { return p.mean.size() == 1 ? p.mean[0] : p.mean[Channel(i)]; }
  float Std(int64_t i) const { return p.std.size() == 1 ? p.std[0] : p.std[Channel(i)]; }
};
ChannelMap MapOf(const NDArray& x, const NodeAttrs& attrs) {
  const TShape& s = x.shape();
  return {s[s.ndim() - 2] * s[s.ndim() - 1], s[s.ndim() - 3], attrs.param<NormalizeParam>()};
}

SYMBIND_REGISTER_OP(_image_normalize)
    .describe("Normalize an tensor of shape (C x H x W) or (N x C x H x W) with mean and standard "
              "deviation: output[i] = (input[i] - mean[i]) / std[i] for each channel i.")
    .set_params<NormalizeParam>()
    .add_argument_doc("data", "Input ndarray")
    .set_infer_shape(InferNormalize)
    .set_forward_inplace()
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const ChannelMap m = MapOf(in[0], attrs);
      ComputeInDType("_image_normalize", in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                           const auto& out) {
        using T = decltype(tag);
        const T* x = in[0].template data<T>();
        MapWithReq(out[0].template data<T>(), out[0].Size(), req[0],
                   [&](int64_t i) { return (x[i] - m.Mean(i)) / m.Std(i); });
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kNull) return;
      const ChannelMap m = MapOf(a.inputs[0], attrs);
      ComputeInDType("_image_normalize", {a.out_grads[0]}, {a.req[0]}, {a.in_grads[0]},
                     [&](auto tag, const auto& in, const auto& req, const auto& out) {
                       using T = decltype(tag);
                       const T* g = in[0].template data<T>();
                       MapWithReq(out[0].template data<T>(), out[0].Size(), req[0],
                                  [&](int64_t i) { return g[i] / m.Std(i); });
                     });
    });

}  // namespace

}  // namespace symbind
