// Shared helpers for the examples (as cpp-package/example/utils.h): Fashion-MNIST iterators
// and a train-then-test loop written only against the MXNet cpp-package API.
#pragma once
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "mxnet-cpp/MxNetCpp.h"

using namespace mxnet::cpp;

// The Fashion-MNIST directory: argv[1], else $SYMBIND_FASHION_MNIST, else Debian's location.
inline std::string FashionMNISTDir(int argc, char** argv) {
  if (argc > 1) return argv[1];
  if (const char* env = std::getenv("SYMBIND_FASHION_MNIST")) return env;
  return "/usr/share/datasets/fashion-mnist";
}

inline MXDataIter FashionMNISTIter(const std::string& dir, bool train, int batch_size, bool flat) {
  std::string prefix = dir + (train ? "/train" : "/t10k");
  return MXDataIter("MNISTIter")
      .SetParam("image", prefix + "-images-idx3-ubyte.gz")
      .SetParam("label", prefix + "-labels-idx1-ubyte.gz")
      .SetParam("batch_size", batch_size)
      .SetParam("flat", flat ? 1 : 0)
      .SetParam("shuffle", train ? 1 : 0)
      .SetParam("seed", 42)
      .CreateDataIter();
}

struct TrainConfig {
  int batch_size = 100;
  int epochs = 1;
  int max_batches_per_epoch = -1;  // -1: the whole epoch
  bool flat = false;
  std::string optimizer = "sgd";
  float learning_rate = 0.1f;
  float momentum = 0.9f;
  float weight_decay = 1e-4f;
};

// Trains `net` (inputs "data" and "data_label") on the training set, then prints and returns the
// accuracy on the test set.
inline float TrainAndTest(Symbol net, const std::string& dir, const TrainConfig& cfg) {
  Context ctx = Context::cpu();
  auto train_iter = FashionMNISTIter(dir, true, cfg.batch_size, cfg.flat);
  auto test_iter = FashionMNISTIter(dir, false, cfg.batch_size, cfg.flat);

  std::map<std::string, NDArray> args;
  args["data"] = cfg.flat ? NDArray(Shape(cfg.batch_size, 784), ctx)
                          : NDArray(Shape(cfg.batch_size, 1, 28, 28), ctx);
  args["data_label"] = NDArray(Shape(cfg.batch_size), ctx);
  net.InferArgsMap(ctx, &args, args);

  MXRandomSeed(1);
  Xavier xavier(Xavier::gaussian, Xavier::in, 2);
  for (auto& arg : args) {
    if (arg.first == "data" || arg.first == "data_label") continue;
    xavier(arg.first, &arg.second);
  }
  Executor* exec = net.SimpleBind(ctx, args);
  for (auto& aux : exec->aux_dict()) xavier(aux.first, &aux.second);
  auto arg_names = net.ListArguments();

  Optimizer* opt = OptimizerRegistry::Find(cfg.optimizer);
  opt->SetParam("lr", cfg.learning_rate)
      ->SetParam("wd", cfg.weight_decay)
      ->SetParam("rescale_grad", 1.0f / cfg.batch_size)
      ->SetParam("clip_gradient", 10);
  if (cfg.optimizer == "sgd") opt->SetParam("momentum", cfg.momentum);

  auto start = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < cfg.epochs; ++epoch) {
    train_iter.Reset();
    Accuracy train_acc;
    int batches = 0;
    while ((cfg.max_batches_per_epoch < 0 || batches < cfg.max_batches_per_epoch) && train_iter.Next()) {
      auto batch = train_iter.GetDataBatch();
      batch.data.CopyTo(&args["data"]);
      batch.label.CopyTo(&args["data_label"]);
      exec->Forward(true);
      exec->Backward();
      for (size_t i = 0; i < arg_names.size(); ++i) {
        if (arg_names[i] == "data" || arg_names[i] == "data_label") continue;
        opt->Update(static_cast<int>(i), exec->arg_arrays[i], exec->grad_arrays[i]);
      }
      train_acc.Update(batch.label, exec->outputs[0]);
      ++batches;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    LG << "epoch " << epoch + 1 << ": " << batches << " batches, train accuracy " << std::fixed
       << std::setprecision(4) << train_acc.Get() << ", " << std::setprecision(1) << secs << " s";
  }

  Accuracy test_acc;
  test_iter.Reset();
  while (test_iter.Next()) {
    auto batch = test_iter.GetDataBatch();
    batch.data.CopyTo(&args["data"]);
    batch.label.CopyTo(&args["data_label"]);
    exec->Forward(false);
    test_acc.Update(batch.label, exec->outputs[0]);
  }
  std::cout << "test accuracy " << std::fixed << std::setprecision(4) << test_acc.Get() << std::endl;
  delete exec;
  delete opt;
  MXNotifyShutdown();
  return test_acc.Get();
}

// The bigger examples: `max_batches` batches of 32 with Adam, then the test set.
inline int TrainBounded(Symbol net, int argc, char** argv, int max_batches, float learning_rate) {
  TrainConfig cfg;
  cfg.batch_size = 32;
  cfg.max_batches_per_epoch = max_batches;
  cfg.optimizer = "adam";
  cfg.learning_rate = learning_rate;
  return TrainAndTest(net, FashionMNISTDir(argc, argv), cfg) > 0 ? 0 : 1;
}
