// BatchNorm: inference and training statistics, gradients, fix_gamma, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray Positive(const TShape& s, uint64_t seed) { return RandomArray(s, seed, 0.5f, 1.5f); }

// Naive BatchNorm over channel axis `axis` with the given statistics; returns y.
// mean/var per channel; gamma used unless fix_gamma.
NDArray NaiveBatchNorm(const NDArray& x, const std::vector<double>& mean,
                       const std::vector<double>& var, const NDArray& gamma, const NDArray& beta,
                       int axis, double eps, bool fix_gamma) {
  const auto [outer, C, inner] = SplitAtAxis(x.shape(), axis);
  NDArray y(x.shape());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * C + c) * inner + i;
        double g = fix_gamma ? 1.0 : gamma.GetFlat(c);
        y.SetFlat(at, static_cast<float>((x.GetFlat(at) - mean[c]) / std::sqrt(var[c] + eps) * g +
                                         beta.GetFlat(c)));
      }
  return y;
}

// Per-channel biased batch statistics.
void BatchStats(const NDArray& x, int axis, std::vector<double>* mean, std::vector<double>* var) {
  const auto [outer, C, inner] = SplitAtAxis(x.shape(), axis);
  mean->assign(C, 0.0);
  var->assign(C, 0.0);
  double n = static_cast<double>(outer * inner);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) (*mean)[c] += x.GetFlat((o * C + c) * inner + i);
    (*mean)[c] /= n;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        (*var)[c] += std::pow(x.GetFlat((o * C + c) * inner + i) - (*mean)[c], 2);
    (*var)[c] /= n;
  }
}

std::vector<double> ToDoubles(const NDArray& a) {
  std::vector<double> v;
  for (int64_t i = 0; i < a.Size(); ++i) v.push_back(a.GetFlat(i));
  return v;
}

}  // namespace

TEST_CASE("BatchNorm inference uses the moving statistics", "[ops][BatchNorm]") {
  NDArray x = RandomArray(TShape({2, 3, 2, 2}), 1), g = RandomArray(TShape({3}), 2),
          b = RandomArray(TShape({3}), 3), mm = RandomArray(TShape({3}), 4), mv = Positive(TShape({3}), 5);
  for (bool fix : {true, false}) {
    KwArgs kw{{"fix_gamma", fix ? "True" : "False"}, {"eps", "2e-5"}};
    NDArray y = RunForward("BatchNorm", kw,
                           {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}});
    RequireClose(y, NaiveBatchNorm(x, ToDoubles(mm), ToDoubles(mv), g, b, 1, 2e-5, fix));
  }
}

TEST_CASE("BatchNorm training uses batch statistics and updates the moving ones", "[ops][BatchNorm]") {
  for (int axis : {1, -1}) {
    INFO("axis " << axis);
    NDArray x = RandomArray(TShape({4, 3, 5}), 6, -2.0f, 3.0f);
    int real_axis = axis < 0 ? 2 : 1;
    int64_t C = x.shape()[real_axis];
    NDArray g = RandomArray(TShape({C}), 7), b = RandomArray(TShape({C}), 8),
            mm = RandomArray(TShape({C}), 9), mv = Positive(TShape({C}), 10);
    KwArgs kw{{"fix_gamma", "False"}, {"axis", std::to_string(axis)}, {"momentum", "0.8"},
              {"output_mean_var", "True"}, {"use_global_stats", "False"}, {"cudnn_off", "False"}};
    auto exec = BindSingleOp("BatchNorm", kw,
                             {{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm.Copy()},
                              {"moving_var", mv.Copy()}},
                             {}, OpReq::kNull);
    REQUIRE(exec->outputs().size() == 3);
    exec->Forward(true);
    std::vector<double> mean, var;
    BatchStats(x, real_axis, &mean, &var);
    RequireClose(exec->outputs()[0], NaiveBatchNorm(x, mean, var, g, b, real_axis, 1e-3, false), 1e-4f);
    for (int64_t c = 0; c < C; ++c) {
      // output_mean_var gives the mean and the inverse standard deviation, as MXNet does.
      CHECK(exec->outputs()[1].GetFlat(c) == Approx(mean[c]).margin(1e-5));
      CHECK(exec->outputs()[2].GetFlat(c) == Approx(1.0 / std::sqrt(var[c] + 1e-3)).epsilon(1e-4));
      // Moving statistics: biased batch variance, momentum 0.8.
      CHECK(exec->aux_arrays()[0].GetFlat(c) == Approx(mm.GetFlat(c) * 0.8 + mean[c] * 0.2).margin(1e-5));
      CHECK(exec->aux_arrays()[1].GetFlat(c) == Approx(mv.GetFlat(c) * 0.8 + var[c] * 0.2).epsilon(1e-4));
    }
    // Inference leaves the moving statistics alone.
    NDArray before = exec->aux_arrays()[0].Copy();
    exec->Forward(false);
    RequireClose(exec->aux_arrays()[0], before, 0.0f, 0.0f);
  }
}

