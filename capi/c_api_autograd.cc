// MXNet's imperative C API as its Python frontend drives it: MXImperativeInvokeEx, autograd
// (recording, marked variables, backward) and cached ops (hybridized Gluon blocks), over
// symbind's Invoke, autograd tape (executor/autograd.h) and executors.
#include <mxnet/c_api.h>

#include <memory>
#include <string>
#include <vector>

#include <symbind/executor/autograd.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/invoke.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

NDArrayBox* BoxOf(void* handle, const char* param) { return FromHandle<NDArrayBox>(handle, param); }

std::vector<NDArrayBox*> Boxes(int n, NDArrayHandle* handles, const char* param) {
  if (n < 0) throw Error(StrCat("argument '", param, "' has a negative count (", n, ")"));
  if (n > 0) NotNull(handles, param);
  std::vector<NDArrayBox*> out;
  for (int i = 0; i < n; ++i) out.push_back(BoxOf(handles[i], param));
  return out;
}

// The arrays behind the boxes, and their places on the autograd tape (null where untracked).
std::vector<NDArray> ArraysOf(const std::vector<NDArrayBox*>& boxes) {
  std::vector<NDArray> out;
  for (NDArrayBox* b : boxes) out.push_back(b->array);
  return out;
}
std::vector<autograd::EntryPtr> EntriesOf(const std::vector<NDArrayBox*>& boxes) {
  std::vector<autograd::EntryPtr> out;
  for (NDArrayBox* b : boxes) out.push_back(b->autograd);
  return out;
}

// Storage types of `n` outputs: every array here is dense (kDefaultStorage).
const int* DenseStypes(size_t n) {
  Ret().ints.assign(n, kDefaultStorage);
  return Ret().ints.data();
}

// Writes results into the caller's output handles, or returns new ones of storage types
// `stypes` (empty: dense); each takes its tape entry when the call was recorded. Returns every
// output's storage type (a given array keeps its own), for MXNet's out_stypes.
const int* ResultsOut(const std::vector<NDArray>& results, const std::vector<autograd::EntryPtr>& entries,
                      const std::vector<NDArrayBox*>& given, const std::vector<int>& stypes, int* num_outputs,
                      NDArrayHandle** outputs) {
  std::vector<int>& out_stypes = Ret().ints;
  out_stypes.clear();
  if (!given.empty()) {
    for (size_t i = 0; i < given.size() && i < results.size(); ++i) {
      if (given[i]->array.is_none()) given[i]->array = results[i];
      // Unrecorded writes (an optimizer updating a weight in place) keep the array's place on
      // the tape, as MXNet keeps an NDArray's autograd entry.
      if (!entries.empty()) given[i]->autograd = i < entries.size() ? entries[i] : nullptr;
      out_stypes.push_back(given[i]->stype);
    }
    return out_stypes.data();
  }
  Ret().handles.clear();
  for (size_t i = 0; i < results.size(); ++i) {
    const int stype = i < stypes.size() ? stypes[i] : kDefaultStorage;
    NDArrayBox* box = static_cast<NDArrayBox*>(NewArray(results[i], stype));
    if (i < entries.size()) box->autograd = entries[i];
    Ret().handles.push_back(box);
    out_stypes.push_back(stype);
  }
  *num_outputs = static_cast<int>(results.size());
  *outputs = Ret().handles.data();
  return out_stypes.data();
}

// Storage types of an op call's new outputs (c_api_sparse.cc); a csr result must be a matrix.
std::vector<int> ResultStypes(const std::string& op_name, const KwArgs& params, const std::vector<NDArrayBox*>& in,
                              const std::vector<NDArray>& results) {
  std::vector<int> in_stypes;
  for (const NDArrayBox* b : in) in_stypes.push_back(b->stype);
  const int stype = ResultStorageType(op_name, params, in_stypes);
  for (const NDArray& r : results)
    if (stype == kCSRStorage && r.shape().ndim() != 2)
      throw ShapeError(StrCat(op_name, ": a csr array must be 2-dimensional, the result has shape ", r.shape()));
  return std::vector<int>(results.size(), stype);
}

