// Shared by the C API sources: the error convention (0 / -1 with a thread-local message),
// handle bookkeeping and argument checks.
#pragma once
#include <cerrno>
#include <cstdint>
#include <exception>
#include <new>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/shape_semantics.h>
#include <symbind/core/tshape.h>
#include <symbind/core/op.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/autograd.h>
#include <symbind/executor/executor.h>

#include <mxnet/c_api.h>
#include <mxnet/c_api_symbind.h>

namespace symbind {
class Graph;
namespace capi {

const char* LastError();  // MXGetLastError's (SetLastError: mxnet/c_api_symbind.h)

// An error MXNet reports as a Python builtin exception (NumPy's ValueError for a reshape to
// another size, ...): MXGetLastError then starts with the kind ("ValueError: <call>: <cause>"),
// which MXNet's Python package raises as that class, as it does for MXNet's own messages.
class PythonError : public Error {
 public:
  PythonError(std::string kind, const std::string& what) : Error(what), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

// Every handle a C call takes (CheckHandle, FromHandle) is held until the call returns: freeing
// it meanwhile (from another thread, or from a callback of the call) is an Error instead of a
// use after free.
class CallHoldsHandles {
 public:
  CallHoldsHandles();
  ~CallHoldsHandles();
  CallHoldsHandles(const CallHoldsHandles&) = delete;
  CallHoldsHandles& operator=(const CallHoldsHandles&) = delete;

