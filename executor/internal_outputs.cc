#include "internal_outputs.h"

namespace symbind {

namespace {
// Runs `s` (a graph over exec's nodes) forward in inference on exec's arguments and on copies of
// its aux states, so that exec and its state stay as they are; `aux` (exec's aux states by
// name) then holds the copies `s` read.
std::vector<NDArray> ForwardOnArguments(const Executor& exec, const Symbol& s, std::map<std::string, NDArray>* aux) {
  const std::map<std::string, NDArray> args = exec.arg_dict();
  std::vector<NDArray> arg_arrays, grads, aux_arrays;
  std::vector<OpReq> reqs;
  for (auto& name : s.ListArguments()) {
    arg_arrays.push_back(args.at(name));
    grads.emplace_back();
    reqs.push_back(OpReq::kNull);
  }
  for (auto& name : s.ListAuxiliaryStates()) {
    (*aux)[name] = aux->at(name).Copy();
    aux_arrays.push_back(aux->at(name));
  }
  auto copy = Bind(s, exec.arg_arrays().empty() ? Context::CPU() : exec.arg_arrays()[0].ctx(), arg_arrays, grads,
                   reqs, aux_arrays);
  copy->Forward(false);
  return copy->outputs();
}
}  // namespace

std::vector<std::pair<std::string, NDArray>> InternalOutputs(const Executor& exec,
                                                             bool include_variables) {
  Symbol internals = exec.symbol().GetInternals();
  std::map<std::string, NDArray> aux = exec.aux_dict();
  const std::vector<NDArray> values = ForwardOnArguments(exec, internals, &aux);
  std::vector<std::string> names = internals.ListOutputs();
  std::vector<std::pair<std::string, NDArray>> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!include_variables && internals.outputs()[i].node->is_variable()) continue;
    out.emplace_back(names[i], values[i]);
  }
  return out;
}

std::vector<std::pair<std::string, NDArray>> MonitorAllArrays(const Executor& exec) {
  const Graph& g = exec.graph();
  std::vector<NodeEntry> heads;
  for (auto& n : g.nodes())
    if (!n.node->is_variable())
      for (int i = 0; i < n.node->num_outputs(); ++i) heads.push_back(NodeEntry{n.node, static_cast<uint32_t>(i)});
  std::map<std::pair<const Node*, uint32_t>, NDArray> value;
  const std::map<std::string, NDArray> args = exec.arg_dict();
  std::map<std::string, NDArray> aux = exec.aux_dict();
  if (!heads.empty()) {
    const std::vector<NDArray> values = ForwardOnArguments(exec, Symbol::FromEntries(heads), &aux);
    for (size_t i = 0; i < heads.size(); ++i) value[{heads[i].node.get(), heads[i].index}] = values[i];
  }
  std::vector<std::pair<std::string, NDArray>> out;
  for (auto& n : g.nodes()) {
    const Node& node = *n.node;
    if (node.is_variable()) continue;
    const std::vector<std::string> input_names = node.attrs.op->MonitorInputNames(node.attrs);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const NodeEntry& in = node.inputs[i];
      NDArray array;
      if (in.node->is_variable()) {
        auto it = args.find(in.node->name());
        array = it != args.end() ? it->second : aux.at(in.node->name());
        out.emplace_back(in.node->name(), array);
      } else {
        array = value.at({in.node.get(), in.index});
      }
      out.emplace_back(node.name() + "_" + (i < input_names.size() ? input_names[i] : "input" + std::to_string(i)),
                       array);
    }
    for (int i = 0; i < node.num_outputs(); ++i)
      out.emplace_back(EntryName(NodeEntry{n.node, static_cast<uint32_t>(i)}), value.at({&node, static_cast<uint32_t>(i)}));
  }
  return out;
}

std::vector<std::pair<std::string, NDArray>> InternalGradients(const Executor& exec,
                                                               const std::vector<NDArray>& head_grads) {
  std::vector<NDArray> grads, aux;
  std::vector<OpReq> reqs;
  for (const NDArray& a : exec.arg_arrays()) {  // integer arguments (indices) have no gradient
    const bool floating = IsFloatingType(a.dtype());
    grads.push_back(floating ? NDArray(a.shape(), a.dtype(), a.ctx()) : NDArray());
    reqs.push_back(floating ? OpReq::kWrite : OpReq::kNull);
  }
  for (const NDArray& a : exec.aux_arrays()) aux.push_back(a.Copy());
  auto copy = Bind(exec.symbol(), exec.arg_arrays().empty() ? Context::CPU() : exec.arg_arrays()[0].ctx(),
                   exec.arg_arrays(), grads, reqs, aux);
  copy->Forward(true);
  try {
    copy->Backward(head_grads);
  } catch (const Error&) {
    // A node only this copy runs (towards an argument `exec` takes no gradient of) has no
    // gradient: show what `exec`'s own backward computed.
    return exec.BackwardNodeGradients();
  }
  return copy->BackwardNodeGradients();
}

}  // namespace symbind