// ---- cached ops ----------------------------------------------------------------------------

// A graph called like an operator: inputs in ListInputs order (arguments and aux states as the
// graph meets them), outputs new arrays. It keeps one executor for the shapes last seen. Inputs
// passed as the same array every call (parameters) stay bound in place, so updates to them are
// seen; inputs that change between calls (data) get an array of the executor's own, refreshed
// by copy, so binding happens once per shape rather than once per call.
class CachedGraph {
 public:
  explicit CachedGraph(Symbol symbol) : symbol_(std::move(symbol)) {
    inputs_ = symbol_.ListInputs();
    args_ = symbol_.ListArguments();
    aux_ = symbol_.ListAuxiliaryStates();
    for (const std::string& name : inputs_) {
      auto a = std::find(args_.begin(), args_.end(), name);
      if (a != args_.end()) {
        slot_.push_back({false, static_cast<size_t>(a - args_.begin())});
      } else {
        auto x = std::find(aux_.begin(), aux_.end(), name);
        slot_.push_back({true, static_cast<size_t>(x - aux_.begin())});
      }
    }
    private_.assign(inputs_.size(), false);
    graph_ = std::make_shared<Graph>(symbol_);
    for (const Graph::NodeInfo& n : graph_->nodes())
      dynamic_ = dynamic_ || (!n.node->is_variable() && n.node->attrs.op->value_dependent_shape);
  }

  size_t num_inputs() const { return inputs_.size(); }

  // Whether the graph holds an op whose output shapes depend on its inputs' values
  // (boolean_mask): such a graph is never bound; it runs op by op (RunOpByOp).
  bool dynamic() const { return dynamic_; }

