// symbind convert SYMBOL.json PARAMS -o MODEL.symbind [--shape NAME=D0,D1,...]...
// symbind convert SYMBOL.json PARAMS -o MODEL.onnx [--opset N] [--shape NAME=D0,D1,...]...
// symbind convert MODEL.symbind|MODEL.onnx -o PREFIX|OTHER.symbind|OTHER.onnx
// Converts between MXNet's two-file checkpoints, the one-file .symbind format and ONNX; the
// output's form follows its name: ".onnx", ".symbind", else a checkpoint prefix (for JSON +
// .params input, a .symbind file). Arrays are carried over bit for bit, unless
// --fold-batch-norm folds each inference BatchNorm into the layer before it first, or
// --prepack also stores the kernels' packed weights in the .symbind file (--compact-weights: those of
// PredictorOptions::compact_weights).
#include <iostream>
#include <memory>

#include <symbind/io/checkpoint.h>
#include <symbind/io/file_kind.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>
#include <symbind/predict/prepack.h>
#ifdef SYMBIND_HAVE_ONNX
#include <symbind/io/onnx/onnx.h>
#endif

#include "commands.h"

namespace symbind_tool {

namespace {
struct ConvertArgs {
  std::string input, params, output;
  std::vector<std::string> shapes;
  int opset = 0;  // 0: the default
  bool fold_batch_norm = false;
  bool prepack = false, compact_weights = false;
};

// The graph as the Predictor rewrites it at bind: a predictor over the file then binds the
// weights as they are, with no folded copy of them, and gives the same outputs. The file is for
// inference: the folded BatchNorms cannot be trained.
void FoldBatchNorms(symbind::Model* model) {
  const size_t folded = symbind::FoldModelBatchNorms(model).size();
  std::cout << "folded " << folded << " BatchNorm node(s) into the layer before them\n";
}

void WriteOnnx(const ConvertArgs& a, const symbind::Model& model) {
#ifdef SYMBIND_HAVE_ONNX
  symbind::OnnxExportOptions options;
  if (a.opset) options.opset = a.opset;
  symbind::SaveOnnx(a.output, model, options);
  std::cout << "wrote " << a.output << " (ONNX opset " << options.opset << ")\n";
#else
  (void)model;
  throw symbind::IOError("convert: cannot write " + a.output + ": this symbind was built without ONNX support");
#endif
}

void Prepack(symbind::Model* model, bool compact_weights) {
  if (model->input_shapes.empty())
    throw symbind::ParamError("convert --prepack: give the input shapes the model will run with (--shape NAME=D0,D1,...)");
  const symbind::PrepackReport r = symbind::PrepackModel(model, {}, compact_weights);
  std::cout << "folded " << r.folded << " BatchNorm node(s) into the layer before them; stored " << r.forms
            << " packed form(s) of the weights, " << (r.form_bytes + (1 << 19)) / (1 << 20) << " MiB, for "
            << model->forms_isa << "\n";
}

void Convert(const ConvertArgs& a) {
  using namespace symbind;
  const bool to_onnx = EndsWith(a.output, ".onnx");
  if (a.opset && !to_onnx) throw ParamError("convert: --opset applies to an .onnx output only");
  if (a.compact_weights && !a.prepack) throw ParamError("convert: --compact-weights applies to --prepack only");
  if (a.prepack && !EndsWith(a.output, ".symbind"))
    throw ParamError("convert: --prepack stores packed weights in a .symbind file; " + a.output + " is not one");
  const FileKind kind = DetectFileKindOfPath(a.input);
  if (kind == FileKind::kSymbindModel || kind == FileKind::kOnnx) {
    if (!a.params.empty())
      throw ParamError("convert: " + a.input + " is " + FileKindName(kind) + ", which holds its parameters; give no PARAMS file");
    Model model = LoadModelFiles(a.input);
    for (auto& spec : a.shapes) {
      auto kv = ParseShapeSpec(spec);
      model.input_shapes[kv.first] = kv.second;
    }
    if (a.prepack) Prepack(&model, a.compact_weights);
    else if (a.fold_batch_norm) FoldBatchNorms(&model);
    if (to_onnx) return WriteOnnx(a, model);
    if (EndsWith(a.output, ".symbind")) {
      SaveModel(a.output, model);
      std::cout << "wrote " << a.output << " (" << model.args.size() << " args, " << model.aux.size() << " aux states)\n";
      return;
    }
    SaveCheckpoint(a.output, 0, model.symbol, model.args, model.aux);
    std::cout << "wrote " << CheckpointSymbolPath(a.output) << " and "
              << CheckpointParamsPath(a.output, 0) << "\n";
    return;
  }
  if (a.params.empty())
    throw ParamError("convert: " + a.input + " is not a .symbind or ONNX model; give SYMBOL.json PARAMS");
  Model model = LoadModelFiles(a.input, a.params);
  for (auto& spec : a.shapes) {
    auto kv = ParseShapeSpec(spec);
    if (!model.input_shapes.insert(kv).second) throw ParamError("--shape " + kv.first + " given twice");
  }
  if (a.prepack) Prepack(&model, a.compact_weights);
  else if (a.fold_batch_norm) FoldBatchNorms(&model);
  if (to_onnx) return WriteOnnx(a, model);
  SaveModel(a.output, model);
  std::cout << "wrote " << a.output << " (" << model.args.size() << " args, " << model.aux.size()
            << " aux states)\n";
}
}  // namespace

void AddConvertCommand(CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert", "SYMBOL.json PARAMS -> one .symbind file or an .onnx file; a .symbind or .onnx file -> "
                 "PREFIX-symbol.json + PREFIX-0000.params, .symbind or .onnx (by the output's name)");
  sub->add_option("INPUT", a->input, "symbol JSON file, or a .symbind or ONNX model")->required();
  sub->add_option("PARAMS", a->params, ".params file with arg:/aux: arrays (JSON input only)");
  sub->add_option("-o,--output", a->output, "the .symbind or .onnx file to write, or the checkpoint prefix")->required();
  sub->add_option("--shape", a->shapes, "input shape NAME=D0,D1,... stored in the .symbind file or fixed in the .onnx file (repeatable)");
  sub->add_option("--opset", a->opset, "ONNX opset of an .onnx output (11-17; default 13)");
  sub->add_flag("--fold-batch-norm", a->fold_batch_norm,
                "fold each inference BatchNorm into the Convolution / FullyConnected before it, as predictors do "
                "at bind: a file for inference only, whose predictors bind with no copy of the weights");
  sub->add_flag("--prepack", a->prepack,
                "also store the kernels' packed weights for the --shape inputs and this CPU's instruction set "
                "(implies --fold-batch-norm; .symbind output): the file runs without packing, its weights shared "
                "through the page cache by every process"); 
  sub->add_flag("--compact-weights", a->compact_weights,
                "with --prepack: store the forms that `run --compact-weights` (PredictorOptions::compact_weights) uses");
  sub->callback([a] { Convert(*a); });
}

}  // namespace symbind_tool
