#include "memory_plan.h"

#include <algorithm>

namespace symbind {

MemoryPlan PlanMemory(const Graph& graph, const std::vector<uint32_t>& op_nodes,
                      const std::vector<size_t>& entry_bytes, const std::vector<bool>& keep,
                      const std::vector<bool>& inplace) {
  MemoryPlan plan;
  const size_t num_entries = graph.num_entries();
  plan.block_of_entry.assign(num_entries, MemoryPlan::kOwnStorage);

  // Remaining reads of every entry, and which tasks read it (for reuse dependencies).
  std::vector<int> reads_left(num_entries, 0);
  std::vector<std::vector<uint32_t>> readers(num_entries);
  for (uint32_t t = 0; t < op_nodes.size(); ++t)
    for (auto& in : graph.node(op_nodes[t]).inputs) {
      uint32_t e = graph.entry_id(in);
      ++reads_left[e];
      if (readers[e].empty() || readers[e].back() != t) readers[e].push_back(t);
    }

  // Tasks that touched each block's previous tenant; free blocks by id.
  std::vector<std::vector<uint32_t>> block_users;
  std::vector<int> free_blocks;
  std::vector<uint32_t> producer(num_entries, 0);
  std::vector<bool> handed_on(num_entries, false);  // its block now holds an in-place output

  auto release = [&](uint32_t e) {
    int b = plan.block_of_entry[e];
    if (b == MemoryPlan::kOwnStorage || handed_on[e]) return;
    block_users[b] = readers[e];
    block_users[b].push_back(producer[e]);
    free_blocks.push_back(b);
  };
  auto acquire = [&](size_t bytes) {
    // Best fit among blocks at least as large; otherwise grow the largest free block.
    int best = -1;
    for (size_t k = 0; k < free_blocks.size(); ++k) {
      int b = free_blocks[k];
      bool fits = plan.block_bytes[b] >= bytes;
      if (best < 0) { best = static_cast<int>(k); continue; }
      int cur = free_blocks[best];
      bool cur_fits = plan.block_bytes[cur] >= bytes;
      if (fits && (!cur_fits || plan.block_bytes[b] < plan.block_bytes[cur])) best = static_cast<int>(k);
      else if (!fits && !cur_fits && plan.block_bytes[b] > plan.block_bytes[cur]) best = static_cast<int>(k);
    }
    if (best < 0) {
      plan.block_bytes.push_back(bytes);
      block_users.emplace_back();
      return static_cast<int>(plan.block_bytes.size() - 1);
    }
    int b = free_blocks[best];
    free_blocks.erase(free_blocks.begin() + best);
    plan.block_bytes[b] = std::max(plan.block_bytes[b], bytes);
    return b;
  };

  for (uint32_t t = 0; t < op_nodes.size(); ++t) {
    const uint32_t nid = op_nodes[t];
    const uint32_t num_out = graph.num_node_outputs(nid);
    // Outputs are acquired before inputs are released: an op never writes over its inputs.
    for (uint32_t i = 0; i < num_out; ++i) {
      uint32_t e = graph.entry_id(nid, i);
      producer[e] = t;
      if (keep[e]) continue;
      if (i == 0 && inplace[t] && !graph.node(nid).inputs.empty()) {
        const uint32_t in = graph.entry_id(graph.node(nid).inputs[0]);
        if (plan.block_of_entry[in] != MemoryPlan::kOwnStorage && reads_left[in] == 1 &&
            entry_bytes[in] == entry_bytes[e] && !handed_on[in]) {
          plan.block_of_entry[e] = plan.block_of_entry[in];
          handed_on[in] = true;
          // Earlier readers may still run in parallel: they finish before the overwrite.
          for (uint32_t before : readers[in])
            if (before != t) plan.reuse_dependencies.emplace_back(before, t);
          continue;
        }
      }
      int b = acquire(entry_bytes[e]);
      plan.block_of_entry[e] = b;
      for (uint32_t before : block_users[b])
        if (before != t) plan.reuse_dependencies.emplace_back(before, t);
      block_users[b].clear();
    }
    for (auto& in : graph.node(nid).inputs) {
      uint32_t e = graph.entry_id(in);
      if (--reads_left[e] == 0) release(e);
    }
    for (uint32_t i = 0; i < num_out; ++i) {
      uint32_t e = graph.entry_id(nid, i);
      if (reads_left[e] == 0) release(e);  // never read (e.g. hidden BatchNorm outputs)
    }
  }
  return plan;
}

}  // namespace symbind
