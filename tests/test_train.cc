// train/optimizer.h and train/initializer.h against naive formulas.
#include <catch2/catch.hpp>

#include <cmath>

#include <cstdio>
#include <limits>

#include <symbind/executor/executor.h>
#include <symbind/io/model_file.h>
#include <symbind/train/initializer.h>
#include <symbind/train/kvstore.h>
#include <symbind/train/optimizer.h>

#include "op_test_util.h"
#include "test_io_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("SGD: updates with and without momentum follow MXNet's rules", "[train]") {
  const int n = 10;
  NDArray w = RandomArray(TShape({2, 5}), 1), g = RandomArray(TShape({2, 5}), 2);
  std::vector<double> ref_w(n), ref_m(n, 0.0);
  for (int i = 0; i < n; ++i) ref_w[i] = w.GetFlat(i);
  SGDOptions o;
  o.lr = 0.1f;
  o.momentum = 0.9f;
  o.wd = 0.01f;
  o.rescale_grad = 0.5f;
  o.clip_gradient = 0.3f;
  SGD sgd(o);
  for (int step = 0; step < 3; ++step) {
    sgd.Update("w", w, g);
    for (int i = 0; i < n; ++i) {
      const double clipped = std::max(-0.3, std::min(0.3, 0.5 * g.GetFlat(i)));
      ref_m[i] = 0.9 * ref_m[i] - 0.1 * 0.01 * ref_w[i] - 0.1 * clipped;
      ref_w[i] += ref_m[i];
    }
  }
  for (int i = 0; i < n; ++i) CHECK(w.GetFlat(i) == Approx(ref_w[i]).epsilon(1e-5));

  sgd.options().momentum = 0.0f;  // sgd_update: no state
  NDArray before = w.Copy();
  sgd.Update("w", w, g);
  for (int i = 0; i < n; ++i) {
    const double clipped = std::max(-0.3, std::min(0.3, 0.5 * g.GetFlat(i)));
    CHECK(w.GetFlat(i) == Approx((1 - 0.1 * 0.01) * before.GetFlat(i) - 0.1 * clipped).epsilon(1e-5));
  }
  CHECK_THROWS_AS(sgd.Update("w", w, RandomArray(TShape({3}), 3)), ShapeError);
  CHECK_THROWS_AS(sgd.Update("w", w, NDArray(TShape({2, 5}), DType::kInt32)), TypeError);
}

TEST_CASE("SGD: options must be finite and in range, or the update is refused", "[train][hostile]") {
  // NaN and inf were accepted and turned every weight into NaN.
  NDArray w = RandomArray(TShape({2, 3}), 1), g = RandomArray(TShape({2, 3}), 2);
  const NDArray before = w.Copy();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Bad {
    float SGDOptions::*field;
    float value;
    const char* says;
  };
  for (const Bad& bad : {Bad{&SGDOptions::lr, nan, "Parameter lr should be a finite number"},
                         Bad{&SGDOptions::lr, -0.1f, "Parameter lr should be greater equal to 0"},
                         Bad{&SGDOptions::momentum, inf, "Parameter momentum should be a finite number"},
                         Bad{&SGDOptions::momentum, 1.5f, "Parameter momentum should be in range [0, 1]"},
                         Bad{&SGDOptions::wd, inf, "Parameter wd should be a finite number"},
                         Bad{&SGDOptions::rescale_grad, nan, "Parameter rescale_grad should be a finite number"},
                         Bad{&SGDOptions::clip_gradient, -inf, "Parameter clip_gradient should be a finite number"}}) {
    SGDOptions o;
    o.momentum = 0.5f;
    o.*bad.field = bad.value;
    SGD sgd(o);
    INFO(bad.says);
    CHECK_THROWS_WITH(sgd.Update("w", w, g), Catch::Contains(bad.says));
  }
  RequireClose(w, before, 0.0f, 0.0f);
}

