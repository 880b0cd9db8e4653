#include "c_api_common.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <symbind/core/graph.h>
#include <symbind/executor/internal_outputs.h>

namespace symbind {
namespace capi {
namespace {

thread_local std::string last_error;

struct HandleTable {
  std::shared_mutex mutex;
  std::unordered_map<const void*, HandleKind> live;
  // How many running C calls hold each handle (HeldHandles): it is not freed under them.
  std::unordered_map<const void*, int> held;
};

// The handles this thread's running C calls hold, innermost call's last; each
// CallHoldsHandles remembers where its call's begin.
thread_local std::vector<const void*> held_by_thread;
thread_local int call_depth = 0;
HandleTable& Handles() {
  static HandleTable table;
  return table;
}

}  // namespace

void SetLastError(const std::string& message) { last_error = message; }
const char* LastError() { return last_error.c_str(); }

void Unsupported(const std::string& what) {
  throw Error(StrCat(what, " is not supported by symbind (docs/python.md)"));
}

std::string ErrorText(const char* call, const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const DeferredError& d) {
    return d.what();
  } catch (const PythonError& p) {
    return StrCat(p.kind(), ": ", call, ": ", p.what());
  } catch (const IndexError& i) {  // MXNet's Python raises it as IndexError by this prefix
    return StrCat("IndexError: ", call, ": ", i.what());
  } catch (const std::bad_alloc&) {
    return OutOfMemoryMessage(call);
  } catch (const std::exception& x) {
    return StrCat(call, ": ", x.what());
  } catch (...) {
    return StrCat(call, ": unknown exception");
  }
}
}  // namespace capi
}  // namespace symbind

