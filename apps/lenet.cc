// symbind-lenet: LeNet on Fashion-MNIST.
//   symbind-lenet demo   classify the test set with the bundled pretrained checkpoint
//   symbind-lenet train  retrain from scratch and save a checkpoint
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <symbind/executor/executor.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/mnist.h>

#include "lenet_report.h"
#include "progress.h"

using namespace symbind;

namespace {
Symbol BuildLeNet() {
  Symbol x = Symbol::Variable("data");
  auto conv = [](const Symbol& in, int filters, const std::string& name) {
    return OpBuilder("Convolution").SetParam("kernel", "(5,5)").SetParam("num_filter", filters)
        .SetInput("data", in).CreateSymbol(name);
  };
  auto relu = [](const Symbol& in, const std::string& name) {
    return OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", in).CreateSymbol(name);
  };
  auto pool = [](const Symbol& in, const std::string& name) {
    return OpBuilder("Pooling").SetParam("pool_type", "max").SetParam("kernel", "(2,2)")
        .SetParam("stride", "(2,2)").SetInput("data", in).CreateSymbol(name);
  };
  Symbol h = pool(relu(conv(x, 20, "conv1"), "relu1"), "pool1");
  h = pool(relu(conv(h, 50, "conv2"), "relu2"), "pool2");
  h = OpBuilder("Flatten").SetInput("data", h).CreateSymbol("flatten");
  h = relu(OpBuilder("FullyConnected").SetParam("num_hidden", 500).SetInput("data", h).CreateSymbol("fc1"), "relu3");
  h = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", h).CreateSymbol("fc2");
  return OpBuilder("SoftmaxOutput").SetParam("normalization", "batch").SetInput("data", h).CreateSymbol("softmax");
}

struct TrainOptions {
  int epochs, batch;
  float lr;
  uint64_t seed;
  std::string kvstore;  // empty: plain SGD in this process
  int max_batches;      // per epoch and rank; 0: all
};

int Train(const std::string& data_dir, const std::string& prefix, const TrainOptions& o,
          const std::string& bundled_prefix, int bundled_epoch) {
  const int epochs = o.epochs, batch = o.batch;
  const float lr = o.lr;
  std::unique_ptr<KVStore> kv = o.kvstore.empty() ? nullptr : KVStore::Create(o.kvstore);
  const int rank = kv ? kv->rank() : 0, workers = kv ? kv->num_workers() : 1;
  MNISTData train = LoadFashionMNIST(true, data_dir), test = LoadFashionMNIST(false, data_dir);
  // Each rank trains on its part of the training set (MXNet's part_index / num_parts).
  MNISTIter train_it(MNISTPart(train, rank, workers), batch, true, o.seed + static_cast<uint64_t>(rank), false);
  Symbol net = BuildLeNet();
  auto exec = SimpleBind(net, Context::CPU(), {{"data", NDArray(TShape({batch, 1, 28, 28}))},
                                               {"softmax_label", NDArray(TShape({batch}))}});
  std::mt19937_64 rng(o.seed);
  InitParameters(*exec, Xavier{}, rng);
  const SGDOptions sgd_options{lr, /*momentum=*/0.9f, /*wd=*/1e-4f};
  SGD sgd(sgd_options);
  std::unique_ptr<apps::KVStoreSgd> dist;
  if (kv) dist = std::make_unique<apps::KVStoreSgd>(kv.get(), *exec, sgd_options);
  const int steps = o.max_batches > 0 ? std::min(o.max_batches, train_it.num_batches()) : train_it.num_batches();
  if (rank == 0)
    std::printf("symbind-lenet train: batch %d, lr %g, momentum 0.9, %d epochs of %d batches, %d worker(s)%s\n",
                batch, lr, epochs, steps, workers, kv ? (" through KVStore " + kv->type()).c_str() : "");
  double acc = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    apps::EpochStats st = apps::TrainEpoch(exec.get(), &train_it, steps, dist.get(), &sgd, epoch,
                                           rank == 0);
    if (rank != 0) continue;  // every rank holds the same weights: rank 0 reports
    acc = apps::Evaluate(net, apps::TrainedParams(*exec), {}, test, 500).accuracy;
    std::printf("epoch %d test_accuracy %.4f samples_per_s %.0f\n", epoch, acc,
                static_cast<double>(st.batches) * batch * workers / st.seconds);
    std::fflush(stdout);
  }
  if (rank != 0) return 0;
  const auto dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  SaveCheckpoint(prefix, epochs, net, apps::TrainedParams(*exec), {});
  std::printf("saved %s and %s\n", CheckpointSymbolPath(prefix).c_str(),
              CheckpointParamsPath(prefix, epochs).c_str());
  // How the retrained model compares with the bundled checkpoint.
  Symbol bundled;
  std::map<std::string, NDArray> bundled_args, bundled_aux;
  LoadCheckpoint(bundled_prefix, bundled_epoch, &bundled, &bundled_args, &bundled_aux);
  double reference = apps::Evaluate(bundled, bundled_args, bundled_aux, test, 500).accuracy;
  std::printf("retrained test_accuracy %.4f, bundled checkpoint %.4f, difference %+.4f\n", acc,
              reference, acc - reference);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"LeNet on Fashion-MNIST: classify with the bundled checkpoint, or retrain it"};
  app.require_subcommand(0, 1);
  std::string data_dir = DefaultFashionMNISTDir();
  std::string prefix = SYMBIND_LENET_PREFIX;
  int epoch = SYMBIND_LENET_EPOCH, epochs = SYMBIND_LENET_EPOCH, batch = 100, samples = 16;
  float lr = 0.05f;
  uint64_t seed = 1;
  std::string kvstore;
  int max_batches = 0;
  std::string png = SYMBIND_LENET_PNG;
  std::string save_prefix = SYMBIND_LENET_RETRAIN_PREFIX;
  app.add_option("--data", data_dir, "Directory with the Fashion-MNIST idx files");
  app.add_option("--model", prefix, "Checkpoint prefix (PREFIX-symbol.json, PREFIX-NNNN.params)");
  CLI::App* demo = app.add_subcommand("demo", "Classify the test set with the pretrained checkpoint (default)");
  demo->add_option("--epoch", epoch, "Checkpoint epoch to load");
  demo->add_option("--png", png, "Where to write the grid of sample predictions");
  demo->add_option("--samples", samples, "Sample predictions to print and draw")->check(CLI::Range(1, 100));
  CLI::App* train = app.add_subcommand("train", "Retrain from scratch and save a checkpoint");
  train->add_option("--epochs", epochs, "Training epochs")->check(CLI::PositiveNumber);
  train->add_option("--batch", batch, "Batch size")->check(CLI::PositiveNumber);
  train->add_option("--lr", lr, "Learning rate (SGD with momentum 0.9)")->check(CLI::PositiveNumber);
  train->add_option("--seed", seed, "Seed for initialisation and shuffling");
  train->add_option("--save", save_prefix, "Prefix of the checkpoint to write");
  train->add_option("--kvstore", kvstore,
                    "Train through a KVStore: local, or dist_sync under mpirun (each rank takes its part of "
                    "the training set; --batch is per rank)");
  train->add_option("--max-batches", max_batches, "Stop each epoch after this many batches (0: all)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    if (train->parsed())
      return Train(data_dir, save_prefix, {epochs, batch, lr, seed, kvstore, max_batches}, prefix, epoch);
    return apps::RunDemo(prefix, epoch, data_dir, png, samples);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symbind-lenet: error: %s\n", e.what());
    return 1;
  }
}