  // Runs the graph one op at a time through Invoke, as MXNet's CachedOp runs graphs of dynamic
  // shape; while autograd records, each call goes on the tape (`in_entries`: the inputs'
  // places there) and `out_entries` receives the outputs' places.
  std::vector<NDArray> RunOpByOp(const std::vector<NDArray>& in, const std::vector<autograd::EntryPtr>& in_entries,
                                 bool record, bool is_train, uint64_t seed,
                                 std::vector<autograd::EntryPtr>* out_entries) const {
    if (in.size() != inputs_.size())
      throw Error(StrCat("the cached graph takes ", inputs_.size(), " inputs (", JoinNames(inputs_), "), got ",
                         in.size()));
    const Graph& g = *graph_;
    std::vector<NDArray> values(g.num_entries());
    std::vector<autograd::EntryPtr> entries(g.num_entries());
    for (size_t i = 0; i < in.size(); ++i) {
      const uint32_t e = g.entry_id(g.arg_nodes()[i], 0);
      values[e] = in[i];
      if (i < in_entries.size()) entries[e] = in_entries[i];
    }
    for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
      const Graph::NodeInfo& node = g.node(nid);
      if (node.node->is_variable()) continue;
      InvokeInputs call_inputs;
      std::vector<autograd::EntryPtr> call_entries;
      for (const Graph::EntryRef& r : node.inputs) {
        call_inputs.positional.push_back(values[g.entry_id(r)]);
        call_entries.push_back(entries[g.entry_id(r)]);
      }
      InvokedCall call;
      InvokeOptions options;
      options.seed = seed + nid;
      options.is_train = is_train;
      options.record = &call;  // every output, hidden ones included
      Invoke(node.node->attrs.op->name, node.node->attrs.dict, call_inputs, {}, options);
      std::vector<autograd::EntryPtr> recorded;
      if (record) recorded = autograd::RecordOp(call, call_entries, options);
      for (uint32_t i = 0; i < call.outputs.size(); ++i) {
        values[g.entry_id(nid, i)] = call.outputs[i];
        if (i < recorded.size()) entries[g.entry_id(nid, i)] = recorded[i];
      }
    }
    std::vector<NDArray> out;
    out_entries->clear();
    for (const Graph::EntryRef& h : g.heads()) {
      out.push_back(values[g.entry_id(h)]);
      if (record) out_entries->push_back(entries[g.entry_id(h)]);
    }
    return out;
  }

  // Runs the graph; returns copies of its outputs and this run's number.
  std::vector<NDArray> Forward(const std::vector<NDArray>& in, bool is_train, bool with_grad, uint64_t seed,
                               uint64_t* run) {
    Prepare(in, with_grad);
    exec_->set_seed(seed);
    exec_->Forward(is_train);
    *run = last_run_ = ++runs_;
    std::vector<NDArray> out;
    for (const NDArray& o : exec_->outputs()) out.push_back(o.Copy());
    return out;
  }

  // Gradients of run `run` (inputs `in`, seed `seed`) for every input, in ListInputs order.
  void Backward(uint64_t run, const std::vector<NDArray>& in, uint64_t seed, const std::vector<NDArray>& out_grads,
                const std::vector<NDArray>& in_grads) {
    if (run != last_run_ || !exec_ || !with_grad_) {
      // Another call ran since: recompute this one's forward (same inputs, same seed).
      Prepare(in, true);
      exec_->set_seed(seed);
      exec_->Forward(true);
      last_run_ = run;
    }
    exec_->Backward(out_grads);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (slot_[i].aux) continue;  // aux states take no gradient
      const NDArray& g = exec_->grad_arrays()[slot_[i].index];
      if (g.is_none()) continue;
      NDArray dst = in_grads[i];
      g.CopyTo(&dst);
    }
  }

 private:
  struct Slot {
    bool aux;
    size_t index;  // in ListArguments or ListAuxiliaryStates
  };

  static bool SameArray(const NDArray& a, const NDArray& b) {
    return a.SharesStorageWith(b) && a.shape() == b.shape() && a.dtype() == b.dtype() &&
           a.raw_data() == b.raw_data();
  }

  void Prepare(const std::vector<NDArray>& in, bool with_grad) {
    if (in.size() != inputs_.size())
      throw Error(StrCat("the cached graph takes ", inputs_.size(), " inputs (", JoinNames(inputs_), "), got ",
                         in.size()));
    bool rebind = !exec_ || with_grad != with_grad_;
    for (size_t i = 0; i < in.size() && !rebind; ++i) {
      if (in[i].shape() != bound_[i].shape() || in[i].dtype() != bound_[i].dtype()) rebind = true;
      else if (!private_[i] && !SameArray(in[i], bound_[i])) private_[i] = rebind = true;
    }
    if (!rebind) {
      for (size_t i = 0; i < in.size(); ++i)
        if (private_[i] && !SameArray(in[i], bound_[i])) {
          NDArray dst = bound_[i];
          in[i].CopyTo(&dst);
        }
      return;
    }
    bound_.clear();
    std::vector<NDArray> args(args_.size()), grads(args_.size()), aux(aux_.size());
    std::vector<OpReq> reqs(args_.size(), with_grad ? OpReq::kWrite : OpReq::kNull);
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].is_none()) throw Error(StrCat("input '", inputs_[i], "' is an empty NDArray"));
      NDArray a = private_[i] ? in[i].Copy() : in[i];
      bound_.push_back(a);
      (slot_[i].aux ? aux : args)[slot_[i].index] = a;
    }
    if (with_grad)
      for (size_t i = 0; i < args.size(); ++i) grads[i] = NDArray(args[i].shape(), args[i].dtype());
    exec_ = Bind(symbol_, Context::CPU(), args, grads, reqs, aux);
    with_grad_ = with_grad;
  }

  Symbol symbol_;
  std::vector<std::string> inputs_, args_, aux_;
  std::vector<Slot> slot_;
  std::vector<bool> private_;
  std::vector<NDArray> bound_;
  std::shared_ptr<const Graph> graph_;
  bool dynamic_ = false;
  std::unique_ptr<Executor> exec_;
  bool with_grad_ = false;
  uint64_t runs_ = 0, last_run_ = 0;
};

struct CachedOpBox {
  static constexpr HandleKind kKind = HandleKind::kCachedOp;
  std::shared_ptr<CachedGraph> graph;
};

// MXNet's CachedOp flags; each is accepted and none changes results here (symbind plans an
// executor's memory at bind whatever they say).
const char* const kCachedOpFlags[] = {"static_alloc", "static_shape", "is_dynamic", "inline_limit",
                                      "forward_bulk_size", "backward_bulk_size", "data_indices",
                                      "param_indices"};

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

