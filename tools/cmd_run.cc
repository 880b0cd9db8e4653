// symbind run SYMBOL.json PARAMS (or MODEL.symbind) --shape NAME=D0,D1,... [--input NAME=FILE.npy]...
//   [--image NAME=FILE[,FILE...] --mean R,G,B|V --scale S --size H,W [--bgr]] [--output FILE.npy]
//   [--outputs NAME,...] [--all-outputs DIR] [--allow-missing] [--bench N] [--profile] [--threads T]
//   [--precision float32|bf16] [--compact-weights] [--int8-even-weights]
//   [--no-fold] [--no-fuse] [--no-fuse-blocks]
// Binds the model as a Predictor, runs inference and reports or saves the outputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/image.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/predict/predictor.h>

#include "commands.h"
#include "image_input.h"

namespace symbind_tool {

namespace {
using namespace symbind;

struct RunArgs {
  std::string symbol_file, params_file, output, all_outputs;
  std::vector<std::string> shapes, inputs, images, outputs;
  ImageOptions image;
  bool allow_missing = false, profile = false, compact_weights = false, int8_even_weights = false, no_fold = false, no_fuse = false, no_fuse_blocks = false,
       no_fuse_residuals = false;
  int bench = 0;
  std::string threads;
  std::string precision = "float32";
};

std::pair<std::string, std::string> SplitAssignment(const std::string& spec, const char* option) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw ParamError(StrCat(option, " expects NAME=VALUE, got '", spec, "'"));
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

// An output name as a file name inside the --all-outputs directory: characters other than
// letters, digits, '.', '_' and '-' become '_', and a leading '.' too, so a node named
// "../../x" or "/etc/x" cannot leave the directory or hide as a dot file.
std::string OutputFileName(const std::string& name) {
  std::string f = name.empty() ? std::string("_") : name;
  for (char& c : f) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  if (f[0] == '.') f[0] = '_';
  return f + ".npy";
}

// The --all-outputs file of every output; two outputs whose names sanitise alike are an error.
std::vector<std::string> OutputFiles(const std::vector<std::string>& out_names, const std::string& dir) {
  std::map<std::string, std::string> owner;
  std::vector<std::string> files;
  for (auto& n : out_names) {
    const std::string f = OutputFileName(n);
    auto [it, fresh] = owner.emplace(f, n);
    if (!fresh)
      throw Error(StrCat("--all-outputs: outputs '", it->second, "' and '", n,
                         "' would both be written to ", dir, "/", f));
    files.push_back(dir + "/" + f);
  }
  return files;
}

// Each --input/--image/--shape name must be an argument of the model. --input and --image give
// each input once; a --shape may name one of them too (checked against its array later).
void CheckInputNames(const RunArgs& a, const std::vector<std::string>& arg_names, const std::string& inputs_text) {
  std::map<std::string, std::string> seen;  // name -> the option that gave it
  auto check = [&](const std::string& name, const std::string& option, std::map<std::string, std::string>* once) {
    if (std::find(arg_names.begin(), arg_names.end(), name) == arg_names.end())
      throw ParamError(StrCat(option, " ", name, ": the model has no argument '", name, "'; ", inputs_text));
    if (!once) return;
    auto [it, fresh] = once->emplace(name, option);
    if (!fresh)
      throw ParamError(StrCat(option, " ", name, ": '", name, "' is already given by ", it->second,
                              " (give each input once; ", inputs_text, ")"));
  };
  for (auto& spec : a.inputs) check(SplitAssignment(spec, "--input").first, "--input", &seen);
  std::set<std::string> image_names;
  for (auto& spec : a.images) image_names.insert(SplitAssignment(spec, "--image").first);
  for (auto& name : image_names) check(name, "--image", &seen);
  std::map<std::string, std::string> shapes_seen;
  for (auto& spec : a.shapes) check(ParseShapeSpec(spec).first, "--shape", &shapes_seen);
}

// The files of every --image NAME=FILE[,FILE...] naming `name`, in order: one batch.
std::vector<std::string> ImageFiles(const RunArgs& a, const std::string& name) {
  std::vector<std::string> files;
  for (auto& spec : a.images) {
    auto kv = SplitAssignment(spec, "--image");
    if (kv.first != name) continue;
    size_t start = 0;
    while (start <= kv.second.size()) {
      const size_t comma = std::min(kv.second.find(',', start), kv.second.size());
      const std::string file = kv.second.substr(start, comma - start);
      if (file.empty()) throw ParamError(StrCat("--image ", spec, ": an empty file name"));
      files.push_back(file);
      start = comma + 1;
    }
  }
  return files;
}

// The images of input `name` as one (N,C,H,W) batch: C is 1 (grey) for a model whose weights
// read one channel, else 3.
NDArray LoadImageInput(const RunArgs& a, const Model& model, const std::string& name) {
  const TShape hw = ImageSize(a.image, "--image");
  const std::vector<std::string> files = ImageFiles(a, name);
  const int64_t channels = ImageChannels(model, name, static_cast<int64_t>(files.size()), hw);
  return LoadImageBatch(a.image, files, channels, "--image " + name);
}

struct OutputSummary {
  float min = 0, max = 0;
  double mean = 0;
};

// Read in place: an output as large as the bind budget allows is not copied to summarise it.
OutputSummary Summarize(const NDArray& o) {
  OutputSummary s;
  const int64_t n = o.Size();
  if (n == 0) return s;
  const float* f = o.dtype() == DType::kFloat32 ? o.fdata() : nullptr;
  double sum = 0;
  s.min = s.max = f ? f[0] : o.GetFlat(0);
  for (int64_t k = 0; k < n; ++k) {
    const float x = f ? f[k] : o.GetFlat(k);
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    sum += x;
  }
  s.mean = sum / static_cast<double>(n);
  return s;
}

// Runs `runs` profiled forwards and prints where the time goes: per op type, then per node.
void PrintProfile(Executor& exec, int runs) {
  exec.SetProfiling(true);
  for (int i = 0; i < runs; ++i) exec.Forward(false);
  exec.SetProfiling(false);
  std::vector<NodeTiming> rows = exec.ForwardProfile();
  double total = 0;
  std::map<std::string, std::pair<double, int>> by_op;
  for (auto& r : rows) {
    total += r.total_ms;
    by_op[r.op].first += r.total_ms;
    by_op[r.op].second += 1;
  }
  auto pct = [&](double ms) { return total > 0 ? 100.0 * ms / total : 0.0; };
  const ExecutorMemory& mem = exec.memory();
  std::printf("profile: %d runs, %.3f ms per run summed over nodes (threads=%d); op outputs %.1f MiB "
              "(%.1f MiB without memory planning)\n", runs, total / runs, GetNumThreads(),
              mem.output_bytes / 1048576.0, mem.unplanned_bytes / 1048576.0);
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](auto& x, auto& y) { return x.second.first > y.second.first; });
  std::printf("%-24s %6s %12s %7s\n", "op", "nodes", "ms/run", "%");
  for (auto& o : ops)
    std::printf("%-24s %6d %12.3f %6.1f%%\n", o.first.c_str(), o.second.second, o.second.first / runs, pct(o.second.first));
  std::sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.total_ms > y.total_ms; });
  std::printf("\n%-4s %-36s %-18s %-20s %10s %7s %7s\n", "rank", "node", "op", "output", "ms/run", "%", "cum%");
  double cum = 0;
  int rank = 0;
  for (auto& r : rows) {
    cum += r.total_ms;
    std::ostringstream shape;
    shape << r.output_shape;
    std::printf("%-4d %-36s %-18s %-20s %10.3f %6.1f%% %6.1f%%\n", ++rank, r.name.c_str(), r.op.c_str(),
                shape.str().c_str(), r.total_ms / runs, pct(r.total_ms), pct(cum));
  }
}

