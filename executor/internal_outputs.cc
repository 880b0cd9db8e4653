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

}  // namespace symbind