namespace {
// MXImperativeInvoke and MXImperativeInvokeEx: one call, the latter also giving the outputs'
// storage types (as in MXNet, both record under autograd and keep row_sparse results sparse).
int ImperativeInvoke(const char* call_name, AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs,
                     int* num_outputs, NDArrayHandle** outputs, int num_params, const char** param_keys,
                     const char** param_vals, const int** out_stypes) {
  return Guarded(call_name, [&] {
    const Op* op = OpForUse(creator);
    NotNull(num_outputs, "num_outputs");
    NotNull(outputs, "outputs");
    if (num_params < 0) throw Error(StrCat("negative parameter count (", num_params, ")"));
    std::vector<NDArrayBox*> in = Boxes(num_inputs, inputs, "inputs");
    std::vector<NDArrayBox*> given;
    if (*outputs && *num_outputs > 0) given = Boxes(*num_outputs, *outputs, "outputs");
    InvokeInputs invoke_inputs;
    invoke_inputs.positional = ArraysOf(in);
    const std::vector<autograd::EntryPtr> entries = EntriesOf(in);
    const std::vector<NDArray> out_arrays = ArraysOf(given);
    const bool record = autograd::IsRecording();
    // As in MXNet: writing into an array already on the tape, or into one of the call's own
    // inputs (which recording puts on the tape), would corrupt its gradients.
    if (record)
      for (NDArrayBox* b : given) {
        bool is_input = false;
        for (NDArrayBox* i : in) is_input |= i->array.SharesStorageWith(b->array);
        if (b->autograd || is_input)
          throw Error("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with autograd "
                      "(the output array is already in the recorded graph)");
      }
    InvokedCall call;
    InvokeOptions options;
    options.seed = NextInvokeSeed();
    options.is_train = autograd::IsTraining();
    if (record) options.record = &call;
    const KwArgs params = Params(static_cast<uint32_t>(num_params), param_keys, param_vals);
    // A failure while computing is reported at the next read (DeferredFailure), as is one an
    // input carries, which passes on to this call's outputs. Recording fails at the call.
    const FailurePtr inherited = PendingFailure(invoke_inputs.positional);
    std::exception_ptr compute_error;
    if (!record) options.compute_error = &compute_error;
    std::vector<NDArray> results;
    if (record || !LazyRowUpdate(op->name, params, in, given, options.seed, &results))
      results = Invoke(op->name, params, invoke_inputs, out_arrays, options);
    MarkFailure(results, inherited          ? inherited
                         : compute_error ? FailureOrThrow(call_name, compute_error)
                                         : nullptr);
    const std::vector<int> stypes = ResultStypes(op->name, params, in, results);
    std::vector<autograd::EntryPtr> out_entries;
    if (record) out_entries = autograd::RecordOp(call, entries, options);
    const int* result_stypes = ResultsOut(results, out_entries, given, stypes, num_outputs, outputs);
    if (out_stypes) *out_stypes = result_stypes;
  });
}
}  // namespace

int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                       NDArrayHandle** outputs, int num_params, const char** param_keys, const char** param_vals) {
  return ImperativeInvoke(__func__, creator, num_inputs, inputs, num_outputs, outputs, num_params, param_keys,
                          param_vals, nullptr);
}

int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                         NDArrayHandle** outputs, int num_params, const char** param_keys,
                         const char** param_vals, const int** out_stypes) {
  return ImperativeInvoke(__func__, creator, num_inputs, inputs, num_outputs, outputs, num_params, param_keys,
                          param_vals, out_stypes);
}

int MXAutogradSetIsRecording(int is_recording, int* prev) {
  return Guarded(__func__, [&] {
    const bool was = autograd::SetRecording(is_recording != 0);
    if (prev) *prev = was;
  });
}
int MXAutogradSetIsTraining(int is_training, int* prev) {
  return Guarded(__func__, [&] {
    const bool was = autograd::SetTraining(is_training != 0);
    if (prev) *prev = was;
  });
}
int MXAutogradIsRecording(bool* curr) {
  return Guarded(__func__, [&] { *NotNull(curr, "curr") = autograd::IsRecording(); });
}
int MXAutogradIsTraining(bool* curr) {
  return Guarded(__func__, [&] { *NotNull(curr, "curr") = autograd::IsTraining(); });
}

