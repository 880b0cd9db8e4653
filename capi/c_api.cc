// MXNet's C API (mxnet/c_api.h, nnvm/c_api.h): the functions MXNet 1.9.1's cpp-package calls,
// over symbind's native runtime. Strings and arrays returned through out-pointers live in a
// per-thread store until the next call of the same kind on that thread, as in MXNet.
#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/core/op.h>
#include <symbind/core/op_docs.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/invoke.h>
#include <symbind/executor/internal_outputs.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

#include <mxnet/c_api_symbind.h>

#include "c_api_common.h"
#include "symbind_version.h"

namespace symbind {
namespace capi {
namespace {

void LoadedOut(const NDArrayFile& file, uint32_t* out_size, NDArrayHandle** out_arr,
               uint32_t* out_name_size, const char*** out_names) {
  NotNull(out_size, "out_size");
  NotNull(out_arr, "out_arr");
  NotNull(out_name_size, "out_name_size");
  NotNull(out_names, "out_names");
  // As MXNet: arrays saved under NumPy shape semantics (V3) load only under them, and the
  // older layouts only without them (unless the semantics are on globally).
  for (int format : file.formats) {
    if (format == 3 && !NumpyShapeSemantics())
      throw Error("ndarray was saved in np shape semantics, must be loaded in the same semantics. "
                  "Please turn on np shape semantics in Python using `with np_shape(True)` or "
                  "decorator `use_np_shape` to scope the code of loading the ndarray.");
    if (format != 3 && NumpyShapeSemantics() && !NumpyShapeSemanticsGlobal())
      throw Error("ndarray was not saved in np shape semantics, but being loaded in np shape "
                  "semantics. Please turn off np shape semantics in Python using "
                  "`with np_shape(False)` to scope the code of loading the ndarray.");
  }
  NDArraysOut(file.arrays, out_size, out_arr);
  // Sparse arrays load dense, keeping the storage type the file gives them.
  for (size_t i = 0; i < file.storage_types.size() && i < file.arrays.size(); ++i)
    if (!file.arrays[i].is_none()) static_cast<NDArrayBox*>((*out_arr)[i])->stype = file.storage_types[i];
  *out_names = StringsOut(file.names, out_name_size);
}

std::vector<std::string> InputNames(const Symbol& s, int option) {
  if (option == 0) return s.ListInputs();
  if (option == 1) return s.ListArguments();
  if (option == 2) return s.ListAuxiliaryStates();
  throw Error(StrCat("option must be 0 (all), 1 (arguments) or 2 (aux states), got ", option));
}

}  // namespace

NDArrayHandle NewNDArrayHandle(const NDArray& array) { return NewArray(array); }
SymbolHandle NewSymbolHandle(const Symbol& symbol) { return NewSymbol(symbol); }
ExecutorHandle NewExecutorHandle(std::shared_ptr<Executor> executor) {
  ExecutorBox* box = NewHandle<ExecutorBox>();
  box->exec = std::move(executor);
  return box;
}

}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

// ---- process ----------------------------------------------------------------------------

int MXGetGPUCount(int* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = 0; });
}
int MXGetVersion(int* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = SYMBIND_MXNET_API_VERSION_CODE; });
}
// Seeds the random operators MXImperativeInvoke runs (MXNet's NDArray::SampleUniform etc.).
int MXRandomSeed(int seed) {
  return Guarded(__func__, [&] {
    SeedInvokes(seed);
    // And the generator of symbind's own mxnet-cpp layer (NDArray::SampleGaussian, ...).
    WithFrontendRandom([&](std::mt19937_64& rng) { rng.seed(static_cast<uint64_t>(seed)); });
  });
}
int MXNotifyShutdown() { return Guarded(__func__, [] {}); }
const char* NNGetLastError() { return LastError(); }

// ---- operators ----------------------------------------------------------------------------

int MXSymbolListAtomicSymbolCreators(uint32_t* out_size, AtomicSymbolCreator** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    NotNull(out_array, "out_array");
    Ret().handles.clear();
    for (const Op* op : AllOps()) Ret().handles.push_back(const_cast<Op*>(op));
    *out_size = static_cast<uint32_t>(Ret().handles.size());
    *out_array = Ret().handles.data();
  });
}

