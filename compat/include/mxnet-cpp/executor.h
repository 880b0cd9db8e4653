// MXNet cpp-package compatibility: Executor, a bound graph.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/symbol.h"

namespace mxnet {
namespace cpp {

// The bound graph behind an Executor: defined inside libmxnet.so (compat/compat_internal.h).
struct ExecutorImpl;

class Executor {
 public:
  Executor(const Symbol& symbol, Context context, const std::vector<NDArray>& arg_arrays,
           const std::vector<NDArray>& grad_arrays, const std::vector<OpReqType>& grad_reqs,
           const std::vector<NDArray>& aux_arrays,
           const std::map<std::string, Context>& group_to_ctx = std::map<std::string, Context>(),
           Executor* shared_exec = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void Forward(bool is_train);
  // head_grads: one per output, or none (loss heads need none; other outputs get ones).
  void Backward(const std::vector<NDArray>& head_grads = std::vector<NDArray>());
  // One line per graph node: op, name, inputs and output shapes.
  std::string DebugStr();
  std::map<std::string, NDArray> arg_dict() const { return MakeDict(arg_names_, arg_arrays); }
  std::map<std::string, NDArray> grad_dict() const { return MakeDict(arg_names_, grad_arrays); }
  std::map<std::string, NDArray> aux_dict() const { return MakeDict(aux_names_, aux_arrays); }

  // A new executor for new input shapes: arrays whose shapes are unchanged are shared,
  // the others allocated (zero). The caller owns the result.
  Executor* Reshape(const std::map<std::string, std::vector<mx_uint>>& new_shapes);

  // Called after each Forward with the name and value of every node output (run on an
  // internals graph that shares this executor's arrays).
  typedef std::function<void(const std::string& name, const NDArray& value)> MonitorCallback;
  void SetMonitorCallback(MonitorCallback callback, bool monitor_all = false);

  const Symbol& symbol() const { return symbol_; }

  // A C API handle to this executor (made on first use, freed with this object; not to be
  // freed by the caller): MXExecutorForward, MXExecutorOutputs, ... on it run this executor.
  // MXNet 1.9.1's Executor has no such method; this mirrors NDArray's and Symbol's.
  ExecutorHandle GetHandle() const;

  std::vector<NDArray> outputs;
  std::vector<NDArray> arg_arrays;
  std::vector<NDArray> grad_arrays;
  std::vector<NDArray> aux_arrays;

 private:
  static std::map<std::string, NDArray> MakeDict(const std::vector<std::string>& names,
                                                 const std::vector<NDArray>& arrays);
  void RunMonitor(bool is_train);
  Symbol symbol_;
  Context context_;
  std::vector<OpReqType> grad_reqs_;
  std::vector<std::string> arg_names_, aux_names_;
  friend struct ExecutorImpl;
  // Wraps a graph bound from `symbol` (Reshape).
  Executor(const Symbol& symbol, Context context, std::shared_ptr<ExecutorImpl> impl);
  std::shared_ptr<ExecutorImpl> impl_;
  MonitorCallback monitor_;
  bool monitor_all_ = false;
};

}  // namespace cpp
}  // namespace mxnet
