// LeNet training throughput on Fashion-MNIST, the way apps/symbind-lenet trains: the bundled
// checkpoint's graph (models/lenet-fashion-mnist/lenet-symbol.json), batch 100, Xavier
// initialisation, SGD lr 0.05 momentum 0.9 weight decay 1e-4, batches from a shuffling
// MNISTIter copied into the executor. bench/peers.py lenet-train is the PyTorch peer.
// Usage: bench_lenet [threads] [batches]   prints "lenet_train_samples_per_s N" and
// "lenet_train_cpu_ms_per_batch T" (process CPU time, all threads: steadier under load).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/mnist.h>
#include <symbind/io/symbol_json.h>

#include "bench_util.h"
#include "training.h"

using namespace symbind;

int main(int argc, char** argv) {
  SetNumThreads(argc > 1 ? std::atoi(argv[1]) : 2);
  const int batches = argc > 2 ? std::atoi(argv[2]) : 100;
  const int batch = 100;
  try {
    MNISTData train = LoadFashionMNIST(true, DefaultFashionMNISTDir());
    MNISTIter it(train, batch, true, 1, false);
    Symbol net = LoadSymbolFile(SYMBIND_LENET_SYMBOL);
    auto exec = SimpleBind(net, Context::CPU(), {{"data", NDArray(TShape({batch, 1, 28, 28}))},
                                                 {"softmax_label", NDArray(TShape({batch}))}});
    std::mt19937_64 rng(1);
    InitParameters(*exec, Xavier{}, rng);
    SGD sgd({/*lr=*/0.05f, /*momentum=*/0.9f, /*wd=*/1e-4f});
    NDArray data = exec->arg_dict()["data"], label = exec->arg_dict()["softmax_label"];
    auto step = [&] {
      if (!it.Next()) {
        it.Reset();
        it.Next();
      }
      it.data().CopyTo(&data);
      it.label().CopyTo(&label);
      exec->Forward(true);
      exec->Backward();
      sgd.Step(*exec);
    };
    for (int i = 0; i < 5; ++i) step();
    auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = bench::ProcessCpuMs();
    for (int i = 0; i < batches; ++i) step();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("lenet_train_samples_per_s %.0f\n", batches * batch / secs);
    std::printf("lenet_train_cpu_ms_per_batch %.2f\n", (bench::ProcessCpuMs() - cpu0) / batches);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_lenet: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