namespace symbind {
namespace capi {

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

const Symbol& SymbolOf(void* handle, const char* param) {
  SymbolBox* box = FromHandle<SymbolBox>(handle, param);
  if (box->pending_op)
    throw Error(StrCat("symbol of operator '", box->pending_op->name,
                       "' has no inputs yet: call MXSymbolCompose first"));
  return box->symbol;
}
NDArray& ArrayOf(void* handle, const char* param) {
  NDArrayBox* box = FromHandle<NDArrayBox>(handle, param);
  // A sparse array whose parts did not assemble has no values to compute with.
  if (!box->format_error.empty()) throw Error(StrCat(param, ": ", box->format_error));
  return box->array;
}
void* NewSymbol(Symbol s) {
  SymbolBox* box = NewHandle<SymbolBox>();
  box->symbol = std::move(s);
  return box;
}
void* NewArray(NDArray a, int stype) { return NewHandle<NDArrayBox>(std::move(a), stype); }

void NDArraysOut(const std::vector<NDArray>& arrays, uint32_t* size, NDArrayHandle** out) {
  Ret().handles.clear();
  for (auto& a : arrays) Ret().handles.push_back(NewArray(a));
  *size = static_cast<uint32_t>(arrays.size());
  *out = Ret().handles.data();
}

const std::vector<const Op*>& AllOps() {
  static const std::vector<const Op*> ops = [] {
    std::vector<const Op*> all = OpRegistry::Global().ListOps();
    for (const Op* op : PlaceholderOps()) all.push_back(op);
    return all;
  }();
  return ops;
}
const Op* OpOf(void* creator, const char* param) {
  NotNull(creator, param);
  const Op* op = static_cast<const Op*>(creator);
  const auto& ops = AllOps();
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    throw Error(StrCat("argument '", param, "' is not an operator handle of this library"));
  return op;
}
const Op* OpForUse(void* creator, const char* param) {
  const Op* op = OpOf(creator, param);
  if (IsPlaceholder(op))
    throw Error(StrCat("operator '", op->name, "' is not supported by symbind (", op->description,
                       "; docs/coming-from-mxnet.md lists such operators)"));
  return op;
}

KwArgs Params(uint32_t n, const char** keys, const char** vals) {
  std::vector<std::string> k = CStrings(n, keys, "keys"), v = CStrings(n, vals, "vals");
  KwArgs out;
  for (uint32_t i = 0; i < n; ++i) out[k[i]] = v[i];
  return out;
}

namespace {
const char* const kHiddenKeys[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage"};
}  // namespace

std::string AttrKey(const std::string& key) {
  for (const char* hidden : kHiddenKeys) {
    const std::string k = hidden;
    if (key == k) return "__" + key + "__";
    if (key.size() > k.size() && key.compare(key.size() - k.size(), k.size(), k) == 0 &&
        key.compare(0, 2, "__") != 0)
      throw Error(StrCat("setting variable attributes with '", key, "' is deprecated: give the variable ", k,
                         "=... instead (w = Variable(", k, "=...), then pass w to the operator)"));
  }
  return key;
}

bool IsAttrKey(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 && key.compare(key.size() - 2, 2, "__") == 0;
}

void AppendAttr(const std::string& key, const std::string& value, std::vector<std::string>* flat) {
  flat->push_back(key);
  flat->push_back(value);
  for (const char* hidden : kHiddenKeys)
    if (key == StrCat("__", hidden, "__")) {
      flat->push_back(hidden);
      flat->push_back(value);
    }
}

namespace {
std::atomic<uint64_t> invoke_seed_base{0}, invoke_count{0};
}  // namespace
uint64_t NextInvokeSeed() { return invoke_seed_base.load() + invoke_count.fetch_add(1); }
void SeedInvokes(int seed) {
  invoke_seed_base = static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 32;
  invoke_count = 0;
}

const char* HandleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kPredictor: return "PredictorHandle";
    case HandleKind::kNDList: return "NDListHandle";
    case HandleKind::kNDArray: return "NDArrayHandle";
    case HandleKind::kSymbol: return "SymbolHandle";
    case HandleKind::kExecutor: return "ExecutorHandle";
    case HandleKind::kDataIter: return "DataIterHandle";
    case HandleKind::kKVStore: return "KVStoreHandle";
    case HandleKind::kCachedOp: return "CachedOpHandle";
  }
  return "handle";
}

void RegisterHandle(const void* handle, HandleKind kind) {
  std::unique_lock<std::shared_mutex> lock(Handles().mutex);
  Handles().live[handle] = kind;
}

namespace {
void CheckLive(const void* handle, HandleKind kind, const char* param) {
  if (handle == nullptr)
    throw Error(StrCat("argument '", param, "' is a null ", HandleKindName(kind)));
  auto it = Handles().live.find(handle);
  if (it == Handles().live.end())
    throw Error(StrCat("argument '", param, "' is not a live ", HandleKindName(kind),
                       " (already freed, or never created by this library)"));
  if (it->second != kind)
    throw Error(StrCat("argument '", param, "' is a ", HandleKindName(it->second), ", expected a ",
                       HandleKindName(kind)));
}

}  // namespace

void CheckHandle(const void* handle, HandleKind kind, const char* param) {
  std::unique_lock<std::shared_mutex> lock(Handles().mutex);
  CheckLive(handle, kind, param);
  if (call_depth > 0) {
    ++Handles().held[handle];
    held_by_thread.push_back(handle);
  }
}

void UnregisterHandle(const void* handle, HandleKind kind, const char* param) {
  std::unique_lock<std::shared_mutex> lock(Handles().mutex);
  CheckLive(handle, kind, param);
  if (Handles().held.count(handle))
    throw Error(StrCat("argument '", param, "' is in use by a running call (in another thread, or the one whose "
                       "callback this is); free it after that call returns"));
  Handles().live.erase(handle);
}

CallHoldsHandles::CallHoldsHandles() : first_(held_by_thread.size()) { ++call_depth; }

CallHoldsHandles::~CallHoldsHandles() {
  --call_depth;
  std::unique_lock<std::shared_mutex> lock(Handles().mutex);
  for (size_t i = first_; i < held_by_thread.size(); ++i) {
    auto it = Handles().held.find(held_by_thread[i]);
    if (--it->second == 0) Handles().held.erase(it);
  }
  held_by_thread.resize(first_);
}

Context DeviceContext(int dev_type, int dev_id) {
  // Checked as an int: a value outside MXNet's DeviceType enum must not be cast into it (UB).
  if (dev_type != 1 && dev_type != 2 && dev_type != 3 && dev_type != 5)
    throw Error(StrCat("unknown device type ", dev_type,
                       " (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)"));
  if (dev_type == 2) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "symbind: a GPU context was requested; symbind computes on the CPU "
                           "only, so GPU arrays and executors run on the CPU\n");
    });
    return Context::CPU(dev_id);
  }
  // cpu_pinned and cpu_shared stay what the caller asked for (they are CPU memory here).
  return Context{static_cast<Context::DeviceType>(dev_type), dev_id};
}

// Inferred through the Reshape op, so that the rule lives in one place.
TShape ResolveReshape(const TShape& from, const std::vector<int64_t>& dims) {
  // An empty target is a 0-dimensional array (the Reshape op reads "()" as "no target").
  if (dims.empty()) {
    if (from.Size() != 1)
      throw ShapeError(StrCat("cannot reshape an array of shape ", from.ToString(), " (", from.Size(),
                              " elements) into shape ()"));
    return TShape(std::vector<int64_t>());
  }
  std::string spec = "(";
  for (size_t i = 0; i < dims.size(); ++i) spec += (i ? "," : "") + std::to_string(dims[i]);
  spec += dims.size() == 1 ? ",)" : ")";
  const Symbol reshape = Symbol::Create("Reshape", "reshape", {{"shape", spec}}, {{"data", Symbol::Variable("data")}});
  return InferShape(reshape, {{"data", from}}).out_shapes[0];
}

void WithFrontendRandom(const std::function<void(std::mt19937_64&)>& f) {
  static std::mutex mutex;
  static std::mt19937_64 rng(0);
  const std::lock_guard<std::mutex> lock(mutex);
  f(rng);
}

