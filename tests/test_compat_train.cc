// MXNet cpp-package compatibility: optimizers (vs hand-computed MXNet update rules),
// LR schedules, initializers, metrics, data iterators and KVStore, through MxNetCpp.h only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compat_test_util.h"
#include "mxnet-cpp/MxNetCpp.h"

using namespace mxnet::cpp;
using symbind::test::Values;

namespace {
NDArray Filled(float v, mx_uint n = 3) {
  NDArray a(Shape(n), Context::cpu());
  a = v;
  return a;
}
// Runs `steps` updates of weight 1 with constant gradient `g` and returns the weight.
float Run(Optimizer* opt, int steps, float g = 0.5f) {
  NDArray w = Filled(1.0f), grad = Filled(g);
  for (int i = 0; i < steps; ++i) opt->Update(0, w, grad);
  auto v = Values(w);
  CHECK(v[0] == v[2]);
  return v[0];
}
std::unique_ptr<Optimizer> Make(const std::string& name) {
  std::unique_ptr<Optimizer> opt(OptimizerRegistry::Find(name));
  REQUIRE(opt);
  opt->SetParam("lr", 0.1f);
  return opt;
}
}  // namespace

TEST_CASE("compat: SGD, momentum, NAG and Signum follow MXNet's update ops", "[compat]") {
  {  // sgd_update: w -= lr * (clip(rescale * g) + wd * w)
    auto opt = Make("sgd");
    opt->SetParam("wd", 0.01f)->SetParam("rescale_grad", 2.0f);
    CHECK(Run(opt.get(), 1) == Approx(1 - 0.1 * (2 * 0.5 + 0.01)).epsilon(1e-6));
    CHECK(opt->GetType() == "sgd");
  }
  {  // clipping
    auto opt = Make("ccsgd");
    opt->SetParam("clip_gradient", 1.0f);
    CHECK(Run(opt.get(), 1, 5.0f) == Approx(0.9).epsilon(1e-6));
  }
  {  // sgd_mom_update: mom = m * mom - lr * g; w += mom
    auto opt = Make("sgd");
    opt->SetParam("momentum", 0.9f);
    CHECK(Run(opt.get(), 2) == Approx(1 - 0.05 - (0.045 + 0.05)).epsilon(1e-6));
  }
  {  // nag_mom_update: mom = m * mom + g; w -= lr * (m * mom + g)
    auto opt = Make("nag");
    opt->SetParam("momentum", 0.9f);
    double w = 1, mom = 0;
    for (int i = 0; i < 2; ++i) {
      mom = 0.9 * mom + 0.5;
      w -= 0.1 * (0.9 * mom + 0.5);
    }
    CHECK(Run(opt.get(), 2) == Approx(w).epsilon(1e-6));
  }
  {  // signum_update: mom = m * mom - (1 - m) * g; w = (1 - lr * wd_lh) * w + lr * sign(mom)
    auto opt = Make("signum");
    CHECK(Run(opt.get(), 2) == Approx(0.8).epsilon(1e-6));
    auto plain = Make("signum");
    plain->SetParam("momentum", 0.0f)->SetParam("wd", 0.5f);
    CHECK(Run(plain.get(), 1, -3.0f) == Approx((1 - 0.05) + 0.1).epsilon(1e-6));
  }
  CHECK(OptimizerRegistry::Find("no-such-optimizer") == nullptr);
}

