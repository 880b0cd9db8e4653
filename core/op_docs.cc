#include "op_docs.h"

#include <algorithm>
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
    for (auto& [input, doc] : op->argument_docs) os << "- `" << input << "`: " << doc << "\n";
    if (!op->argument_docs.empty()) os << "\n";
    if (op->is_loss) os << "Loss head: backward needs no head gradient.\n\n";
    if (!op->backward) os << "Not differentiable.\n\n";
    if (op->mac_count) os << "Multiply-adds: counted (`symbind summary`).\n\n";
    if (op->schema->fields().empty()) continue;
    os << "| parameter | type | default | description |\n| --- | --- | --- | --- |\n";
    for (auto& f : op->schema->fields()) {
      os << "| `" << f->name() << "` | " << EscapeCell(ParamBaseType(*f)) << " | "
         << (f->has_default() ? "`" + EscapeCell(f->DefaultString()) + "`" : "required") << " | "
         << EscapeCell(f->doc()) << " |\n";
    }
    os << "\n";
    for (auto& c : op->schema->constraints()) os << "Constraint: " << c << ".\n\n";
  }
  return os.str();
}

namespace {

// A value that parses for a required field, to learn the operator's argument list.
std::string DummyValue(const ParamField& f) {
  std::string base = symbind::ParamBaseType(f);
  if (!base.empty() && base[0] == '{') return EnumValues(base).front();
  if (base.rfind("boolean", 0) == 0) return "False";
  if (base.rfind("Shape", 0) == 0) return "(1,1)";
  if (base.rfind("tuple", 0) == 0) return "(1,)";
  if (base.rfind("string", 0) == 0) return "x";
  return "1";
}

std::vector<std::string> InputsFor(const Op& op, const KwArgs& dict) {
  NodeAttrs attrs;
  attrs.op = &op;
  attrs.name = "op";
  attrs.dict = dict;
  op.ParseAttrs(&attrs);
  std::vector<std::string> names = op.ListArguments(attrs);
  auto aux = op.ListAuxStates(attrs);
  names.insert(names.end(), aux.begin(), aux.end());
  return names;
}

}  // namespace

std::string ParamBaseType(const ParamField& field) {
  std::string info = field.TypeInfo();
  if (!field.has_default()) return info.substr(0, info.rfind(", required"));
  std::string base = info.substr(0, info.rfind("optional, default="));
  while (!base.empty() && (base.back() == ' ' || base.back() == ',')) base.pop_back();
  return base;
}

std::vector<std::string> EnumValues(const std::string& base_type) {
  std::vector<std::string> out;
  std::string inner = base_type.substr(1, base_type.find('}') - 1);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" '"), e = item.find_last_not_of(" '");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

OpInputList ListOpInputs(const Op& op) {
  OpInputList in;
  if (!op.key_var_num_args.empty()) {
    in.variadic = true;
    return in;
  }
  KwArgs base;
  for (auto& f : op.schema->fields())
    if (!f->has_default()) base[f->name()] = DummyValue(*f);
  auto note_all = [&in](const std::vector<std::string>& names) {
    for (auto& n : names)
      if (std::find(in.all_names.begin(), in.all_names.end(), n) == in.all_names.end())
        in.all_names.push_back(n);
  };
  try {
    in.names = InputsFor(op, base);
    note_all(in.names);
  } catch (const std::exception& e) {
    // Equal dummies break an ordering (randint's low < high): distinct increasing numbers may not.
    KwArgs ordered = base;
    int next = 1;
    for (auto& f : op.schema->fields())
      if (!f->has_default() && base[f->name()] == "1") ordered[f->name()] = std::to_string(next++);
    try {
      in.names = InputsFor(op, ordered);
      note_all(in.names);
      base = ordered;
    } catch (const std::exception&) {
      // Other constraints (Pooling needs a kernel unless global_pool) one of the variants below
      // may satisfy.
      in.names = {"data"};
      in.error = e.what();
    }
  }
  for (auto& f : op.schema->fields()) {
    std::string type = ParamBaseType(*f);
    std::vector<std::string> values;
    if (!type.empty() && type[0] == '{') values = EnumValues(type);
    else if (type.rfind("boolean", 0) == 0) values = {"True", "False"};
    for (auto& v : values) {
      KwArgs dict = base;
      dict[f->name()] = v;
      try {
        auto names = InputsFor(op, dict);
        note_all(names);
        if (names.size() > in.names.size()) in.names = names;
      } catch (const std::exception&) {
        // This value is not valid with the dummies of the other fields; others may be.
      }
    }
  }
  // Inputs that only other parameter values bring (RNN: state_cell for lstm, sequence_length
  // with use_sequence_length) follow, as MXNet lists every argument an operator can take;
  // not one named like the parameter that brings it (_fused_conv_act's `residual`), which
  // generated signatures could not hold twice.
  for (auto& n : in.all_names)
    if (std::find(in.names.begin(), in.names.end(), n) == in.names.end() && !op.schema->Find(n))
      in.names.push_back(n);
  if (!in.all_names.empty()) in.error.clear();
  return in;
}

}  // namespace symbind
