// libFuzzer target: operator parameter parsing. The first byte picks a registered operator;
// the rest is "key=value" lines given to its parameter parser. Shape strings are also fed to
// TShape::Parse.
#include <string>

#include <symbind/core/op.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::vector<const symbind::Op*> ops = symbind::OpRegistry::Global().ListOps();
  if (ops.empty()) return 0;
  const symbind::Op* op = ops[data[0] % ops.size()];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  symbind::NodeAttrs attrs;
  attrs.op = op;
  attrs.name = "fuzz";
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) attrs.dict[line.substr(0, eq)] = line.substr(eq + 1);
    try {
      symbind::TShape::Parse(line);
    } catch (const symbind::Error&) {
    }
    pos = end + 1;
  }
  try {
    op->ParseAttrs(&attrs);
    // A parsed op must answer its structural queries.
    op->ListArguments(attrs);
    op->ListAuxStates(attrs);
    op->ListOutputs(attrs);
    op->NumVisibleOutputs(attrs);
  } catch (const symbind::Error&) {
  }
  return 0;
}