TEST_CASE("SGD: a read-only weight is refused, not written", "[train][hostile]") {
  // A weight mapped from a .symbind file: the update faulted (SIGSEGV) on its PROT_READ pages.
  Model model;
  model.symbol = OpBuilder("FullyConnected").SetParam("num_hidden", 2).SetInput("data", Symbol::Variable("data"))
                     .CreateSymbol("fc");
  model.args["fc_weight"] = RandomArray(TShape({2, 3}), 1);
  model.args["fc_bias"] = RandomArray(TShape({2}), 2);
  const std::string path = symbind_test::TempPath("sgd-mapped.symbind");
  SaveModel(path, model);
  Model mapped = LoadModel(path);
  NDArray g = RandomArray(TShape({2, 3}), 3);
  SGD sgd({/*lr=*/0.1f});
  CHECK_THROWS_WITH(sgd.Update("fc_weight", mapped.args.at("fc_weight"), g),
                    "operator sgd (sgd_update) output 0: the array is read-only (weights mapped from " + path +
                        "); write into a Copy() of it instead");
  // A ReadOnlyView, as every Predictor shares: the update changed the weights under them.
  NDArray w = RandomArray(TShape({2, 3}), 4);
  const NDArray before = w.Copy();
  CHECK_THROWS_WITH(sgd.Update("w", ReadOnlyView(w, "a shared weight"), g), Catch::Contains("read-only (a shared weight)"));
  RequireClose(w, before, 0.0f, 0.0f);
  std::remove(path.c_str());
}

TEST_CASE("KVStore::Pull into a null pointer throws", "[train][hostile]") {
  auto kv = KVStore::Create("local");
  kv->Init({"w"}, {NDArray(TShape({2}))});
  CHECK_THROWS_WITH(kv->Pull({"w"}, {nullptr}), "KVStore::Pull: output 0 for key 'w' is a null pointer");
}

TEST_CASE("SGD::Step updates arguments with a gradient only", "[train]") {
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 3).SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  Symbol net = OpBuilder("LinearRegressionOutput").SetInput("data", fc).CreateSymbol("out");
  auto exec = SimpleBind(net, Context::CPU(), {{"data", RandomArray(TShape({4, 2}), 4)},
                                                {"out_label", RandomArray(TShape({4, 3}), 5)}});
  exec->Forward(true);
  exec->Backward();
  const auto args = exec->arg_dict();
  const auto grads = exec->grad_dict();
  NDArray w0 = args.at("fc_weight").Copy(), data0 = args.at("data").Copy();
  SGD sgd({/*lr=*/0.5f});
  sgd.Step(*exec);
  for (int64_t i = 0; i < w0.Size(); ++i)
    CHECK(args.at("fc_weight").GetFlat(i) ==
          Approx(w0.GetFlat(i) - 0.5 * grads.at("fc_weight").GetFlat(i)).epsilon(1e-6));
  RequireClose(args.at("data"), data0, 0.0f, 0.0f);
}

TEST_CASE("Xavier: scale from the fans, values within it, name rules", "[train]") {
  Xavier uniform;
  CHECK(uniform.Scale(TShape({8, 4, 3, 3})) == Approx(std::sqrt(6.0 / (4 * 9 + 8 * 9))));
  Xavier in;
  in.factor = Xavier::Factor::kIn;
  in.magnitude = 2;
  CHECK(in.Scale(TShape({10, 20})) == Approx(std::sqrt(2.0 / 20)));

  Symbol conv = OpBuilder("Convolution").SetParam("kernel", TShape({3, 3})).SetParam("num_filter", 8)
                    .SetInput("data", Symbol::Variable("data")).CreateSymbol("conv");
  Symbol bn = OpBuilder("BatchNorm").SetInput("data", conv).CreateSymbol("bn");
  auto exec = SimpleBind(bn, Context::CPU(), {{"data", RandomArray(TShape({1, 4, 8, 8}), 1)}});
  NDArray data0 = exec->arg_dict().at("data").Copy();
  std::mt19937_64 rng(3);
  InitParameters(*exec, uniform, rng);
  const auto args = exec->arg_dict();
  const auto aux = exec->aux_dict();
  const float bound = uniform.Scale(TShape({8, 4, 3, 3}));
  const NDArray& w = args.at("conv_weight");
  double sum_sq = 0;
  for (int64_t i = 0; i < w.Size(); ++i) {
    CHECK(std::abs(w.GetFlat(i)) <= bound);
    sum_sq += w.GetFlat(i) * w.GetFlat(i);
  }
  // Uniform in [-b, b] has variance b^2 / 3.
  CHECK(sum_sq / w.Size() == Approx(bound * bound / 3).epsilon(0.2));
  for (int64_t i = 0; i < 8; ++i) {
    CHECK(args.at("conv_bias").GetFlat(i) == 0.0f);
    CHECK(args.at("bn_gamma").GetFlat(i) == 1.0f);
    CHECK(args.at("bn_beta").GetFlat(i) == 0.0f);
    CHECK(aux.at("bn_moving_mean").GetFlat(i) == 0.0f);
    CHECK(aux.at("bn_moving_var").GetFlat(i) == 1.0f);
  }
  RequireClose(args.at("data"), data0, 0.0f, 0.0f);
}
