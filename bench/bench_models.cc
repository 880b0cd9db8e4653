// Inference benchmark of a model file pair (MXNet symbol JSON + .params) for bench/run.sh.
//
//   bench_models SYMBOL PARAMS --shape data=N,C,H,W [--threads T] [--runs R]
//       [--logits] [--input data=X.npy] [--expect [OUTPUT=]REF.npy]... [--memory] [--no-fold] [--no-fuse]
//       [--no-fuse-blocks] [--uniform-input] [--bf16] [--compact-weights]
//
// Prints "key value" lines:
//   --runs R      latency_ms (median of R forwards after 2 warm-up runs), latency_min_ms
//                 (the fastest: the least disturbed by other load), images_per_s (batch / median),
//                 times_ms (every run, for pooling the runs of several interleaved processes),
//                 cpu_times_ms (process CPU time of every run, all threads)
//   --expect      (OUTPUT defaults to the first output) max_abs_diff_<OUTPUT> and rel_diff_<OUTPUT> (max |ours - ref| / max |ref|)
//                 after one forward on --input, the fairness check against the peers
//   --memory      rss_at_start_mb, peak_rss_before_bind_mb (parameters loaded), peak_rss_mb
//                 (ru_maxrss after binding and three forwards), rss_after_runs_mb (VmRSS),
//                 weights_mb, largest_activation_pair_mb (largest input + output bytes of one
//                 op, from the inferred shapes: what any plan must hold at once),
//                 all_activations_mb (every op output: the footprint without reuse)
// --logits cuts a SoftmaxOutput head off and returns its input (probabilities saturate with
// random weights and would hide differences); another single head (an embedding) is kept.
// --no-fold binds without folding BatchNorm into the layer before it, --no-fuse without fusing
// relu / clip into the convolution before it nor inverted residual blocks into one node (PredictorOptions),
// --no-fuse-blocks only without the latter (as `symbind run`'s). --uniform-input fills the data
// inputs not given by --input uniformly in [-1, 1] (seeded), as bench/ort_peer.js does; else they
// stay zero. --bf16: PredictorOptions::precision = kBfloat16 (an error without AVX512_BF16).
// --compact-weights: PredictorOptions::compact_weights; --int8-even-weights: PredictorOptions::int8_even_weights. Every argument except data and labels must be
// in PARAMS: nothing is silently filled with random numbers.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/model_report.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>

#include "bench_util.h"

using namespace symbind;

namespace {
struct Options {
  std::string symbol_file, params_file;
  std::map<std::string, TShape> shapes;
  std::map<std::string, std::string> inputs, expects;
  int threads = 2, runs = 0;
  bool logits = false, memory = false, fold = true, fuse = true, fuse_blocks = true, uniform_input = false, bf16 = false,
       compact_weights = false, int8_even_weights = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "bench_models: %s\nusage: bench_models SYMBOL PARAMS --shape data=N,C,H,W "
               "[--threads T] [--runs R] [--logits] [--input NAME=X.npy] "
               "[--expect [OUTPUT=]REF.npy]... [--memory] [--no-fold] [--no-fuse] [--no-fuse-blocks] [--uniform-input] [--bf16] [--compact-weights] [--int8-even-weights]\n",
               problem.c_str());
  std::exit(2);
}

std::pair<std::string, std::string> SplitAssignment(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos) Usage("expected NAME=VALUE, got '" + spec + "'");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

Options Parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--shape") o.shapes.insert(ParseShapeSpec(value()));
    else if (a == "--threads") o.threads = std::atoi(value().c_str());
    else if (a == "--runs") o.runs = std::atoi(value().c_str());
    else if (a == "--logits") o.logits = true;
    else if (a == "--memory") o.memory = true;
    else if (a == "--no-fold") o.fold = false;
    else if (a == "--no-fuse") o.fuse = false;
    else if (a == "--no-fuse-blocks") o.fuse_blocks = false;
    else if (a == "--uniform-input") o.uniform_input = true;
    else if (a == "--bf16") o.bf16 = true;
    else if (a == "--compact-weights") o.compact_weights = true;
    else if (a == "--int8-even-weights") o.int8_even_weights = true;
    else if (a == "--input") o.inputs.insert(SplitAssignment(value()));
    else if (a == "--expect") {
      const std::string spec = value();  // OUTPUT=REF.npy, or REF.npy for the first output
      if (spec.find('=') == std::string::npos) o.expects[""] = spec;
      else o.expects.insert(SplitAssignment(spec));
    }
    else if (a.rfind("--", 0) == 0) Usage("unknown option " + a);
    else positional.push_back(a);
  }
  if (positional.size() != 2) Usage("expected SYMBOL and PARAMS");
  o.symbol_file = positional[0];
  o.params_file = positional[1];
  return o;
}

// Resident set now (VmRSS), in MiB.
double CurrentRssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.substr(6).c_str()) / 1024.0;
  return 0;
}

double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // kilobytes on Linux
}

struct ActivationBytes {
  double largest_pair = 0;  // largest inputs + outputs of one op node
  double all = 0;           // every op output at once: the footprint without memory reuse
};

// From inferred shapes, float32.
ActivationBytes MeasureActivations(const Symbol& sym, const std::map<std::string, TShape>& shapes) {
  Graph g(sym);
  std::vector<TShape> entry = InferEntryShapes(g, shapes);
  ActivationBytes r;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& info = g.node(n);
    if (info.node->is_variable()) continue;
    double outputs = 0, inputs = 0;
    for (auto& in : info.inputs)
      if (!g.node(in.node_id).node->is_variable()) inputs += 4.0 * entry[g.entry_id(in)].Size();
    for (uint32_t k = 0; k < g.num_node_outputs(n); ++k) outputs += 4.0 * entry[g.entry_id(n, k)].Size();
    r.largest_pair = std::max(r.largest_pair, inputs + outputs);
    r.all += outputs;
  }
  return r;
}

