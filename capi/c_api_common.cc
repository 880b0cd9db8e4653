#include "c_api_common.h"

#include <cstdio>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <symbind/executor/internal_outputs.h>

#include "compat_internal.h"  // the one GPU-context policy (compat/base.cc)

namespace symbind {
namespace capi {
namespace {

thread_local std::string last_error;

struct HandleTable {
  std::shared_mutex mutex;
  std::unordered_map<const void*, HandleKind> live;
};
HandleTable& Handles() {
  static HandleTable table;
  return table;
}

}  // namespace

void SetLastError(const std::string& message) { last_error = message; }
const char* LastError() { return last_error.c_str(); }
}  // namespace capi
}  // namespace symbind

void mxnet::cpp::compat::RecordLastError(const char* message) { symbind::capi::SetLastError(message); }

namespace symbind {
namespace capi {

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

void CheckHandle(const void* handle, HandleKind kind, const char* param) {
  if (handle == nullptr)
    throw Error(StrCat("argument '", param, "' is a null ", HandleKindName(kind)));
  std::shared_lock<std::shared_mutex> lock(Handles().mutex);
  auto it = Handles().live.find(handle);
  if (it == Handles().live.end())
    throw Error(StrCat("argument '", param, "' is not a live ", HandleKindName(kind),
                       " (already freed, or never created by this library)"));
  if (it->second != kind)
    throw Error(StrCat("argument '", param, "' is a ", HandleKindName(it->second), ", expected a ",
                       HandleKindName(kind)));
}

void UnregisterHandle(const void* handle, HandleKind kind, const char* param) {
  CheckHandle(handle, kind, param);
  std::unique_lock<std::shared_mutex> lock(Handles().mutex);
  Handles().live.erase(handle);
}

Context DeviceContext(int dev_type, int dev_id) {
  // Checked as an int: a value outside MXNet's DeviceType enum must not be cast into it (UB).
  if (dev_type != 1 && dev_type != 2 && dev_type != 3 && dev_type != 5)
    throw Error(StrCat("unknown device type ", dev_type,
                       " (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)"));
  if (dev_type == 5) dev_type = 1;  // cpu_shared memory is CPU memory here
  return mxnet::cpp::compat::Native(
      mxnet::cpp::Context(static_cast<mxnet::cpp::DeviceType>(dev_type), dev_id));
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

void ReportInternalOutputs(const Executor& exec, bool include_variables,
                           void (*callback)(const char*, void*, void*), void* user) {
  for (auto& named : InternalOutputs(exec, include_variables)) {
    NDArrayBox* array = NewHandle<NDArrayBox>(named.second);
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
