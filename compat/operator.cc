#include "mxnet-cpp/operator.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>

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

namespace {

// One bound single-op graph: inputs are copied into its arrays, outputs copied out.
struct CachedOp {
  std::mutex mu;
  std::unique_ptr<symbind::Executor> exec;
  // For each argument then aux state of the executor: index into the call's input list.
  std::vector<size_t> arg_source, aux_source;
};

std::mutex g_cache_mu;
std::map<std::string, std::shared_ptr<CachedOp>>& Cache() {
  static std::map<std::string, std::shared_ptr<CachedOp>> cache;
  return cache;
}
constexpr size_t kMaxCachedOps = 512;

std::string InputVar(size_t i) { return "__compat_input" + std::to_string(i) + "__"; }

}  // namespace

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
  // Inputs in call order: positional first, then named.
  std::vector<const NDArray*> inputs;
  for (auto& a : positional_arrays_) inputs.push_back(&a);
  for (auto& kv : named_arrays_) inputs.push_back(&kv.second);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->IsNone())
      throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: input " + std::to_string(i) + " is an empty NDArray");

  std::string key = op_name_ + "|";
  for (auto& kv : params_) key += kv.first + "=" + kv.second + ";";
  key += "|" + std::to_string(positional_arrays_.size()) + "|";
  for (auto& kv : named_arrays_) key += kv.first + ",";
  for (auto* a : inputs) key += a->native().shape().ToString() + std::to_string(static_cast<int>(a->native().dtype()));

  std::shared_ptr<CachedOp> op;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = Cache().find(key);
    if (it != Cache().end()) op = it->second;
  }
  if (!op) {
    op = std::make_shared<CachedOp>();
    std::vector<symbind::Symbol> positional;
    std::vector<std::pair<std::string, symbind::Symbol>> named;
    std::map<std::string, size_t> var_index;
    size_t k = 0;
    for (size_t i = 0; i < positional_arrays_.size(); ++i, ++k) {
      positional.push_back(symbind::Symbol::Variable(InputVar(k)));
      var_index[InputVar(k)] = k;
    }
    for (auto& kv : named_arrays_) {
      named.emplace_back(kv.first, symbind::Symbol::Variable(InputVar(k)));
      var_index[InputVar(k)] = k;
      ++k;
    }
    symbind::Symbol sym = symbind::Symbol::Create(op_name_, "imperative", params_, named, positional);
    std::map<std::string, symbind::TShape> shapes;
    for (size_t i = 0; i < inputs.size(); ++i) shapes[InputVar(i)] = inputs[i]->native().shape();
    auto lookup = [&](const std::string& name) {
      auto it = var_index.find(name);
      if (it == var_index.end()) {
        std::string input = name.substr(std::string("imperative_").size());
        throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: input '" + input + "' not given");
      }
      return it->second;
    };
    std::vector<symbind::NDArray> args, grads, aux;
    std::vector<symbind::OpReq> reqs;
    symbind::ShapeInferResult r = symbind::InferShape(sym, shapes);
    auto arg_names = sym.ListArguments();
    for (size_t i = 0; i < arg_names.size(); ++i) {
      size_t src = lookup(arg_names[i]);
      op->arg_source.push_back(src);
      args.emplace_back(r.arg_shapes[i], inputs[src]->native().dtype());
      grads.emplace_back();
      reqs.push_back(symbind::OpReq::kNull);
    }
    auto aux_names = sym.ListAuxiliaryStates();
    for (size_t i = 0; i < aux_names.size(); ++i) {
      size_t src = lookup(aux_names[i]);
      op->aux_source.push_back(src);
      aux.emplace_back(r.aux_shapes[i], inputs[src]->native().dtype());
    }
    op->exec = symbind::Bind(sym, symbind::Context::CPU(), args, grads, reqs, aux);
    std::lock_guard<std::mutex> lock(g_cache_mu);
    if (Cache().size() >= kMaxCachedOps) Cache().clear();
    Cache()[key] = op;
  }

  std::lock_guard<std::mutex> lock(op->mu);
  const auto& args = op->exec->arg_arrays();
  for (size_t i = 0; i < args.size(); ++i) {
    symbind::NDArray dst = args[i];  // a handle onto the executor's storage
    inputs[op->arg_source[i]]->native().CopyTo(&dst);
  }
  const auto& aux = op->exec->aux_arrays();
  for (size_t i = 0; i < aux.size(); ++i) {
    symbind::NDArray dst = aux[i];
    inputs[op->aux_source[i]]->native().CopyTo(&dst);
  }
  op->exec->Forward(false);
  const auto& outs = op->exec->outputs();
  if (outputs.size() > outs.size())
    throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: " + std::to_string(outputs.size()) +
                             " output arrays given, the operator has " + std::to_string(outs.size()));
  outputs.resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outputs[i].IsNone()) {
      outputs[i] = NDArray(outs[i].Copy());
    } else {
      if (outputs[i].native().shape() != outs[i].shape())
        throw symbind::Error("Operator(\"" + op_name_ + "\").Invoke: output " + std::to_string(i) +
                                 " has shape " + outputs[i].native().shape().ToString() + ", the result is " +
                                 outs[i].shape().ToString());
      outs[i].CopyTo(&outputs[i].native());
    }
  }
}

}  // namespace cpp
}  // namespace mxnet