int NNListAllOpNames(nn_uint* out_size, const char*** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    NotNull(out_array, "out_array");
    std::vector<std::string> names;
    for (const Op* op : AllOps()) {
      names.push_back(op->name);
      names.insert(names.end(), op->aliases.begin(), op->aliases.end());
      const std::vector<std::string> sparse = SparseAliases(*op);
      names.insert(names.end(), sparse.begin(), sparse.end());
    }
    *out_array = StringsOut(names, out_size);
  });
}

int NNGetOpHandle(const char* op_name, OpHandle* op_out) {
  return Guarded(__func__, [&] {
    NotNull(op_out, "op_out");
    const std::string name = CString(op_name, "op_name");
    const Op* op = FindOpOrPlaceholder(name);
    if (!op) OpRegistry::Global().Get(name);  // throws, naming the op and its near misses
    *op_out = const_cast<Op*>(op);
  });
}

// Arguments as MXNet lists them: the inputs ("NDArray-or-Symbol", or one
// "NDArray-or-Symbol[]" for variadic operators) then the parameters with dmlc's type strings.
int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char** name,
                                const char** description, uint32_t* num_args,
                                const char*** arg_names, const char*** arg_type_infos,
                                const char*** arg_descriptions, const char** key_var_num_args,
                                const char** return_type) {
  return Guarded(__func__, [&] {
    const Op* op = OpOf(creator);
    Returns& r = Ret();
    r.info_names.clear();
    r.info_types.clear();
    r.info_docs.clear();
    OpInputList inputs = ListOpInputs(*op);
    if (inputs.variadic) {
      r.info_names.push_back("data");
      r.info_types.push_back("NDArray-or-Symbol[]");
      r.info_docs.push_back("List of arrays");
    }
    for (auto& n : inputs.names) {
      r.info_names.push_back(n);
      r.info_types.push_back("NDArray-or-Symbol");
      const std::string& doc = op->ArgumentDoc(n);
      r.info_docs.push_back(doc.empty() ? StrCat("Input '", n, "'") : doc);
    }
    for (auto& f : op->schema->fields()) {
      r.info_names.push_back(f->name());
      r.info_types.push_back(f->TypeInfo());
      r.info_docs.push_back(f->doc());
    }
    r.info_name = op->name;
    r.info_description = op->description;
    r.info_key_var = op->key_var_num_args;
    r.info_return_type = "NDArray-or-Symbol";
    uint32_t n = 0;
    const char** names = StringsOut(r.info_names, &n, &r.info_names, &r.info_name_ptrs);
    const char** types = StringsOut(r.info_types, &n, &r.info_types, &r.info_type_ptrs);
    const char** docs = StringsOut(r.info_docs, &n, &r.info_docs, &r.info_doc_ptrs);
    *NotNull(name, "name") = r.info_name.c_str();
    *NotNull(description, "description") = r.info_description.c_str();
    *NotNull(num_args, "num_args") = n;
    *NotNull(arg_names, "arg_names") = names;
    *NotNull(arg_type_infos, "arg_type_infos") = types;
    *NotNull(arg_descriptions, "arg_descriptions") = docs;
    if (key_var_num_args) *key_var_num_args = r.info_key_var.c_str();
    if (return_type) *return_type = r.info_return_type.c_str();
  });
}

// ---- symbols ------------------------------------------------------------------------------

int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char** keys,
                               const char** vals, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    const Op* op = OpForUse(creator);
    NotNull(out, "out");
    KwArgs params, attrs;
    // MXNet's frontends pass user attributes (`__key__`, lr_mult & co.) with the parameters.
    for (auto& kv : Params(num_param, keys, vals)) {
      const std::string key = AttrKey(kv.first);
      if (IsAttrKey(key)) attrs[key] = kv.second;
      else params[kv.first] = kv.second;
    }
    // As MXNet, a bad value fails here, where the caller gave it, not at MXSymbolCompose. A
    // variadic op's input count may come with the inputs (MXSymbolCompose fills it in).
    if (op->key_var_num_args.empty() || params.count(op->key_var_num_args)) {
      NodeAttrs parsed;
      parsed.op = op;
      parsed.dict = params;
      op->ParseAttrs(&parsed);
    }
    SymbolBox* box = NewHandle<SymbolBox>();
    box->pending_op = op;
    box->pending_params = std::move(params);
    box->pending_attrs = std::move(attrs);
    *out = box;
  });
}

