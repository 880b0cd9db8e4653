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
#include "compat_internal.h"
#include "symbind_version.h"

namespace symbind {
namespace capi {
namespace {

// A symbol, or an operator with parameters awaiting its inputs (MXSymbolCreateAtomicSymbol
// then MXSymbolCompose).
struct SymbolBox {
  static constexpr HandleKind kKind = HandleKind::kSymbol;
  Symbol symbol;
  const Op* pending_op = nullptr;
  KwArgs pending_params;
};

struct ExecutorBox {
  static constexpr HandleKind kKind = HandleKind::kExecutor;
  std::shared_ptr<Executor> exec;  // shared with mxnet-cpp's Executor for its GetHandle()
  ExecutorMonitorCallback monitor = nullptr;
  void* monitor_handle = nullptr;
  bool monitor_all = false;
};

// Per-thread storage behind returned pointers.
struct Returns {
  std::string text;
  std::vector<std::string> strings;
  std::vector<const char*> string_ptrs;
  std::vector<void*> handles;
  std::vector<int> shape;
  // MXSymbolInferShapeEx: arguments, outputs, aux states.
  std::vector<std::vector<int>> shapes[3];
  std::vector<int> ndims[3];
  std::vector<const int*> shape_ptrs[3];
  // MXSymbolGetAtomicSymbolInfo
  std::vector<std::string> info_names, info_types, info_docs;
  std::vector<const char*> info_name_ptrs, info_type_ptrs, info_doc_ptrs;
  std::string info_name, info_description, info_key_var, info_return_type;
};
Returns& Ret() {
  thread_local Returns r;
  return r;
}

const char** StringsOut(std::vector<std::string> values, uint32_t* size,
                        std::vector<std::string>* store, std::vector<const char*>* ptrs) {
  *store = std::move(values);
  ptrs->clear();
  for (auto& s : *store) ptrs->push_back(s.c_str());
  *size = static_cast<uint32_t>(store->size());
  return ptrs->data();
}
const char** StringsOut(std::vector<std::string> values, uint32_t* size) {
  return StringsOut(std::move(values), size, &Ret().strings, &Ret().string_ptrs);
}

const Symbol& SymbolOf(void* handle, const char* param = "symbol") {
  SymbolBox* box = FromHandle<SymbolBox>(handle, param);
  if (box->pending_op)
    throw Error(StrCat("symbol of operator '", box->pending_op->name,
                       "' has no inputs yet: call MXSymbolCompose first"));
  return box->symbol;
}
NDArray& ArrayOf(void* handle, const char* param = "handle") {
  return FromHandle<NDArrayBox>(handle, param)->array;
}
void* NewSymbol(Symbol s) {
  SymbolBox* box = NewHandle<SymbolBox>();
  box->symbol = std::move(s);
  return box;
}
void* NewArray(NDArray a) { return NewHandle<NDArrayBox>(std::move(a)); }

const std::vector<const Op*>& AllOps() {
  static const std::vector<const Op*> ops = OpRegistry::Global().ListOps();
  return ops;
}
const Op* OpOf(void* creator, const char* param = "creator") {
  NotNull(creator, param);
  const Op* op = static_cast<const Op*>(creator);
  const auto& ops = AllOps();
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    throw Error(StrCat("argument '", param, "' is not an operator handle of this library"));
  return op;
}

KwArgs Params(uint32_t n, const char** keys, const char** vals) {
  std::vector<std::string> k = CStrings(n, keys, "keys"), v = CStrings(n, vals, "vals");
  KwArgs out;
  for (uint32_t i = 0; i < n; ++i) out[k[i]] = v[i];
  return out;
}

TShape ShapeFromC(const uint32_t* dims, uint32_t ndim) {
  if (ndim > 0) NotNull(dims, "shape");
  return TShape(std::vector<int64_t>(dims, dims + ndim));
}

void NDArraysOut(const std::vector<NDArray>& arrays, uint32_t* size, NDArrayHandle** out) {
  Ret().handles.clear();
  for (auto& a : arrays) Ret().handles.push_back(NewArray(a));
  *size = static_cast<uint32_t>(arrays.size());
  *out = Ret().handles.data();
}

void LoadedOut(const NDArrayFile& file, uint32_t* out_size, NDArrayHandle** out_arr,
               uint32_t* out_name_size, const char*** out_names) {
  NotNull(out_size, "out_size");
  NotNull(out_arr, "out_arr");
  NotNull(out_name_size, "out_name_size");
  NotNull(out_names, "out_names");
  NDArraysOut(file.arrays, out_size, out_arr);
  *out_names = StringsOut(file.names, out_name_size);
}

// Random operators invoked imperatively draw from seed MXRandomSeed's value plus the number
// of invocations before (so successive calls differ, and a program reproduces its draws).
std::atomic<uint64_t> invoke_seed_base{0}, invoke_count{0};
uint64_t NextInvokeSeed() { return invoke_seed_base.load() + invoke_count.fetch_add(1); }

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
    invoke_seed_base = static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 32;
    invoke_count = 0;
    // And the generator of symbind's own mxnet-cpp layer (NDArray::SampleGaussian, ...).
    mxnet::cpp::compat::SeedRandom(static_cast<uint64_t>(seed));
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
    }
    *out_array = StringsOut(names, out_size);
  });
}

