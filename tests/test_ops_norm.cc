// Normalization ops (BatchNorm, InstanceNorm, L2Normalization, LayerNorm, LRN): forward
// against naive references, gradients against finite differences, shape inference, errors.
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
  const TShape& s = x.shape();
  int64_t outer = 1, inner = 1, C = s[axis];
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) inner *= s[i];
  NDArray y(s);
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
  const TShape& s = x.shape();
  int64_t outer = 1, inner = 1, C = s[axis];
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) inner *= s[i];
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

// ---------------------------------------------------------------------------------------------
TEST_CASE("InstanceNorm forward matches a naive reference", "[ops][InstanceNorm]") {
  NDArray x = RandomArray(TShape({2, 3, 2, 3}), 21, -2.0f, 2.0f), g = RandomArray(TShape({3}), 22),
          b = RandomArray(TShape({3}), 23);
  auto exec = BindSingleOp("InstanceNorm", {{"eps", "0.01"}}, {{"data", x}, {"gamma", g}, {"beta", b}}, {}, OpReq::kNull);
  exec->Forward(false);
  NDArray want(x.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      double m = 0, v = 0;
      for (int64_t j = 0; j < 6; ++j) m += x.GetFlat((n * 3 + c) * 6 + j);
      m /= 6;
      for (int64_t j = 0; j < 6; ++j) v += std::pow(x.GetFlat((n * 3 + c) * 6 + j) - m, 2);
      v /= 6;
      for (int64_t j = 0; j < 6; ++j) {
        int64_t at = (n * 3 + c) * 6 + j;
        want.SetFlat(at, static_cast<float>((x.GetFlat(at) - m) / std::sqrt(v + 0.01) * g.GetFlat(c) + b.GetFlat(c)));
      }
    }
  RequireClose(exec->outputs()[0], want);
  CHECK(exec->outputs().size() == 1);
}

TEST_CASE("InstanceNorm gradients, shapes and errors", "[ops][InstanceNorm][grad]") {
  CheckGradients("InstanceNorm", {},
                 {{"data", RandomArray(TShape({2, 2, 3}), 24, -2.0f, 2.0f)}, {"gamma", RandomArray(TShape({2}), 25)},
                  {"beta", RandomArray(TShape({2}), 26)}});
  Symbol s = Symbol::Create("InstanceNorm", "in0", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "in0_gamma", "in0_beta"});
  auto r = InferShape(s, {{"data", TShape({4, 5, 6})}});
  CHECK(r.arg_shapes[1] == TShape({5}));
  CHECK(r.out_shapes[0] == TShape({4, 5, 6}));
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({4, 5})}}), Catch::Contains("rank >= 3"));
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("L2Normalization forward in all modes", "[ops][L2Normalization]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 27);
  for (std::string mode : {"instance", "channel", "spatial"}) {
    INFO(mode);
    NDArray y = RunForward("L2Normalization", {{"mode", mode}}, {{"data", x}});
    NDArray want(x.shape());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t s = 0; s < 4; ++s) {
          double sq = 0;
          for (int64_t c2 = 0; c2 < 3; ++c2)
            for (int64_t s2 = 0; s2 < 4; ++s2) {
              bool same_group = mode == "instance" || (mode == "channel" && s2 == s) || (mode == "spatial" && c2 == c);
              if (same_group) sq += std::pow(x.GetFlat((n * 3 + c2) * 4 + s2), 2);
            }
          int64_t at = (n * 3 + c) * 4 + s;
          want.SetFlat(at, static_cast<float>(x.GetFlat(at) / std::sqrt(sq + 1e-10)));
        }
    RequireClose(y, want);
  }
}