int MXSymbolCompose(SymbolHandle sym, const char* name, uint32_t num_args, const char** keys,
                    SymbolHandle* args) {
  return Guarded(__func__, [&] {
    SymbolBox* box = FromHandle<SymbolBox>(sym, "sym");
    if (num_args > 0) NotNull(args, "args");
    if (!box->pending_op) {
      // A whole symbol: its variables are replaced, by name or in argument order.
      std::map<std::string, Symbol> replacements;
      const std::vector<std::string> arg_names = box->symbol.ListArguments();
      std::vector<std::string> key_names = keys ? CStrings(num_args, keys, "keys") : std::vector<std::string>();
      if (!keys && num_args > arg_names.size())
        throw Error(StrCat(num_args, " inputs given for a symbol with ", arg_names.size(), " arguments (",
                           JoinNames(arg_names), ")"));
      for (uint32_t i = 0; i < num_args; ++i)
        replacements[keys ? key_names[i] : arg_names[i]] = SymbolOf(args[i], "args");
      box->symbol = box->symbol.ReplaceVariables(replacements);
      return;
    }
    std::vector<std::pair<std::string, Symbol>> named;
    std::vector<Symbol> positional;
    std::vector<std::string> key_names = keys ? CStrings(num_args, keys, "keys")
                                              : std::vector<std::string>();
    for (uint32_t i = 0; i < num_args; ++i) {
      const Symbol& input = SymbolOf(args[i], "args");
      if (keys) named.emplace_back(key_names[i], input);
      else positional.push_back(input);
    }
    KwArgs params = box->pending_params;
    const Op* op = box->pending_op;
    if (!op->key_var_num_args.empty() && !params.count(op->key_var_num_args))
      params[op->key_var_num_args] = std::to_string(num_args);
    box->symbol = Symbol::Create(op->name, name ? name : "", params, named, positional);
    const auto& head = box->symbol.outputs()[0].node;
    for (auto& kv : box->pending_attrs) head->user_attrs[kv.first] = kv.second;
    // As in MXNet, variables the operator created for inputs not given (fc1_weight) take its
    // attributes.
    for (const NodeEntry& in : head->inputs) {
      bool given = false;
      for (const auto& p : positional) given |= p.outputs()[0].node == in.node;
      for (const auto& p : named) given |= p.second.outputs()[0].node == in.node;
      if (!given && in.node->is_variable())
        for (auto& kv : box->pending_attrs) in.node->user_attrs[kv.first] = kv.second;
    }
    box->pending_op = nullptr;
    box->pending_params.clear();
    box->pending_attrs.clear();
  });
}

int MXSymbolCreateVariable(const char* name, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(Symbol::Variable(CString(name, "name")));
  });
}

int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle* symbols, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    if (num_symbols > 0) NotNull(symbols, "symbols");
    std::vector<Symbol> parts;
    for (uint32_t i = 0; i < num_symbols; ++i) parts.push_back(SymbolOf(symbols[i], "symbols"));
    *out = NewSymbol(Symbol::Group(parts));
  });
}

int MXSymbolCreateFromJSON(const char* json, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(LoadSymbolJSON(FirstJSONValue(json)));
  });
}

int MXSymbolCreateFromFile(const char* fname, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(LoadSymbolFile(CString(fname, "fname")));
  });
}

int MXSymbolSaveToJSON(SymbolHandle symbol, const char** out_json) {
  return Guarded(__func__, [&] {
    NotNull(out_json, "out_json");
    Ret().text = SaveSymbolJSON(SymbolOf(symbol), NumpyShapeSemantics());
    *out_json = Ret().text.c_str();
  });
}

int MXSymbolSaveToFile(SymbolHandle symbol, const char* fname) {
  return Guarded(__func__, [&] { SaveSymbolFile(CString(fname, "fname"), SymbolOf(symbol)); });
}

int MXSymbolCopy(SymbolHandle symbol, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(SymbolOf(symbol).Copy());
  });
}

int MXSymbolFree(SymbolHandle symbol) {
  return Guarded(__func__, [&] { FreeHandle<SymbolBox>(symbol, "symbol"); });
}

int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(SymbolOf(symbol).GetInternals());
  });
}

int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    const Symbol& s = SymbolOf(symbol);
    if (index >= s.NumOutputs())
      throw Error(StrCat("output index ", index, " out of range: the symbol has ", s.NumOutputs(),
                         " output(s)"));
    *out = NewSymbol(s[index]);
  });
}

int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t* output_count) {
  return Guarded(__func__, [&] {
    *NotNull(output_count, "output_count") = static_cast<uint32_t>(SymbolOf(symbol).NumOutputs());
  });
}

