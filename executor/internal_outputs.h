// What monitors show: the value of every node output of a bound graph.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <symbind/executor/executor.h>

namespace symbind {

// Every output of every node of `exec`'s symbol (GetInternals order) for its current
// arguments, computed in inference mode by a separate executor on copies of the aux states,
// so `exec` and its state are unchanged. Variables are included only with include_variables.
std::vector<std::pair<std::string, NDArray>> InternalOutputs(const Executor& exec,
                                                             bool include_variables);

// What MXNet's executor monitor shows after Forward with monitor_all: for each op node in
// execution order, first its inputs (a variable input under the variable's own name, then every
// input as "<node>_<input name>", Op::MonitorInputNames), then all its outputs, hidden ones
// too, as "<node>_<output name>". Computed as InternalOutputs is.
std::vector<std::pair<std::string, NDArray>> MonitorAllArrays(const Executor& exec);

// Every gradient MXNet's executor monitor shows after Backward: each backward node's outputs,
// one per input of its forward node (Executor::BackwardNodeGradients), for the current
// arguments and `head_grads`. Computed by a separate training executor that takes gradients of
// every argument, on copies of the aux states, so `exec` and its state are unchanged.
std::vector<std::pair<std::string, NDArray>> InternalGradients(const Executor& exec,
                                                               const std::vector<NDArray>& head_grads);

}  // namespace symbind
