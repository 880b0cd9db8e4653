#include "op_docs.h"

#include <sstream>

#include "op.h"

namespace symbind {

namespace {
std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "`" : ", `") + x + "`";
  return s.empty() ? "none" : s;
}

std::string EscapeCell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// Inputs and outputs with default parameters, when every parameter has a default.
bool DefaultSignature(const Op& op, std::vector<std::string>* args, std::vector<std::string>* aux,
                      std::vector<std::string>* outs) {
  NodeAttrs attrs;
  attrs.op = &op;
  attrs.name = "op";
  try {
    op.ParseAttrs(&attrs);
  } catch (const Error&) {
    return false;
  }
  *args = op.ListArguments(attrs);
  *aux = op.ListAuxStates(attrs);
  *outs = op.ListOutputs(attrs);
  outs->resize(static_cast<size_t>(op.NumVisibleOutputs(attrs)));
  return true;
}
}  // namespace

std::string OperatorsMarkdown() {
  std::ostringstream os;
  std::vector<const Op*> ops;
  for (const Op* op : OpRegistry::Global().ListOps())
    if (op->name.rfind("_test", 0) != 0) ops.push_back(op);  // test-only ops of the test binary
  os << "# Operators\n\n"
     << "Generated from the operator registry (`OperatorsMarkdown()`); do not edit by hand.\n"
     << "Regenerate: `SYMBIND_UPDATE_DOCS=1 ./build/tests/symbind_tests \"[docs]\"`.\n\n"
     << ops.size() << " operators. Parameters are given as strings, as in MXNet's JSON.\n\n";
  for (const Op* op : ops) {
    os << "## " << op->name << "\n\n";
    if (!op->description.empty()) os << op->description << "\n\n";
    if (!op->aliases.empty()) os << "Aliases: " << Join(op->aliases) << "\n\n";
    std::vector<std::string> args, aux, outs;
    if (DefaultSignature(*op, &args, &aux, &outs)) {
      os << "Inputs: " << Join(args) << "\n\n";
      if (!aux.empty()) os << "Aux states: " << Join(aux) << "\n\n";
      os << "Outputs: " << Join(outs) << "\n\n";
    } else {
      os << "Inputs and outputs depend on the required parameters.\n\n";
    }
    if (op->is_loss) os << "Loss head: backward needs no head gradient.\n\n";
    if (!op->backward) os << "Not differentiable.\n\n";
    if (op->schema->fields().empty()) continue;
    os << "| parameter | type | default | description |\n| --- | --- | --- | --- |\n";
    for (auto& f : op->schema->fields()) {
      std::string info = f->TypeInfo();
      std::string type = info.substr(0, info.find(", optional"));
      if (!f->has_default()) type = info.substr(0, info.rfind(", required"));
      os << "| `" << f->name() << "` | " << EscapeCell(type) << " | "
         << (f->has_default() ? "`" + EscapeCell(f->DefaultString()) + "`" : "required") << " | "
         << EscapeCell(f->doc()) << " |\n";
    }
    os << "\n";
    for (auto& c : op->schema->constraints()) os << "Constraint: " << c << ".\n\n";
  }
  return os.str();
}

}  // namespace symbind
