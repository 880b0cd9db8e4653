// BatchNorm_v1: MXNet's legacy batch normalisation, found in old model files. It normalises
// over axis 1 as BatchNorm does and runs BatchNorm's kernels; the differences MXNet's v1 has:
// - no axis/cudnn_off parameters;
// - the hidden output `var` holds the variance (the batch variance in training, moving_var
//   otherwise), where BatchNorm's holds the inverse standard deviation.
// Not reproduced: v1 also writes 1 into the gamma array when fix_gamma is set.
#include <cmath>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
struct BatchNormV1Param : Parameter<BatchNormV1Param> {
  float eps;
  float momentum;
  bool fix_gamma;
  bool use_global_stats;
  bool output_mean_var;
  static void Declare(ParamDeclarer<BatchNormV1Param>& d) {
    d.field("eps", &BatchNormV1Param::eps).set_default(1e-3f).describe("Epsilon to prevent div 0");
    d.field("momentum", &BatchNormV1Param::momentum).set_default(0.9f).describe("Momentum for moving average");
    d.field("fix_gamma", &BatchNormV1Param::fix_gamma).set_default(true).describe("Fix gamma while training");
    d.field("use_global_stats", &BatchNormV1Param::use_global_stats).set_default(false)
        .describe("Whether use global moving statistics instead of local batch-norm. This will force "
                  "change batch-norm into a scale shift operator.");
    d.field("output_mean_var", &BatchNormV1Param::output_mean_var).set_default(false)
        .describe("Output All,normal mean and var");
  }
};

constexpr int kVarOutput = 2;

// BatchNorm's hidden output 1/sqrt(var + eps) <-> the variance, in place.
void InvStdToVar(const NDArray& a, float eps) {
  float* v = a.fdata();
  for (int64_t i = 0; i < a.Size(); ++i) v[i] = 1.0f / (v[i] * v[i]) - eps;
}
NDArray VarToInvStd(const NDArray& a, float eps) {
  NDArray r = a.Copy();
  float* v = r.fdata();
  for (int64_t i = 0; i < r.Size(); ++i) v[i] = 1.0f / std::sqrt(v[i] + eps);
  return r;
}

float Eps(const NodeAttrs& a) { return BatchNormV1Param::Parse(a.dict).eps; }
const Op& BatchNormOp() { return OpRegistry::Global().Get("BatchNorm"); }
}  // namespace

[[maybe_unused]] static Op& batch_norm_v1 =
    RunAs<BatchNormV1Param>(OpRegistry::Global().Register("BatchNorm_v1"), "BatchNorm")
        .set_forward_inplace()
        .set_input_initializer("moving_mean", R"(["zero", {}])")
        .set_input_initializer("moving_var", R"(["one", {}])")
        .describe("Legacy batch normalization (MXNet's BatchNorm_v1) over axis 1: batch statistics in "
                  "training (updating moving_mean and moving_var with `momentum`), moving statistics in "
                  "inference or with use_global_stats; gamma is 1 when fix_gamma. Hidden outputs mean "
                  "and var (the variance) are visible when output_mean_var is true.")
        .set_forward([](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                        const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
          BatchNormOp().forward(ctx, a, in, req, out);
          InvStdToVar(out[kVarOutput], Eps(a));
        })
        .set_backward([](const OpContext& ctx, const NodeAttrs& a, const BackwardArgs& args) {
          std::vector<NDArray> outputs = args.outputs;
          outputs[kVarOutput] = VarToInvStd(outputs[kVarOutput], Eps(a));
          BatchNormOp().backward(ctx, a, BackwardArgs{args.out_grads, args.inputs, outputs, args.req, args.in_grads});
        });

}  // namespace symbind
