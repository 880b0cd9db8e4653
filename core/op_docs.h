#pragma once
#include <string>
#include <vector>

namespace symbind {

struct Op;
class ParamField;

// An operator's inputs (arguments, then aux states) as MXNet's op.h and
// MXSymbolGetAtomicSymbolInfo list them. Some inputs exist only for some parameter values
// (bias unless no_bias, gamma for LeakyReLU's prelu), so each enum value and boolean of each
// field is tried and the longest list comes first (the defaults' on a tie), followed by the
// inputs only other values bring (RNN: state_cell, then sequence_length). Variadic operators
// (key_var_num_args) have no fixed list. When no list can be found, `names` is {"data"} and
// `error` says why.
struct OpInputList {
  bool variadic = false;
  std::vector<std::string> names;
  std::vector<std::string> all_names;  // every input any tried parameter set has
  std::string error;
};
OpInputList ListOpInputs(const Op& op);

// A parameter's type alone, without "required" / "optional, default=...":
// "int (non-negative)", "{'avg', 'max'}", "Shape(tuple)".
std::string ParamBaseType(const ParamField& field);

// The values of an enum type as ParamField::BaseType writes it: "{'a', 'b'}" -> a, b.
std::vector<std::string> EnumValues(const std::string& base_type);

// Markdown reference of every registered operator: aliases, inputs, outputs and each
// parameter with its type, default and description. docs/ops.md is this text.
std::string OperatorsMarkdown();

}  // namespace symbind
