// L2Normalization: x / sqrt(sum x^2 + eps) per instance, channel or spatial position.
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// L2Normalization: out = x / sqrt(sum x^2 + eps) over the mode's group. Hidden output norm.

enum L2Mode { kInstance, kChannel, kSpatial };

struct L2NormalizationParam : Parameter<L2NormalizationParam> {
  float eps;
  int mode;
  static void Declare(ParamDeclarer<L2NormalizationParam>& d) {
    d.field("eps", &L2NormalizationParam::eps).set_default(1e-10f)
        .require([](float eps) { return eps > 0; }, "> 0 (the norm is divided by sqrt(sum + eps))")
        .describe("A small constant for numerical stability.");
    d.field("mode", &L2NormalizationParam::mode)
        .add_enum("instance", kInstance).add_enum("spatial", kSpatial).add_enum("channel", kChannel)
        .set_default(kInstance)
        .describe("Specify the dimension along which to compute L2 norm.");
  }
};

// The groups as (outer, n, inner): the norm is taken over n for every (outer, inner).
AxisLayout L2Layout(int mode, const TShape& s) {
  if (mode == kInstance) return {s[0], s.ProdDims(1, s.ndim()), 1};
  if (mode == kChannel) return {s[0], s[1], s.ProdDims(2, s.ndim())};
  return {s[0] * s[1], s.ProdDims(2, s.ndim()), 1};  // spatial
}

void InferL2Normalization(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const int mode = attrs.param<L2NormalizationParam>().mode;
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 1) throw ShapeError("L2Normalization needs data of rank >= 1");
  if (mode != kInstance && d.ndim() < 3)
    throw ShapeError(StrCat("L2Normalization: at least 3 dimensions required in ",
                            mode == kChannel ? "channel" : "spatial", " mode; got data of shape ", d));
  ShapeAssignCheck(out, 0, d);
  if (mode == kInstance) {
    ShapeAssignCheck(out, 1, TShape({d[0]}));
  } else if (mode == kChannel) {
    TShape n = d;
    n[1] = 1;
    ShapeAssignCheck(out, 1, n);
  } else {
    ShapeAssignCheck(out, 1, TShape({d[0], d[1]}));
  }
}

void L2NormalizationForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<L2NormalizationParam>();
  const AxisLayout l = L2Layout(p.mode, in[0].shape());
  const float* x = in[0].fdata();
  float *y = out[0].fdata(), *norm = out[1].fdata();
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double sq = 0;
      for (int64_t k = 0; k < l.n; ++k) sq += static_cast<double>(x[base + k * l.inner]) * x[base + k * l.inner];
      const float nrm = static_cast<float>(std::sqrt(sq + p.eps));
      norm[g] = nrm;
      for (int64_t k = 0; k < l.n; ++k) Put(y + base + k * l.inner, x[base + k * l.inner] / nrm, req[0]);
    }
  });
}

// dx = (dy - y * sum(dy * y)) / norm, from the output y.
void L2NormalizationBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const AxisLayout l = L2Layout(attrs.param<L2NormalizationParam>().mode, a.inputs[0].shape());
  const float *y = a.outputs[0].fdata(), *norm = a.outputs[1].fdata(), *dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double dot = 0;
      for (int64_t k = 0; k < l.n; ++k) dot += static_cast<double>(dy[base + k * l.inner]) * y[base + k * l.inner];
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        Put(dx + at, static_cast<float>((dy[at] - y[at] * dot) / norm[g]), a.req[0]);
      }
    }
  });
}

}  // namespace

SYMBIND_REGISTER_OP(L2Normalization)
    .describe("Normalizes the data by its L2 norm: over each instance (instance), over channels at "
              "each position (channel), or over the spatial positions of each channel (spatial).")
    .set_params<L2NormalizationParam>()
    .set_outputs({"output", "norm"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferL2Normalization)
    .set_forward(L2NormalizationForward)
    .set_backward(L2NormalizationBackward);

}  // namespace symbind