int NNGetOpHandle(const char* op_name, OpHandle* op_out) {
  return Guarded(__func__, [&] {
    NotNull(op_out, "op_out");
    *op_out = const_cast<Op*>(&OpRegistry::Global().Get(CString(op_name, "op_name")));
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
    const Op* op = OpOf(creator);
    NotNull(out, "out");
    KwArgs params = Params(num_param, keys, vals);
    SymbolBox* box = NewHandle<SymbolBox>();
    box->pending_op = op;
    box->pending_params = std::move(params);
    *out = box;
  });
}

int MXSymbolCompose(SymbolHandle sym, const char* name, uint32_t num_args, const char** keys,
                    SymbolHandle* args) {
  return Guarded(__func__, [&] {
    SymbolBox* box = FromHandle<SymbolBox>(sym, "sym");
    if (!box->pending_op)
      throw Error("only a symbol made by MXSymbolCreateAtomicSymbol can be composed, once");
    if (num_args > 0) NotNull(args, "args");
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
    box->pending_op = nullptr;
    box->pending_params.clear();
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
    Ret().text = SaveSymbolJSON(SymbolOf(symbol));
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
      for (auto& kv : node.attrs.dict) flat.insert(flat.end(), {kv.first, kv.second});
      for (auto& kv : node.user_attrs) flat.insert(flat.end(), {kv.first, kv.second});
    }
    *out = StringsOut(flat, out_size);
    *out_size /= 2;
  });
}

int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value) {
  return Guarded(__func__, [&] {
    SymbolBox* box = FromHandle<SymbolBox>(symbol, "symbol");
    SymbolOf(symbol);
    box->symbol.SetAttr(CString(key, "key"), CString(value, "value"));
  });
}

int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys,
                         const uint32_t* arg_ind_ptr, const int* arg_shape_data,
                         uint32_t* in_shape_size, const int** in_shape_ndim,
                         const int*** in_shape_data, uint32_t* out_shape_size,
                         const int** out_shape_ndim, const int*** out_shape_data,
                         uint32_t* aux_shape_size, const int** aux_shape_ndim,
                         const int*** aux_shape_data, int* complete) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(sym, "sym");
    std::vector<std::string> names = s.ListArguments();
    std::vector<std::string> given = keys ? CStrings(num_args, keys, "keys") : std::vector<std::string>();
    if (num_args > 0) {
      NotNull(arg_ind_ptr, "arg_ind_ptr");
      NotNull(arg_shape_data, "arg_shape_data");
    }
    std::map<std::string, TShape> known;
    for (uint32_t i = 0; i < num_args; ++i) {
      std::string name = keys ? given[i] : (i < names.size() ? names[i] : "");
      if (name.empty()) throw Error(StrCat("shape ", i, " given for a symbol with ", names.size(), " arguments"));
      known[name] = TShape(std::vector<int64_t>(arg_shape_data + arg_ind_ptr[i],
                                                arg_shape_data + arg_ind_ptr[i + 1]));
    }
    ShapeInferResult r = InferShapePartial(s, known);
    const std::vector<TShape>* groups[3] = {&r.arg_shapes, &r.out_shapes, &r.aux_shapes};
    uint32_t* sizes[3] = {in_shape_size, out_shape_size, aux_shape_size};
    const int** ndims[3] = {in_shape_ndim, out_shape_ndim, aux_shape_ndim};
    const int*** datas[3] = {in_shape_data, out_shape_data, aux_shape_data};
    Returns& ret = Ret();
    for (int g = 0; g < 3; ++g) {
      NotNull(sizes[g], "shape size");
      NotNull(ndims[g], "shape ndim");
      NotNull(datas[g], "shape data");
      ret.shapes[g].clear();
      ret.ndims[g].clear();
      ret.shape_ptrs[g].clear();
      for (auto& shape : *groups[g]) {
        ret.shapes[g].push_back(shape.ndim_known() ? ShapeToInt(shape) : std::vector<int>());
        ret.ndims[g].push_back(shape.ndim());
      }
      for (auto& v : ret.shapes[g]) ret.shape_ptrs[g].push_back(v.data());
      *sizes[g] = static_cast<uint32_t>(ret.shapes[g].size());
      *ndims[g] = ret.ndims[g].data();
      *datas[g] = ret.shape_ptrs[g].data();
    }
    *NotNull(complete, "complete") = r.complete();
  });
}