 private:
  size_t first_;
};

// MXGetLastError's text for exception `e` of C function `call`: "<call>: <cause>", or
// "<Kind>: <call>: <cause>" for the errors MXNet's Python raises as builtins (PythonError,
// IndexError), which it picks by that prefix.
std::string ErrorText(const char* call, const std::exception_ptr& e);

// A failure reported at a later call, whose text was made where it happened (DeferredFailure).
class DeferredError : public std::exception {
 public:
  explicit DeferredError(std::string text) : text_(std::move(text)) {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

// Runs `body` for C function `call`: 0 and errno cleared on success (cgo clients read
// errno after every call), -1 and ErrorText in MXGetLastError on any exception.
template <typename Body>
int Guarded(const char* call, Body&& body) {
  CallHoldsHandles holds;
  try {
    body();
    errno = 0;
    return 0;
  } catch (...) {
    SetLastError(ErrorText(call, std::current_exception()));
  }
  return -1;
}

// MXNet's engine runs operators asynchronously: an operator that fails there marks what it
// writes, each operator reading a marked array passes the mark on to its own outputs, and the
// next read (asnumpy, wait_to_read, waitall) raises the error, once. MXNet's Python programs
// and tests catch errors there, and an array never read raises nothing. symbind computes at
// once; the C API keeps such a failure by the storage of each array the failed call wrote
// (capi/deferred_errors.cc). Only failures while computing are kept: parameters that do not
// parse, shapes, dtypes and handles fail the call itself, as in MXNet.
struct DeferredFailure {
  std::string text;       // as MXGetLastError gives it
  bool reported = false;  // raised once: by one read of any array holding it, or by waitall
};
using FailurePtr = std::shared_ptr<DeferredFailure>;
// The failure to keep for exception `e` of `call`; rethrows the errors that fail the call
// itself (shapes, dtypes, memory), wherever the op found them.
FailurePtr FailureOrThrow(const char* call, const std::exception_ptr& e);
// The first unreported failure held by any of the arrays, or null.
FailurePtr PendingFailure(const std::vector<NDArray>& arrays);
// Marks the arrays with `failure`; null clears their marks (a successful write).
void MarkFailure(const std::vector<NDArray>& arrays, const FailurePtr& failure);
// Throws DeferredError when `a` holds an unreported failure, which is then reported.
void ThrowIfFailed(const NDArray& a);
// MXNDArrayWaitAll: throws the oldest unreported failure of a live array; all are then reported.
void ThrowAnyFailure();

// Every kind of handle the C API gives out. A handle is live from its creation to its free;
// using it afterwards, or as the wrong kind, is an error rather than undefined behaviour
// (unless the address has been reused by a new handle of the same kind).
enum class HandleKind {
  kPredictor, kNDList, kNDArray, kSymbol, kExecutor, kDataIter, kKVStore, kCachedOp
};
const char* HandleKindName(HandleKind kind);
void RegisterHandle(const void* handle, HandleKind kind);
// Throws when `handle` is null, not live, or of another kind; `param` names the argument.
// Inside a C call (Guarded) the handle is then held until the call returns.
void CheckHandle(const void* handle, HandleKind kind, const char* param);
// Throws as CheckHandle, and when a running call holds the handle.
void UnregisterHandle(const void* handle, HandleKind kind, const char* param);

// Types behind handles declare `static constexpr HandleKind kKind`.
template <typename T, typename... Args>
T* NewHandle(Args&&... args) {
  T* p = new T{std::forward<Args>(args)...};
  RegisterHandle(p, T::kKind);
  return p;
}
template <typename T>
T* FromHandle(void* handle, const char* param = "handle") {
  CheckHandle(handle, T::kKind, param);
  return static_cast<T*>(handle);
}
template <typename T>
void FreeHandle(void* handle, const char* param = "handle") {
  UnregisterHandle(handle, T::kKind, param);
  delete static_cast<T*>(handle);
}

// Throws naming `param` when a pointer argument is null.
template <typename P>
P* NotNull(P* p, const char* param) {
  if (p == nullptr) throw Error(StrCat("argument '", param, "' is null"));
  return p;
}

// A C string argument that must not be null.
inline std::string CString(const char* s, const char* param) { return NotNull(s, param); }

// Strings from a C array of `n` pointers (none null).
std::vector<std::string> CStrings(uint32_t n, const char* const* strings, const char* param);

// MXNet's storage types (NDArrayStorageType).
enum StorageType : int { kUndefinedStorage = -1, kDefaultStorage = 0, kRowSparseStorage = 1, kCSRStorage = 2 };

// A sparse array's parts given one by one (MXNDArraySyncCopyFromNDArray), before all are there.
struct SparseParts {
  NDArray data;
  std::vector<NDArray> aux;
};

// An NDArray behind an NDArrayHandle.
struct NDArrayBox {
  static constexpr HandleKind kKind = HandleKind::kNDArray;
  NDArrayBox() = default;
  explicit NDArrayBox(NDArray a, int storage_type = kDefaultStorage)
      : array(std::move(a)), stype(storage_type) {}
  NDArray array;
  // Its place on the autograd tape (a recorded output or a marked variable); shallow copies
  // of the handle share it, as copies of an MXNet NDArray share their autograd entry.
  std::shared_ptr<autograd::Entry> autograd;
  // Sparse arrays are dense arrays here, tagged with the storage type MXNet's frontends see;
  // their indices and values are derived from the non-zeros when asked for (c_api_sparse.cc).
  int stype = kDefaultStorage;
  int grad_stype = kDefaultStorage;  // of the gradient array marked for it (MXAutogradMarkVariables)
  std::vector<DType> aux_types;  // sparse: the index types (indptr, indices / indices)
  std::shared_ptr<SparseParts> pending;
  // The format error of parts that did not assemble (MXNDArraySyncCheckFormat reports it).
  std::string format_error;
};

// The storage type of op `op_name`'s outputs for its inputs' storage types, as MXNet's
// storage inference gives them for the ops that keep sparsity; dense otherwise.
int ResultStorageType(const std::string& op_name, const KwArgs& params, const std::vector<int>& input_stypes);
// MXNet's _sparse_<name> aliases of `op` (its frontends' sparse modules), and the op such a
// name stands for (null for any other name).
std::vector<std::string> SparseAliases(const Op& op);
const Op* FindSparseAlias(const std::string& name);
// MXNet's lazy update: optimizer op `op_name` given a row_sparse gradient (ftrl and adagrad
// always, sgd/sgd_mom/adam unless lazy_update is false) updates only the rows that hold a
// non-zero gradient, weight decay and states included. Returns false when the call is not
// one, else the updated weight in `results` (written into `given[0]` when given).
bool LazyRowUpdate(const std::string& op_name, const KwArgs& params, const std::vector<NDArrayBox*>& in,
                   const std::vector<NDArrayBox*>& given, uint64_t seed, std::vector<NDArray>* results);
// Rows `rows` of `a` (any dtype) stacked into (rows.size(), a.shape()[1:]), and the inverse:
// the rows of `compact` written into rows `rows` of `a`.
NDArray GatherRows(const NDArray& a, const std::vector<int64_t>& rows);
void ScatterRows(const NDArray& compact, const std::vector<int64_t>& rows, NDArray* a);
// The storage type a `stype` parameter names ("default", "row_sparse", "csr").
int ParseStorageType(const std::string& name);

// A symbol, or an operator with parameters awaiting its inputs (MXSymbolCreateAtomicSymbol
// then MXSymbolCompose).
struct SymbolBox {
  static constexpr HandleKind kKind = HandleKind::kSymbol;
  Symbol symbol;
  const Op* pending_op = nullptr;
  KwArgs pending_params;
  std::map<std::string, std::string> pending_attrs;
};

// MXNet's attribute keys: lr_mult, wd_mult, ctx_group, force_mirroring and mirror_stage are
// stored as "__<key>__" (a key ending in one of them, like
// "fc1_lr_mult", is refused as MXNet refuses it); other keys unchanged.
std::string AttrKey(const std::string& key);
// Whether a key names a user attribute rather than an operator parameter ("__key__").
bool IsAttrKey(const std::string& key);
// Appends key, value to a flat attribute list, and for a stored "__<hidden>__" key its plain
// form too, as MXNet lists them.
void AppendAttr(const std::string& key, const std::string& value, std::vector<std::string>* flat);

struct ExecutorBox {
  static constexpr HandleKind kKind = HandleKind::kExecutor;
  std::shared_ptr<Executor> exec;  // shared with mxnet-cpp's Executor for its GetHandle()
  // Storage types of the arrays it was bound with (empty: all dense), as MXNet reports them.
  std::vector<int> arg_stypes, grad_stypes, aux_stypes;
  ExecutorMonitorCallback monitor = nullptr;
  void* monitor_handle = nullptr;
  bool monitor_all = false;
};

// Per-thread storage behind returned pointers: valid until the next call of the same kind on
// the same thread, as in MXNet.
struct Returns {
  std::string text;
  std::vector<std::string> strings;
  std::vector<const char*> string_ptrs;
  std::vector<void*> handles;
  std::vector<int> shape;
  std::vector<int64_t> shape64;
  std::vector<int> ints;
  // Shape and type inference: arguments, outputs, aux states.
  std::vector<std::vector<int>> shapes[3];
  std::vector<std::vector<int64_t>> shapes64[3];
  std::vector<int> ndims[3];
  std::vector<const int*> shape_ptrs[3];
  std::vector<const int64_t*> shape64_ptrs[3];
  std::vector<int> types[3];
  // MXSymbolGetAtomicSymbolInfo
  std::vector<std::string> info_names, info_types, info_docs;
  std::vector<const char*> info_name_ptrs, info_type_ptrs, info_doc_ptrs;
  std::string info_name, info_description, info_key_var, info_return_type;
};
Returns& Ret();

// `values` kept in `store`, their C strings in `ptrs`; returns ptrs->data().
const char** StringsOut(std::vector<std::string> values, uint32_t* size,
                        std::vector<std::string>* store, std::vector<const char*>* ptrs);
const char** StringsOut(std::vector<std::string> values, uint32_t* size);

const Symbol& SymbolOf(void* handle, const char* param = "symbol");
NDArray& ArrayOf(void* handle, const char* param = "handle");
// The views MXNet's NDArray slicing and reshape make (rows [begin, end); MXNet's reshape codes,
// read from the right when `reverse`), recorded on the autograd tape while recording.
NDArrayHandle SliceView(void* handle, int64_t begin, int64_t end);
NDArrayHandle ReshapeView(void* handle, std::vector<int64_t> dims, bool reverse);
void* NewSymbol(Symbol s);
void* NewArray(NDArray a, int stype = kDefaultStorage);
// New handles for `arrays` in the per-thread store.
void NDArraysOut(const std::vector<NDArray>& arrays, uint32_t* size, NDArrayHandle** out);

// The registry's operators, then the placeholders (capi/c_api_placeholder_ops.cc).
const std::vector<const Op*>& AllOps();
// The operator behind an AtomicSymbolCreator / OpHandle (checked against AllOps).
const Op* OpOf(void* creator, const char* param = "creator");
// The same for a call that computes or composes with it: a placeholder throws, naming it.
const Op* OpForUse(void* creator, const char* param = "creator");

// Names MXNet's Python package looks up at import that symbind cannot compute: listed and
// described like operators (so the package's modules build), refused when used.
const std::vector<const Op*>& PlaceholderOps();
bool IsPlaceholder(const Op* op);
// A registered operator or a placeholder by name; null when neither.
const Op* FindOpOrPlaceholder(const std::string& name);
KwArgs Params(uint32_t n, const char** keys, const char** vals);

// Random operators invoked imperatively draw from the seed MXRandomSeed set plus the number
// of invocations before (so successive calls differ, and a program reproduces its draws).
uint64_t NextInvokeSeed();
void SeedInvokes(int seed);

// Throws "<what> is not supported by symbind (docs/python.md)": features of MXNet's Python
// package that symbind does not have.
[[noreturn]] void Unsupported(const std::string& what);

// MXNet's numpy shape semantics flag (MXSetIsNumpyShape) is core's NumpyShapeSemantics(), per
// thread: without it, shapes cross the C API with 0 for an unknown dim, as in MXNet 1.x.
// Whether they were turned on globally (MXSetIsNumpyShape mode 2).
bool NumpyShapeSemanticsGlobal();

// Shapes given through the C API (32- and 64-bit dims), checked.
TShape ShapeFromC(const uint32_t* dims, uint32_t ndim);
TShape ShapeFrom64(const int64_t* dims, int ndim);
// A new zero-filled array for MXNet's device and dtype codes, both checked.
NDArray NewDense(const TShape& shape, int dev_type, int dev_id, int dtype);

// MXNet's group2ctx maps (ctx_group attribute -> device), each device checked as
// DeviceContext checks it. Every group computes on the CPU; the map only places arrays.
std::map<std::string, Context> GroupContexts(uint32_t n, const char** keys, const int* dev_types,
                                             const int* dev_ids);
// Per argument (ListArguments order): the context of its variable's ctx_group in `groups`,
// else `fallback`, as MXNet places the arrays it allocates for a bind.
std::vector<Context> ArgumentContexts(const Graph& graph, const std::map<std::string, Context>& groups,
                                      Context fallback);

// Monitor callbacks (predictor and executor): every node output of `exec` as an
// NDArrayHandle, valid during the call, or the callback's to free when callee_owns (MXNet's
// executor monitor hands each handle over). With monitor_all, each op node's inputs before its
// outputs, as MXNet's monitor_all (MonitorAllArrays).
void ReportInternalOutputs(const Executor& exec, bool monitor_all,
                           void (*callback)(const char*, void*, void*), void* user,
                           bool callee_owns = false);
// The same for named arrays (the executor monitor's gradients after Backward).
void ReportArrays(const std::vector<std::pair<std::string, NDArray>>& arrays,
                  void (*callback)(const char*, void*, void*), void* user, bool callee_owns);

// Shapes as uint32_t for the C API's shape out-parameters (throws when a dim does not fit).
std::vector<uint32_t> ShapeToUint32(const TShape& shape);
std::vector<int> ShapeToInt(const TShape& shape);

// The first JSON value of `text`: reads only up to the brace that closes it, so the buffer
// need not be NUL-terminated after it and may hold trailing bytes (as clients pass it).
std::string FirstJSONValue(const char* text);

}  // namespace capi
}  // namespace symbind
