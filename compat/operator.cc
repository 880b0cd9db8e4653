#include "mxnet-cpp/operator.h"

#include <charconv>
#include <random>

#include <symbind/executor/invoke.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

namespace detail {
namespace {
template <typename T>
std::string ShortestText(T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}
}  // namespace
std::string FloatParamString(float v) try { return ShortestText(v); } SYMBIND_CPP_RECORD_ERRORS
std::string FloatParamString(double v) try { return ShortestText(v); } SYMBIND_CPP_RECORD_ERRORS
}  // namespace detail

AtomicSymbolCreator Operator::GetHandle() const try {
  OpHandle handle = nullptr;
  if (NNGetOpHandle(op_name_.c_str(), &handle) != 0) throw dmlc::Error(MXGetLastError());
  return handle;
} SYMBIND_CPP_RECORD_ERRORS

Operator::Operator(const std::string& operator_name) try : op_name_(operator_name) {
  symbind::OpRegistry::Global().Get(operator_name);  // throws "Cannot find operator X"
} SYMBIND_CPP_RECORD_ERRORS

Operator& Operator::SetInput(const std::string& name, const Symbol& symbol) try {
  if (!symbol.IsEmpty()) named_symbols_.emplace_back(name, symbol);
  return *this;
} SYMBIND_CPP_RECORD_ERRORS
Operator& Operator::SetInput(const std::string& name, const NDArray& ndarray) try {
  named_arrays_.emplace_back(name, ndarray);
  return *this;
} SYMBIND_CPP_RECORD_ERRORS
void Operator::PushInput(const Symbol& symbol) try { positional_symbols_.push_back(symbol); } SYMBIND_CPP_RECORD_ERRORS
void Operator::PushInput(const NDArray& ndarray) try { positional_arrays_.push_back(ndarray); } SYMBIND_CPP_RECORD_ERRORS

Symbol Operator::CreateSymbol(const std::string& name) try {
  if (!named_arrays_.empty() || !positional_arrays_.empty())
    throw symbind::Error("Operator(\"" + op_name_ +
                             "\").CreateSymbol: inputs were given as NDArrays; use Invoke");
  std::vector<std::pair<std::string, symbind::Symbol>> named;
  for (auto& kv : named_symbols_) named.emplace_back(kv.first, compat::Native(kv.second));
  std::vector<symbind::Symbol> positional;
  for (auto& s : positional_symbols_) positional.push_back(compat::Native(s));
  return compat::Wrap(symbind::Symbol::Create(op_name_, name, params_, named, positional));
} SYMBIND_CPP_RECORD_ERRORS

std::vector<NDArray> Operator::Invoke() try {
  std::vector<NDArray> outputs;
  Invoke(outputs);
  return outputs;
} SYMBIND_CPP_RECORD_ERRORS

void Operator::Invoke(NDArray& output) try {
  std::vector<NDArray> outputs{output};
  Invoke(outputs);
  if (output.IsNone()) output = outputs[0];
} SYMBIND_CPP_RECORD_ERRORS

void Operator::Invoke(std::vector<NDArray>& outputs) try {
  if (!named_symbols_.empty() || !positional_symbols_.empty())
    throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: inputs were given as Symbols; use CreateSymbol");
  symbind::InvokeInputs inputs;
  for (auto& a : positional_arrays_) inputs.positional.push_back(compat::Native(a));
  for (auto& kv : named_arrays_) inputs.named.emplace_back(kv.first, compat::Native(kv.second));
  std::vector<symbind::NDArray> given;
  for (auto& o : outputs) given.push_back(o.IsNone() ? symbind::NDArray() : compat::Native(o));
  uint64_t seed = 0;  // random ops draw from the layer's generator (MXRandomSeed)
  symbind::capi::WithFrontendRandom([&](std::mt19937_64& rng) { seed = rng(); });
  std::vector<symbind::NDArray> results = symbind::Invoke(op_name_, params_, inputs, given, seed);
  outputs.resize(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    if (outputs[i].IsNone()) outputs[i] = compat::Wrap(results[i]);
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
