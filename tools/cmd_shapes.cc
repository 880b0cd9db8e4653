// symbind shapes SYMBOL.json [--shape NAME=D0,D1,...]...: inferred argument, aux and output
// shapes in MXNet order.
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

void AddShapesCommand(CLI::App& app) {
  AddSymbolCommand(app, "shapes", "infer argument, aux-state and output shapes", symbind::PrintShapes,
                   /*needs_input_shapes=*/true);
}

}  // namespace symbind_tool
