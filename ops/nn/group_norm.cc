// GroupNorm (MXNet 1.9.1's nn/group_norm): the channels of each instance are split into
// num_groups groups, each normalised over its channels and spatial elements, then scaled and
// shifted per group (gamma and beta have num_groups entries in MXNet 1.9.1). Hidden outputs
// mean and std (sqrt(var + eps)), shape (N, num_groups), visible with output_mean_var.
#include <cmath>
#include <vector>

#include <symbind/ops/nn/norm_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct GroupNormParam : Parameter<GroupNormParam> {
  int num_groups;
  float eps;
  bool output_mean_var;
  static void Declare(ParamDeclarer<GroupNormParam>& d) {
    d.field("num_groups", &GroupNormParam::num_groups).set_default(1).lower_bound(1)
        .describe("Total number of groups.");
    d.field("eps", &GroupNormParam::eps).set_default(1e-5f)
        .describe("An `epsilon` parameter to prevent division by 0.");
    d.field("output_mean_var", &GroupNormParam::output_mean_var).set_default(false)
        .describe("Output the mean and std calculated along the given axis.");
  }
};

void InferGroupNorm(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const int64_t groups = attrs.param<GroupNormParam>().num_groups;
  ShapeAssignCheck(in, 0, (*out)[0]);
  ShapeAssignCheck(in, 1, TShape({groups}));
  ShapeAssignCheck(in, 2, TShape({groups}));
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 3) throw ShapeError(StrCat("GroupNorm needs data of rank >= 3; got ", d));
  if (d[1] >= 0 && d[1] % groups != 0)
    throw ShapeError(StrCat("GroupNorm: the ", d[1], " channels of data ", d, " do not split into ", groups,
                            " groups"));
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, TShape({d[0], groups}));
  ShapeAssignCheck(out, 2, TShape({d[0], groups}));
}

void GroupNormForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<GroupNormParam>();
  const TShape& s = in[0].shape();
  const int64_t G = p.num_groups, rows = s[0] * G, rest = s.Size() / std::max<int64_t>(rows, 1);
  const float *x = in[0].fdata(), *gamma = in[1].fdata(), *beta = in[2].fdata();
  float *y = out[0].fdata(), *mean_out = out[1].fdata(), *std_out = out[2].fdata();
  ParallelFor(rows, GrainFor(rest), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      double mean, var;
      GroupMoments(x + g * rest, rest, 1, &mean, &var);
      const double sd = std::sqrt(var + p.eps);
      mean_out[g] = static_cast<float>(mean);
      std_out[g] = static_cast<float>(sd);
      const float m = static_cast<float>(mean), scale = static_cast<float>(gamma[g % G] / sd);
      for (int64_t j = 0; j < rest; ++j) Put(y + g * rest + j, (x[g * rest + j] - m) * scale + beta[g % G], req[0]);
    }
  });
}

void GroupNormBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const int64_t G = attrs.param<GroupNormParam>().num_groups;
  const TShape& s = a.inputs[0].shape();
  const int64_t N = s[0], rows = N * G, rest = s.Size() / std::max<int64_t>(rows, 1);
  const float *x = a.inputs[0].fdata(), *gamma = a.inputs[1].fdata(), *dy = a.out_grads[0].fdata();
  const float *mean = a.outputs[1].fdata(), *sd = a.outputs[2].fdata();
  if (a.req[0] != OpReq::kNull) {
    float* dx = a.in_grads[0].fdata();
    ParallelFor(rows, GrainFor(rest), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const float w = gamma[g % G];
        NormalizeGroupBackward(x + g * rest, dy + g * rest, [w](int64_t) { return w; }, rest, 1, mean[g],
                               1.0f / sd[g], dx + g * rest, a.req[0]);
      }
    });
  }
  // gamma and beta: sums over instances and each group's elements.
  for (int k : {1, 2}) {
    if (a.req[k] == OpReq::kNull) continue;
    float* dst = a.in_grads[k].fdata();
    for (int64_t c = 0; c < G; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < N; ++n) {
        const int64_t g = n * G + c;
        for (int64_t j = 0; j < rest; ++j)
          sum += k == 2 ? dy[g * rest + j] : dy[g * rest + j] * (x[g * rest + j] - mean[g]) / sd[g];
      }
      Put(dst + c, static_cast<float>(sum), a.req[k]);
    }
  }
}

}  // namespace

SYMBIND_REGISTER_OP(GroupNorm)
    .describe("Group normalization: the channels are split into num_groups groups; each group of each "
              "instance is normalised over its channels and spatial elements, out = (x - mean) / "
              "sqrt(var + eps) * gamma[group] + beta[group].")
    .set_params<GroupNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_outputs({"output", "mean", "std"})
    .set_num_visible_outputs([](const NodeAttrs& a) { return a.param<GroupNormParam>().output_mean_var ? 3 : 1; })
    .add_argument_doc("data", "Input data: (batch, channel, ...), channel divisible by num_groups.")
    .add_argument_doc("gamma", "Scale per group: (num_groups,).")
    .add_argument_doc("beta", "Shift per group: (num_groups,).")
    .set_infer_shape(InferGroupNorm)
    .set_forward(GroupNormForward)
    .set_backward(GroupNormBackward);

}  // namespace symbind
