// C API handles for symbind's native objects (libmxnet.so), for mxnet-cpp's GetHandle(): the
// handle refers to the same array storage / graph / executor / store.
#pragma once
#include <memory>

#include <mxnet/c_api.h>

namespace symbind {
class NDArray;
class Symbol;
class Executor;
class KVStore;
namespace capi {
// Freed with MXNDArrayFree / MXSymbolFree / MXExecutorFree; the object lives on while its
// other owners hold it.
NDArrayHandle NewNDArrayHandle(const symbind::NDArray& array);
SymbolHandle NewSymbolHandle(const symbind::Symbol& symbol);
ExecutorHandle NewExecutorHandle(std::shared_ptr<symbind::Executor> executor);
// The one handle to `store`, made on the first call for it; a call for another store frees
// the previous handle (as MXNet's KVStore::SetType frees its handle). Not to be freed by the
// caller.
KVStoreHandle SharedKVStoreHandle(const std::shared_ptr<symbind::KVStore>& store);
}  // namespace capi
}  // namespace symbind