int MXSymbolGetName(SymbolHandle symbol, const char** out, int* success) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    NotNull(success, "success");
    const Symbol& s = SymbolOf(symbol);
    *success = s.NumOutputs() == 1;
    Ret().text = *success ? s.GetName() : std::string();
    *out = Ret().text.c_str();
  });
}

int MXSymbolListArguments(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    *NotNull(out_str_array, "out_str_array") = StringsOut(SymbolOf(symbol).ListArguments(), out_size);
  });
}

int MXSymbolListOutputs(SymbolHandle symbol, uint32_t* out_size, const char*** out_str_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    *NotNull(out_str_array, "out_str_array") = StringsOut(SymbolOf(symbol).ListOutputs(), out_size);
  });
}

int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t* out_size,
                                const char*** out_str_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    *NotNull(out_str_array, "out_str_array") =
        StringsOut(SymbolOf(symbol).ListAuxiliaryStates(), out_size);
  });
}

int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint* out_size,
                           const char*** out_str_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    *NotNull(out_str_array, "out_str_array") = StringsOut(InputNames(SymbolOf(symbol), option), out_size);
  });
}

// Key/value pairs of the head node: operator parameters and user attributes.
int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t* out_size, const char*** out) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    NotNull(out, "out");
    const Symbol& s = SymbolOf(symbol);
    std::vector<std::string> flat;
    if (s.NumOutputs() == 1) {
      const Node& node = *s.outputs()[0].node;
      for (auto& kv : node.attrs.dict) AppendAttr(kv.first, kv.second, &flat);
      for (auto& kv : node.user_attrs) AppendAttr(kv.first, kv.second, &flat);
    }
    *out = StringsOut(flat, out_size);
    *out_size /= 2;
  });
}

int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value) {
  return Guarded(__func__, [&] {
    SymbolBox* box = FromHandle<SymbolBox>(symbol, "symbol");
    SymbolOf(symbol);
    const std::string k = AttrKey(CString(key, "key"));
    for (const NodeEntry& e : box->symbol.outputs()) e.node->user_attrs[k] = CString(value, "value");
  });
}

// ---- NDArrays -------------------------------------------------------------------------------

int MXNDArrayCreateNone(NDArrayHandle* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = NewArray(NDArray()); });
}

int MXNDArrayCreateEx(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id, int,
                      int dtype, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    Context ctx = DeviceContext(dev_type, dev_id);
    DType t = static_cast<DType>(dtype);
    DTypeSize(t);  // throws on an unknown type flag
    *out = NewArray(NDArray(ShapeFromC(shape, ndim), t, ctx));
  });
}

int MXNDArrayCreate(const uint32_t* shape, uint32_t ndim, int dev_type, int dev_id,
                    int delay_alloc, NDArrayHandle* out) {
  return MXNDArrayCreateEx(shape, ndim, dev_type, dev_id, delay_alloc, 0, out);
}

int MXNDArrayFree(NDArrayHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<NDArrayBox>(handle); });
}

int MXNDArrayGetContext(NDArrayHandle handle, int* out_dev_type, int* out_dev_id) {
  return Guarded(__func__, [&] {
    Context c = ArrayOf(handle).ctx();
    *NotNull(out_dev_type, "out_dev_type") = c.dev_type;
    *NotNull(out_dev_id, "out_dev_id") = c.dev_id;
  });
}

int MXNDArrayGetDType(NDArrayHandle handle, int* out_dtype) {
  return Guarded(__func__, [&] {
    *NotNull(out_dtype, "out_dtype") = static_cast<int>(ArrayOf(handle).dtype());
  });
}

int MXNDArrayGetData(NDArrayHandle handle, void** out_pdata) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    *NotNull(out_pdata, "out_pdata") = a.is_none() ? nullptr : a.raw_data();
    a.MarkWritten();  // the caller may write through the pointer, as MXNet allows
  });
}

int MXNDArrayGetShapeEx(NDArrayHandle handle, int* out_dim, const int** out_pdata) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    NotNull(out_dim, "out_dim");
    NotNull(out_pdata, "out_pdata");
    Ret().shape = a.is_none() ? std::vector<int>() : ShapeToInt(a.shape());
    *out_dim = a.is_none() ? -1 : static_cast<int>(Ret().shape.size());
    *out_pdata = Ret().shape.data();
  });
}

