#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace symbind {

// Runs tasks 0..n-1 once each, a task only after all its predecessors, independent tasks
// concurrently on TBB. Task ids must be a topological order (used for the 1-thread path).
class TaskGraph {
 public:
  explicit TaskGraph(size_t n = 0) : successors_(n), num_preds_(n, 0) {}
  void AddDependency(uint32_t before, uint32_t after);
  size_t size() const { return successors_.size(); }
  // Rethrows the first exception a task threw; remaining tasks are cancelled.
  void Run(const std::function<void(uint32_t)>& task) const;

 private:
  std::vector<std::vector<uint32_t>> successors_;
  std::vector<int> num_preds_;
};

}  // namespace symbind
