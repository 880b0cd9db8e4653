#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include <symbind/core/graph.h>
#include <symbind/core/input_roles.h>

#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

std::string ModelInputsText(const symbind::Symbol& symbol, const std::map<std::string, symbind::NDArray>& params) {
  std::set<std::string> known;
  for (auto& kv : params) known.insert(kv.first);
  const symbind::InputRoles roles = symbind::ClassifyArguments(symbind::Graph(symbol), known);
  std::string text = "its inputs are: " + (roles.data.empty() ? std::string("(none)") : symbind::JoinNames(roles.data));
  if (!roles.labels.empty()) text += "; labels: " + symbind::JoinNames(roles.labels);
  return text;
}

CLI::App* AddSymbolCommand(CLI::App& app, const std::string& name,
                           const std::string& description, SymbolCommandFn run,
                           bool needs_input_shapes) {
  struct Args {
    std::string file;
    std::vector<std::string> shapes;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(name, description);
  sub->add_option("SYMBOL", args->file, "symbol JSON file (MXNet 0.8, 1.x or 2.0), .symbind or ONNX model")
      ->required();
  sub->add_option("--shape", args->shapes, "input shape NAME=D0,D1,... (repeatable)")
      ->allow_extra_args(false);
  sub->callback([args, run, needs_input_shapes] {
    symbind::Model model = symbind::LoadModelFiles(args->file);
    std::map<std::string, symbind::TShape> shapes;
    for (auto& spec : args->shapes) {
      auto kv = symbind::ParseShapeSpec(spec);
      if (!shapes.insert(kv).second)
        throw symbind::ParamError("--shape " + kv.first + " given twice");
    }
    shapes.insert(model.input_shapes.begin(), model.input_shapes.end());  // --shape wins
    const std::string inputs_text = ModelInputsText(model.symbol, model.args);
    const std::vector<std::string> arg_names = model.symbol.ListArguments();
    for (auto& kv : shapes)
      if (std::find(arg_names.begin(), arg_names.end(), kv.first) == arg_names.end())
        throw symbind::ParamError("--shape " + kv.first + ": the model has no argument '" + kv.first + "'; " +
                                  inputs_text);
    std::vector<std::string> without_shape;
    std::set<std::string> known;
    for (auto& kv : model.args) known.insert(kv.first);
    for (auto& name : symbind::ClassifyArguments(symbind::Graph(model.symbol), known).data)
      if (!shapes.count(name)) without_shape.push_back(name);
    if (needs_input_shapes && !without_shape.empty())
      throw symbind::ParamError("give --shape NAME=D0,D1,... for " + symbind::JoinNames(without_shape) + " (" +
                                inputs_text + ")");
    run(model.symbol, shapes, std::cout);
  });
  return sub;
}

}  // namespace symbind_tool
