// A recording tape over imperative calls and whole-graph functions, differentiated on demand:
// MXNet's autograd (mx.autograd.record(), NDArray.attach_grad(), loss.backward()).
//
//   autograd::RecordingScope scope(/*recording=*/true, /*training=*/true);
//   autograd::EntryPtr xe = autograd::MarkVariable(x_grad, OpReq::kWrite);
//   InvokedCall call;
//   InvokeOptions options;
//   options.record = &call;
//   NDArray y = Invoke("tanh", {}, {{x}, {}}, {}, options)[0];
//   autograd::EntryPtr ye = autograd::RecordOp(call, {xe}, options)[0];
//   autograd::Backward({ye}, {y}, {});   // x_grad now holds 1 - tanh(x)^2
//
// Arrays carry no tape identity of their own: the caller keeps each array's Entry beside it
// (the C API keeps it in the NDArrayHandle). A node holds its inputs' entries, so the graph
// lives as long as the outputs' entries do. Recording and training flags are per thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/invoke.h>

namespace symbind {
namespace autograd {

bool IsRecording();
bool IsTraining();
// Each returns the previous value.
bool SetRecording(bool recording);
bool SetTraining(bool training);

// Sets both flags for its lifetime and restores them after.
class RecordingScope {
 public:
  RecordingScope(bool recording, bool training)
      : was_recording_(SetRecording(recording)), was_training_(SetTraining(training)) {}
  ~RecordingScope() {
    SetRecording(was_recording_);
    SetTraining(was_training_);
  }
  RecordingScope(const RecordingScope&) = delete;
  RecordingScope& operator=(const RecordingScope&) = delete;

 private:
  bool was_recording_, was_training_;
};

struct Node;

// An array's place on the tape: output `index` of a recorded node, or a variable whose
// gradient goes to `grad` by `grad_req`.
struct Entry {
  std::shared_ptr<Node> node;  // null for a variable
  uint32_t index = 0;
  NDArray grad;
  OpReq grad_req = OpReq::kNull;
  // Set when a backward pass delivers a gradient to this variable; cleared by the optimizer
  // (Gluon's Trainer refuses gradients no backward has refreshed).
  bool fresh_grad = false;
  bool is_variable() const { return node == nullptr; }
};
using EntryPtr = std::shared_ptr<Entry>;

// Computes the gradients of a recorded call's differentiable inputs: `in_grads` (one per
// differentiable input, zero-filled) from `out_grads` (one per output).
using BackwardFn =
    std::function<void(const std::vector<NDArray>& out_grads, const std::vector<NDArray>& in_grads)>;

struct Node {
  std::string name;                 // the op, for messages
  NodeAttrs attrs;                  // the op and its parameters; attrs.op is null for a function
  std::vector<EntryPtr> inputs;     // one per input; null where the input is not tracked
  size_t num_differentiable = 0;    // the first inputs that take gradients (arguments, not aux)
  std::vector<NDArray> in_arrays;
  std::vector<NDArray> out_arrays;  // every output, hidden ones included
  BackwardFn backward;              // empty: not differentiable
  bool freed = false;               // by a backward pass without retain_graph
};

// A variable: gradients reaching it are written to (kWrite) or added into (kAddTo) `grad`.
EntryPtr MarkVariable(const NDArray& grad, OpReq grad_req);

// Records a call Invoke has just run (options.record filled). `entries` holds the caller's
// inputs' entries in Invoke's input order (positional then named; null for untracked ones).
// Returns one entry per visible output.
std::vector<EntryPtr> RecordOp(const InvokedCall& call, const std::vector<EntryPtr>& entries,
                               const InvokeOptions& options);

// Records a function of `inputs` (all differentiable) with its own backward.
std::vector<EntryPtr> RecordFunction(const std::string& name, const std::vector<NDArray>& inputs,
                                     const std::vector<EntryPtr>& entries,
                                     const std::vector<NDArray>& outputs, BackwardFn backward);

// Differentiates `heads` (their entries and values) with head gradients `head_grads` (none or
// missing: ones). With `variables` empty, gradients go to every variable reached, by its
// grad_req, and nothing is returned; otherwise one gradient per listed variable is returned
// (zero where unreached) and the variables' own gradient arrays are left alone.
// Without retain_graph the recorded graph is freed: a second backward through it throws, and
// its arrays recorded into a new graph count as constants there.
std::vector<NDArray> Backward(const std::vector<EntryPtr>& heads, const std::vector<NDArray>& head_values,
                              const std::vector<NDArray>& head_grads,
                              const std::vector<EntryPtr>& variables = {}, bool retain_graph = false,
                              bool is_train = true);

// The recorded graph of `heads` as a symbol (MXNet's autograd.get_symbol). Each marked variable
// and each untracked input becomes a variable (var0, var1, ... in the order met); operator
// nodes are named <op><k>. A recorded function (a cached op, autograd.Function) has no operator
// to show and throws.
Symbol GetSymbol(const std::vector<EntryPtr>& heads);

}  // namespace autograd
}  // namespace symbind
