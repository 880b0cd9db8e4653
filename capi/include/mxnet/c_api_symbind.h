// What libmxnet.so's C API gives its mxnet-cpp layer (compat/), which builds on it (never the
// reverse): handles for symbind's native objects, for mxnet-cpp's GetHandle() (the handle refers
// to the same array storage / graph / executor / store), and the rules both follow.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <mxnet/c_api.h>

namespace symbind {
class NDArray;
class Symbol;
class Executor;
class KVStore;
class TShape;
struct Context;
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

// The message MXGetLastError returns on this thread.
void SetLastError(const std::string& message);
// The context for MXNet's (dev_type, dev_id). symbind computes on the CPU only: CPU types
// (1 cpu, 3 cpu_pinned, 5 cpu_shared) are kept as given and are all CPU memory; GPU (2) runs
// on the CPU (its arrays report cpu(id)), with a warning on stderr the first time, because MXNet
// programs hard-code Context::gpu() (MXNet's own test_score example does); any other type is an
// error.
symbind::Context DeviceContext(int dev_type, int dev_id);
// MXNet's NDArray reshape codes resolved for `from` by the Reshape op's rule (0 keeps a dim, -1
// infers one, -2, -3, -4); no dims is a 0-dimensional array. Throws ShapeError when they do not fit.
symbind::TShape ResolveReshape(const symbind::TShape& from, const std::vector<int64_t>& dims);
// Runs `f` under a lock with the process's generator for the frontends' random fills (mxnet-cpp's
// SampleGaussian and SampleUniform, operator seeds), which MXRandomSeed seeds.
void WithFrontendRandom(const std::function<void(std::mt19937_64&)>& f);
}  // namespace capi
}  // namespace symbind