int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle* var_handles, uint32_t* reqs_array,
                            NDArrayHandle* grad_handles) {
  return Guarded(__func__, [&] {
    if (num_var > 0) {
      NotNull(var_handles, "var_handles");
      NotNull(reqs_array, "reqs_array");
      NotNull(grad_handles, "grad_handles");
    }
    for (uint32_t i = 0; i < num_var; ++i) {
      NDArrayBox* var = BoxOf(var_handles[i], "var_handles");
      const NDArray& grad = ArrayOf(grad_handles[i], "grad_handles");
      if (reqs_array[i] > 3)
        throw Error(StrCat("reqs_array[", i, "] is ", reqs_array[i],
                           "; expected 0 (null), 1 (write), 2 (inplace) or 3 (add)"));
      if (grad.shape() != var->array.shape())
        throw ShapeError(StrCat("variable ", i, " has shape ", var->array.shape().ToString(),
                                ", its gradient array ", grad.shape().ToString()));
      var->autograd = autograd::MarkVariable(grad, static_cast<OpReq>(reqs_array[i]));
      var->grad_stype = FromHandle<NDArrayBox>(grad_handles[i])->stype;
    }
  });
}

int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                         uint32_t num_variables, NDArrayHandle* var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle** grad_handles, int** grad_stypes) {
  return Guarded(__func__, [&] {
    if (create_graph)
      throw Error("create_graph=True (higher-order gradients) is not supported by symbind");
    std::vector<NDArrayBox*> heads = Boxes(static_cast<int>(num_output), output_handles, "output_handles");
    std::vector<autograd::EntryPtr> head_entries;
    std::vector<NDArray> head_values, head_grads;
    for (uint32_t i = 0; i < num_output; ++i) {
      if (!heads[i]->autograd)
        throw Error("cannot differentiate an array that is not in a recorded graph: compute it inside "
                    "autograd.record() from arrays marked with attach_grad(); to differentiate the same "
                    "graph twice, pass retain_graph=True to the first backward");
      head_entries.push_back(heads[i]->autograd);
      head_values.push_back(heads[i]->array);
      head_grads.push_back(ograd_handles && ograd_handles[i] ? ArrayOf(ograd_handles[i], "ograd_handles") : NDArray());
    }
    std::vector<autograd::EntryPtr> variables;
    for (NDArrayBox* v : Boxes(static_cast<int>(num_variables), var_handles, "var_handles")) {
      if (!v->autograd || !v->autograd->is_variable())
        throw Error("a variable to differentiate for is not marked: call attach_grad() (mark_variables) first");
      variables.push_back(v->autograd);
    }
    std::vector<NDArray> grads =
        autograd::Backward(head_entries, head_values, head_grads, variables, retain_graph != 0, is_train != 0);
    if (num_variables > 0) {
      NotNull(grad_handles, "grad_handles");
      uint32_t n = 0;
      NDArraysOut(grads, &n, grad_handles);
      if (grad_stypes) *grad_stypes = const_cast<int*>(DenseStypes(grads.size()));
    }
  });
}

int MXAutogradBackward(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle* ograd_handles,
                       int retain_graph) {
  return MXAutogradBackwardEx(num_output, output_handles, ograd_handles, 0, nullptr, retain_graph, 0, 1,
                              nullptr, nullptr);
}

int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = BoxOf(handle, "handle");
    NotNull(out, "out");
    if (!box->autograd) throw Error("the array is not in a recorded graph (compute it inside autograd.record())");
    Symbol s = autograd::GetSymbol({box->autograd});
    SymbolBox* result = NewHandle<SymbolBox>();
    result->symbol = std::move(s);
    *out = result;
  });
}

