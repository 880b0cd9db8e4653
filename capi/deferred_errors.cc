// The failures the C API reports at the next read, as MXNet's engine does (c_api_common.h,
// DeferredFailure): kept by storage, dropped with it.
#include <map>
#include <mutex>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

struct Marked {
  std::weak_ptr<Storage> storage;
  FailurePtr failure;
  uint64_t order;  // marks in the order they were made: waitall reports the oldest
};

class FailureMarks {
 public:
  static FailureMarks& Global() {
    static FailureMarks marks;
    return marks;
  }

  void Mark(const std::vector<NDArray>& arrays, const FailurePtr& failure) {
    std::lock_guard<std::mutex> lock(mu_);
    DropExpired();
    for (const NDArray& a : arrays) {
      if (!a.storage()) continue;
      if (failure) marks_[a.storage().get()] = Marked{a.storage(), failure, next_++};
      else marks_.erase(a.storage().get());
    }
  }

  FailurePtr Pending(const std::vector<NDArray>& arrays) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const NDArray& a : arrays) {
      const FailurePtr f = PendingLocked(a);
      if (f) return f;
    }
    return nullptr;
  }

  // Marks `a`'s failure reported and returns it, when it has one not yet reported.
  FailurePtr Take(const NDArray& a) {
    std::lock_guard<std::mutex> lock(mu_);
    const FailurePtr f = PendingLocked(a);
    if (f) f->reported = true;
    return f;
  }

  FailurePtr TakeOldest() {
    std::lock_guard<std::mutex> lock(mu_);
    DropExpired();
    const Marked* oldest = nullptr;
    for (auto& kv : marks_)
      if (!kv.second.failure->reported && (!oldest || kv.second.order < oldest->order)) oldest = &kv.second;
    const FailurePtr f = oldest ? oldest->failure : nullptr;
    for (auto& kv : marks_) kv.second.failure->reported = true;
    marks_.clear();
    return f;
  }

 private:
  FailurePtr PendingLocked(const NDArray& a) {
    if (!a.storage()) return nullptr;
    auto it = marks_.find(a.storage().get());
    if (it == marks_.end()) return nullptr;
    // The address may belong to a new storage after the marked one was freed.
    if (it->second.storage.lock() != a.storage()) {
      marks_.erase(it);
      return nullptr;
    }
    return it->second.failure->reported ? nullptr : it->second.failure;
  }

  void DropExpired() {
    for (auto it = marks_.begin(); it != marks_.end();)
      it = it->second.storage.expired() || it->second.failure->reported ? marks_.erase(it) : std::next(it);
  }

  std::mutex mu_;
  std::map<const Storage*, Marked> marks_;
  uint64_t next_ = 0;
};

}  // namespace

FailurePtr FailureOrThrow(const char* call, const std::exception_ptr& e) {
  // Wrong shapes and dtypes, and memory running out, fail the call itself even where an op
  // finds them while computing, as MXNet finds them before it queues the op. (Parameters are
  // parsed before computing; a value an op checks while computing, such as a negative scale
  // of a sampler, MXNet checks in its kernel.)
  try {
    std::rethrow_exception(e);
  } catch (const ShapeError&) {
    throw;
  } catch (const TypeError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (...) {
  }
  auto f = std::make_shared<DeferredFailure>();
  f->text = ErrorText(call, e);
  return f;
}

FailurePtr PendingFailure(const std::vector<NDArray>& arrays) { return FailureMarks::Global().Pending(arrays); }

void MarkFailure(const std::vector<NDArray>& arrays, const FailurePtr& failure) {
  FailureMarks::Global().Mark(arrays, failure);
}

void ThrowIfFailed(const NDArray& a) {
  if (const FailurePtr f = FailureMarks::Global().Take(a)) throw DeferredError(f->text);
}

void ThrowAnyFailure() {
  if (const FailurePtr f = FailureMarks::Global().TakeOldest()) throw DeferredError(f->text);
}

}  // namespace capi
}  // namespace symbind
