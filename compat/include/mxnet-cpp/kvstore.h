// MXNet cpp-package compatibility: the key-value store, a thin layer over symbind's KVStore:
// "local"/"device" in one process, "dist_sync" (aliases "dist_sync_device", "horovod") across
// MPI processes started with mpirun (docs/distributed.md).
// As in MXNet's cpp-package the methods are static (one store per process); an instance,
// KVStore("local"), calls SetType and gives the same methods through the object.
// Push of several values for one key sums them (and, distributed, sums over the workers); with an
// optimizer set, a push runs optimizer->Update(key, stored, pushed) on every worker, otherwise the
// sum replaces the stored value.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/optimizer.h"

namespace mxnet {
namespace cpp {

class KVStore {
 public:
  explicit KVStore(const std::string& type = "local") { SetType(type); }
  static void SetType(const std::string& type);
  static void RunServer();
  static void Init(int key, const NDArray& val);
  static void Init(const std::string& key, const NDArray& val);
  static void Init(const std::vector<int>& keys, const std::vector<NDArray>& vals);
  static void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& vals);
  static void Push(int key, const NDArray& val, int priority = 0);
  static void Push(const std::string& key, const NDArray& val, int priority = 0);
  static void Push(const std::vector<int>& keys, const std::vector<NDArray>& vals, int priority = 0);
  static void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& vals,
                   int priority = 0);
  static void Pull(int key, NDArray* out, int priority = 0);
  static void Pull(const std::string& key, NDArray* out, int priority = 0);
  static void Pull(const std::vector<int>& keys, std::vector<NDArray>* outs, int priority = 0);
  static void Pull(const std::vector<std::string>& keys, std::vector<NDArray>* outs,
                   int priority = 0);
  static void SetOptimizer(std::unique_ptr<Optimizer> optimizer, bool local = false);
  static std::string GetType();
  static int GetRank();
  static int GetNumWorkers();
  static void Barrier();
  static std::string GetRole() { return "worker"; }

  // A C API handle to the store these methods use (MXKVStoreGetRank, MXKVStorePull, ... on it
  // act on the same keys and values). Owned by this layer: do not free it. SetType to another
  // kind of store makes a new store and a new handle, freeing the old one, as MXNet's SetType
  // does. Do not call the C API on it while another thread calls these methods. MXNet 1.9.1's
  // KVStore keeps its handle private; this mirrors NDArray's and Symbol's GetHandle().
  static KVStoreHandle GetHandle();
};

}  // namespace cpp
}  // namespace mxnet