void Run(const RunArgs& a) {
  if (!a.threads.empty()) {
    const int64_t n = ParseNumThreads(a.threads, "--threads");
    const std::string note = ThreadClampNote(n, "--threads");
    if (!note.empty()) std::cerr << "symbind: warning: " << note << "\n";
    SetNumThreads(n);
  }
  const auto load_start = std::chrono::steady_clock::now();
  Model model = LoadModelFiles(a.symbol_file, a.params_file);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  const Symbol& sym = model.symbol;
  const std::string inputs_text = ModelInputsText(sym, model.args);
  CheckInputNames(a, sym.ListArguments(), inputs_text);

  std::map<std::string, TShape> shapes;
  for (auto& spec : a.shapes) shapes.insert(ParseShapeSpec(spec));
  std::map<std::string, NDArray> values;
  std::map<std::string, std::string> given_by;  // input -> the option that gave its array
  for (auto& spec : a.inputs) {
    auto kv = SplitAssignment(spec, "--input");
    values[kv.first] = LoadNpy(kv.second);
    given_by[kv.first] = "--input " + spec;
  }
  for (auto& spec : a.images) {
    const std::string name = SplitAssignment(spec, "--image").first;
    if (values.count(name)) continue;  // several --image options for one input: one batch
    values[name] = LoadImageInput(a, model, name);
    given_by[name] = StrCat("--image ", name, " (", values[name].shape()[0], " images)");
  }
  for (auto& kv : values) {
    auto given = shapes.find(kv.first);
    if (given != shapes.end() && given->second != kv.second.shape())
      throw ParamError(StrCat("--shape ", kv.first, "=", ShapeText(given->second), " disagrees with ",
                              given_by[kv.first], " of shape ", ShapeText(kv.second.shape())));
    shapes[kv.first] = kv.second.shape();
  }
  // A .symbind model's stored input shapes serve the inputs no option gave.
  shapes.insert(model.input_shapes.begin(), model.input_shapes.end());
  // Created before the forward pass, so a directory that cannot be made fails first.
  if (!a.all_outputs.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.all_outputs, ec);
    if (ec || !std::filesystem::is_directory(a.all_outputs))
      throw IOError(StrCat("--all-outputs: cannot create the directory ", a.all_outputs,
                           ec ? ": " + ec.message() : std::string(": a file of that name exists")));
  }

  PredictorOptions options;
  options.allow_missing = a.allow_missing;
  options.outputs = a.outputs;
  options.disabled_passes = DisabledPasses({a.no_fold, a.no_fuse, a.no_fuse_blocks, a.no_fuse_residuals});
  options.precision = a.precision == "bf16" ? Precision::kBfloat16 : Precision::kFloat32;
  options.compact_weights = a.compact_weights;
  options.int8_even_weights = a.int8_even_weights;
  const auto bind_start = std::chrono::steady_clock::now();
  Predictor predictor(sym, ReadOnlyViews(model.args), ReadOnlyViews(model.aux), shapes, options);
  const double bind_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - bind_start).count();
  if (!predictor.filled().empty())
    std::cerr << "symbind: warning: filling from N(0,1): " << JoinNames(predictor.filled()) << "\n";
  for (auto& kv : values) predictor.SetInput(kv.first, kv.second);
  model.args.clear();  // the predictor holds what it needs
  model.aux.clear();
  Executor* exec = &predictor.executor();
  // The first forward also makes the kernels' derived weights (packed, transformed, folded)
  // that a prepacked .symbind brings along: load + bind + first is the time to a first result.
  const auto first_start = std::chrono::steady_clock::now();
  exec->Forward(false);
  const double first_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first_start).count();

  const auto& out_names = predictor.output_names();
  for (size_t i = 0; i < exec->outputs().size(); ++i) {
    const NDArray& o = exec->outputs()[i];
    const OutputSummary s = Summarize(o);
    std::cout << out_names[i] << " " << o.shape() << " min " << s.min << " max " << s.max << " mean " << s.mean
              << "\n";
  }
  if (!a.output.empty()) SaveNpy(a.output, exec->outputs()[0]);
  if (!a.all_outputs.empty()) {
    const std::vector<std::string> files = OutputFiles(out_names, a.all_outputs);
    for (size_t i = 0; i < exec->outputs().size(); ++i) SaveNpy(files[i], exec->outputs()[i]);
  }
  if (a.bench > 0) {
    exec->Forward(false);
    exec->Forward(false);
    std::vector<double> ms;
    for (int i = 0; i < a.bench; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      exec->Forward(false);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::cout << "latency_ms median=" << ms[ms.size() / 2] << " min=" << ms.front() << " runs=" << a.bench
              << " threads=" << GetNumThreads() << " load_ms=" << load_ms << " bind_ms=" << bind_ms
              << " first_forward_ms=" << first_ms << "\n";
    if (model.forms_in_use)
      std::cout << "prepacked: " << model.forms_in_use << " of the file's " << model.forms.size()
                << " stored forms in use (" << model.forms_isa << ")\n";
    else if (!model.forms.empty())
      std::cout << "prepacked for " << model.forms_isa << ", but this CPU runs " << GemmIsa()
                << ": the kernels packed the weights at the first run\n";
  }
  if (a.profile) PrintProfile(*exec, a.bench > 0 ? a.bench : 10);
}
}  // namespace

