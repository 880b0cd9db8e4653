// symbind-mlp: trains a 784-128-64-10 MLP on Fashion-MNIST with plain SGD.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include <symbind/executor/executor.h>
#include <symbind/io/mnist.h>

#include "progress.h"

using namespace symbind;

namespace {
Symbol BuildMlp() {
  Symbol x = Symbol::Variable("data");
  auto fc = [](const Symbol& in, int hidden, const std::string& name) {
    return OpBuilder("FullyConnected").SetParam("num_hidden", hidden).SetInput("data", in).CreateSymbol(name);
  };
  auto relu = [](const Symbol& in, const std::string& name) {
    return OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", in).CreateSymbol(name);
  };
  Symbol h = relu(fc(x, 128, "fc1"), "relu1");
  h = relu(fc(h, 64, "fc2"), "relu2");
  return OpBuilder("SoftmaxOutput").SetParam("normalization", "batch").SetInput("data", fc(h, 10, "fc3"))
      .CreateSymbol("softmax");
}

// He-style scaled Gaussian for weights, zero biases (SimpleBind's N(0,1) is too large here).
void InitParams(Executor& exec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& kv : exec.arg_dict()) {
    const NDArray& a = kv.second;
    if (kv.first.size() > 5 && kv.first.compare(kv.first.size() - 5, 5, "_bias") == 0) {
      a.Fill(0.0f);
    } else if (kv.first.size() > 7 && kv.first.compare(kv.first.size() - 7, 7, "_weight") == 0) {
      std::normal_distribution<float> dist(0.0f, std::sqrt(2.0f / static_cast<float>(a.shape()[1])));
      float* p = a.fdata();
      for (int64_t i = 0; i < a.Size(); ++i) p[i] = dist(rng);
    }
  }
}

double Accuracy(Executor& exec, MNISTIter& it) {
  int64_t correct = 0, total = 0;
  it.Reset();
  NDArray data = exec.arg_dict()["data"];
  while (it.Next()) {
    it.data().CopyTo(&data);
    exec.Forward(false);
    const NDArray& prob = exec.outputs()[0];
    const NDArray label = it.label();
    int64_t valid = it.batch_size() - it.pad();
    int64_t classes = prob.shape()[1];
    const float* p = prob.fdata();
    for (int64_t r = 0; r < valid; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (p[r * classes + c] > p[r * classes + best]) best = c;
      correct += best == static_cast<int64_t>(label.GetFlat(r));
      ++total;
    }
  }
  return static_cast<double>(correct) / static_cast<double>(total);
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a 784-128-64-10 MLP on Fashion-MNIST with symbind"};
  int epochs = 10, batch = 100;
  float lr = 0.1f;
  std::string dir = DefaultFashionMNISTDir();
  uint64_t seed = 1;
  app.add_option("--epochs", epochs, "Training epochs")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "Batch size")->check(CLI::PositiveNumber);
  app.add_option("--lr", lr, "SGD learning rate")->check(CLI::PositiveNumber);
  app.add_option("--data", dir, "Directory with the Fashion-MNIST idx files");
  app.add_option("--seed", seed, "Seed for initialisation and shuffling");
  CLI11_PARSE(app, argc, argv);

  try {
    MNISTData train = LoadFashionMNIST(true, dir), test = LoadFashionMNIST(false, dir);
    MNISTIter train_it(train, batch, true, seed, true), test_it(test, 1000, false, 0, true);
    Symbol net = BuildMlp();
    auto exec = SimpleBind(net, Context::CPU(), {{"data", NDArray(TShape({batch, 784}))},
                                                 {"softmax_label", NDArray(TShape({batch}))}});
    InitParams(*exec, seed);
    // The evaluation executor shares the trained weights (same storage, no copies).
    std::map<std::string, NDArray> eval_args = exec->arg_dict();
    eval_args["data"] = NDArray(TShape({1000, 784}));
    eval_args["softmax_label"] = NDArray(TShape({1000}));
    auto eval = SimpleBind(net, Context::CPU(), eval_args);

    NDArray data = exec->arg_dict()["data"], label = exec->arg_dict()["softmax_label"];
    std::printf("symbind-mlp: 784-128-64-10, batch %d, lr %g, %d epochs, %lld training images\n", batch, lr,
                epochs, static_cast<long long>(train.labels.Size()));
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      apps::ProgressBar bar("epoch " + std::to_string(epoch), train_it.num_batches());
      train_it.Reset();
      auto t0 = std::chrono::steady_clock::now();
      int done = 0;
      int64_t samples = 0;
      while (train_it.Next()) {
        train_it.data().CopyTo(&data);
        train_it.label().CopyTo(&label);
        exec->Forward(true);
        exec->Backward();
        const auto& args = exec->arg_arrays();
        const auto& grads = exec->grad_arrays();
        for (size_t i = 0; i < args.size(); ++i) {
          if (exec->grad_reqs()[i] == OpReq::kNull) continue;
          float* w = args[i].fdata();
          const float* g = grads[i].fdata();
          for (int64_t k = 0, n = args[i].Size(); k < n; ++k) w[k] -= lr * g[k];
        }
        samples += batch;
        bar.Update(++done);
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double acc = Accuracy(*eval, test_it);
      std::printf("epoch %d test_accuracy %.4f samples_per_s %.0f\n", epoch, acc, samples / secs);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symbind-mlp: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