TEST_CASE("L2Normalization gradients, shapes and errors", "[ops][L2Normalization][grad]") {
  for (std::string mode : {"instance", "channel", "spatial"}) {
    INFO(mode);
    CheckGradients("L2Normalization", {{"mode", mode}}, {{"data", RandomArray(TShape({2, 3, 2}), 28)}});
  }
  auto infer = [](const std::string& mode, const TShape& d) {
    Symbol s = Symbol::Create("L2Normalization", "l2", {{"mode", mode}}, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  CHECK(infer("instance", TShape({2, 3})) == TShape({2, 3}));
  CHECK_THROWS_WITH(infer("channel", TShape({2, 3})), Catch::Contains("at least 3 dimensions"));
  CHECK_THROWS_AS(infer("bogus", TShape({2, 3})), ParamError);
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("LayerNorm forward along any axis, with mean and std outputs", "[ops][LayerNorm]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 29, -2.0f, 2.0f);
  for (int axis : {-1, 1, 0}) {
    INFO("axis " << axis);
    int ra = axis < 0 ? 2 : axis;
    int64_t C = x.shape()[ra];
    NDArray g = RandomArray(TShape({C}), 30), b = RandomArray(TShape({C}), 31);
    auto exec = BindSingleOp("LayerNorm", {{"axis", std::to_string(axis)}, {"output_mean_var", "True"}},
                             {{"data", x}, {"gamma", g}, {"beta", b}}, {}, OpReq::kNull);
    exec->Forward(false);
    REQUIRE(exec->outputs().size() == 3);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < ra; ++i) outer *= x.shape()[i];
    for (int i = ra + 1; i < 3; ++i) inner *= x.shape()[i];
    NDArray want(x.shape());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double m = 0, v = 0;
        for (int64_t k = 0; k < C; ++k) m += x.GetFlat((o * C + k) * inner + i);
        m /= C;
        for (int64_t k = 0; k < C; ++k) v += std::pow(x.GetFlat((o * C + k) * inner + i) - m, 2);
        v /= C;
        for (int64_t k = 0; k < C; ++k) {
          int64_t at = (o * C + k) * inner + i;
          want.SetFlat(at, static_cast<float>((x.GetFlat(at) - m) / std::sqrt(v + 1e-5) * g.GetFlat(k) + b.GetFlat(k)));
        }
        CHECK(exec->outputs()[1].GetFlat(o * inner + i) == Approx(m).margin(1e-5));
        CHECK(exec->outputs()[2].GetFlat(o * inner + i) == Approx(std::sqrt(v + 1e-5)).epsilon(1e-4));
      }
    RequireClose(exec->outputs()[0], want, 1e-4f);
    TShape moments = x.shape();
    moments[ra] = 1;
    CHECK(exec->outputs()[1].shape() == moments);
  }
}

TEST_CASE("LayerNorm gradients, shapes and errors", "[ops][LayerNorm][grad]") {
  for (std::string axis : {"-1", "1"}) {
    INFO(axis);
    NDArray x = RandomArray(TShape({2, 3, 2}), 32, -2.0f, 2.0f);
    int64_t C = axis == "1" ? 3 : 2;
    CheckGradients("LayerNorm", {{"axis", axis}},
                   {{"data", x}, {"gamma", RandomArray(TShape({C}), 33)}, {"beta", RandomArray(TShape({C}), 34)}});
  }
  Symbol s = Symbol::Create("LayerNorm", "ln", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"ln_output"});
  auto r = InferShape(s, {{"data", TShape({3, 7})}});
  CHECK(r.arg_shapes[1] == TShape({7}));
  Symbol bad = Symbol::Create("LayerNorm", "ln", {{"axis", "2"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(bad, {{"data", TShape({3, 7})}}), Catch::Contains("out of range"));
}

// ---------------------------------------------------------------------------------------------
TEST_CASE("LRN forward matches MXNet's formula", "[ops][LRN]") {
  NDArray x = RandomArray(TShape({2, 5, 2, 2}), 35, -2.0f, 2.0f);
  KwArgs kw{{"nsize", "3"}, {"alpha", "0.5"}, {"beta", "0.75"}, {"knorm", "1.5"}};
  NDArray y = RunForward("LRN", kw, {{"data", x}});
  NDArray want(x.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t s = 0; s < 4; ++s) {
        double sq = 0;
        for (int64_t k = c - 1; k <= c + 1; ++k)
          if (k >= 0 && k < 5) sq += std::pow(x.GetFlat((n * 5 + k) * 4 + s), 2);
        int64_t at = (n * 5 + c) * 4 + s;
        want.SetFlat(at, static_cast<float>(x.GetFlat(at) * std::pow(1.5 + 0.5 / 3 * sq, -0.75)));
      }
  RequireClose(y, want);
}

TEST_CASE("LRN gradients, shapes and errors", "[ops][LRN][grad]") {
  CheckGradients("LRN", {{"nsize", "3"}, {"alpha", "0.5"}, {"knorm", "1"}},
                 {{"data", RandomArray(TShape({1, 4, 2, 1}), 36, -2.0f, 2.0f)}});
  CheckGradients("LRN", {{"nsize", "5"}, {"alpha", "0.3"}, {"beta", "0.5"}},
                 {{"data", RandomArray(TShape({2, 3, 1, 2}), 37, -2.0f, 2.0f)}});
  auto infer = [](const KwArgs& kw, const TShape& d) {
    Symbol s = Symbol::Create("LRN", "lrn", kw, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  CHECK(infer({{"nsize", "5"}}, TShape({1, 3, 4, 4})) == TShape({1, 3, 4, 4}));
  CHECK_THROWS_WITH(infer({{"nsize", "4"}}, TShape({1, 3, 4, 4})), Catch::Contains("odd values"));
  CHECK_THROWS_WITH(infer({{"nsize", "3"}}, TShape({3, 4})), Catch::Contains("4-D"));
  CHECK_THROWS_AS(Symbol::Create("LRN", "lrn", {}, {}), ParamError);  // nsize is required
}