TEST_CASE("compat: Adam, RMSProp, AdaGrad and AdaDelta follow MXNet's rules", "[compat]") {
  {  // adam: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t)
    auto opt = Make("adam");
    double w = 1, m = 0, v = 0;
    for (int t = 1; t <= 3; ++t) {
      double g = 0.5;
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g * g;
      double lr = 0.1 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
      w -= lr * m / (std::sqrt(v) + 1e-8);
    }
    CHECK(Run(opt.get(), 3) == Approx(w).epsilon(1e-5));
  }
  {  // rmspropalex_update with gamma1 = gamma2 = 0.9
    auto opt = Make("rmsprop");
    double w = 1, n = 0, gm = 0, d = 0;
    for (int t = 0; t < 2; ++t) {
      double g = 0.5;
      n = 0.1 * g * g + 0.9 * n;
      gm = 0.1 * g + 0.9 * gm;
      d = 0.9 * d - 0.1 * g / std::sqrt(n - gm * gm + 1e-8);
      w += d;
    }
    CHECK(Run(opt.get(), 2) == Approx(w).epsilon(1e-5));
  }
  {  // adagrad: h += g^2; w -= lr * g / sqrt(h + eps)
    auto opt = Make("adagrad");
    CHECK(Run(opt.get(), 2) == Approx(1 - 0.1 - 0.1 * 0.5 / std::sqrt(0.5)).epsilon(1e-5));
  }
  {  // adadelta (rho 0.9, epsilon 1e-5)
    auto opt = Make("adadelta");
    double w = 1, ag = 0, ad = 0;
    for (int t = 0; t < 2; ++t) {
      double g = 0.5;
      ag = 0.9 * ag + 0.1 * g * g;
      double delta = std::sqrt(ad + 1e-5) / std::sqrt(ag + 1e-5) * g;
      ad = 0.9 * ad + 0.1 * delta * delta;
      w -= delta;
    }
    CHECK(Run(opt.get(), 2) == Approx(w).epsilon(1e-5));
  }
}

TEST_CASE("compat: optimizer state is per index, FactorScheduler", "[compat]") {
  auto opt = Make("sgd");
  opt->SetParam("momentum", 0.9f);
  NDArray w0 = Filled(1), w1 = Filled(1), g = Filled(0.5f);
  opt->Update(0, w0, g);
  opt->Update(0, w0, g);
  opt->Update(1, w1, g);
  CHECK(Values(w0)[0] == Approx(0.855).epsilon(1e-6));
  CHECK(Values(w1)[0] == Approx(0.95).epsilon(1e-6));
  CHECK(opt->Serialize().find("opt_type=sgd") != std::string::npos);

  auto sched = Make("sgd");
  sched->SetLRScheduler(std::unique_ptr<LRScheduler>(new FactorScheduler(2, 0.5f)));
  NDArray w = Filled(1), one = Filled(1);
  std::vector<float> steps;
  float prev = 1;
  for (int i = 0; i < 5; ++i) {
    sched->Update(0, w, one);
    steps.push_back(prev - Values(w)[0]);
    prev = Values(w)[0];
  }
  // The scheduler sees the update count before each update: lr 0.1, 0.1, 0.1, 0.05, 0.05.
  CHECK(steps[0] == Approx(0.1).epsilon(1e-5));
  CHECK(steps[2] == Approx(0.1).epsilon(1e-5));
  CHECK(steps[3] == Approx(0.05).epsilon(1e-4));
  CHECK(steps[4] == Approx(0.05).epsilon(1e-4));
}

namespace {
void MeanStd(NDArray a, double* mean, double* sd) {
  auto v = Values(a);
  double s = 0, s2 = 0;
  for (float x : v) {
    s += x;
    s2 += static_cast<double>(x) * x;
  }
  *mean = s / v.size();
  *sd = std::sqrt(s2 / v.size() - *mean * *mean);
}
}  // namespace

TEST_CASE("compat: initializers by name pattern and their statistics", "[compat]") {
  Context ctx = Context::cpu();
  MXRandomSeed(11);
  NDArray w(Shape(100, 200), ctx);
  double mean, sd;
  Xavier(Xavier::gaussian, Xavier::avg, 3)("fc_weight", &w);
  MeanStd(w, &mean, &sd);
  CHECK(mean == Approx(0).margin(0.01));
  CHECK(sd == Approx(std::sqrt(3.0 / 150)).epsilon(0.05));
  Xavier(Xavier::uniform, Xavier::in, 2)("fc_weight", &w);
  auto v = Values(w);
  float bound = std::sqrt(2.0f / 200);
  for (float x : v) REQUIRE(std::abs(x) <= bound);
  MeanStd(w, &mean, &sd);
  CHECK(sd == Approx(bound / std::sqrt(3.0)).epsilon(0.05));
  NDArray conv(Shape(16, 8, 3, 3), ctx);
  MSRAPrelu(Xavier::in, 0.25f)("conv_weight", &conv);
  MeanStd(conv, &mean, &sd);
  CHECK(sd == Approx(std::sqrt(2.0 / 1.0625 / 72)).epsilon(0.08));
  Normal(1.0f, 0.5f)("x_weight", &w);
  MeanStd(w, &mean, &sd);
  CHECK(mean == Approx(1.0).margin(0.01));
  CHECK(sd == Approx(0.5).epsilon(0.03));
  Uniform(0.07f)("y_weight", &w);
  for (float x : Values(w)) REQUIRE(std::abs(x) <= 0.07f);

  // Name patterns: bias, beta and moving means are zero; gamma and moving variances one.
  Uniform init(0.1f);
  NDArray b(Shape(5), ctx);
  b = 3.0f;
  init("fc1_bias", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 0.0f));
  init("bn_gamma", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 1.0f));
  init("bn_beta", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 0.0f));
  init("bn_moving_var", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 1.0f));
  init("bn_moving_mean", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 0.0f));
  Constant(2.5f)("anything_bias", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 2.5f));
  Zero()("w", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 0.0f));
  One()("w", &b);
  CHECK(Values(b) == std::vector<mx_float>(5, 1.0f));

  NDArray up(Shape(1, 1, 4, 4), ctx);
  Bilinear()("upsampling0_weight", &up);
  auto k = Values(up);
  CHECK(k[0] == Approx(0.0625));
  CHECK(k[5] == Approx(0.5625));
  CHECK(k[15] == Approx(0.0625));
}