Symbol CutSoftmaxHead(const Symbol& sym) {
  const auto& heads = sym.outputs();
  if (heads.size() != 1) Usage("--logits needs a single head");
  const Node& head = *heads[0].node;
  return !head.is_variable() && head.attrs.op->name == "SoftmaxOutput" ? sym.GetChildren()[0] : sym;
}

NDArray AsFloat(const NDArray& a) { return a.dtype() == DType::kFloat32 ? a : a.AsType(DType::kFloat32); }
}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = Parse(argc, argv);
    SetNumThreads(o.threads);
    const double rss_start = PeakRssMb();
    Symbol sym = LoadSymbolFile(o.symbol_file);
    if (o.logits) sym = CutSoftmaxHead(sym);
    std::map<std::string, NDArray> args, aux;
    LoadArgAuxParams(o.params_file, &args, &aux, /*map_read_only=*/true);
    const double rss_before_bind = PeakRssMb();
    PredictorOptions options;
    options.seed = 1;
    options.disabled_passes = DisabledPasses({!o.fold, !o.fuse, !o.fuse_blocks, false});
    options.precision = o.bf16 ? Precision::kBfloat16 : Precision::kFloat32;
    options.compact_weights = o.compact_weights;
    options.int8_even_weights = o.int8_even_weights;
    // As LoadPredictor and `symbind run` bind loaded weights: views of the mapped file, held by the predictor alone.
    Predictor predictor(sym, ReadOnlyViews(args), ReadOnlyViews(aux), o.shapes, options);
    args.clear();  // the predictor holds what it needs; keep no second copy of the weights
    aux.clear();
    double weight_bytes = 0;
    const auto bound = predictor.executor().arg_dict();
    for (auto& name : predictor.roles().parameters) weight_bytes += bound.at(name).bytes();
    for (const NDArray& a : predictor.executor().aux_arrays()) weight_bytes += a.bytes();
    for (auto& kv : o.inputs) predictor.SetInput(kv.first, LoadNpy(kv.second));
    if (o.uniform_input) {
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      for (const std::string& name : predictor.input_names()) {
        if (o.inputs.count(name)) continue;
        const NDArray in = predictor.Input(name);
        float* p = in.fdata();
        for (int64_t i = 0; i < in.Size(); ++i) p[i] = uniform(rng);
      }
    }
    Executor* exec = &predictor.executor();

    if (!o.expects.empty()) {
      exec->Forward(false);
      auto outs = exec->output_dict();
      for (const auto& [given_name, ref_file] : o.expects) {
        const std::string name = given_name.empty() ? sym.ListOutputs()[0] : given_name;
        if (!outs.count(name))
          throw Error("--expect " + name + ": no such output; outputs: " + JoinNames(sym.ListOutputs()));
        std::vector<float> got = outs[name].ToVector();
        NDArray ref = AsFloat(LoadNpy(ref_file));
        if (ref.shape() != outs[name].shape())
          throw ShapeError(StrCat("--expect ", name, ": reference shape ", ref.shape(),
                                  ", output shape ", outs[name].shape()));
        std::vector<float> want = ref.ToVector();
        double diff = 0, scale = 1e-30;
        for (size_t i = 0; i < got.size(); ++i) {
          diff = std::max(diff, std::fabs(double(got[i]) - want[i]));
          scale = std::max(scale, std::fabs(double(want[i])));
        }
        std::printf("max_abs_diff_%s %.3g\nrel_diff_%s %.3g\n", name.c_str(), diff,
                    name.c_str(), diff / scale);
      }
    }
    if (o.runs > 0) {
      using Clock = std::chrono::steady_clock;
      std::vector<double> ms, cpu_ms;
      for (int i = 0; i < o.runs + 2; ++i) {
        auto t0 = Clock::now();
        const double c0 = bench::ProcessCpuMs();
        exec->Forward(false);
        if (i < 2) continue;
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        cpu_ms.push_back(bench::ProcessCpuMs() - c0);
      }
      std::printf("times_ms");
      for (double t : ms) std::printf(" %.3f", t);
      std::printf("\ncpu_times_ms");
      for (double t : cpu_ms) std::printf(" %.3f", t);
      std::printf("\n");
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2];
      const int64_t batch = o.shapes.empty() ? 1 : o.shapes.begin()->second[0];
      std::printf("latency_ms %.3f\nlatency_min_ms %.3f\nimages_per_s %.2f\n", median, ms.front(),
                  batch * 1e3 / median);
    }
    if (o.memory) {
      for (int i = 0; i < 3; ++i) exec->Forward(false);
      std::printf("rss_at_start_mb %.1f\npeak_rss_before_bind_mb %.1f\npeak_rss_mb %.1f\n"
                  "rss_after_runs_mb %.1f\n",
                  rss_start, rss_before_bind, PeakRssMb(), CurrentRssMb());
      const ActivationBytes act = MeasureActivations(sym, o.shapes);
      std::printf("weights_mb %.1f\nlargest_activation_pair_mb %.2f\nall_activations_mb %.1f\n",
                  weight_bytes / 1048576.0, act.largest_pair / 1048576.0, act.all / 1048576.0);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_models: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
