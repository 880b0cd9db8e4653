// InstanceNorm: each (instance, channel) is normalised over its spatial elements.
#include <cmath>
#include <vector>

#include <symbind/ops/nn/norm_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// InstanceNorm: each (instance, channel) is normalised over its spatial elements.
// Hidden outputs mean and var (the biased variance, not the inverse std), shape (N, C).

struct InstanceNormParam : Parameter<InstanceNormParam> {
  float eps;
  static void Declare(ParamDeclarer<InstanceNormParam>& d) {
    d.field("eps", &InstanceNormParam::eps).set_default(1e-3f)
        .describe("An `epsilon` parameter to prevent division by 0.");
  }
};

void InferInstanceNorm(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 3)
    throw ShapeError(StrCat("InstanceNorm only supports input tensors of rank >= 3; got data of shape ", d));
  ShapeAssignCheck(in, 1, TShape({d[1]}));
  ShapeAssignCheck(in, 2, TShape({d[1]}));
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, TShape({d[0], d[1]}));
  ShapeAssignCheck(out, 2, TShape({d[0], d[1]}));
}

void InstanceNormForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const float eps = attrs.param<InstanceNormParam>().eps;
  const TShape& s = in[0].shape();
  const int64_t C = s[1], groups = s[0] * C, rest = s.ProdDims(2, s.ndim());
  const float *x = in[0].fdata(), *gamma = in[1].fdata(), *beta = in[2].fdata();
  float *y = out[0].fdata(), *mean_out = out[1].fdata(), *var_out = out[2].fdata();
  ParallelFor(groups, GrainFor(rest), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      double mean, var;
      GroupMoments(x + g * rest, rest, 1, &mean, &var);
      mean_out[g] = static_cast<float>(mean);
      var_out[g] = static_cast<float>(var);
      const float m = static_cast<float>(mean);
      const float scale = static_cast<float>(gamma[g % C] / std::sqrt(var + eps));
      for (int64_t j = 0; j < rest; ++j)
        Put(y + g * rest + j, (x[g * rest + j] - m) * scale + beta[g % C], req[0]);
    }
  });
}

void InstanceNormBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const float eps = attrs.param<InstanceNormParam>().eps;
  const TShape& s = a.inputs[0].shape();
  const int64_t N = s[0], C = s[1], rest = s.ProdDims(2, s.ndim());
  const float *x = a.inputs[0].fdata(), *gamma = a.inputs[1].fdata(), *dy = a.out_grads[0].fdata();
  const float *mean = a.outputs[1].fdata(), *var = a.outputs[2].fdata();
  if (a.req[0] != OpReq::kNull) {
    float* dx = a.in_grads[0].fdata();
    ParallelFor(N * C, GrainFor(rest), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const float rstd = 1.0f / std::sqrt(var[g] + eps), w = gamma[g % C];
        NormalizeGroupBackward(x + g * rest, dy + g * rest, [w](int64_t) { return w; },
                                          rest, 1, mean[g], rstd, dx + g * rest, a.req[0]);
      }
    });
  }
  // gamma and beta: sums over instances and spatial positions, per channel.
  for (int k : {1, 2}) {
    if (a.req[k] == OpReq::kNull) continue;
    float* dst = a.in_grads[k].fdata();
    ParallelFor(C, GrainFor(N * rest), [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < N; ++n) {
          const int64_t g = n * C + c;
          const double rstd = 1.0 / std::sqrt(static_cast<double>(var[g]) + eps);
          for (int64_t j = 0; j < rest; ++j)
            sum += k == 2 ? dy[g * rest + j] : dy[g * rest + j] * (x[g * rest + j] - mean[g]) * rstd;
        }
        Put(dst + c, static_cast<float>(sum), a.req[k]);
      }
    });
  }
}

}  // namespace

SYMBIND_REGISTER_OP(InstanceNorm)
    .describe("Instance normalization: out = (x - mean) / sqrt(var + eps) * gamma + beta, with mean "
              "and var over the spatial elements of each instance and channel.")
    .set_params<InstanceNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_outputs({"output", "mean", "var"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .add_argument_doc("data", "Input data: (batch, channel, ...).")
    .add_argument_doc("gamma", "Scale per channel: (channel,).")
    .add_argument_doc("beta", "Shift per channel: (channel,).")
    .set_infer_shape(InferInstanceNorm)
    .set_forward(InstanceNormForward)
    .set_backward(InstanceNormBackward);

}  // namespace symbind