int MXGenBackendSubgraph(SymbolHandle, const char* backend, SymbolHandle*) {
  return Guarded(__func__, [&] {
    throw Error(StrCat("subgraph backends (", backend ? backend : "null",
                       ") are not supported by symbind"));
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
    if (static_cast<int64_t>(size) != a.Size())
      throw Error(StrCat("array of shape ", a.shape().ToString(), " holds ", a.Size(),
                         " elements, got size ", size));
    if (size > 0) NotNull(data, "data");
    a.SyncCopyToCPU(data, size);
  });
}

int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
                   NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewArray(ArrayOf(handle).Slice(slice_begin, slice_end));
  });
}

int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    const NDArray& a = ArrayOf(handle);
    if (ndim < 0) throw Error(StrCat("ndim is negative (", ndim, ")"));
    if (ndim > 0) NotNull(dims, "dims");
    *out = NewArray(a.Reshape(
        mxnet::cpp::compat::ResolveReshape(a.shape(), std::vector<int64_t>(dims, dims + ndim))));
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
    SaveNDArrays(path, arrays, keys ? CStrings(num_args, keys, "keys") : std::vector<std::string>());
  });
}

// symbind computes synchronously: every array is ready when the call that writes it returns.
int MXNDArrayWaitAll() { return Guarded(__func__, [] {}); }
int MXNDArrayWaitToRead(NDArrayHandle handle) {
  return Guarded(__func__, [&] { ArrayOf(handle); });
}
int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  return Guarded(__func__, [&] { ArrayOf(handle); });
}

int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs,
                       int* num_outputs, NDArrayHandle** outputs, int num_params,
                       const char** param_keys, const char** param_vals) {
  return Guarded(__func__, [&] {
    const Op* op = OpOf(creator);
    NotNull(num_outputs, "num_outputs");
    NotNull(outputs, "outputs");
    if (num_inputs < 0 || num_params < 0) throw Error("negative input or parameter count");
    if (num_inputs > 0) NotNull(inputs, "inputs");
    std::vector<NDArray> in;
    for (int i = 0; i < num_inputs; ++i) in.push_back(ArrayOf(inputs[i], "inputs"));
    std::vector<NDArray> given;
    if (*outputs && *num_outputs > 0)
      for (int i = 0; i < *num_outputs; ++i) given.push_back(ArrayOf((*outputs)[i], "outputs"));
    std::vector<NDArray> results =
        Invoke(op->name, Params(static_cast<uint32_t>(num_params), param_keys, param_vals), in, given,
               NextInvokeSeed());
    if (!given.empty()) {
      // Written into the caller's arrays; a none array given takes the result.
      for (size_t i = 0; i < given.size(); ++i)
        if (given[i].is_none()) ArrayOf((*outputs)[i], "outputs") = results[i];
      return;
    }
    uint32_t n = 0;
    NDArraysOut(results, &n, outputs);
    *num_outputs = static_cast<int>(n);
  });
}

// ---- executors ------------------------------------------------------------------------------

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t num_map_keys,
                     const char**, const int*, const int*, uint32_t len, NDArrayHandle* in_args,
                     NDArrayHandle* arg_grad_store, uint32_t* grad_req_type,
                     uint32_t aux_states_len, NDArrayHandle* aux_states, ExecutorHandle,
                     ExecutorHandle* out) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol_handle, "symbol_handle");
    NotNull(out, "out");
    Context ctx = DeviceContext(dev_type, dev_id);
    if (num_map_keys > 0)
      throw Error("group-to-device maps (num_map_keys > 0) are not supported: symbind runs on one CPU context");
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
    box->exec->Forward(is_train != 0);
    if (!box->monitor) return;
    ReportInternalOutputs(*box->exec, box->monitor_all, box->monitor, box->monitor_handle);
  });
}

int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads) {
  return Guarded(__func__, [&] {
    ExecutorBox* box = FromHandle<ExecutorBox>(handle);
    if (len > 0) NotNull(head_grads, "head_grads");
    std::vector<NDArray> grads;
    for (uint32_t i = 0; i < len; ++i) grads.push_back(ArrayOf(head_grads[i], "head_grads"));
    box->exec->Backward(grads);
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
