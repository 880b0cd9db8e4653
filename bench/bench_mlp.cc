// MLP benchmark: training throughput (batch 100, SGD) and inference latency.
// Prints "key value" lines that bench/run.sh compares with PyTorch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/train/optimizer.h>
#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
Symbol BuildMlp() {
  Symbol h = Symbol::Variable("data");
  int hidden[] = {128, 64};
  for (int i = 0; i < 2; ++i) {
    h = OpBuilder("FullyConnected").SetParam("num_hidden", hidden[i]).SetInput("data", h).CreateSymbol("fc" + std::to_string(i + 1));
    h = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", h).CreateSymbol("relu" + std::to_string(i + 1));
  }
  h = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", h).CreateSymbol("fc3");
  return OpBuilder("SoftmaxOutput").SetParam("normalization", "batch").SetInput("data", h).CreateSymbol("softmax");
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

int Main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  SetNumThreads(threads);
  Symbol net = BuildMlp();
  const int batch = 100;
  NDArray label(TShape({batch}));
  for (int i = 0; i < batch; ++i) label.SetFlat(i, static_cast<float>(i % 10));
  auto exec = SimpleBind(net, Context::CPU(), {{"softmax_label", label}},
                         {}, {}, {}, SimpleBindOptions{{{"data", TShape({batch, 784})}}, 0});
  SGD sgd({/*lr=*/0.01f});
  auto step = [&] {
    exec->Forward(true);
    exec->Backward();
    sgd.Step(*exec);
  };
  for (int i = 0; i < 20; ++i) step();
  const int iters = 600;
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) step();
  double train = iters * batch / Seconds(t0, Clock::now());

  auto infer = SimpleBind(net, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", TShape({1, 784})}}, 0});
  std::vector<double> lat;
  for (int i = 0; i < 2100; ++i) {
    auto a = Clock::now();
    infer->Forward(false);
    if (i >= 100) lat.push_back(Seconds(a, Clock::now()) * 1e6);
  }
  std::sort(lat.begin(), lat.end());
  std::printf("threads %d\n", threads);
  std::printf("mlp_train_samples_per_s %.0f\n", train);
  std::printf("mlp_infer_b1_median_us %.2f\n", lat[lat.size() / 2]);
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_mlp", [&] { return Main(argc, argv); }); }
