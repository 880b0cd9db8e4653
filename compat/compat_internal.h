// The symbind objects behind the installed mxnet-cpp classes, and helpers shared by the
// compat sources. Internal to libmxnet.so and its tests (not installed): the public headers
// only forward-declare the *Impl structs, so that they stay C++11 and free of symbind headers.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <symbind/core/context.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/core/symbol.h>
#include <symbind/core/tshape.h>
#include <symbind/train/optimizer.h>

#include <mxnet/c_api_symbind.h>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/executor.h"
#include "mxnet-cpp/io.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/optimizer.h"
#include "mxnet-cpp/symbol.h"

namespace symbind {
class DataIter;
class Executor;
class KVStore;
}  // namespace symbind

namespace mxnet {
namespace cpp {

struct NDArrayImpl {
  symbind::NDArray array;
  std::shared_ptr<void> handle;  // the C API handle, made on first GetHandle()

  static NDArray Wrap(const symbind::NDArray& a) {
    NDArray out;
    out.impl_->array = a;
    return out;
  }
  static symbind::NDArray& Of(const NDArray& a) { return a.impl_->array; }
};

struct SymbolImpl {
  symbind::Symbol symbol;
  std::shared_ptr<void> handle;  // the C API handle, made on first GetHandle()

  static Symbol Wrap(const symbind::Symbol& s) {
    Symbol out;
    out.impl_->symbol = s;
    return out;
  }
  static symbind::Symbol& Of(const Symbol& s) { return s.impl_->symbol; }
};

struct ExecutorImpl {
  std::shared_ptr<symbind::Executor> exec;
  std::shared_ptr<void> handle;  // the C API handle, made on first GetHandle()

  static symbind::Executor& Of(const Executor& e) { return *e.impl_->exec; }
};

struct DataIterImpl {
  std::shared_ptr<symbind::DataIter> iter;
};

struct SGDState {
  symbind::SGD sgd;
};

namespace compat {

// MXNet programs print MXGetLastError() when an mxnet-cpp call throws (MXNet's layer throws
// after a failed C API call). So every public function of this layer is a function-try-block
// ending in SYMBIND_CPP_RECORD_ERRORS, which makes the message of an exception leaving it this
// thread's MXGetLastError() before passing the exception on.
inline void RecordLastError(const char* message) { symbind::capi::SetLastError(message); }
#define SYMBIND_CPP_RECORD_ERRORS                                       \
  catch (const std::exception& e) {                                     \
    ::mxnet::cpp::compat::RecordLastError(e.what());                    \
    throw;                                                              \
  }                                                                     \
  catch (...) {                                                         \
    ::mxnet::cpp::compat::RecordLastError("unknown exception");         \
    throw;                                                              \
  }

// The symbind objects behind mxnet-cpp ones (shared, not copies), and the reverse.
inline symbind::NDArray& Native(const NDArray& a) { return NDArrayImpl::Of(a); }
inline symbind::Symbol& Native(const Symbol& s) { return SymbolImpl::Of(s); }
inline symbind::Executor& Native(const Executor& e) { return ExecutorImpl::Of(e); }
inline NDArray Wrap(const symbind::NDArray& a) { return NDArrayImpl::Wrap(a); }
inline Symbol Wrap(const symbind::Symbol& s) { return SymbolImpl::Wrap(s); }
// The CPU context, by the C API's rule (symbind::capi::DeviceContext).
inline symbind::Context Native(const Context& context) {
  return symbind::capi::DeviceContext(static_cast<int>(context.GetDeviceType()), context.GetDeviceId());
}
Shape ToShape(const symbind::TShape& s);
symbind::TShape ToTShape(const Shape& s);
// The store behind mxnet-cpp's static KVStore methods.
std::shared_ptr<symbind::KVStore> NativeKVStore();

inline symbind::OpReq ToNative(int req) { return static_cast<symbind::OpReq>(req); }

// The symbind arrays behind mxnet-cpp arrays (shared storage, not copies).
template <typename Array>
std::vector<symbind::NDArray> Natives(const std::vector<Array>& arrays) {
  std::vector<symbind::NDArray> natives;
  natives.reserve(arrays.size());
  for (const Array& a : arrays) natives.push_back(Native(a));
  return natives;
}

}  // namespace compat
}  // namespace cpp
}  // namespace mxnet
