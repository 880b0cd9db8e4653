// LayerNorm: normalises along one axis, with gamma and beta of that axis' length.
#include <cmath>
#include <vector>

#include <symbind/ops/nn/norm_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// LayerNorm: normalises along `axis`; gamma and beta have that axis' length. Hidden outputs
// mean and std (= sqrt(var + eps)), shaped like the data with the axis set to 1.

struct LayerNormParam : Parameter<LayerNormParam> {
  int axis;
  float eps;
  bool output_mean_var;
  static void Declare(ParamDeclarer<LayerNormParam>& d) {
    d.field("axis", &LayerNormParam::axis).set_default(-1)
        .describe("The axis to perform layer normalization. Usually, this should be be axis of the "
                  "channel dimension. Negative values means indexing from right to left.");
    d.field("eps", &LayerNormParam::eps).set_default(1e-5f)
        .describe("An `epsilon` parameter to prevent division by 0.");
    d.field("output_mean_var", &LayerNormParam::output_mean_var).set_default(false)
        .describe("Output the mean and std calculated along the given axis.");
  }
};

AxisLayout LayerNormLayout(const LayerNormParam& p, const TShape& s) {
  return LayoutAround(s, NormalizeAxis(p.axis, s.ndim(), "LayerNorm"));
}

void InferLayerNorm(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<LayerNormParam>();
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int axis = NormalizeAxis(p.axis, d.ndim(), "LayerNorm");
  ShapeAssignCheck(in, 1, TShape({d[axis]}));
  ShapeAssignCheck(in, 2, TShape({d[axis]}));
  ShapeAssignCheck(out, 0, d);
  TShape moments = d;
  moments[axis] = 1;
  ShapeAssignCheck(out, 1, moments);
  ShapeAssignCheck(out, 2, moments);
}

void LayerNormForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LayerNormParam>();
  const AxisLayout l = LayerNormLayout(p, in[0].shape());
  const float *x = in[0].fdata(), *gamma = in[1].fdata(), *beta = in[2].fdata();
  float *y = out[0].fdata(), *mean_out = out[1].fdata(), *std_out = out[2].fdata();
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double mean, var;
      GroupMoments(x + base, l.n, l.inner, &mean, &var);
      const double sd = std::sqrt(var + p.eps);
      mean_out[g] = static_cast<float>(mean);
      std_out[g] = static_cast<float>(sd);
      const float m = static_cast<float>(mean), rstd = static_cast<float>(1.0 / sd);
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        Put(y + at, (x[at] - m) * rstd * gamma[k] + beta[k], req[0]);
      }
    }
  });
}

void LayerNormBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<LayerNormParam>();
  const AxisLayout l = LayerNormLayout(p, a.inputs[0].shape());
  const float *x = a.inputs[0].fdata(), *gamma = a.inputs[1].fdata(), *dy = a.out_grads[0].fdata();
  const float *mean = a.outputs[1].fdata(), *sd = a.outputs[2].fdata();
  const int64_t groups = l.outer * l.inner;
  if (a.req[0] != OpReq::kNull) {
    float* dx = a.in_grads[0].fdata();
    ParallelFor(groups, GrainFor(l.n), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
        NormalizeGroupBackward(x + base, dy + base, [gamma](int64_t k) { return gamma[k]; },
                                          l.n, l.inner, mean[g], 1.0f / sd[g], dx + base, a.req[0]);
      }
    });
  }
  // gamma and beta: per position along the axis, sums over all groups.
  for (int which : {1, 2}) {
    if (a.req[which] == OpReq::kNull) continue;
    float* dst = a.in_grads[which].fdata();
    ParallelFor(l.n, GrainFor(groups), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        double sum = 0;
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t at = l.Index(g / l.inner, k, g % l.inner);
          sum += which == 2 ? dy[at] : static_cast<double>(dy[at]) * (x[at] - mean[g]) / sd[g];
        }
        Put(dst + k, static_cast<float>(sum), a.req[which]);
      }
    });
  }
}

}  // namespace

SYMBIND_REGISTER_OP(LayerNorm)
    .describe("Layer normalization along `axis`: out = (x - mean) / sqrt(var + eps) * gamma + beta. "
              "Hidden outputs mean and std are visible when output_mean_var is true.")
    .set_params<LayerNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_outputs({"output", "mean", "std"})
    .set_num_visible_outputs([](const NodeAttrs& a) {
      return a.param<LayerNormParam>().output_mean_var ? 3 : 1;
    })
    .add_argument_doc("data", "Input data, normalised along `axis`.")
    .add_argument_doc("gamma", "Scale: (length of `axis`,).")
    .add_argument_doc("beta", "Shift: (length of `axis`,).")
    .set_infer_shape(InferLayerNorm)
    .set_forward(LayerNormForward)
    .set_backward(LayerNormBackward);

}  // namespace symbind
