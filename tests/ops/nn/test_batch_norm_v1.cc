// BatchNorm_v1 and _contrib_SyncBatchNorm: training and inference against a naive per-channel
// normalisation, the hidden `var` output holding the variance (not BatchNorm's inverse std),
// moving statistics, gradients by finite differences, their parameter sets.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Per-channel (axis 1) biased statistics of x.
void ChannelStats(const NDArray& x, std::vector<double>* mean, std::vector<double>* var) {
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.Size() / (N * C);
  mean->assign(static_cast<size_t>(C), 0.0);
  var->assign(static_cast<size_t>(C), 0.0);
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < inner; ++i) {
          const double v = x.GetFlat((n * C + c) * inner + i);
          if (pass == 0) (*mean)[c] += v / static_cast<double>(N * inner);
          else (*var)[c] += (v - (*mean)[c]) * (v - (*mean)[c]) / static_cast<double>(N * inner);
        }
}

NDArray Normalized(const NDArray& x, const std::vector<double>& mean, const std::vector<double>& var,
                   const NDArray& gamma, const NDArray& beta, double eps, bool fix_gamma) {
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.Size() / (N * C);
  NDArray y(x.shape());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (n * C + c) * inner + i;
        const double g = fix_gamma ? 1.0 : gamma.GetFlat(c);
        y.SetFlat(at, static_cast<float>((x.GetFlat(at) - mean[c]) / std::sqrt(var[c] + eps) * g + beta.GetFlat(c)));
      }
  return y;
}

NDArray PositiveArray(const TShape& s, uint64_t seed) { return RandomArray(s, seed, 0.5f, 2.0f); }

// Trains `op` one step on x and checks the output, the mean and variance outputs and the moving
// averages against ChannelStats.
void CheckTrainingStep(const std::string& op, KwArgs kw, const NDArray& x, uint64_t seed) {
  const int64_t C = x.shape()[1];
  NDArray g = RandomArray(TShape({C}), seed), b = RandomArray(TShape({C}), seed + 1),
          mm = RandomArray(TShape({C}), seed + 2), mv = PositiveArray(TShape({C}), seed + 3);
  kw.insert({{"fix_gamma", "False"}, {"momentum", "0.8"}, {"output_mean_var", "True"}, {"eps", "0.01"}});
  auto exec = BindSingleOp(op, kw,
                           {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm.Copy()}, {"moving_var", mv.Copy()}},
                           {}, OpReq::kNull);
  REQUIRE(exec->outputs().size() == 3);
  exec->Forward(true);
  std::vector<double> mean, var;
  ChannelStats(x, &mean, &var);
  RequireClose(exec->outputs()[0], Normalized(x, mean, var, g, b, 0.01, false), 1e-4f);
  for (int64_t c = 0; c < C; ++c) {
    CHECK(exec->outputs()[1].GetFlat(c) == Approx(mean[c]).margin(1e-5));
    CHECK(exec->outputs()[2].GetFlat(c) == Approx(var[c]).epsilon(1e-4));
    CHECK(exec->aux_arrays()[0].GetFlat(c) == Approx(mm.GetFlat(c) * 0.8 + mean[c] * 0.2).margin(1e-5));
    CHECK(exec->aux_arrays()[1].GetFlat(c) == Approx(mv.GetFlat(c) * 0.8 + var[c] * 0.2).epsilon(1e-4));
  }
}
}  // namespace

TEST_CASE("BatchNorm_v1 training: batch statistics, variance output, moving averages", "[ops][BatchNorm_v1]") {
  CheckTrainingStep("BatchNorm_v1", {}, RandomArray(TShape({4, 3, 2, 3}), 1, -2.0f, 3.0f), 2);
}

TEST_CASE("BatchNorm_v1 inference: moving statistics, 2-D data, fix_gamma", "[ops][BatchNorm_v1]") {
  NDArray x = RandomArray(TShape({5, 4}), 6), g = RandomArray(TShape({4}), 7), b = RandomArray(TShape({4}), 8),
          mm = RandomArray(TShape({4}), 9), mv = PositiveArray(TShape({4}), 10);
  std::vector<double> mean, var;
  for (int64_t c = 0; c < 4; ++c) {
    mean.push_back(mm.GetFlat(c));
    var.push_back(mv.GetFlat(c));
  }
  for (bool fix : {true, false}) {
    INFO("fix_gamma " << fix);
    auto exec = BindSingleOp("BatchNorm_v1", {{"fix_gamma", fix ? "True" : "False"}, {"output_mean_var", "True"}},
                             {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}}, {},
                             OpReq::kNull);
    exec->Forward(false);
    RequireClose(exec->outputs()[0], Normalized(x, mean, var, g, b, 1e-3, fix), 1e-4f);
    RequireClose(exec->outputs()[2], mv, 1e-5f, 1e-4f, "var output is moving_var");
  }
}

