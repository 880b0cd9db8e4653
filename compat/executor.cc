#include "mxnet-cpp/executor.h"

#include <sstream>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/internal_outputs.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

namespace {
std::vector<NDArray> Wrap(const std::vector<symbind::NDArray>& v) {
  std::vector<NDArray> out;
  for (auto& a : v) out.emplace_back(a);
  return out;
}
}  // namespace

Executor::Executor(const Symbol& symbol, Context context, const std::vector<NDArray>& arg_arrays_in,
                   const std::vector<NDArray>& grad_arrays_in,
                   const std::vector<OpReqType>& grad_reqs,
                   const std::vector<NDArray>& aux_arrays_in,
                   const std::map<std::string, Context>&, Executor*)
    : symbol_(symbol), context_(context), grad_reqs_(grad_reqs) {
  arg_names_ = symbol.ListArguments();
  aux_names_ = symbol.ListAuxiliaryStates();
  std::vector<symbind::OpReq> reqs;
  for (auto r : grad_reqs) reqs.push_back(compat::ToNative(r));
  // A gradient MXNet would not write may be an empty handle.
  exec_ = symbind::Bind(symbol.native(), context.native(), compat::Natives(arg_arrays_in),
                        compat::Natives(grad_arrays_in), reqs, compat::Natives(aux_arrays_in));
  arg_arrays = arg_arrays_in;
  grad_arrays = grad_arrays_in;
  aux_arrays = aux_arrays_in;
  outputs = Wrap(exec_->outputs());
}

Executor::Executor(const Symbol& symbol, Context context, std::unique_ptr<symbind::Executor> native)
    : symbol_(symbol), context_(context), exec_(std::move(native)) {
  arg_names_ = symbol.ListArguments();
  aux_names_ = symbol.ListAuxiliaryStates();
  for (auto r : exec_->grad_reqs()) grad_reqs_.push_back(static_cast<OpReqType>(r));
  arg_arrays = Wrap(exec_->arg_arrays());
  grad_arrays = Wrap(exec_->grad_arrays());
  aux_arrays = Wrap(exec_->aux_arrays());
  outputs = Wrap(exec_->outputs());
}

Executor::~Executor() = default;

void Executor::Forward(bool is_train) {
  exec_->Forward(is_train);
  outputs = Wrap(exec_->outputs());
  if (monitor_) RunMonitor(is_train);
}

void Executor::Backward(const std::vector<NDArray>& head_grads) {
  exec_->Backward(compat::Natives(head_grads));
}

std::string Executor::DebugStr() {
  const symbind::Graph& g = exec_->graph();
  std::map<std::string, symbind::TShape> known;
  for (size_t i = 0; i < arg_names_.size(); ++i) known[arg_names_[i]] = arg_arrays[i].native().shape();
  for (size_t i = 0; i < aux_names_.size(); ++i) known[aux_names_[i]] = aux_arrays[i].native().shape();
  std::vector<symbind::TShape> shapes = symbind::InferEntryShapes(g, known);
  std::ostringstream os;
  os << "Symbol Outputs:\n";
  auto outs = symbol_.ListOutputs();
  for (size_t i = 0; i < outs.size(); ++i) os << "\toutput[" << i << "]=" << outs[i] << "\n";
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const auto& info = g.node(id);
    const auto& node = *info.node;
    os << "--------------------\n";
    if (node.is_variable()) {
      os << "Variable:" << node.name() << "\n";
      continue;
    }
    os << "Op:" << node.attrs.op->name << ", Name=" << node.name() << "\n";
    os << "Inputs:\n";
    for (size_t i = 0; i < info.inputs.size(); ++i) {
      const auto& in = info.inputs[i];
      os << "\targ[" << i << "]=" << g.node(in.node_id).node->name() << "(" << in.index << ") shape="
         << shapes[g.entry_id(in)] << "\n";
    }
    if (!node.attrs.dict.empty()) {
      os << "Attrs:\n";
      for (auto& kv : node.attrs.dict) os << "\t" << kv.first << "=" << kv.second << "\n";
    }
    for (uint32_t o = 0; o < g.num_node_outputs(id); ++o)
      os << "Output[" << o << "] shape=" << shapes[g.entry_id(id, o)] << "\n";
  }
  return os.str();
}

std::map<std::string, NDArray> Executor::MakeDict(const std::vector<std::string>& names,
                                                  const std::vector<NDArray>& arrays) {
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < names.size() && i < arrays.size(); ++i) out[names[i]] = arrays[i];
  return out;
}

Executor* Executor::Reshape(const std::map<std::string, std::vector<mx_uint>>& new_shapes) {
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : new_shapes)
    known[kv.first] = symbind::TShape(std::vector<int64_t>(kv.second.begin(), kv.second.end()));
  // MXNet's MXExecutorReshapeEx with partial_shaping and allow_up_sizing: inputs not named
  // (labels, parameters) follow shape inference.
  return new Executor(symbol_, context_, exec_->Reshape(known, true, true));
}

void Executor::SetMonitorCallback(MonitorCallback callback, bool monitor_all) {
  monitor_ = std::move(callback);
  monitor_all_ = monitor_all;
}

void Executor::RunMonitor(bool) {
  for (auto& named : symbind::InternalOutputs(*exec_, monitor_all_))
    monitor_(named.first, NDArray(named.second));
}

}  // namespace cpp
}  // namespace mxnet
