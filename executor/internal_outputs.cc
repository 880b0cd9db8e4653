#include "internal_outputs.h"

namespace symbind {

std::vector<std::pair<std::string, NDArray>> InternalOutputs(const Executor& exec,
                                                             bool include_variables) {
  Symbol internals = exec.symbol().GetInternals();
  std::map<std::string, NDArray> args = exec.arg_dict(), aux = exec.aux_dict();
  std::vector<NDArray> arg_arrays, grads, aux_arrays;
  std::vector<OpReq> reqs;
  for (auto& name : internals.ListArguments()) {
    arg_arrays.push_back(args.at(name));
    grads.emplace_back();
    reqs.push_back(OpReq::kNull);
  }
  for (auto& name : internals.ListAuxiliaryStates()) aux_arrays.push_back(aux.at(name).Copy());
  auto internal_exec = Bind(internals, exec.arg_arrays().empty() ? Context::CPU()
                                                                 : exec.arg_arrays()[0].ctx(),
                            arg_arrays, grads, reqs, aux_arrays);
  internal_exec->Forward(false);
  std::vector<std::string> names = internals.ListOutputs();
  std::vector<std::pair<std::string, NDArray>> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!include_variables && internals.outputs()[i].node->is_variable()) continue;
    out.emplace_back(names[i], internal_exec->outputs()[i]);
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
