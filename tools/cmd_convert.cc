// symbind convert SYMBOL.json PARAMS -o MODEL.symbind [--shape NAME=D0,D1,...]...
// symbind convert MODEL.symbind -o PREFIX      (writes PREFIX-symbol.json, PREFIX-0000.params)
// Converts between MXNet's two-file checkpoints and the one-file .symbind format; the arrays
// are carried over bit for bit.
#include <iostream>
#include <memory>

#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

namespace {
struct ConvertArgs {
  std::string input, params, output;
  std::vector<std::string> shapes;
};

void Convert(const ConvertArgs& a) {
  using namespace symbind;
  if (IsModelFile(a.input)) {
    if (!a.params.empty())
      throw ParamError("convert: " + a.input + " is a .symbind model; give no PARAMS file");
    if (!a.shapes.empty()) throw ParamError("convert: --shape applies to JSON + .params input only");
    Model model = LoadModel(a.input);
    SaveCheckpoint(a.output, 0, model.symbol, model.args, model.aux);
    std::cout << "wrote " << CheckpointSymbolPath(a.output) << " and "
              << CheckpointParamsPath(a.output, 0) << "\n";
    return;
  }
  if (a.params.empty())
    throw ParamError("convert: " + a.input + " is not a .symbind model; give SYMBOL.json PARAMS");
  Model model = LoadModelFiles(a.input, a.params);
  for (auto& spec : a.shapes) {
    auto kv = ParseShapeSpec(spec);
    if (!model.input_shapes.insert(kv).second) throw ParamError("--shape " + kv.first + " given twice");
  }
  SaveModel(a.output, model);
  std::cout << "wrote " << a.output << " (" << model.args.size() << " args, " << model.aux.size()
            << " aux states)\n";
}
}  // namespace

void AddConvertCommand(CLI::App& app) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert", "SYMBOL.json PARAMS -> one .symbind file, or a .symbind file -> PREFIX-symbol.json + PREFIX-0000.params");
  sub->add_option("INPUT", a->input, "symbol JSON file, or a .symbind model")->required();
  sub->add_option("PARAMS", a->params, ".params file with arg:/aux: arrays (JSON input only)");
  sub->add_option("-o,--output", a->output, "the .symbind file to write, or the checkpoint prefix")->required();
  sub->add_option("--shape", a->shapes, "input shape NAME=D0,D1,... stored in the .symbind file (repeatable)");
  sub->callback([a] { Convert(*a); });
}

}  // namespace symbind_tool
