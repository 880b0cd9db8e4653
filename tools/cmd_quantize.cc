// symbind quantize SYMBOL.json PARAMS (or MODEL.symbind) --calib DIR|FILE.npy -o PREFIX
//   [--calib-mode entropy|naive|none] [--quantized-dtype int8|uint8|auto] [--quantize-mode smart|full]
//   [--form contrib|onednn] [--exclude NODE,...] [--exclude-op OP,...] [--num-calib-examples N]
//   [--batch N] [--no-fold]
//   [--mean R,G,B --scale S --size H,W --bgr]
// Post-training int8 quantization (predict/quantize.h): writes PREFIX-symbol.json and
// PREFIX-0000.params in MXNet 1.9.1's quantized form, and prints what stayed float32 and why.
#include <algorithm>
#include <filesystem>
#include <set>
#include <iostream>
#include <memory>

#include <symbind/core/input_roles.h>
#include <symbind/core/graph.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/io/npy.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/predict/quantize.h>

#include "commands.h"
#include "image_input.h"

namespace symbind_tool {

namespace {
using namespace symbind;

struct QuantizeArgs {
  std::string symbol_file, params_file, calib, calib_mode = "entropy", dtype = "int8", mode = "smart", form = "onednn",
      output;
  std::vector<std::string> exclude, exclude_ops;
  size_t num_calib_examples = 0;
  int64_t batch = 8;
  bool no_fold = false;
  ImageOptions image;
};

// The calibration batches for the model's one data input: images of a directory, or the
// first dimension of an .npy array, --batch at a time.
std::vector<std::map<std::string, NDArray>> CalibrationBatches(const QuantizeArgs& a, const Model& model,
                                                               const std::string& input) {
  std::vector<std::map<std::string, NDArray>> batches;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(a.calib, ec)) {
    const std::vector<std::string> files = ImageFilesIn(a.calib);
    if (files.empty()) throw ParamError("--calib " + a.calib + ": no image files (.jpg, .png, ...) in the directory");
    const TShape hw = ImageSize(a.image, "--calib " + a.calib);
    const int64_t channels = ImageChannels(model, input, a.batch, hw);
    size_t limit = a.num_calib_examples ? std::min(a.num_calib_examples, files.size()) : files.size();
    for (size_t i = 0; i < limit; i += size_t(a.batch)) {
      std::vector<std::string> some(files.begin() + long(i), files.begin() + long(std::min(limit, i + size_t(a.batch))));
      batches.push_back({{input, LoadImageBatch(a.image, some, channels, "--calib " + a.calib)}});
    }
    return batches;
  }
  const NDArray all = LoadNpy(a.calib);
  if (all.shape().ndim() < 1 || all.shape()[0] < 1)
    throw ParamError("--calib " + a.calib + ": the array needs a first (batch) dimension of at least 1, got shape " +
                     all.shape().ToString());
  const int64_t n = all.shape()[0];
  const int64_t limit = a.num_calib_examples ? std::min<int64_t>(int64_t(a.num_calib_examples), n) : n;
  const size_t per_example = all.Size() / size_t(n);
  for (int64_t i = 0; i < limit; i += a.batch) {
    const int64_t count = std::min(a.batch, limit - i);
    TShape shape = all.shape();
    shape[0] = count;
    NDArray b(shape, all.dtype());
    const size_t bytes = per_example * DTypeSize(all.dtype());
    std::copy(static_cast<const char*>(all.raw_data()) + size_t(i) * bytes,
              static_cast<const char*>(all.raw_data()) + size_t(i + count) * bytes, static_cast<char*>(b.raw_data()));
    batches.push_back({{input, b}});
  }
  return batches;
}

void Quantize(const QuantizeArgs& a) {
  if (a.batch < 1) throw ParamError("--batch must be at least 1");
  Model model = LoadModelFiles(a.symbol_file, a.params_file);
  QuantizeOptions options;
  options.calib_mode = ParseCalibMode(a.calib_mode);
  options.quantized_dtype = a.dtype;
  options.quantize_mode = a.mode;
  options.form = a.form;
  options.excluded_nodes.insert(a.exclude.begin(), a.exclude.end());
  options.excluded_ops.insert(a.exclude_ops.begin(), a.exclude_ops.end());
  options.fold_batch_norm = !a.no_fold;
  options.num_calib_examples = a.num_calib_examples;

  std::vector<std::map<std::string, NDArray>> batches;
  if (options.calib_mode != CalibMode::kNone) {
    if (a.calib.empty()) throw ParamError("give --calib DIR or FILE.npy (or --calib-mode none)");
    std::set<std::string> known;
    for (auto& kv : model.args) known.insert(kv.first);
    const InputRoles roles = ClassifyArguments(Graph(model.symbol), known);
    if (roles.data.size() != 1)
      throw ParamError("--calib feeds one data input; the model has " + std::to_string(roles.data.size()) + ": " +
                       ModelInputsText(model.symbol, model.args));
    batches = CalibrationBatches(a, model, roles.data[0]);
  }
  const QuantizedModel q = QuantizeModel(model.symbol, model.args, model.aux, batches, options);
  SaveCheckpoint(a.output, 0, q.symbol, q.args, q.aux);

  size_t quantized = 0;
  for (const auto& note : q.report) {
    if (note.quantized) {
      ++quantized;
      continue;
    }
    std::cout << "float32 " << note.node << " (" << note.op << "): " << note.reason << "\n";
  }
  if (!q.removed.empty()) std::cout << "folded or removed: " << JoinNames(q.removed) << "\n";
  std::cout << "quantized " << quantized << " of " << q.report.size() << " operators";
  if (options.calib_mode != CalibMode::kNone)
    std::cout << ", " << q.calib_ranges.size() << " ranges calibrated (" << CalibModeName(options.calib_mode)
              << ") over " << q.calib_examples << " examples";
  std::cout << "\nwrote " << CheckpointSymbolPath(a.output) << " and " << CheckpointParamsPath(a.output, 0) << "\n";
  if (!ActiveVnni())
    std::cout << "note: this process runs int8 without AVX512-VNNI (kernels: " << GemmIsa()
              << "), where its exact products cost about what float32's do: expect int8 near float32's speed here "
                 "(docs/quantization.md)\n";
}
}  // namespace