TEST_CASE("compat: metrics", "[compat]") {
  Context ctx = Context::cpu();
  NDArray labels(std::vector<mx_float>{0, 1, 1}, Shape(3), ctx);
  NDArray preds(std::vector<mx_float>{0.8f, 0.2f, 0.3f, 0.7f, 0.6f, 0.4f}, Shape(3, 2), ctx);
  Accuracy acc;
  acc.Update(labels, preds);
  CHECK(acc.Get() == Approx(2.0 / 3));
  acc.Update(labels, preds);
  CHECK(acc.Get() == Approx(2.0 / 3));
  acc.Reset();
  acc.Update(NDArray(std::vector<mx_float>{1, 0, 0}, Shape(3), ctx), preds);
  CHECK(acc.Get() == Approx(1.0 / 3));
  LogLoss ll;
  ll.Update(labels, preds);
  CHECK(ll.Get() == Approx(-(std::log(0.8) + std::log(0.7) + std::log(0.4)) / 3).epsilon(1e-5));

  NDArray y(std::vector<mx_float>{1, 2, 3, 4}, Shape(4), ctx);
  NDArray p(std::vector<mx_float>{1, 3, 1, 4}, Shape(4), ctx);
  MAE mae;
  mae.Update(y, p);
  CHECK(mae.Get() == Approx(0.75));
  MSE mse;
  mse.Update(y, p);
  CHECK(mse.Get() == Approx(1.25));
  RMSE rmse;
  rmse.Update(y, p);
  CHECK(rmse.Get() == Approx(std::sqrt(1.25)));
  PSNR psnr;
  psnr.Update(y, p);
  CHECK(psnr.Get() == Approx(10 * std::log10(255 / 1.25)).epsilon(1e-5));
}

TEST_CASE("compat: MXDataIter MNISTIter on Fashion-MNIST", "[compat]") {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::ifstream(dir + "t10k-images-idx3-ubyte.gz")) {
    WARN("Fashion-MNIST not installed; skipped");
    return;
  }
  auto t10k = [&] {
    return MXDataIter("MNISTIter")
        .SetParam("image", dir + "t10k-images-idx3-ubyte.gz")
        .SetParam("label", dir + "t10k-labels-idx1-ubyte.gz");
  };
  auto iter = t10k()
                  .SetParam("batch_size", 128)
                  .SetParam("flat", 1)
                  .SetParam("shuffle", 0)
                  .CreateDataIter();
  // As MXNet 1.9.1's MNISTIter: full batches only, pixels scaled by 1/256.
  int batches = 0, max_pad = 0;
  while (iter.Next()) {
    auto batch = iter.GetDataBatch();
    if (batches == 0) {
      CHECK(batch.data.GetShape() == std::vector<mx_uint>{128, 784});
      CHECK(batch.label.GetShape() == std::vector<mx_uint>{128});
      CHECK(batch.index[5] == 5);
      for (float x : Values(batch.data)) REQUIRE((x >= 0 && x <= 255.0f / 256 && x * 256 == std::floor(x * 256)));
      for (float l : Values(batch.label)) REQUIRE((l >= 0 && l <= 9));
    }
    max_pad = std::max(max_pad, batch.pad_num);
    ++batches;
  }
  CHECK(batches == 78);  // floor(10000 / 128): the last 16 samples make no full batch
  CHECK(max_pad == 0);
  iter.Reset();
  REQUIRE(iter.Next());
  CHECK(iter.GetIndex()[0] == 0);

  // Parameters an iterator does not know are ignored, as MXNet's iterators do.
  auto shaped = t10k()
                    .SetParam("no_such_parameter", 3)
                    .SetParam("batch_size", 50)
                    .SetParam("shuffle", 1)
                    .SetParam("seed", 3)
                    .SetParam("data_shape", Shape(1, 28, 28))
                    .SetParam("label_shape", Shape(1))
                    .CreateDataIter();
  REQUIRE(shaped.Next());
  CHECK(shaped.GetData().GetShape() == std::vector<mx_uint>{50, 1, 28, 28});
  CHECK(shaped.GetLabel().GetShape() == std::vector<mx_uint>{50, 1});
  // A new order every epoch (symbind's; MXNet's MNISTIter shuffles once).
  std::vector<int> first_epoch = shaped.GetIndex();
  shaped.Reset();
  REQUIRE(shaped.Next());
  CHECK(shaped.GetIndex() != first_epoch);
  // Unknown iterators fail.
  CHECK_THROWS_WITH(MXDataIter("ImageRecordIter"), Catch::Contains("ImageRecordIter"));
}

