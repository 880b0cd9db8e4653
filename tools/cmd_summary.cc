// symbind summary SYMBOL.json [--shape ...]: a per-layer table with parameter counts.
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

void AddSummaryCommand(CLI::App& app) {
  AddSymbolCommand(app, "summary", "print a layer table like mx.viz.print_summary", symbind::PrintSummary);
}

}  // namespace symbind_tool
