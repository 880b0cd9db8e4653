#include "mxnet-cpp/kvstore.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include <symbind/train/kvstore.h>

#include <mxnet/c_api_symbind.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

namespace {

// One store per process, as in MXNet's cpp-package; the logic lives in symbind::KVStore.
struct Store {
  std::mutex mu;
  std::shared_ptr<symbind::KVStore> kv = symbind::KVStore::Create("local");
  std::map<std::string, int> index;  // optimizer state index per key
  std::unique_ptr<Optimizer> optimizer;
};

Store& S() {
  static Store s;
  return s;
}

int IndexOf(Store& s, const std::string& key) {
  auto it = s.index.find(key);
  if (it != s.index.end()) return it->second;
  int i;
  try {
    size_t pos = 0;
    i = std::stoi(key, &pos);
    if (pos != key.size()) throw std::invalid_argument(key);
  } catch (const std::exception&) {
    i = 1000000 + static_cast<int>(s.index.size());
  }
  s.index[key] = i;
  return i;
}

void InitKeys(const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.kv->Init(keys, compat::Natives(vals));
  for (auto& k : keys) IndexOf(s, k);
}

void PushKeys(const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.kv->Push(keys, compat::Natives(vals));
}

void PullKeys(const std::vector<std::string>& keys, std::vector<NDArray*> outs) {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<symbind::NDArray*> natives;
  for (auto* o : outs) natives.push_back(&compat::Native(*o));
  s.kv->Pull(keys, natives);
}

// Makes `optimizer` the store's updater (none: pushed sums replace the stored values). Caller locks.
void InstallOptimizer(Store& s, std::unique_ptr<Optimizer> optimizer) {
  s.optimizer = std::move(optimizer);
  if (!s.optimizer) {
    s.kv->SetUpdater(nullptr);
    return;
  }
  Store* store = &s;
  s.kv->SetUpdater([store](const std::string& key, const symbind::NDArray& pushed, symbind::NDArray* stored) {
    store->optimizer->Update(IndexOf(*store, key), compat::Wrap(*stored), compat::Wrap(pushed));
  });
}

std::vector<std::string> Names(const std::vector<int>& keys) {
  std::vector<std::string> out;
  for (int k : keys) out.push_back(std::to_string(k));
  return out;
}

}  // namespace

void KVStore::SetType(const std::string& type) try {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (type == s.kv->type()) return;
  // Switching between kinds of store starts an empty one (as MXNet creates a new handle); the
  // single-process types are one store whose type name changes, as before.
  const bool same_kind = symbind::KVStore::IsDistributed(type) ==
                         symbind::KVStore::IsDistributed(s.kv->type());
  std::unique_ptr<symbind::KVStore> next = symbind::KVStore::Create(type);
  if (same_kind && !symbind::KVStore::IsDistributed(type)) {
    // Keep the stored values: move them by re-initialising the new local store.
    std::vector<std::string> keys;
    std::vector<symbind::NDArray> vals;
    for (auto& kv : s.index) {
      if (!s.kv->HasKey(kv.first)) continue;
      symbind::NDArray v;
      s.kv->Pull({kv.first}, {&v});
      keys.push_back(kv.first);
      vals.push_back(v);
    }
    next->Init(keys, vals);
  } else {
    s.index.clear();
  }
  s.kv = std::move(next);
  InstallOptimizer(s, std::move(s.optimizer));
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::RunServer() try {
  throw symbind::Error("KVStore::RunServer: symbind's dist_sync has no servers (workers reduce with MPI)");
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Init(int key, const NDArray& val) try { InitKeys({std::to_string(key)}, {val}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Init(const std::string& key, const NDArray& val) try { InitKeys({key}, {val}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& vals) try {
  InitKeys(Names(keys), vals);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& vals) try {
  InitKeys(keys, vals);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Push(int key, const NDArray& val, int) try { PushKeys({std::to_string(key)}, {val}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Push(const std::string& key, const NDArray& val, int) try { PushKeys({key}, {val}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Push(const std::vector<int>& keys, const std::vector<NDArray>& vals, int) try {
  PushKeys(Names(keys), vals);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Push(const std::vector<std::string>& keys, const std::vector<NDArray>& vals, int) try {
  PushKeys(keys, vals);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Pull(int key, NDArray* out, int) try { PullKeys({std::to_string(key)}, {out}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Pull(const std::string& key, NDArray* out, int) try { PullKeys({key}, {out}); } SYMBIND_CPP_RECORD_ERRORS
void KVStore::Pull(const std::vector<int>& keys, std::vector<NDArray>* outs, int) try {
  Pull(Names(keys), outs);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Pull(const std::vector<std::string>& keys, std::vector<NDArray>* outs, int) try {
  outs->resize(keys.size());
  std::vector<NDArray*> ptrs;
  for (auto& o : *outs) ptrs.push_back(&o);
  PullKeys(keys, ptrs);
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::SetOptimizer(std::unique_ptr<Optimizer> optimizer, bool) try {
  std::lock_guard<std::mutex> lock(S().mu);
  InstallOptimizer(S(), std::move(optimizer));
} SYMBIND_CPP_RECORD_ERRORS
std::shared_ptr<symbind::KVStore> compat::NativeKVStore() try {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().kv;
} SYMBIND_CPP_RECORD_ERRORS
KVStoreHandle KVStore::GetHandle() try { return symbind::capi::SharedKVStoreHandle(compat::NativeKVStore()); } SYMBIND_CPP_RECORD_ERRORS
std::string KVStore::GetType() try {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().kv->type();
} SYMBIND_CPP_RECORD_ERRORS
int KVStore::GetRank() try {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().kv->rank();
} SYMBIND_CPP_RECORD_ERRORS
int KVStore::GetNumWorkers() try {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().kv->num_workers();
} SYMBIND_CPP_RECORD_ERRORS
void KVStore::Barrier() try {
  std::lock_guard<std::mutex> lock(S().mu);
  S().kv->Barrier();
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
