// Executor::InUseGuard: one Forward or Backward at a time per executor (and per shared
// Workspace). Internal to executor/.
#pragma once
#include <atomic>

#include <symbind/core/error.h>

#include "executor.h"

namespace symbind {

// Marks the executor (or its Workspace) busy for one Forward or Backward; a second
// concurrent call throws. A null flag guards nothing.
class Executor::InUseGuard {
 public:
  enum What { kExecutor, kWorkspace };
  InUseGuard(std::atomic<bool>* flag, const char* call, What what = kExecutor) : flag_(flag) {
    if (!flag_ || !flag_->exchange(true)) return;
    flag_ = nullptr;  // held by the other call
    if (what == kWorkspace)
      throw Error(StrCat("Executor::", call, ": another executor sharing this Workspace is running; "
                         "executors that share a Workspace must run one at a time (bind without one "
                         "to run concurrently)"));
    throw Error(StrCat("Executor::", call, ": this executor is already running Forward or "
                       "Backward in another thread; one executor serves one thread at a time "
                       "(bind one executor per thread, see docs/concurrency.md)"));
  }
  ~InUseGuard() {
    if (flag_) flag_->store(false);
  }
  InUseGuard(const InUseGuard&) = delete;
  InUseGuard& operator=(const InUseGuard&) = delete;

 private:
  std::atomic<bool>* flag_;
};

}  // namespace symbind
