#include <symbind/train/kvstore.h>

#include <symbind/core/error.h>
#include <symbind/train/collective.h>

namespace symbind {

bool KVStore::IsDistributed(const std::string& type) {
  return type == "dist_sync" || type == "dist_sync_device" || type == "horovod";
}

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  if (type == "local" || type == "device" || type.rfind("local_", 0) == 0)
    return std::unique_ptr<KVStore>(new KVStore(type, nullptr));
  if (IsDistributed(type)) return std::unique_ptr<KVStore>(new KVStore(type, &Collective::World()));
  if (type.rfind("dist", 0) == 0)
    throw Error(StrCat("KVStore type '", type, "' is not supported: symbind trains across processes "
                       "synchronously only; use 'dist_sync' (aliases 'dist_sync_device', 'horovod')"));
  throw Error(StrCat("unknown KVStore type '", type,
                     "'; known: local, device, dist_sync, dist_sync_device, horovod"));
}

int KVStore::rank() const { return group_ ? group_->rank() : 0; }
int KVStore::num_workers() const { return group_ ? group_->size() : 1; }

void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  if (keys.size() != values.size())
    throw Error(StrCat("KVStore::Init: ", keys.size(), " keys but ", values.size(), " values"));
  for (size_t i = 0; i < keys.size(); ++i) {
    if (values_.count(keys[i]) ) throw Error(StrCat("KVStore::Init: key '", keys[i], "' initialised twice"));
    if (values[i].is_none()) throw Error(StrCat("KVStore::Init: key '", keys[i], "' has no array"));
    for (size_t j = 0; j < i; ++j)
      if (keys[j] == keys[i]) throw Error(StrCat("KVStore::Init: key '", keys[i], "' given twice"));
  }
  std::vector<NDArray> copies;
  for (auto& v : values) copies.push_back(v.Copy());
  if (group_) group_->Broadcast("Init", keys, copies);
  for (size_t i = 0; i < keys.size(); ++i) values_[keys[i]] = copies[i];
}

void KVStore::Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  if (keys.size() != values.size())
    throw Error(StrCat("KVStore::Push: ", keys.size(), " keys but ", values.size(), " values"));
  // Local sum per key, in order of first appearance (the same order on every worker).
  std::vector<std::string> merged_keys;
  std::vector<NDArray> merged;
  std::map<std::string, size_t> slot;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto stored = values_.find(keys[i]);
    if (stored == values_.end()) throw Error(StrCat("KVStore::Push: key '", keys[i], "' was not initialised"));
    if (values[i].shape() != stored->second.shape())
      throw ShapeError(StrCat("KVStore::Push: key '", keys[i], "' holds ", stored->second.shape().ToString(),
                              " but the pushed value is ", values[i].shape().ToString()));
    auto it = slot.find(keys[i]);
    if (it == slot.end()) {
      slot[keys[i]] = merged.size();
      merged_keys.push_back(keys[i]);
      merged.push_back(values[i].AsType(stored->second.dtype()));  // a copy
      continue;
    }
    NDArray& sum = merged[it->second];
    NDArray add = values[i].AsType(DType::kFloat32);
    if (sum.dtype() != DType::kFloat32)
      throw Error(StrCat("KVStore::Push: key '", keys[i], "': summing several values needs float32"));
    float* s = sum.fdata();
    const float* a = add.fdata();
    for (int64_t k = 0, n = sum.Size(); k < n; ++k) s[k] += a[k];
  }
  if (group_) group_->AllreduceSum("Push", merged_keys, merged);
  for (size_t i = 0; i < merged.size(); ++i) {
    NDArray& stored = values_[merged_keys[i]];
    if (updater_) updater_(merged_keys[i], merged[i], &stored);
    else merged[i].CopyTo(&stored);
  }
}

void KVStore::Pull(const std::vector<std::string>& keys, const std::vector<NDArray*>& outs) const {
  if (keys.size() != outs.size())
    throw Error(StrCat("KVStore::Pull: ", keys.size(), " keys but ", outs.size(), " outputs"));
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = values_.find(keys[i]);
    if (it == values_.end()) throw Error(StrCat("KVStore::Pull: key '", keys[i], "' was not initialised"));
    if (!outs[i]) throw Error(StrCat("KVStore::Pull: output ", i, " for key '", keys[i], "' is a null pointer"));
    if (outs[i]->is_none()) *outs[i] = NDArray(it->second.shape(), it->second.dtype());
    if (outs[i]->shape() != it->second.shape())
      throw ShapeError(StrCat("KVStore::Pull: key '", keys[i], "' holds ", it->second.shape().ToString(),
                              " but the output is ", outs[i]->shape().ToString()));
    it->second.CopyTo(outs[i]);
  }
}

void KVStore::Barrier() {
  if (group_) group_->Barrier();
}

}  // namespace symbind
