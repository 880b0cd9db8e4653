// The fused RNN op: a 2-layer bidirectional LSTM and GRU (T=35, N=32, C=128, H=256), inference
// forward and training forward+backward, median milliseconds. bench/torch_rnn.py times PyTorch's
// nn.LSTM / nn.GRU on the same sizes. Prints "key value" lines.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>

#include "bench_util.h"

using namespace symbind;
using symbind::bench::MedianMs;

namespace {
constexpr int64_t kT = 35, kN = 32, kC = 128, kH = 256, kLayers = 2, kDirs = 2;

NDArray Uniform(const TShape& s, float scale) {
  NDArray a(s);
  uint32_t x = 12345;
  for (int64_t i = 0; i < a.Size(); ++i) {
    x = x * 1664525u + 1013904223u;
    a.SetFlat(i, scale * (static_cast<float>(x >> 8) / 16777216.0f - 0.5f));
  }
  return a;
}

void Run(const std::string& mode) {
  Symbol rnn = Symbol::Create("RNN", "rnn",
                              {{"mode", mode}, {"state_size", std::to_string(kH)}, {"num_layers", std::to_string(kLayers)},
                               {"bidirectional", "True"}},
                              {});
  std::map<std::string, NDArray> args{{"rnn_data", Uniform({kT, kN, kC}, 2.0f)},
                                      {"rnn_state", Uniform({kLayers * kDirs, kN, kH}, 1.0f)}};
  if (mode == "lstm") args["rnn_state_cell"] = Uniform({kLayers * kDirs, kN, kH}, 1.0f);
  const int64_t gates = mode == "lstm" ? 4 : 3;
  const int64_t size = kDirs * gates * kH * ((kC + kH + 2) + (kLayers - 1) * (kDirs * kH + kH + 2));
  args["rnn_parameters"] = Uniform({size}, 0.1f);
  std::map<std::string, OpReq> no_grads;
  for (auto& kv : args) no_grads[kv.first] = OpReq::kNull;
  auto infer = SimpleBind(rnn, Context::CPU(), args, {}, no_grads);
  auto train = SimpleBind(rnn, Context::CPU(), args);
  std::printf("rnn_%s_infer_ms %.2f\n", mode.c_str(),
              MedianMs(20, [&] { infer->Forward(false); }, /*warmup=*/1));
  std::printf("rnn_%s_train_ms %.2f\n", mode.c_str(), MedianMs(10, [&] {
                train->Forward(true);
                train->Backward();
              }, /*warmup=*/1));
}
}  // namespace

int Main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  SetNumThreads(threads);
  std::printf("threads %d\n", threads);
  Run("lstm");
  Run("gru");
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_rnn", [&] { return Main(argc, argv); }); }
