// Training-step benchmark of an image classifier given as MXNet symbol JSON (a SoftmaxOutput
// head), for bench/run.sh's ResNet-18 training row; bench/peers.py resnet-train runs the same
// file in PyTorch.
//
//   bench_resnet_train SYMBOL [--batch N] [--size S] [--threads T] [--runs R] [--warmup W]
//                      [--per-node R]
//
// One step: Forward(true), Backward(), SGD with momentum (lr 0.01, momentum 0.9, wd 1e-4, the
// sgd_mom_update kernel) on every parameter; weights Xavier, data uniform in [-1, 1], random
// labels, no gradient for data. Prints "key value" lines: parameters (count), times_ms (every
// timed step), step_ms (median), step_min_ms, samples_per_s (batch / median step), the
// medians of the three phases forward_ms, backward_ms, update_ms, and cpu_times_ms (process
// CPU time of every timed step, all threads: steadier than wall time on a loaded machine).
// --per-node R: where a step's time goes. Forward per node comes from the executor's profiling
// (training mode); backward has no per-node profile, so every op node is also bound alone at
// its shapes in the full graph (a single-op graph, gradients for every input the full graph
// differentiates, preallocated head gradients) and its Forward(true) and Backward() timed,
// median of R. Prints one line per node (the "# node" header names the columns; convolutions
// add their forward GFLOP and GFLOP/s forward and backward) and totals per op.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/symbol_json.h>
#include <symbind/train/initializer.h>
#include <symbind/train/optimizer.h>

#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
struct Options {
  std::string symbol_file;
  int batch = 16, size = 224, threads = 2, runs = 5, warmup = 2, per_node = 0;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "bench_resnet_train: %s\nusage: bench_resnet_train SYMBOL [--batch N] [--size S] "
               "[--threads T] [--runs R] [--warmup W] [--per-node R]\n",
               problem.c_str());
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&] {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return std::atoi(argv[++i]);
    };
    if (a == "--batch") o.batch = number();
    else if (a == "--size") o.size = number();
    else if (a == "--threads") o.threads = number();
    else if (a == "--runs") o.runs = number();
    else if (a == "--warmup") o.warmup = number();
    else if (a == "--per-node") o.per_node = number();
    else if (a.rfind("--", 0) == 0) Usage("unknown option " + a);
    else if (o.symbol_file.empty()) o.symbol_file = a;
    else Usage("more than one SYMBOL");
  }
  if (o.symbol_file.empty()) Usage("expected SYMBOL");
  if (o.batch < 1 || o.size < 1 || o.runs < 1) Usage("--batch, --size and --runs must be positive");
  return o;
}

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void FillUniform(NDArray a, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(a.Size());
  for (auto& x : v) x = dist(rng);
  a.SyncCopyFromCPU(v.data(), v.size());
}

// Median ms of Forward(true) and of Backward(head_grads) over `runs` after one warm-up.
std::pair<double, double> TimeAlone(Executor* exec, int runs) {
  std::vector<NDArray> head_grads;  // preallocated, as the full graph's backward has them
  for (const NDArray& out : exec->outputs()) {
    head_grads.emplace_back(out.shape());
    FillUniform(head_grads.back(), 5, -1.0f, 1.0f);
  }
  std::vector<double> fwd, bwd;
  for (int r = 0; r < runs + 1; ++r) {
    auto t0 = Clock::now();
    exec->Forward(true);
    auto t1 = Clock::now();
    exec->Backward(head_grads);
    auto t2 = Clock::now();
    if (r == 0) continue;  // warm-up
    fwd.push_back(Ms(t0, t1));
    bwd.push_back(Ms(t1, t2));
  }
  return {Median(fwd), Median(bwd)};
}

