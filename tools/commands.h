// Subcommands of the `symbind` tool. Each tools/cmd_<name>.cc defines one Add<Name>Command
// that registers its CLI11 subcommand; symbind_main.cc lists them. A subcommand reports
// failure by throwing (symbind::Error or any std::exception); main prints one line.
#pragma once
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <symbind/core/symbol.h>

namespace symbind_tool {

void AddParamsCommand(CLI::App& app);
void AddShapesCommand(CLI::App& app);
void AddSummaryCommand(CLI::App& app);
void AddDotCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddConvertCommand(CLI::App& app);
void AddQuantizeCommand(CLI::App& app);

// A subcommand taking SYMBOL.json (or a .symbind model) and repeated --shape NAME=D0,D1,...:
// loads the symbol and passes it with the shapes (--shape, then the model's stored input
// shapes) to `run`, which writes to standard output. With `needs_input_shapes`, an input
// without a shape is an error naming the model's inputs.
using SymbolCommandFn = std::function<void(
    const symbind::Symbol&, const std::map<std::string, symbind::TShape>&, std::ostream&)>;
// "its inputs are: data; labels: softmax_label": what error messages list about a model's
// inputs (its data and label arguments; not the weights `params` gives, hundreds in a deep net).
std::string ModelInputsText(const symbind::Symbol& symbol, const std::map<std::string, symbind::NDArray>& params);

CLI::App* AddSymbolCommand(CLI::App& app, const std::string& name,
                           const std::string& description, SymbolCommandFn run,
                           bool needs_input_shapes = false);

}  // namespace symbind_tool
