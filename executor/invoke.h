// Runs one registered operator on NDArrays, without building an executor: MXNet's
// imperative calls (MXImperativeInvoke, mxnet-cpp's Operator::Invoke, mx.nd.*).
//
//   NDArray w = ..., g = ..., mom = ...;
//   // One SGD step with momentum, written into w (mom is updated in place, as in MXNet):
//   Invoke("sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}}, {w, g, mom}, {w});
//   NDArray y = Invoke("Activation", {{"act_type", "relu"}}, {x})[0];
//
// Inputs are the op's arguments then its aux states, in the order ListArguments gives them;
// named inputs bind by argument name as in Symbol::Create. Outputs the caller gives are
// written (an output that shares storage with an input is computed aside and copied, so
// `out = in` works for every op); missing ones are allocated. Shapes and dtypes are inferred
// as at bind, and a contradiction throws ShapeError naming the op and the input.
#pragma once
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/core/param.h>

namespace symbind {

struct InvokeInputs {
  std::vector<NDArray> positional;
  std::vector<std::pair<std::string, NDArray>> named;
};

// What one call computed, for a tape that differentiates it later (executor/autograd.h).
struct InvokedCall {
  NodeAttrs attrs;
  std::vector<NDArray> inputs;        // the node's inputs: arguments then aux states
  std::vector<size_t> input_source;   // for each, its index in positional then named inputs
  std::vector<NDArray> outputs;       // every output, hidden ones included, as computed
};

struct InvokeOptions {
  uint64_t seed = 0;        // seeds random operators (as OpContext::seed)
  bool is_train = false;    // training behaviour (BatchNorm batch statistics, Dropout)
  InvokedCall* record = nullptr;  // filled when not null
  // When not null, an exception the op throws while computing (after its parameters, shapes
  // and outputs are settled) is stored here instead of thrown, and the outputs are returned
  // as they are (the C API reports such failures at the next read, as MXNet's engine does).
  std::exception_ptr* compute_error = nullptr;
};

// Returns the op's visible outputs.
std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params, const InvokeInputs& inputs,
                            const std::vector<NDArray>& outputs, const InvokeOptions& options);

inline std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params, const InvokeInputs& inputs,
                                   const std::vector<NDArray>& outputs = {}, uint64_t seed = 0) {
  InvokeOptions options;
  options.seed = seed;
  return Invoke(op_name, std::move(params), inputs, outputs, options);
}

inline std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params,
                                   const std::vector<NDArray>& inputs,
                                   const std::vector<NDArray>& outputs = {}, uint64_t seed = 0) {
  return Invoke(op_name, std::move(params), InvokeInputs{inputs, {}}, outputs, seed);
}

}  // namespace symbind
