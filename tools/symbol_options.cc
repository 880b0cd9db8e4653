#include <iostream>
#include <memory>

#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

CLI::App* AddSymbolCommand(CLI::App& app, const std::string& name,
                           const std::string& description, SymbolCommandFn run) {
  struct Args {
    std::string file;
    std::vector<std::string> shapes;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(name, description);
  sub->add_option("SYMBOL", args->file, "symbol JSON file (MXNet 0.8, 1.x or 2.0) or .symbind model")
      ->required();
  sub->add_option("--shape", args->shapes, "input shape NAME=D0,D1,... (repeatable)")
      ->allow_extra_args(false);
  sub->callback([args, run] {
    symbind::Model model = symbind::LoadModelFiles(args->file);
    std::map<std::string, symbind::TShape> shapes;
    for (auto& spec : args->shapes) {
      auto kv = symbind::ParseShapeSpec(spec);
      if (!shapes.insert(kv).second)
        throw symbind::ParamError("--shape " + kv.first + " given twice");
    }
    shapes.insert(model.input_shapes.begin(), model.input_shapes.end());  // --shape wins
    run(model.symbol, shapes, std::cout);
  });
  return sub;
}

}  // namespace symbind_tool