int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = BoxOf(handle, "handle");
    NotNull(out, "out");
    const autograd::EntryPtr& e = box->autograd;
    *out = e && e->is_variable() && !e->grad.is_none() ? NewArray(e->grad, box->grad_stype) : nullptr;
  });
}

int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = BoxOf(handle, "handle");
    NotNull(out, "out");
    auto* detached = static_cast<NDArrayBox*>(NewArray(box->array, box->stype));
    detached->aux_types = box->aux_types;
    *out = detached;
  });
}

// Whether backward has written the gradient since the optimizer last cleared the flag
// (Gluon's Trainer refuses stale gradients).
int MXNDArraySetGradState(NDArrayHandle handle, int state) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = BoxOf(handle, "handle");
    if (box->autograd) box->autograd->fresh_grad = state != 0;
  });
}
int MXNDArrayGetGradState(NDArrayHandle handle, int* out) {
  return Guarded(__func__, [&] {
    NDArrayBox* box = BoxOf(handle, "handle");
    *NotNull(out, "out") = box->autograd && box->autograd->fresh_grad;
  });
}

int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char** keys, const char** vals,
                       CachedOpHandle* out) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(handle, "handle");
    NotNull(out, "out");
    if (num_flags < 0) throw Error(StrCat("negative flag count (", num_flags, ")"));
    KwArgs flags = Params(static_cast<uint32_t>(num_flags), keys, vals);
    for (const auto& kv : flags) {
      bool known = false;
      for (const char* f : kCachedOpFlags) known |= kv.first == f;
      if (!known)
        throw ParamError(StrCat("unknown CachedOp flag '", kv.first, "' (known: static_alloc, static_shape, "
                                "is_dynamic, inline_limit, forward_bulk_size, backward_bulk_size, "
                                "data_indices, param_indices)"));
    }
    CachedOpBox* box = NewHandle<CachedOpBox>();
    box->graph = std::make_shared<CachedGraph>(s);
    *out = box;
  });
}

int MXCreateCachedOp(SymbolHandle handle, CachedOpHandle* out) {
  return MXCreateCachedOpEx(handle, 0, nullptr, nullptr, out);
}

int MXFreeCachedOp(CachedOpHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<CachedOpBox>(handle, "handle"); });
}

int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                       NDArrayHandle** outputs, const int** out_stypes) {
  return Guarded(__func__, [&] {
    std::shared_ptr<CachedGraph> graph = FromHandle<CachedOpBox>(handle, "handle")->graph;
    NotNull(num_outputs, "num_outputs");
    NotNull(outputs, "outputs");
    std::vector<NDArrayBox*> in = Boxes(num_inputs, inputs, "inputs");
    std::vector<NDArrayBox*> given;
    if (*outputs && *num_outputs > 0) given = Boxes(*num_outputs, *outputs, "outputs");
    std::vector<NDArray> in_arrays = ArraysOf(in);
    std::vector<autograd::EntryPtr> entries = EntriesOf(in);
    const bool record = autograd::IsRecording(), is_train = autograd::IsTraining();
    const uint64_t seed = NextInvokeSeed();
    uint64_t run = 0;
    std::vector<autograd::EntryPtr> out_entries;
    std::vector<NDArray> results = graph->dynamic()
                                       ? graph->RunOpByOp(in_arrays, entries, record, is_train, seed, &out_entries)
                                       : graph->Forward(in_arrays, is_train, record, seed, &run);
    if (!given.empty()) {
      if (given.size() != results.size())
        throw Error(StrCat(given.size(), " output arrays given, the graph has ", results.size()));
      for (size_t i = 0; i < given.size(); ++i) {
        if (given[i]->array.is_none()) {
          given[i]->array = results[i];
        } else {
          NDArray dst = given[i]->array;
          results[i].CopyTo(&dst);
          results[i] = dst;
        }
      }
    }
    if (record && !graph->dynamic()) {
      out_entries = autograd::RecordFunction(
          "CachedOp", in_arrays, entries, results,
          [graph, run, in_arrays, seed](const std::vector<NDArray>& out_grads, const std::vector<NDArray>& in_grads) {
            graph->Backward(run, in_arrays, seed, out_grads, in_grads);
          });
    }
    const int* result_stypes = ResultsOut(results, out_entries, given, {}, num_outputs, outputs);
    if (out_stypes) *out_stypes = result_stypes;
  });
}

