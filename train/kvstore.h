// A key-value store for data-parallel training, with MXNet's KVStore semantics.
//
//   "local", "device" (and "local_*"): one process. Push sums the values given for a key; with an
//       updater set, the store runs updater(key, sum, &stored), otherwise the sum replaces the
//       stored value. Pull copies the stored value out.
//   "dist_sync" (aliases "dist_sync_device", "horovod"): one worker per MPI process, started with
//       mpirun. Init stores rank 0's values on every worker; Push sums each key over the local
//       values and then over all workers (MPI allreduce), and every worker runs the same updater
//       on the same sum, so the stored values stay identical everywhere without a server; Pull
//       copies the local value. Every worker must call Init/Push/Barrier with the same keys and
//       shapes in the same order; a mismatch, a failed peer or a peer that ended is reported as
//       an Error on every worker (see train/collective.h for the fault handling).
//   "dist_async", "dist_device_sync", "dist": refused (Error naming dist_sync).
//
// Calls are synchronous: Push returns when the sum and update are done.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>

namespace symbind {

class Collective;

class KVStore {
 public:
  // updater(key, pushed_sum, &stored): MXNet's KVStore updater.
  using Updater = std::function<void(const std::string& key, const NDArray& pushed, NDArray* stored)>;

  static std::unique_ptr<KVStore> Create(const std::string& type = "local");
  // Whether the named type is distributed ("dist_sync" and its aliases).
  static bool IsDistributed(const std::string& type);

  const std::string& type() const { return type_; }
  int rank() const;
  int num_workers() const;

  // Stores copies of `values`. Each key once; distributed: rank 0's values on every worker.
  void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values);
  void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values);
  // Copies the stored values into `outs` (same shapes); none arrays are given the stored shape.
  void Pull(const std::vector<std::string>& keys, const std::vector<NDArray*>& outs) const;
  void SetUpdater(Updater updater) { updater_ = std::move(updater); }
  // Waits until every worker has reached it (no-op for one process).
  void Barrier();
  bool HasKey(const std::string& key) const { return values_.count(key) != 0; }

 private:
  KVStore(std::string type, Collective* group) : type_(std::move(type)), group_(group) {}

  std::string type_;
  Collective* group_;  // null for the single-process types
  std::map<std::string, NDArray> values_;
  Updater updater_;
};

}  // namespace symbind
