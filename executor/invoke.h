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
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/param.h>

namespace symbind {

struct InvokeInputs {
  std::vector<NDArray> positional;
  std::vector<std::pair<std::string, NDArray>> named;
};

// Returns the op's visible outputs. `seed` seeds random operators (as OpContext::seed).
std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params, const InvokeInputs& inputs,
                            const std::vector<NDArray>& outputs = {}, uint64_t seed = 0);

inline std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params,
                                   const std::vector<NDArray>& inputs,
                                   const std::vector<NDArray>& outputs = {}, uint64_t seed = 0) {
  return Invoke(op_name, std::move(params), InvokeInputs{inputs, {}}, outputs, seed);
}

}  // namespace symbind