int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void* data, size_t size) {
  return Guarded(__func__, [&] {
    NDArray& a = ArrayOf(handle);
    if (static_cast<int64_t>(size) != a.Size())
      throw Error(StrCat("array of shape ", a.shape().ToString(), " holds ", a.Size(),
                         " elements, got size ", size));
    if (size > 0) NotNull(data, "data");
    a.SyncCopyFromCPU(data, size);
  });
}

int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void* data, size_t size) {
  return Guarded(__func__, [&] {
    const NDArray& a = ArrayOf(handle);
    ThrowIfFailed(a);
    if (static_cast<int64_t>(size) != a.Size())
      throw Error(StrCat("array of shape ", a.shape().ToString(), " holds ", a.Size(),
                         " elements, got size ", size));
    if (size > 0) NotNull(data, "data");
    a.SyncCopyToCPU(data, size);
  });
}

// The 32-bit forms make the views the 64-bit ones make (c_api_ndarray.cc), recorded on the
// autograd tape while recording.
int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
                   NDArrayHandle* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = SliceView(handle, slice_begin, slice_end); });
}

int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    if (ndim < 0) throw Error(StrCat("ndim is negative (", ndim, ")"));
    if (ndim > 0) NotNull(dims, "dims");
    *out = ReshapeView(handle, std::vector<int64_t>(dims, dims + ndim), false);
  });
}

int MXNDArrayLoad(const char* fname, uint32_t* out_size, NDArrayHandle** out_arr,
                  uint32_t* out_name_size, const char*** out_names) {
  return Guarded(__func__, [&] {
    LoadedOut(LoadNDArrayFile(CString(fname, "fname")), out_size, out_arr, out_name_size, out_names);
  });
}

int MXNDArrayLoadFromBuffer(const void* ndarray_buffer, size_t size, uint32_t* out_size,
                            NDArrayHandle** out_arr, uint32_t* out_name_size,
                            const char*** out_names) {
  return Guarded(__func__, [&] {
    NotNull(ndarray_buffer, "ndarray_buffer");
    LoadedOut(LoadNDArrayBuffer(ndarray_buffer, size), out_size, out_arr, out_name_size, out_names);
  });
}

int MXNDArraySave(const char* fname, uint32_t num_args, NDArrayHandle* args, const char** keys) {
  return Guarded(__func__, [&] {
    std::string path = CString(fname, "fname");
    if (num_args > 0) NotNull(args, "args");
    std::vector<NDArray> arrays;
    for (uint32_t i = 0; i < num_args; ++i) arrays.push_back(ArrayOf(args[i], "args"));
    for (const NDArray& a : arrays) ThrowIfFailed(a);
    SaveNDArrays(path, arrays, keys ? CStrings(num_args, keys, "keys") : std::vector<std::string>(),
                 NumpyShapeSemantics());
  });
}

// symbind computes synchronously: every array is ready when the call that writes it returns,
// and waiting only reports a failure kept for the next read (DeferredFailure).
int MXNDArrayWaitAll() { return Guarded(__func__, [] { ThrowAnyFailure(); }); }
int MXNDArrayWaitToRead(NDArrayHandle handle) {
  return Guarded(__func__, [&] { ThrowIfFailed(ArrayOf(handle)); });
}
int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  return Guarded(__func__, [&] { ArrayOf(handle); });
}

