#pragma once
#include <string>

namespace symbind {

// Markdown reference of every registered operator: aliases, inputs, outputs and each
// parameter with its type, default and description. docs/ops.md is this text.
std::string OperatorsMarkdown();

}  // namespace symbind