TEST_CASE("compat: MXDataIter CSVIter", "[compat]") {
  std::string tag = std::to_string(std::random_device{}());
  std::string data_path = "/tmp/symbind_compat_" + tag + "_data.csv";
  std::string label_path = "/tmp/symbind_compat_" + tag + "_label.csv";
  {
    std::ofstream d(data_path), l(label_path);
    for (int r = 0; r < 5; ++r) {
      d << r << "," << r + 0.5 << "," << -r << "\n";
      l << r % 2 << "\n";
    }
  }
  auto iter = MXDataIter("CSVIter")
                  .SetParam("data_csv", data_path)
                  .SetParam("data_shape", Shape(3))
                  .SetParam("label_csv", label_path)
                  .SetParam("batch_size", 2)
                  .CreateDataIter();
  std::vector<DataBatch> batches;
  while (iter.Next()) batches.push_back(iter.GetDataBatch());
  REQUIRE(batches.size() == 3);
  CHECK(Values(batches[0].data) == std::vector<mx_float>{0, 0.5f, 0, 1, 1.5f, -1});
  CHECK(Values(batches[1].label) == std::vector<mx_float>{0, 1});
  CHECK(batches[2].pad_num == 1);
  CHECK(batches[2].index == std::vector<int>{4, 0});
  std::remove(data_path.c_str());
  std::remove(label_path.c_str());
}

TEST_CASE("compat: KVStore local", "[compat]") {
  KVStore kv("local");
  CHECK(KVStore::GetType() == "local");
  CHECK(KVStore::GetRank() == 0);
  CHECK(KVStore::GetNumWorkers() == 1);
  kv.Init(101, Filled(1));
  kv.Push(101, Filled(2));
  NDArray out(Shape(3), Context::cpu());
  kv.Pull(101, &out);
  CHECK(Values(out) == std::vector<mx_float>(3, 2.0f));
  // Values pushed together for one key are summed.
  kv.Push(std::vector<int>{101, 101}, std::vector<NDArray>{Filled(1), Filled(3)});
  kv.Pull(101, &out);
  CHECK(Values(out) == std::vector<mx_float>(3, 4.0f));

  std::unique_ptr<Optimizer> opt(OptimizerRegistry::Find("sgd"));
  opt->SetParam("lr", 0.5f);
  KVStore::SetOptimizer(std::move(opt));
  KVStore::Init("w", Filled(1));
  KVStore::Push("w", Filled(0.5f));  // w -= 0.5 * 0.5
  std::vector<NDArray> outs;
  KVStore::Pull(std::vector<std::string>{"w"}, &outs);
  CHECK(Values(outs[0]) == std::vector<mx_float>(3, 0.75f));
  KVStore::SetOptimizer(std::unique_ptr<Optimizer>());
  CHECK_THROWS(KVStore::Pull(999, &out));
  CHECK_THROWS_WITH(KVStore::SetType("dist_async"), Catch::Contains("dist_sync"));  // dist_sync: tests/dist
}