void AddRunCommand(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "bind a model with its parameters and run inference");
  sub->add_option("SYMBOL", a->symbol_file, "symbol JSON file")->required();
  sub->add_option("PARAMS", a->params_file, ".params file with arg:/aux: arrays (none for a .symbind SYMBOL)");
  sub->add_option("--shape", a->shapes, "input shape NAME=D0,D1,... (repeatable)");
  sub->add_option("--input", a->inputs, "input NAME=FILE.npy (repeatable; converted to float32)");
  sub->add_option("--image", a->images,
                  "input NAME=FILE.jpg|png[,FILE...] (repeatable): decoded, resized to --size, normalised, "
                  "stacked into one NCHW batch in the order given");
  AddImageOptions(sub, &a->image);
  sub->add_option("--outputs", a->outputs,
                  "compute these outputs instead of the heads: NAME[,NAME...] as GetInternals names them "
                  "(e.g. fc1_output), to cut a graph before a training-only head")->delimiter(',');
  sub->add_option("--output", a->output, "write the first output to FILE.npy");
  sub->add_option("--all-outputs", a->all_outputs,
                  "write every output to DIR/<name>.npy (characters other than A-Z a-z 0-9 . _ - become _)");
  sub->add_flag("--allow-missing", a->allow_missing, "fill arguments missing from PARAMS from N(0,1)");
  sub->add_option("--bench", a->bench, "time N forward passes after two warm-up runs")->check(CLI::NonNegativeNumber);
  sub->add_flag("--profile", a->profile, "time every node over the --bench runs (or 10) and print a per-layer table");
  sub->add_flag("--no-fold", a->no_fold,
                "run every BatchNorm as its own node instead of folding it into the convolution before it");
  sub->add_flag("--no-fuse", a->no_fuse,
                "run every relu / clip / LeakyReLU as its own node instead of fusing it into the convolution before it "
                "(or, in int8 graphs, into the quantize after it), every residual add as its own node, and every "
                "convolution of an inverted residual block as its own node");
  sub->add_flag("--no-fuse-blocks", a->no_fuse_blocks,
                "run the convolutions of each inverted residual block (MobileNet v2's, float32 or int8) as their own nodes");
  sub->add_flag("--no-fuse-residuals", a->no_fuse_residuals,
                "run each residual add (and the activation after it) as its own node instead of in the convolution before it");
  sub->add_option("--threads", a->threads, "threads to use (default: all cores; at most 4x the hardware threads)");
  sub->add_option("--precision", a->precision,
                  "float32 (default), or bf16: convolutions and FullyConnected layers multiply bfloat16-rounded "
                  "weights and inputs with float32 sums (needs a CPU with AVX512_BF16; refused elsewhere)")
      ->check(CLI::IsMember({"float32", "fp32", "bf16"}));
  sub->add_flag("--compact-weights", a->compact_weights,
                "keep no derived weights larger than the weights (3x3 convolutions without Winograd): less memory, "
                "slower");
  sub->add_flag("--int8-even-weights", a->int8_even_weights,
                "int8 models on CPUs with AVX2 but not AVX512-VNNI: convolutions run as GEMMs take 7-bit (even) weight "
                "levels, faster, less accurate (docs/quantization.md); no effect elsewhere");
  sub->callback([a] { Run(*a); });
}

}  // namespace symbind_tool
