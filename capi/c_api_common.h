// Shared by the C API sources: the error convention (0 / -1 with a thread-local message),
// handle bookkeeping and argument checks.
#pragma once
#include <cerrno>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/tshape.h>
#include <symbind/executor/executor.h>

namespace symbind {
namespace capi {

// The message MXGetLastError returns on this thread.
void SetLastError(const std::string& message);
const char* LastError();

// Runs `body` for C function `call`: 0 and errno cleared on success (cgo clients read
// errno after every call), -1 and "<call>: <cause>" in MXGetLastError on any exception.
template <typename Body>
int Guarded(const char* call, Body&& body) {
  try {
    body();
    errno = 0;
    return 0;
  } catch (const std::exception& e) {
    SetLastError(StrCat(call, ": ", e.what()));
  } catch (...) {
    SetLastError(StrCat(call, ": unknown exception"));
  }
  return -1;
}

// Every kind of handle the C API gives out. A handle is live from its creation to its free;
// using it afterwards, or as the wrong kind, is an error rather than undefined behaviour
// (unless the address has been reused by a new handle of the same kind).
enum class HandleKind {
  kPredictor, kNDList, kNDArray, kSymbol, kExecutor, kDataIter, kKVStore, kCachedOp
};
const char* HandleKindName(HandleKind kind);
void RegisterHandle(const void* handle, HandleKind kind);
// Throws when `handle` is null, not live, or of another kind; `param` names the argument.
void CheckHandle(const void* handle, HandleKind kind, const char* param);
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

// An NDArray behind an NDArrayHandle.
struct NDArrayBox {
  static constexpr HandleKind kKind = HandleKind::kNDArray;
  NDArray array;
};

// The context for MXNet's (dev_type, dev_id). symbind computes on the CPU only: CPU types
// (1 cpu, 3 cpu_pinned, 5 cpu_shared) are the CPU; GPU (2) also runs on the CPU, with a
// warning on stderr the first time, because MXNet programs hard-code Context::gpu() (MXNet's
// own test_score example does); any other type is an error.
Context DeviceContext(int dev_type, int dev_id);

// Monitor callbacks (predictor and executor): every node output of `exec` as a temporary
// NDArrayHandle, valid during the call, as in MXNet.
void ReportInternalOutputs(const Executor& exec, bool include_variables,
                           void (*callback)(const char*, void*, void*), void* user);

// Shapes as uint32_t for the C API's shape out-parameters (throws when a dim does not fit).
std::vector<uint32_t> ShapeToUint32(const TShape& shape);
std::vector<int> ShapeToInt(const TShape& shape);

// The first JSON value of `text`: reads only up to the brace that closes it, so the buffer
// need not be NUL-terminated after it and may hold trailing bytes (as clients pass it).
std::string FirstJSONValue(const char* text);

}  // namespace capi
}  // namespace symbind
