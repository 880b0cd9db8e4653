#include "task_graph.h"

#include <tbb/task_group.h>

#include <atomic>
#include <memory>

#include "threading.h"

namespace symbind {

void TaskGraph::AddDependency(uint32_t before, uint32_t after) {
  successors_[before].push_back(after);
  ++num_preds_[after];
}

void TaskGraph::Run(const std::function<void(uint32_t)>& task) const {
  const size_t n = successors_.size();
  if (GetNumThreads() <= 1 || n <= 1) {
    for (uint32_t t = 0; t < n; ++t) task(t);
    return;
  }
  std::unique_ptr<std::atomic<int>[]> pending(new std::atomic<int>[n]);
  for (size_t t = 0; t < n; ++t) pending[t].store(num_preds_[t], std::memory_order_relaxed);
  tbb::task_group group;
  // Each worker follows a chain of ready successors in a loop (no recursion, so long chains
  // cannot exhaust the stack) and spawns the other ready ones.
  std::function<void(uint32_t)> run_one = [&](uint32_t t) {
    for (;;) {
      task(t);
      int next = -1;
      for (uint32_t s : successors_[t]) {
        if (pending[s].fetch_sub(1, std::memory_order_acq_rel) == 1) {
          if (next < 0) next = static_cast<int>(s);
          else group.run([&run_one, s] { run_one(s); });
        }
      }
      if (next < 0) return;
      t = static_cast<uint32_t>(next);
    }
  };
  for (uint32_t t = 0; t < n; ++t)
    if (num_preds_[t] == 0) group.run([&run_one, t] { run_one(t); });
  group.wait();
}

}  // namespace symbind
