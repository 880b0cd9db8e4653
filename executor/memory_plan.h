// Liveness-based reuse of intermediate buffers for executors that never run backward.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <symbind/core/graph.h>

namespace symbind {

struct MemoryPlan {
  static constexpr int kOwnStorage = -1;
  // Per graph entry: index of the shared block it lives in, or kOwnStorage.
  std::vector<int> block_of_entry;
  std::vector<size_t> block_bytes;
  // (before, after) task pairs: a task that reuses a block waits for every task that read or
  // wrote the block's previous tenant, so parallel branches never overwrite live data.
  std::vector<std::pair<uint32_t, uint32_t>> reuse_dependencies;
};

// op_nodes: op node ids in execution (topological) order; task t runs op_nodes[t].
// entry_bytes: size of every entry; keep: entries that need their own storage (graph outputs,
// variables). Entries are assigned to blocks best-fit, growing a free block when none fits.
// inplace[t]: task t may write its output 0 over its input 0 (Op::forward_inplace); it does
// when that input is planned, the same size, and read by no later task.
MemoryPlan PlanMemory(const Graph& graph, const std::vector<uint32_t>& op_nodes,
                      const std::vector<size_t>& entry_bytes, const std::vector<bool>& keep,
                      const std::vector<bool>& inplace);

}  // namespace symbind
