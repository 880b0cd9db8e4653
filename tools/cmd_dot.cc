// symbind dot SYMBOL.json [--shape ...]: the graph in Graphviz DOT.
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

void AddDotCommand(CLI::App& app) {
  AddSymbolCommand(app, "dot", "write the graph as Graphviz DOT", symbind::WriteDot);
}

}  // namespace symbind_tool
