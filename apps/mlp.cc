// symbind-mlp: trains a 784-128-64-10 MLP on Fashion-MNIST with plain SGD.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

#include <symbind/executor/executor.h>
#include <symbind/io/mnist.h>

#include "progress.h"
#include "training.h"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train a 784-128-64-10 MLP on Fashion-MNIST with symbind"};
  int epochs = 10, batch = 100;
  float lr = 0.1f;
  std::string dir = DefaultFashionMNISTDir();
  uint64_t seed = 1;
  std::string kvstore;
  int max_batches = 0;
  app.add_option("--epochs", epochs, "Training epochs")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "Batch size")->check(CLI::PositiveNumber);
  app.add_option("--lr", lr, "SGD learning rate")->check(CLI::PositiveNumber);
  app.add_option("--data", dir, "Directory with the Fashion-MNIST idx files");
  app.add_option("--seed", seed, "Seed for initialisation and shuffling");
  app.add_option("--kvstore", kvstore,
                 "Train through a KVStore: local, or dist_sync under mpirun (each rank takes its part of "
                 "the training set; --batch is per rank)");
  app.add_option("--max-batches", max_batches, "Stop each epoch after this many batches (0: all)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    std::unique_ptr<KVStore> kv = kvstore.empty() ? nullptr : KVStore::Create(kvstore);
    const int rank = kv ? kv->rank() : 0, workers = kv ? kv->num_workers() : 1;
    MNISTData train = LoadFashionMNIST(true, dir), test = LoadFashionMNIST(false, dir);
    MNISTIter train_it(MNISTPart(train, rank, workers), batch, true, seed + static_cast<uint64_t>(rank), true);
    Symbol net = BuildMlp();
    auto exec = SimpleBind(net, Context::CPU(), {{"data", NDArray(TShape({batch, 784}))},
                                                 {"softmax_label", NDArray(TShape({batch}))}});
    std::mt19937_64 rng(seed);
    InitParameters(*exec, Xavier{}, rng);
    const SGDOptions sgd_options{lr};  // plain SGD: no momentum, no weight decay
    SGD sgd(sgd_options);
    std::unique_ptr<apps::KVStoreSgd> dist;
    if (kv) dist = std::make_unique<apps::KVStoreSgd>(kv.get(), *exec, sgd_options);
    if (rank == 0)
      std::printf("symbind-mlp: 784-128-64-10, batch %d, lr %g, %d epochs, %lld training images, %d worker(s)%s\n",
                  batch, lr, epochs, static_cast<long long>(train.labels.Size()), workers,
                  kv ? (" through KVStore " + kv->type()).c_str() : "");
    const int steps = max_batches > 0 ? std::min(max_batches, train_it.num_batches()) : train_it.num_batches();
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      apps::EpochStats st =
          apps::TrainEpoch(exec.get(), &train_it, steps, dist.get(), &sgd, epoch, rank == 0);
      if (rank != 0) continue;  // every rank holds the same weights: rank 0 reports
      double acc = apps::Evaluate(net, apps::TrainedParams(*exec), {}, test, 1000, true).accuracy;
      std::printf("epoch %d test_accuracy %.4f samples_per_s %.0f\n", epoch, acc,
                  static_cast<double>(st.batches) * batch * workers / st.seconds);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symbind-mlp: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
