#include "mxnet-cpp/executor.h"

#include <sstream>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/internal_outputs.h>

#include <mxnet/c_api_symbind.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

namespace {
std::vector<NDArray> Wrap(const std::vector<symbind::NDArray>& v) {
  std::vector<NDArray> out;
  for (auto& a : v) out.push_back(compat::Wrap(a));
  return out;
}
}  // namespace

Executor::Executor(const Symbol& symbol, Context context, const std::vector<NDArray>& arg_arrays_in,
                   const std::vector<NDArray>& grad_arrays_in,
                   const std::vector<OpReqType>& grad_reqs,
                   const std::vector<NDArray>& aux_arrays_in,
                   const std::map<std::string, Context>&, Executor*)
    try : symbol_(symbol), context_(context), grad_reqs_(grad_reqs),
      impl_(std::make_shared<ExecutorImpl>()) {
  arg_names_ = symbol.ListArguments();
  aux_names_ = symbol.ListAuxiliaryStates();
  std::vector<symbind::OpReq> reqs;
  for (auto r : grad_reqs) reqs.push_back(compat::ToNative(r));
  // A gradient MXNet would not write may be an empty handle.
  impl_->exec = symbind::Bind(compat::Native(symbol), compat::Native(context), compat::Natives(arg_arrays_in),
                        compat::Natives(grad_arrays_in), reqs, compat::Natives(aux_arrays_in));
  arg_arrays = arg_arrays_in;
  grad_arrays = grad_arrays_in;
  aux_arrays = aux_arrays_in;
  outputs = Wrap(impl_->exec->outputs());
} SYMBIND_CPP_RECORD_ERRORS

Executor::Executor(const Symbol& symbol, Context context, std::shared_ptr<ExecutorImpl> impl)
    try : symbol_(symbol), context_(context), impl_(std::move(impl)) {
  arg_names_ = symbol.ListArguments();
  aux_names_ = symbol.ListAuxiliaryStates();
  for (auto r : impl_->exec->grad_reqs()) grad_reqs_.push_back(static_cast<OpReqType>(r));
  arg_arrays = Wrap(impl_->exec->arg_arrays());
  grad_arrays = Wrap(impl_->exec->grad_arrays());
  aux_arrays = Wrap(impl_->exec->aux_arrays());
  outputs = Wrap(impl_->exec->outputs());
} SYMBIND_CPP_RECORD_ERRORS

Executor::~Executor() = default;

ExecutorHandle Executor::GetHandle() const try {
  if (!impl_->handle) impl_->handle.reset(symbind::capi::NewExecutorHandle(impl_->exec), MXExecutorFree);
  return impl_->handle.get();
} SYMBIND_CPP_RECORD_ERRORS

void Executor::Forward(bool is_train) try {
  impl_->exec->Forward(is_train);
  outputs = Wrap(impl_->exec->outputs());
  if (monitor_) RunMonitor(is_train);
} SYMBIND_CPP_RECORD_ERRORS

void Executor::Backward(const std::vector<NDArray>& head_grads) try {
  impl_->exec->Backward(compat::Natives(head_grads));
} SYMBIND_CPP_RECORD_ERRORS

std::string Executor::DebugStr() try {
  const symbind::Graph& g = impl_->exec->graph();
  std::map<std::string, symbind::TShape> known;
  for (size_t i = 0; i < arg_names_.size(); ++i) known[arg_names_[i]] = compat::Native(arg_arrays[i]).shape();
  for (size_t i = 0; i < aux_names_.size(); ++i) known[aux_names_[i]] = compat::Native(aux_arrays[i]).shape();
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
} SYMBIND_CPP_RECORD_ERRORS

std::map<std::string, NDArray> Executor::MakeDict(const std::vector<std::string>& names,
                                                  const std::vector<NDArray>& arrays) try {
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < names.size() && i < arrays.size(); ++i) out[names[i]] = arrays[i];
  return out;
} SYMBIND_CPP_RECORD_ERRORS

Executor* Executor::Reshape(const std::map<std::string, std::vector<mx_uint>>& new_shapes) try {
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : new_shapes)
    known[kv.first] = symbind::TShape(std::vector<int64_t>(kv.second.begin(), kv.second.end()));
  // MXNet's MXExecutorReshapeEx with partial_shaping and allow_up_sizing: inputs not named
  // (labels, parameters) follow shape inference.
  auto impl = std::make_shared<ExecutorImpl>();
  impl->exec = impl_->exec->Reshape(known, true, true);
  return new Executor(symbol_, context_, impl);
} SYMBIND_CPP_RECORD_ERRORS

void Executor::SetMonitorCallback(MonitorCallback callback, bool monitor_all) try {
  monitor_ = std::move(callback);
  monitor_all_ = monitor_all;
} SYMBIND_CPP_RECORD_ERRORS

void Executor::RunMonitor(bool) try {
  for (auto& named : monitor_all_ ? symbind::MonitorAllArrays(*impl_->exec)
                                  : symbind::InternalOutputs(*impl_->exec, false))
    monitor_(named.first, compat::Wrap(named.second));
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
