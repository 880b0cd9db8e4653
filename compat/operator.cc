#include "mxnet-cpp/operator.h"

#include <random>

#include <symbind/executor/invoke.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

Operator::Operator(const std::string& operator_name) : op_name_(operator_name) {
  symbind::OpRegistry::Global().Get(operator_name);  // throws "Cannot find operator X"
}

Operator& Operator::SetInput(const std::string& name, const Symbol& symbol) {
  if (!symbol.IsEmpty()) named_symbols_.emplace_back(name, symbol);
  return *this;
}
Operator& Operator::SetInput(const std::string& name, const NDArray& ndarray) {
  named_arrays_.emplace_back(name, ndarray);
  return *this;
}
void Operator::PushInput(const Symbol& symbol) { positional_symbols_.push_back(symbol); }
void Operator::PushInput(const NDArray& ndarray) { positional_arrays_.push_back(ndarray); }

Symbol Operator::CreateSymbol(const std::string& name) {
  if (!named_arrays_.empty() || !positional_arrays_.empty())
    throw symbind::Error("Operator(\"" + op_name_ +
                             "\").CreateSymbol: inputs were given as NDArrays; use Invoke");
  std::vector<std::pair<std::string, symbind::Symbol>> named;
  for (auto& kv : named_symbols_) named.emplace_back(kv.first, kv.second.native());
  std::vector<symbind::Symbol> positional;
  for (auto& s : positional_symbols_) positional.push_back(s.native());
  return Symbol(symbind::Symbol::Create(op_name_, name, params_, named, positional));
}

std::vector<NDArray> Operator::Invoke() {
  std::vector<NDArray> outputs;
  Invoke(outputs);
  return outputs;
}

void Operator::Invoke(NDArray& output) {
  std::vector<NDArray> outputs{output};
  Invoke(outputs);
  if (output.IsNone()) output = outputs[0];
}

void Operator::Invoke(std::vector<NDArray>& outputs) {
  if (!named_symbols_.empty() || !positional_symbols_.empty())
    throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: inputs were given as Symbols; use CreateSymbol");
  symbind::InvokeInputs inputs;
  for (auto& a : positional_arrays_) inputs.positional.push_back(a.native());
  for (auto& kv : named_arrays_) inputs.named.emplace_back(kv.first, kv.second.native());
  std::vector<symbind::NDArray> given;
  for (auto& o : outputs) given.push_back(o.IsNone() ? symbind::NDArray() : o.native());
  uint64_t seed = 0;  // random ops draw from the layer's generator (MXRandomSeed)
  compat::WithRandom([&](std::mt19937_64& rng) { seed = rng(); });
  std::vector<symbind::NDArray> results = symbind::Invoke(op_name_, params_, inputs, given, seed);
  outputs.resize(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    if (outputs[i].IsNone()) outputs[i] = NDArray(results[i]);
}

}  // namespace cpp
}  // namespace mxnet