TShape ShapeFromC(const uint32_t* dims, uint32_t ndim) {
  if (ndim > 0) NotNull(dims, "shape");
  return TShape(std::vector<int64_t>(dims, dims + ndim));
}

TShape ShapeFrom64(const int64_t* dims, int ndim) {
  if (ndim < 0) throw Error(StrCat("ndim is negative (", ndim, ")"));
  if (ndim > 0) NotNull(dims, "shape");
  for (int i = 0; i < ndim; ++i)
    if (dims[i] < 0) throw ShapeError(StrCat("dimension ", i, " is negative (", dims[i], ")"));
  return TShape(std::vector<int64_t>(dims, dims + ndim));
}

NDArray NewDense(const TShape& shape, int dev_type, int dev_id, int dtype) {
  Context ctx = DeviceContext(dev_type, dev_id);
  DType t = static_cast<DType>(dtype);
  DTypeSize(t);  // throws on an unknown type flag
  return NDArray(shape, t, ctx);
}

std::map<std::string, Context> GroupContexts(uint32_t n, const char** keys, const int* dev_types,
                                             const int* dev_ids) {
  std::map<std::string, Context> groups;
  if (n == 0) return groups;
  std::vector<std::string> names = CStrings(n, keys, "group2ctx keys");
  NotNull(dev_types, "group2ctx device types");
  NotNull(dev_ids, "group2ctx device ids");
  for (uint32_t i = 0; i < n; ++i) groups[names[i]] = DeviceContext(dev_types[i], dev_ids[i]);
  return groups;
}

std::vector<Context> ArgumentContexts(const Graph& graph, const std::map<std::string, Context>& groups,
                                      Context fallback) {
  std::vector<Context> out;
  for (uint32_t id : graph.arg_nodes()) {
    if (graph.is_aux_node(id)) continue;
    const auto& attrs = graph.node(id).node->user_attrs;
    auto group = attrs.find("__ctx_group__");
    auto it = group == attrs.end() ? groups.end() : groups.find(group->second);
    out.push_back(it == groups.end() ? fallback : it->second);
  }
  return out;
}

std::vector<std::string> CStrings(uint32_t n, const char* const* strings, const char* param) {
  std::vector<std::string> out;
  if (n == 0) return out;
  NotNull(strings, param);
  for (uint32_t i = 0; i < n; ++i) {
    if (strings[i] == nullptr) throw Error(StrCat("argument '", param, "[", i, "]' is null"));
    out.emplace_back(strings[i]);
  }
  return out;
}

void ReportInternalOutputs(const Executor& exec, bool monitor_all,
                           void (*callback)(const char*, void*, void*), void* user, bool callee_owns) {
  ReportArrays(monitor_all ? MonitorAllArrays(exec) : InternalOutputs(exec, false), callback, user,
               callee_owns);
}

void ReportArrays(const std::vector<std::pair<std::string, NDArray>>& arrays,
                  void (*callback)(const char*, void*, void*), void* user, bool callee_owns) {
  for (auto& named : arrays) {
    NDArrayBox* array = NewHandle<NDArrayBox>(named.second);
    if (callee_owns) {
      callback(named.first.c_str(), array, user);
      continue;
    }
    try {
      callback(named.first.c_str(), array, user);
    } catch (...) {
      FreeHandle<NDArrayBox>(array);
      throw;
    }
    FreeHandle<NDArrayBox>(array);
  }
}

std::vector<uint32_t> ShapeToUint32(const TShape& shape) {
  std::vector<uint32_t> out;
  for (int64_t d : shape.dims()) {
    if (d < 0 || d > std::numeric_limits<uint32_t>::max())
      throw Error(StrCat("shape ", shape.ToString(), " does not fit the C API's uint32 dims"));
    out.push_back(static_cast<uint32_t>(d));
  }
  return out;
}

std::vector<int> ShapeToInt(const TShape& shape) {
  std::vector<int> out;
  for (int64_t d : shape.dims()) {
    if (d < -1 || d > std::numeric_limits<int>::max())
      throw Error(StrCat("shape ", shape.ToString(), " does not fit the C API's int dims"));
    out.push_back(static_cast<int>(d));
  }
  return out;
}

std::string FirstJSONValue(const char* text) {
  NotNull(text, "symbol_json_str");
  size_t i = 0;
  while (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') ++i;
  if (text[i] != '{')
    throw Error(StrCat("symbol JSON must start with '{', found ",
                       text[i] ? StrCat("'", text[i], "'") : std::string("the end of the string"),
                       " at byte ", i));
  const size_t begin = i;
  int depth = 0;
  bool in_string = false;
  for (;; ++i) {
    char c = text[i];
    if (c == '\0')
      throw Error(StrCat("symbol JSON ends at byte ", i, " before its top-level object closes"));
    if (in_string) {
      if (c == '\\') {
        if (text[i + 1] == '\0') continue;  // reported as truncated on the next turn
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return std::string(text + begin, i + 1 - begin);
    }
  }
}

}  // namespace capi
}  // namespace symbind