TEST_CASE("BatchNorm gradients in training and global-stats modes", "[ops][BatchNorm][grad]") {
  NDArray x = RandomArray(TShape({3, 2, 2}), 11, -2.0f, 2.0f), g = RandomArray(TShape({2}), 12),
          b = RandomArray(TShape({2}), 13), mm = RandomArray(TShape({2}), 14), mv = Positive(TShape({2}), 15);
  std::map<std::string, NDArray> in{{"data", x}, {"gamma", g}, {"beta", b}, {"moving_mean", mm}, {"moving_var", mv}};
  GradCheckOptions train;
  train.is_train = true;
  CheckGradients("BatchNorm", {{"fix_gamma", "False"}}, in, train);
  CheckGradients("BatchNorm", {{"fix_gamma", "True"}, {"eps", "1e-5"}}, in, train);
  CheckGradients("BatchNorm", {{"fix_gamma", "False"}, {"axis", "-1"}}, in, train);
  CheckGradients("BatchNorm", {{"fix_gamma", "False"}, {"use_global_stats", "True"}}, in, train);
  CheckGradients("BatchNorm", {{"fix_gamma", "False"}}, in);  // inference: fixed moving stats
}

TEST_CASE("BatchNorm fix_gamma writes a zero gamma gradient", "[ops][BatchNorm][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 16);
  auto exec = BindSingleOp("BatchNorm", {},
                           {{"data", x}, {"gamma", RandomArray(TShape({3}), 17)},
                            {"beta", RandomArray(TShape({3}), 18)}, {"moving_var", Positive(TShape({3}), 19)}});
  exec->grad_arrays()[1].Fill(5.0f);
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({2, 3}), 20)});
  for (int64_t c = 0; c < 3; ++c) CHECK(exec->grad_arrays()[1].GetFlat(c) == 0.0f);
}

TEST_CASE("BatchNorm shape inference and errors", "[ops][BatchNorm][shape]") {
  Symbol bn = Symbol::Create("BatchNorm", "bn0", {{"fix_gamma", "True"}, {"eps", "2e-05"}, {"momentum", "0.9"}},
                             {{"data", Symbol::Variable("data")}});
  CHECK(bn.ListArguments() == std::vector<std::string>{"data", "bn0_gamma", "bn0_beta"});
  CHECK(bn.ListAuxiliaryStates() == std::vector<std::string>{"bn0_moving_mean", "bn0_moving_var"});
  CHECK(bn.ListOutputs() == std::vector<std::string>{"bn0_output"});
  auto r = InferShape(bn, {{"data", TShape({2, 5, 3, 3})}});
  CHECK(r.arg_shapes[1] == TShape({5}));
  CHECK(r.aux_shapes[1] == TShape({5}));
  CHECK(r.out_shapes[0] == TShape({2, 5, 3, 3}));

  Symbol mv = Symbol::Create("BatchNorm", "bn1", {{"output_mean_var", "True"}}, {{"data", Symbol::Variable("data")}});
  CHECK(mv.ListOutputs() == std::vector<std::string>{"bn1_output", "bn1_mean", "bn1_var"});

  Symbol bad = Symbol::Create("BatchNorm", "bn2", {{"axis", "3"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(bad, {{"data", TShape({2, 3})}}), Catch::Contains("axis 3 is out of range"));
  CHECK_THROWS_AS(Symbol::Create("BatchNorm", "bn3", {{"fix_gamma", "maybe"}}, {}), ParamError);
  // A gamma of the wrong length is reported.
  CHECK_THROWS_AS(InferShape(bn, {{"data", TShape({2, 5})}, {"bn0_gamma", TShape({4})}}), ShapeError);
}
