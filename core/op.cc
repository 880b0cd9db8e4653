#include "op.h"

#include <cxxabi.h>

#include <cstdlib>

namespace symbind {

namespace {
std::string ReadableTypeName(const std::type_info& t) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : t.name();
  std::free(demangled);
  return name;
}
}  // namespace

void ThrowParamTypeMismatch(const NodeAttrs& attrs, const std::type_info& asked) {
  const std::string where = StrCat("node '", attrs.name, "' (", attrs.op ? attrs.op->name : "variable", ")");
  if (!attrs.parsed.value)
    throw Error(StrCat("param<", ReadableTypeName(asked), ">() on ", where,
                       ", whose parameters were never parsed (Op::ParseAttrs)"));
  throw Error(StrCat("param<", ReadableTypeName(asked), ">() on ", where, ", whose parameters are a ",
                     attrs.parsed.type ? ReadableTypeName(*attrs.parsed.type) : std::string("struct of unknown type"),
                     ": the kernel reads another operator's parameter struct"));
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry registry;
  return registry;
}

Op& OpRegistry::Register(const std::string& name) {
  if (by_name_.count(name)) throw Error("operator " + name + " registered twice");
  auto op = std::make_unique<Op>();
  op->name = name;
  Op* raw = op.get();
  ops_[name] = std::move(op);
  by_name_[name] = raw;
  return *raw;
}

void OpRegistry::AddAlias(const std::string& alias, Op* op) {
  if (by_name_.count(alias)) throw Error("operator alias " + alias + " registered twice");
  by_name_[alias] = op;
}

Op& Op::add_alias(const std::string& alias) {
  aliases.push_back(alias);
  OpRegistry::Global().AddAlias(alias, this);
  return *this;
}

const Op* OpRegistry::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const Op& OpRegistry::Get(const std::string& name) const {
  const Op* op = Find(name);
  if (!op) throw Error("Cannot find operator " + name);
  return *op;
}

std::vector<const Op*> OpRegistry::ListOps() const {
  std::vector<const Op*> out;
  for (auto& kv : ops_) out.push_back(kv.second.get());
  return out;
}

Op& Op::set_arguments(std::vector<std::string> names) {
  arguments = [names](const NodeAttrs&) { return names; };
  return *this;
}
Op& Op::set_aux_states(std::vector<std::string> names) {
  aux_states = [names](const NodeAttrs&) { return names; };
  return *this;
}
Op& Op::set_outputs(std::vector<std::string> names) {
  outputs = [names](const NodeAttrs&) { return names; };
  return *this;
}
Op& Op::set_zero_gradient() {
  zero_gradient = true;
  backward = [](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
    // kAdd adds zero and kNull may have no array bound: only written gradients are touched.
    for (size_t i = 0; i < a.in_grads.size(); ++i)
      if (a.req[i] == OpReq::kWrite || a.req[i] == OpReq::kWriteInplace) a.in_grads[i].Fill(0.0f);
  };
  return *this;
}

void Op::ParseAttrs(NodeAttrs* attrs) const {
  try {
    // An op without parameters keeps whatever keys it is given and reads none, as MXNet's
    // ops without an attribute parser do (Gluon passes axis=1 to broadcast_maximum).
    if (parse_params) attrs->parsed = parse_params(attrs->dict);
    else attrs->parsed = ParsedParams{std::make_shared<EmptyParam>(), &EmptyParam::Schema(),
                                      &typeid(EmptyParam)};
  } catch (const ParamError& e) {
    throw ParamError(std::string(e.what()) + "\n, in operator " + name + "(name=\"" +
                     attrs->name + "\")");
  }
}

const std::string& Op::ArgumentDoc(const std::string& input_name) const {
  static const std::string none;
  for (auto& [input, doc] : argument_docs)
    if (input == input_name) return doc;
  return none;
}

std::vector<std::string> Op::ListArguments(const NodeAttrs& a) const {
  return arguments ? arguments(a) : std::vector<std::string>{"data"};
}
bool Op::ReadsAnyDType(const NodeAttrs& a, size_t index) const {
  if (dtype_generic) return true;
  if (any_dtype_inputs.empty()) return false;
  const std::vector<std::string> args = ListArguments(a);
  return index < args.size() &&
         std::find(any_dtype_inputs.begin(), any_dtype_inputs.end(), args[index]) != any_dtype_inputs.end();
}
std::vector<std::string> Op::ListAuxStates(const NodeAttrs& a) const {
  return aux_states ? aux_states(a) : std::vector<std::string>{};
}
std::vector<std::string> Op::ListOutputs(const NodeAttrs& a) const {
  return outputs ? outputs(a) : std::vector<std::string>{"output"};
}
std::string Op::OutputName(const NodeAttrs& a, uint32_t index) const {
  if (output_name) return output_name(a, index);
  return ListOutputs(a).at(index);
}
Op& Op::set_numbered_outputs(const std::string& prefix, std::function<int(const NodeAttrs&)> count) {
  outputs = [prefix, count](const NodeAttrs& a) { return NumberedNames(prefix, count(a)); };
  output_name = [prefix](const NodeAttrs&, uint32_t index) { return prefix + std::to_string(index); };
  num_outputs = std::move(count);
  return *this;
}

std::vector<std::string> NumberedNames(const std::string& prefix, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}
int Op::NumInputs(const NodeAttrs& a) const {
  return static_cast<int>(ListArguments(a).size() + ListAuxStates(a).size());
}
std::vector<std::string> Op::MonitorInputNames(const NodeAttrs& a) const {
  if (monitor_numbered_inputs) return NumberedNames("input", NumInputs(a));
  std::vector<std::string> names = ListArguments(a), aux = ListAuxStates(a);
  names.insert(names.end(), aux.begin(), aux.end());
  return names;
}
int Op::NumOutputs(const NodeAttrs& a) const {
  return num_outputs ? num_outputs(a) : static_cast<int>(ListOutputs(a).size());
}
int Op::NumVisibleOutputs(const NodeAttrs& a) const {
  return num_visible_outputs ? num_visible_outputs(a) : NumOutputs(a);
}

bool ShapeAssignCheck(std::vector<TShape>* slots, size_t index, const TShape& inferred) {
  TShape& slot = (*slots)[index];
  TShape merged;
  if (!UnifyShapes(slot, inferred, &merged)) throw ShapeAssignFailure{slots, index, slot, inferred};
  if (merged == slot) return false;
  slot = merged;
  return true;
}

bool TypeAssignCheck(std::vector<int>* slots, size_t index, int inferred) {
  int& slot = (*slots)[index];
  if (inferred < 0 || slot == inferred) return false;
  if (slot >= 0) throw TypeAssignFailure{slots, index, slot, inferred};
  slot = inferred;
  return true;
}

void InferSameType(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  int t = -1;
  for (int v : *in)
    if (v >= 0) { t = v; break; }
  if (t < 0)
    for (int v : *out)
      if (v >= 0) { t = v; break; }
  if (t < 0) return;
  for (size_t i = 0; i < in->size(); ++i) TypeAssignCheck(in, i, t);
  for (size_t i = 0; i < out->size(); ++i) TypeAssignCheck(out, i, t);
}

void AssignWithReq(float* dst, const float* value, int64_t n, OpReq req) {
  switch (req) {
    case OpReq::kNull: return;
    case OpReq::kWrite:
    case OpReq::kWriteInplace:
      if (dst != value)
        for (int64_t i = 0; i < n; ++i) dst[i] = value[i];
      return;
    case OpReq::kAdd:
      for (int64_t i = 0; i < n; ++i) dst[i] += value[i];
      return;
  }
}

}  // namespace symbind