int MXInvokeCachedOp(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int* num_outputs,
                     NDArrayHandle** outputs) {
  return MXInvokeCachedOpEx(handle, num_inputs, inputs, num_outputs, outputs, nullptr);
}

// ---- autograd.Function: a frontend's own backward --------------------------------------------

namespace {

// The frontend's callbacks for one recorded function (MXNet's CustomFunction): its backward,
// called with new handles of the output gradients then the input gradients to write, and its
// delete, called once when the recorded node is released.
class FrontendFunction {
 public:
  explicit FrontendFunction(const MXCallbackList& list) : list_(list) {}
  ~FrontendFunction() {
    // MXCallbackList holds int (*)(void); casting through void (*)() is the sanctioned route.
    auto del = reinterpret_cast<CustomFunctionDelFunc>(reinterpret_cast<void (*)()>(list_.callbacks[kCustomFunctionDelete]));
    if (del) del(list_.contexts[kCustomFunctionDelete]);
  }
  FrontendFunction(const FrontendFunction&) = delete;
  FrontendFunction& operator=(const FrontendFunction&) = delete;

  void Backward(const std::vector<NDArray>& out_grads, const std::vector<NDArray>& in_grads, bool is_train) const {
    auto bwd = reinterpret_cast<CustomFunctionBwdFunc>(reinterpret_cast<void (*)()>(list_.callbacks[kCustomFunctionBackward]));
    // The frontend wraps each handle in an array object that frees it.
    std::vector<void*> ptrs;
    for (const NDArray& g : out_grads) ptrs.push_back(NewArray(g));
    for (const NDArray& g : in_grads) ptrs.push_back(NewArray(g));
    const std::vector<int> reqs(in_grads.size(), static_cast<int>(OpReq::kWrite));
    if (!bwd(static_cast<int>(out_grads.size()), static_cast<int>(in_grads.size()), ptrs.data(), reqs.data(),
             is_train ? 1 : 0, list_.contexts[kCustomFunctionBackward]))
      throw Error("the backward of a custom function (autograd.Function) failed in the frontend; "
                  "its error was printed there");
  }

 private:
  MXCallbackList list_;
};

}  // namespace

int MXCustomFunctionRecord(int num_inputs, NDArrayHandle* inputs, int num_outputs, NDArrayHandle* outputs,
                           struct MXCallbackList* callbacks) {
  return Guarded(__func__, [&] {
    if (!autograd::IsRecording())
      throw Error("a custom function is recorded only while autograd is recording (autograd.record())");
    NotNull(callbacks, "callbacks");
    if (callbacks->num_callbacks < 2 || !callbacks->callbacks || !callbacks->contexts ||
        !callbacks->callbacks[kCustomFunctionBackward])
      throw Error("callbacks must hold a backward and a delete function, with their contexts");
    std::vector<NDArrayBox*> in = Boxes(num_inputs, inputs, "inputs");
    std::vector<NDArrayBox*> out = Boxes(num_outputs, outputs, "outputs");
    const std::vector<NDArray> in_arrays = ArraysOf(in), out_arrays = ArraysOf(out);
    const std::vector<autograd::EntryPtr> entries = EntriesOf(in);
    auto function = std::make_shared<FrontendFunction>(*callbacks);
    const bool is_train = autograd::IsTraining();
    std::vector<autograd::EntryPtr> out_entries = autograd::RecordFunction(
        "_CustomFunction", in_arrays, entries, out_arrays,
        [function, is_train](const std::vector<NDArray>& out_grads, const std::vector<NDArray>& in_grads) {
          function->Backward(out_grads, in_grads, is_train);
        });
    for (size_t i = 0; i < out.size(); ++i) out[i]->autograd = out_entries[i];
  });
}

int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback, bool) {
  return Guarded(__func__, [&] {
    FromHandle<CachedOpBox>(handle, "handle");
    throw Error("monitor hooks on cached ops (register_op_hook) are not supported by symbind");
  });
}