TEST_CASE("BatchNorm_v1 gradients", "[ops][BatchNorm_v1][grad]") {
  NDArray x = RandomArray(TShape({3, 2, 2, 2}), 11, -2.0f, 2.0f), g = RandomArray(TShape({2}), 12),
          b = RandomArray(TShape({2}), 13), mm = RandomArray(TShape({2}), 14), mv = PositiveArray(TShape({2}), 15);
  std::map<std::string, NDArray> in{{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}};
  GradCheckOptions train;
  train.is_train = true;
  CheckGradients("BatchNorm_v1", {{"fix_gamma", "False"}}, in, train);
  CheckGradients("BatchNorm_v1", {{"fix_gamma", "False"}, {"use_global_stats", "True"}}, in, train);
  CheckGradients("BatchNorm_v1", {{"fix_gamma", "False"}}, in);
}

TEST_CASE("BatchNorm_v1 names, shapes and parameters", "[ops][BatchNorm_v1][shape]") {
  Symbol bn = Symbol::Create("BatchNorm_v1", "bn", {}, {{"data", Symbol::Variable("data")}});
  CHECK(bn.ListArguments() == std::vector<std::string>{"data", "bn_gamma", "bn_beta"});
  CHECK(bn.ListAuxiliaryStates() == std::vector<std::string>{"bn_moving_mean", "bn_moving_var"});
  CHECK(bn.ListOutputs().size() == 1);
  auto r = InferShape(bn, {{"data", TShape({2, 5, 3, 3})}});
  CHECK(r.arg_shapes[1] == TShape({5}));
  CHECK(r.aux_shapes[1] == TShape({5}));
  // BatchNorm's axis is not a v1 parameter.
  CHECK_THROWS_AS(Symbol::Create("BatchNorm_v1", "bn", {{"axis", "1"}}, {}), ParamError);
}

TEST_CASE("_contrib_SyncBatchNorm normalises with the batch's statistics and outputs the variance",
          "[ops][SyncBatchNorm]") {
  const NDArray x = RandomArray(TShape({4, 3, 5}), 21, -2.0f, 3.0f);
  CheckTrainingStep("_contrib_SyncBatchNorm", {{"key", "stage1_bn0"}, {"ndev", "1"}}, x, 22);
  const NDArray g = RandomArray(TShape({3}), 22), b = RandomArray(TShape({3}), 23), mm = RandomArray(TShape({3}), 24),
                mv = PositiveArray(TShape({3}), 25);
  const KwArgs kw{{"fix_gamma", "False"}, {"eps", "0.01"}, {"key", "stage1_bn0"}};
  // Inference: the moving statistics, with any ndev (a model trained on 8 devices).
  KwArgs eight = kw;
  eight["ndev"] = "8";
  std::vector<double> moving_mean, moving_var;
  for (int64_t c = 0; c < 3; ++c) {
    moving_mean.push_back(mm.GetFlat(c));
    moving_var.push_back(mv.GetFlat(c));
  }
  auto infer = BindSingleOp("_contrib_SyncBatchNorm", eight,
                            {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}}, {},
                            OpReq::kNull);
  infer->Forward(false);
  RequireClose(infer->outputs()[0], Normalized(x, moving_mean, moving_var, g, b, 0.01, false), 1e-4f);
  // Training across devices would need the other devices' statistics.
  CHECK_THROWS_WITH(infer->Forward(true), Catch::Contains("across ndev=8 devices is not supported"));
  // SyncBatchNorm's parameters, not BatchNorm's axis.
  CHECK_THROWS_AS(Symbol::Create("_contrib_SyncBatchNorm", "bn", {{"axis", "1"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_contrib_SyncBatchNorm", "bn", {{"ndev", "0"}}, {}), ParamError);
  GradCheckOptions train;
  train.is_train = true;
  CheckGradients("_contrib_SyncBatchNorm", {{"fix_gamma", "False"}, {"key", "k"}},
                 {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}}, train);
}
