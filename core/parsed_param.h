// One parameter of a parsed node by name, through the op's own schema (its default when the
// node does not set it): for code that reads another op's parameters without its struct
// (graph rewrites, the subgraph ops that wrap Convolution, BatchNorm or an activation).
//
//   const double eps = ParsedParam<double>(bn.attrs, "eps");   // 1e-3 unless the node says
#pragma once
#include <string>

#include <symbind/core/error.h>
#include <symbind/core/op.h>
#include <symbind/core/param.h>

namespace symbind {

// The parameter's text: as the node gives it (every digit), else the op's default. Throws Error
// when the op has no such parameter (a bug in the caller, not in the model).
inline std::string ParsedParamText(const NodeAttrs& attrs, const std::string& key) {
  const ParamField* field = attrs.parsed.schema ? attrs.parsed.schema->Find(key) : nullptr;
  if (!field || !attrs.parsed.value)
    throw Error("operator " + (attrs.op ? attrs.op->name : std::string("(variable)")) + " (node '" + attrs.name +
                "') has no parameter '" + key + "'");
  auto given = attrs.dict.find(key);
  return given != attrs.dict.end() ? given->second : field->Get(attrs.parsed.value.get());
}

template <typename T>
T ParsedParam(const NodeAttrs& attrs, const std::string& key) {
  const std::string text = ParsedParamText(attrs, key);
  T value{};
  if (!ParamValue<T>::Parse(text, &value))
    throw Error("parameter '" + key + "' of node '" + attrs.name + "' reads back as '" + text +
                "', which cannot be interpreted");
  return value;
}

}  // namespace symbind