void AddQuantizeCommand(CLI::App& app) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* sub = app.add_subcommand(
      "quantize", "quantize a float32 model to int8 with calibration, in MXNet's quantized form (docs/quantization.md)");
  sub->add_option("SYMBOL", a->symbol_file, "symbol JSON file, .symbind or ONNX model")->required();
  sub->add_option("PARAMS", a->params_file, ".params file with arg:/aux: arrays (none for a .symbind SYMBOL)");
  sub->add_option("-o,--output", a->output, "prefix of the files written: PREFIX-symbol.json, PREFIX-0000.params")
      ->required();
  sub->add_option("--calib", a->calib,
                  "calibration inputs: a directory of images (preprocessed by --size, --mean, --scale, --bgr) "
                  "or an .npy array whose first dimension counts examples");
  sub->add_option("--calib-mode", a->calib_mode,
                  "entropy (KL-optimal thresholds, MXNet's default), naive (min and max seen) or none "
                  "(ranges computed at run time)");
  sub->add_option("--quantized-dtype", a->dtype, "int8, uint8 or auto (uint8 where a range has no negative values)");
  sub->add_option("--quantize-mode", a->mode,
                  "smart (pooling, relu, flatten, concat and add only between quantized layers) or full");
  sub->add_option("--form", a->form,
                  "contrib (_contrib_quantized_conv, one weight range per layer) or onednn (_sg_mkldnn_conv: "
                  "each convolution with its activation and sum, weights per output channel)");
  sub->add_option("--exclude", a->exclude, "node names to keep float32: NODE[,NODE...]")->delimiter(',');
  sub->add_option("--exclude-op", a->exclude_ops, "operators to keep float32: OP[,OP...]")->delimiter(',');
  sub->add_option("--num-calib-examples", a->num_calib_examples, "calibrate over at most N examples (default: all)");
  sub->add_option("--batch", a->batch, "examples per calibration batch (default 8)");
  sub->add_flag("--no-fold", a->no_fold, "keep BatchNorm nodes (float32) instead of folding them into the layer before");
  AddImageOptions(sub, &a->image);
  sub->callback([a] { Quantize(*a); });
}

}  // namespace symbind_tool
