// BatchNorm_v1 (MXNet's legacy batch normalisation, found in old model files) and
// _contrib_SyncBatchNorm (GluonCV's synchronised batch normalisation). Both normalise over
// axis 1 as BatchNorm does and run BatchNorm's kernels; where they differ from it:
// - no axis/cudnn_off parameters (SyncBatchNorm adds ndev and key);
// - the hidden output `var` holds the variance (the batch variance in training, moving_var
//   otherwise), where BatchNorm's holds the inverse standard deviation.
// Not reproduced: v1 also writes 1 into the gamma array when fix_gamma is set. SyncBatchNorm
// computes every copy's statistics on one device here, so it trains with ndev=1 only (MXNet
// shares them across ndev devices of one process); inference takes any ndev.
#include <cmath>
#include <string>
#include <vector>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
// BatchNorm_v1's parameters; with kSync also SyncBatchNorm's ndev and key.
template <bool kSync>
struct LegacyBatchNormParams : Parameter<LegacyBatchNormParams<kSync>> {
  using P = LegacyBatchNormParams<kSync>;
  float eps;
  float momentum;
  bool fix_gamma;
  bool use_global_stats;
  bool output_mean_var;
  int ndev = 1;
  std::string key;
  static void Declare(ParamDeclarer<P>& d) {
    d.field("eps", &P::eps).set_default(1e-3f).describe("Epsilon to prevent div 0");
    d.field("momentum", &P::momentum).set_default(0.9f).describe("Momentum for moving average");
    d.field("fix_gamma", &P::fix_gamma).set_default(true).describe("Fix gamma while training");
    d.field("use_global_stats", &P::use_global_stats).set_default(false)
        .describe("Whether use global moving statistics instead of local batch-norm. This will force "
                  "change batch-norm into a scale shift operator.");
    d.field("output_mean_var", &P::output_mean_var).set_default(false).describe("Output All,normal mean and var");
    if constexpr (kSync) {
      d.field("ndev", &P::ndev).set_default(1).lower_bound(1).describe("The count of GPU devices");
      d.field("key", &P::key).set_default("")
          .describe("Hash key for synchronization, please set the same hash key for same layer, "
                    "Block.prefix is typically used as in :class:`gluon.nn.contrib.SyncBatchNorm`.");
    }
  }
};
using BatchNormV1Param = LegacyBatchNormParams<false>;
using SyncBatchNormParam = LegacyBatchNormParams<true>;

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

const Op& BatchNormOp() { return OpRegistry::Global().Get("BatchNorm"); }

// Registers `name` to run as BatchNorm with P's parameters (those BatchNorm does not have,
// `own_keys`, are left out of what BatchNorm parses), its hidden `var` the variance.
template <typename P>
Op& RegisterVarOutputBatchNorm(const char* name, std::vector<std::string> own_keys) {
  Op& op = RunAs<P>(OpRegistry::Global().Register(name), "BatchNorm");
  op.parse_params = [own_keys](const KwArgs& kw) {
    P::Parse(kw);
    KwArgs shared = kw;
    for (const std::string& k : own_keys) shared.erase(k);
    return BatchNormOp().parse_params(shared);
  };
  const auto eps = [](const NodeAttrs& a) { return P::Parse(a.dict).eps; };
  return op.set_forward_inplace()
      .set_input_initializer("moving_mean", R"(["zero", {}])")
      .set_input_initializer("moving_var", R"(["one", {}])")
      .set_forward([eps](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        BatchNormOp().forward(ctx, a, in, req, out);
        InvStdToVar(out[kVarOutput], eps(a));
      })
      .set_backward([eps](const OpContext& ctx, const NodeAttrs& a, const BackwardArgs& args) {
        std::vector<NDArray> outputs = args.outputs;
        outputs[kVarOutput] = VarToInvStd(outputs[kVarOutput], eps(a));
        BatchNormOp().backward(ctx, a, BackwardArgs{args.out_grads, args.inputs, outputs, args.req, args.in_grads});
      });
}
}  // namespace

[[maybe_unused]] static Op& batch_norm_v1 =
    RegisterVarOutputBatchNorm<BatchNormV1Param>("BatchNorm_v1", {})
        .describe("Legacy batch normalization (MXNet's BatchNorm_v1) over axis 1: batch statistics in "
                  "training (updating moving_mean and moving_var with `momentum`), moving statistics in "
                  "inference or with use_global_stats; gamma is 1 when fix_gamma. Hidden outputs mean "
                  "and var (the variance) are visible when output_mean_var is true.");

[[maybe_unused]] static Op& sync_batch_norm = [] () -> Op& {
  Op& op = RegisterVarOutputBatchNorm<SyncBatchNormParam>("_contrib_SyncBatchNorm", {"ndev", "key"})
               .describe("Batch normalization with the statistics synchronized across devices (GluonCV's "
                         "SyncBatchNorm), over axis 1; the hidden output var holds the variance. symbind "
                         "runs on one device: it trains with ndev=1 (its statistics are the whole batch's) "
                         "and infers with any ndev.");
  ForwardFn batch_norm_forward = op.forward;
  return op.set_forward([batch_norm_forward](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                                             const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
    const SyncBatchNormParam p = SyncBatchNormParam::Parse(a.dict);
    if (ctx.is_train && !p.use_global_stats && p.ndev > 1)
      throw Error(StrCat(InOperator(a), ": synchronizing batch statistics across ndev=", p.ndev,
                         " devices is not supported; symbind computes on one device (ndev=1), or infer "
                         "with use_global_stats"));
    batch_norm_forward(ctx, a, in, req, out);
  });
}();

}  // namespace symbind