// ---- executors ------------------------------------------------------------------------------

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                     const char** map_keys, const int* map_dev_types, const int* map_dev_ids, uint32_t len, NDArrayHandle* in_args,
                     NDArrayHandle* arg_grad_store, uint32_t* grad_req_type,
                     uint32_t aux_states_len, NDArrayHandle* aux_states, ExecutorHandle,
                     ExecutorHandle* out) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol_handle, "symbol_handle");
    NotNull(out, "out");
    Context ctx = DeviceContext(dev_type, dev_id);
    GroupContexts(num_map_keys, map_keys, map_dev_types, map_dev_ids);
    if (len > 0) {
      NotNull(in_args, "in_args");
      NotNull(grad_req_type, "grad_req_type");
    }
    if (aux_states_len > 0) NotNull(aux_states, "aux_states");
    std::vector<NDArray> args, grads, aux;
    std::vector<OpReq> reqs;
    for (uint32_t i = 0; i < len; ++i) {
      args.push_back(ArrayOf(in_args[i], "in_args"));
      if (grad_req_type[i] > 3)
        throw Error(StrCat("grad_req_type[", i, "] is ", grad_req_type[i],
                           "; expected 0 (null), 1 (write), 2 (inplace) or 3 (add)"));
      reqs.push_back(static_cast<OpReq>(grad_req_type[i]));
      bool has_grad = arg_grad_store && arg_grad_store[i];
      grads.push_back(has_grad ? ArrayOf(arg_grad_store[i], "arg_grad_store") : NDArray());
      if (!has_grad) reqs.back() = OpReq::kNull;
    }
    for (uint32_t i = 0; i < aux_states_len; ++i) aux.push_back(ArrayOf(aux_states[i], "aux_states"));
    ExecutorBox* box = NewHandle<ExecutorBox>();
    try {
      box->exec = Bind(s, ctx, args, grads, reqs, aux);
    } catch (...) {
      FreeHandle<ExecutorBox>(box);
      throw;
    }
    *out = box;
  });
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    // Random operators draw from the process's sequence, as MXNet's executors draw from its
    // global generator: MXRandomSeed restarts them, and each forward draws anew.
    box->exec->set_seed(NextInvokeSeed());
    // A failure while computing, or one an argument carries, is reported at the next read of
    // an output (DeferredFailure), as MXNet's engine does.
    FailurePtr failure = PendingFailure(box->exec->arg_arrays());
    try {
      box->exec->Forward(is_train != 0);
    } catch (const Error&) {
      if (!failure) failure = FailureOrThrow("MXExecutorForward", std::current_exception());
    }
    MarkFailure(box->exec->outputs(), failure);
    if (failure || !box->monitor) return;
    // As in MXNet, each handle belongs to the callback, which frees it (MXNDArrayFree).
    ReportInternalOutputs(*box->exec, box->monitor_all, box->monitor, box->monitor_handle, true);
  });
}

int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    if (len > 0) NotNull(head_grads, "head_grads");
    std::vector<NDArray> grads;
    for (uint32_t i = 0; i < len; ++i) grads.push_back(ArrayOf(head_grads[i], "head_grads"));
    // MXNet reads one head gradient per output and ignores any beyond (its test_operator
    // passes the gradient of prelu's gamma too); the native Executor::Backward is strict.
    if (grads.size() > box->exec->outputs().size()) grads.resize(box->exec->outputs().size());
    // Gradients of a failed forward carry its failure to their next read, as in MXNet.
    if (const FailurePtr failure = PendingFailure(box->exec->outputs())) {
      try {
        box->exec->Backward(grads);
      } catch (const Error&) {  // the failure already kept is the one to report
      }
      MarkFailure(box->exec->grad_arrays(), failure);
      return;
    }
    box->exec->Backward(grads);
    // As MXNet's monitor: the outputs of every backward node, each handle the callback's.
    if (box->monitor) ReportArrays(InternalGradients(*box->exec, grads), box->monitor, box->monitor_handle, true);
  });
}

int MXExecutorOutputs(ExecutorHandle handle, uint32_t* out_size, NDArrayHandle** out) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    NotNull(out_size, "out_size");
    NotNull(out, "out");
    NDArraysOut(box->exec->outputs(), out_size, out);
  });
}

int MXExecutorFree(ExecutorHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<ExecutorBox>(handle); });
}

int MXExecutorPrint(ExecutorHandle handle, const char** out_str) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    NotNull(out_str, "out_str");
    const Graph& g = box->exec->graph();
    std::string text = "Symbol Outputs:\n";
    auto outs = box->exec->symbol().ListOutputs();
    for (size_t i = 0; i < outs.size(); ++i) text += StrCat("\toutput[", i, "]=", outs[i], "\n");
    for (uint32_t id = 0; id < g.num_nodes(); ++id) {
      const Node& node = *g.node(id).node;
      text += "--------------------\n";
      text += node.is_variable() ? StrCat("Variable:", node.name(), "\n")
                                 : StrCat("Op:", node.attrs.op->name, ", Name=", node.name(), "\n");
    }
    // Module reads the third line from the end for its memory total.
    const ExecutorMemory& m = box->exec->memory();
    text += StrCat("Total ", (m.output_bytes + (1 << 20) - 1) >> 20, " MB allocated\n");
    text += "Total 0 TempSpace resource requested\n";
    Ret().text = text;
    *out_str = Ret().text.c_str();
  });
}

int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback callback,
                                   void* callback_handle, bool monitor_all) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    box->monitor = callback;
    box->monitor_handle = callback_handle;
    box->monitor_all = monitor_all;
  });
}