// Forward and backward of every op node bound alone at its shapes in `exec`'s graph. A node
// with both activation and parameter inputs is also bound with gradients for its parameters
// only (bwd_params_ms: for Convolution the weight gradient; the rest is the data gradient).
void PerNode(const Executor& exec, const std::map<std::string, TShape>& input_shapes, int runs) {
  const Graph& g = exec.graph();
  const std::vector<TShape> shapes = InferEntryShapes(g, input_shapes);
  std::map<std::string, double> in_graph_fwd;
  for (const NodeTiming& t : exec.ForwardProfile()) in_graph_fwd[t.name] = t.total_ms / std::max<int64_t>(t.calls, 1);
  struct Sum {
    double fwd = 0, bwd = 0, bwd_params = 0, graph_fwd = 0, gflop = 0;
    int nodes = 0;
  };
  std::map<std::string, Sum> by_op;
  Sum total;
  std::printf("# node NAME OP fwd_ms bwd_ms bwd_params_ms graph_fwd_ms OUTPUT_SHAPE [fwd_gflop fwd_gflops bwd_gflops]\n");
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& node = *g.node(id).node;
    if (node.is_variable()) continue;
    Symbol alone = Symbol::Create(node.attrs.op->name, "op", node.attrs.dict, {});
    const std::vector<std::string> inputs = alone.ListInputs();
    if (inputs.size() != g.node(id).inputs.size()) Usage("node " + node.name() + ": input count differs alone");
    std::map<std::string, NDArray> args, aux;
    std::map<std::string, OpReq> reqs, param_reqs;
    bool has_activation_grad = false, has_param_grad = false;
    const auto aux_names = alone.ListAuxiliaryStates();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Graph::EntryRef& src = g.node(id).inputs[i];
      NDArray a(shapes[g.entry_id(src)]);
      const Node& from = *g.node(src.node_id).node;
      if (std::find(aux_names.begin(), aux_names.end(), inputs[i]) != aux_names.end()) {
        FillUniform(a, id * 31 + i, 0.5f, 1.5f);
        aux[inputs[i]] = a;
        continue;
      }
      const bool label = from.name() == "softmax_label";
      FillUniform(a, id * 31 + i, label ? 0.0f : -1.0f, label ? 0.0f : 1.0f);
      args[inputs[i]] = a;
      // The full graph differentiates every input but the data and the label variables.
      const bool grad = !(from.is_variable() && (from.name() == "data" || label));
      reqs[inputs[i]] = grad ? OpReq::kWrite : OpReq::kNull;
      param_reqs[inputs[i]] = grad && from.is_variable() ? OpReq::kWrite : OpReq::kNull;
      (from.is_variable() ? has_param_grad : has_activation_grad) |= grad;
    }
    auto single = SimpleBind(alone, Context::CPU(), args, {}, reqs, aux);
    const auto [f, b] = TimeAlone(single.get(), runs);
    double bp = 0;
    if (has_activation_grad && has_param_grad) {
      auto params_only = SimpleBind(alone, Context::CPU(), args, {}, param_reqs, aux);
      bp = TimeAlone(params_only.get(), runs).second;
    }
    const double gf = in_graph_fwd[node.name()];
    const TShape& out_shape = shapes[g.entry_id(id, 0)];
    std::printf("node %s %s %.3f %.3f %.3f %.3f %s", node.name().c_str(), node.attrs.op->name.c_str(), f, b, bp, gf,
                out_shape.ToString().c_str());
    double gflop = 0;
    if (node.attrs.op->name == "Convolution") {  // 2 * outputs * (input channels / groups * kernel)
      const TShape& w = shapes[g.entry_id(g.node(id).inputs[1])];
      gflop = 2.0 * out_shape.Size() * (w.Size() / w[0]) / 1e9;
      const double bwd_gflop = gflop * (has_activation_grad ? 2 : 1);  // data and weight gradients
      std::printf(" %.3f %.1f %.1f", gflop, gflop / f * 1e3, bwd_gflop / b * 1e3);
    }
    std::printf("\n");
    for (Sum* s : {&by_op[node.attrs.op->name], &total}) {
      s->fwd += f;
      s->bwd += b;
      s->bwd_params += bp;
      s->graph_fwd += gf;
      s->gflop += gflop;
      ++s->nodes;
    }
  }
  for (const auto& [op, s] : by_op)
    std::printf("op %s nodes %d fwd_ms %.2f bwd_ms %.2f bwd_params_ms %.2f graph_fwd_ms %.2f fwd_gflop %.2f\n",
                op.c_str(), s.nodes, s.fwd, s.bwd, s.bwd_params, s.graph_fwd, s.gflop);
  std::printf("op_total nodes %d fwd_ms %.2f bwd_ms %.2f graph_fwd_ms %.2f\n", total.nodes, total.fwd, total.bwd,
              total.graph_fwd);
}
}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  SetNumThreads(o.threads);
  try {
    Symbol net = LoadSymbolFile(o.symbol_file);
    const std::map<std::string, TShape> input_shapes = {{"data", TShape({o.batch, 3, o.size, o.size})},
                                                        {"softmax_label", TShape({o.batch})}};
    auto exec = SimpleBind(net, Context::CPU(), {{"data", NDArray(input_shapes.at("data"))},
                                                 {"softmax_label", NDArray(input_shapes.at("softmax_label"))}});
    std::mt19937_64 rng(1);
    InitParameters(*exec, Xavier{}, rng);
    FillUniform(exec->arg_dict().at("data"), 2, -1.0f, 1.0f);
    {
      std::mt19937_64 labels(3);
      std::vector<float> v(o.batch);
      for (auto& x : v) x = static_cast<float>(labels() % 1000);
      exec->arg_dict().at("softmax_label").SyncCopyFromCPU(v.data(), v.size());
    }
    int64_t parameters = 0;
    for (const auto& [name, grad] : exec->grad_dict())
      if (!grad.is_none()) parameters += grad.Size();
    std::printf("parameters %lld\n", static_cast<long long>(parameters));
    SGD sgd({/*lr=*/0.01f, /*momentum=*/0.9f, /*wd=*/1e-4f});
    std::vector<double> step, fwd, bwd, upd, cpu;
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      if (r == o.warmup && o.per_node > 0) exec->SetProfiling(true);
      const double cpu0 = bench::ProcessCpuMs();
      auto t0 = Clock::now();
      exec->Forward(true);
      auto t1 = Clock::now();
      exec->Backward();
      auto t2 = Clock::now();
      sgd.Step(*exec);
      auto t3 = Clock::now();
      const double cpu1 = bench::ProcessCpuMs();
      if (r < o.warmup) continue;
      cpu.push_back(cpu1 - cpu0);
      step.push_back(Ms(t0, t3));
      fwd.push_back(Ms(t0, t1));
      bwd.push_back(Ms(t1, t2));
      upd.push_back(Ms(t2, t3));
    }
    for (const auto& [key, values] : {std::pair{"times_ms", &step}, std::pair{"cpu_times_ms", &cpu}}) {
      std::printf("%s", key);
      for (double t : *values) std::printf(" %.1f", t);
      std::printf("\n");
    }
    const double median = Median(step);
    std::printf("step_ms %.1f\nstep_min_ms %.1f\nsamples_per_s %.2f\n", median,
                *std::min_element(step.begin(), step.end()), o.batch * 1e3 / median);
    std::printf("forward_ms %.1f\nbackward_ms %.1f\nupdate_ms %.1f\n", Median(fwd), Median(bwd), Median(upd));
    if (o.per_node > 0) PerNode(*exec, input_shapes, o.per_node);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_resnet_train: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
