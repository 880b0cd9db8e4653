#include <symbind/ops/kernels/weight_cache.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace symbind {

namespace {
struct Entry {
  std::weak_ptr<Storage> storage;
  const float* data;
  std::string kind;
  DerivedWeights derived;
};
}  // namespace

DerivedWeights CachedDerivedWeights(const NDArray& weights, const std::string& kind,
                                    const std::function<DerivedWeights(const float*)>& make,
                                    const std::function<bool(const void*, const float*)>& matches) {
  static std::mutex mu;
  static std::vector<std::shared_ptr<const Entry>> cache;
  const float* data = weights.fdata();
  const std::shared_ptr<Storage>& st = weights.storage();
  auto same_array = [&](const std::shared_ptr<const Entry>& e) {
    return !e->storage.owner_before(st) && !st.owner_before(e->storage) && e->data == data && e->kind == kind;
  };
  std::shared_ptr<const Entry> hit;
  {
    std::lock_guard<std::mutex> lock(mu);
    cache.erase(std::remove_if(cache.begin(), cache.end(), [](const auto& e) { return e->storage.expired(); }),
                cache.end());
    for (const auto& e : cache)
      if (same_array(e)) hit = e;
  }
  // Checked outside the lock: entries never change once made.
  if (hit && (weights.read_only() || matches(hit->derived.get(), data))) return hit->derived;
  auto entry = std::make_shared<const Entry>(Entry{st, data, kind, make(data)});
  std::lock_guard<std::mutex> lock(mu);
  cache.erase(std::remove_if(cache.begin(), cache.end(), same_array), cache.end());
  cache.push_back(entry);
  return entry->derived;
}

}  // namespace symbind
