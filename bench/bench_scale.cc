// Graph-size scaling: shape inference and SimpleBind of generated graphs of about 1k, 10k and
// 100k nodes. The graph is a residual ladder of small layers,
//   h = h + relu(FullyConnected(h, 8 hidden))     (5 nodes per rung: fc, weight, bias, relu, add)
// on data (1, 8), so every node is cheap to run and the time is the framework's per-node work.
// Prints per size: nodes, infer_shape_ms, simple_bind_ms (median of several runs; SimpleBind
// includes its own shape inference, allocation and seeded Gaussian fill), ms per 1k nodes.
// Usage: bench_scale [threads]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>

#include "bench_util.h"

using namespace symbind;
using symbind::bench::MedianMs;

namespace {
constexpr int kNodesPerRung = 5;

Symbol BuildLadder(int rungs) {
  Symbol h = Symbol::Variable("data");
  for (int i = 0; i < rungs; ++i) {
    const std::string id = std::to_string(i);
    Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 8).SetInput("data", h).CreateSymbol("fc" + id);
    Symbol act = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", fc).CreateSymbol("relu" + id);
    h = OpBuilder("elemwise_add").SetInput("lhs", h).SetInput("rhs", act).CreateSymbol("add" + id);
  }
  return h;
}

}  // namespace

int Main(int argc, char** argv) {
  SetNumThreads(argc > 1 ? std::atoi(argv[1]) : 2);
  const std::map<std::string, TShape> shapes{{"data", TShape({1, 8})}};
  std::printf("%-8s %14s %14s %18s\n", "nodes", "infer_shape_ms", "simple_bind_ms", "bind_ms_per_1k");
  for (int target : {1000, 10000, 100000}) {
    Symbol net = BuildLadder(target / kNodesPerRung);
    const size_t nodes = Graph(net).num_nodes();
    const int runs = target >= 100000 ? 3 : 7;
    double infer = MedianMs(runs, [&] {
      if (!InferShape(net, shapes).complete()) std::abort();
    });
    std::vector<std::unique_ptr<Executor>> bound;  // destroyed after timing, not within
    double bind = MedianMs(runs, [&] {
      bound.push_back(SimpleBind(net, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{shapes, 0}));
    });
    bound.front()->Forward(false);  // the bound graph really runs
    if (bound.front()->outputs()[0].shape() != TShape({1, 8})) std::abort();
    std::printf("%-8zu %14.2f %14.2f %18.3f\n", nodes, infer, bind, bind / (nodes / 1000.0));
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_scale", [&] { return Main(argc, argv); }); }
