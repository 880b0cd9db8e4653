#include "memory_plan.h"

#include <algorithm>

namespace symbind {

namespace {

// Marks the join inputs planned inside their join's output (MemoryPlanInputs::join_offsets),
// resolved to the outermost output when joins nest.
void PlanJoins(const Graph& graph, const MemoryPlanInputs& in, MemoryPlan* plan) {
  std::vector<int64_t> parent(graph.num_entries(), MemoryPlan::kNotJoined);
  std::vector<size_t> offset(graph.num_entries(), 0);
  for (uint32_t t = 0; t < in.op_nodes.size(); ++t) {
    const auto& offsets = in.join_offsets.empty() ? std::vector<size_t>() : in.join_offsets[t];
    const auto& inputs = graph.node(in.op_nodes[t]).inputs;
    if (offsets.empty() || offsets.size() != inputs.size() || in.inplace[t]) continue;
    const size_t row_bytes = in.join_row_bytes.empty() ? 0 : in.join_row_bytes[t];
    const uint32_t out = graph.entry_id(in.op_nodes[t], 0);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const uint32_t e = graph.entry_id(inputs[k]);
      const bool once = std::count_if(inputs.begin(), inputs.end(),
                                      [&](const auto& x) { return graph.entry_id(x) == e; }) == 1;
      if (in.keep[e] || in.entry_bytes[e] == 0 || parent[e] != MemoryPlan::kNotJoined || !once ||
          offsets[k] + in.entry_bytes[e] > in.entry_bytes[out] || (row_bytes > 0 && !in.strided_writer[e]))
        continue;
      parent[e] = out;
      offset[e] = offsets[k];
      plan->joined_row_bytes[e] = row_bytes;
    }
  }
  for (uint32_t e = 0; e < parent.size(); ++e) {
    if (parent[e] == MemoryPlan::kNotJoined) continue;
    int64_t root = parent[e];
    size_t at = offset[e];
    while (parent[static_cast<size_t>(root)] != MemoryPlan::kNotJoined) {
      at += offset[static_cast<size_t>(root)];
      root = parent[static_cast<size_t>(root)];
    }
    plan->joined_into[e] = root;
    plan->joined_offset[e] = at;
    ++plan->num_joined;
  }
}

}  // namespace

MemoryPlan PlanMemory(const Graph& graph, const MemoryPlanInputs& in) {
  const auto& op_nodes = in.op_nodes;
  const auto& entry_bytes = in.entry_bytes;
  MemoryPlan plan;
  const size_t num_entries = graph.num_entries();
  plan.block_of_entry.assign(num_entries, MemoryPlan::kOwnStorage);
  plan.joined_into.assign(num_entries, MemoryPlan::kNotJoined);
  plan.joined_offset.assign(num_entries, 0);
  plan.joined_row_bytes.assign(num_entries, 0);
  PlanJoins(graph, in, &plan);
  auto is_joined = [&](uint32_t e) { return plan.joined_into[e] != MemoryPlan::kNotJoined; };
  // The entry whose storage holds e: its outermost join output, or e itself.
  auto holder = [&](uint32_t e) {
    return is_joined(e) ? static_cast<uint32_t>(plan.joined_into[e]) : e;
  };
  std::vector<bool> holds_joined(num_entries, false);
  for (uint32_t e = 0; e < num_entries; ++e)
    if (is_joined(e)) holds_joined[holder(e)] = true;

  // Remaining reads of every entry, and which tasks read it (for reuse dependencies); reads of
  // a joined entry count as reads of its holder, which keeps the block until the last of them.
  std::vector<int> reads_left(num_entries, 0);
  std::vector<std::vector<uint32_t>> readers(num_entries);
  for (uint32_t t = 0; t < op_nodes.size(); ++t)
    for (auto& input : graph.node(op_nodes[t]).inputs) {
      uint32_t e = holder(graph.entry_id(input));
      ++reads_left[e];
      if (readers[e].empty() || readers[e].back() != t) readers[e].push_back(t);
    }

  // Tasks that touched each block's previous tenant; free blocks by id.
  std::vector<std::vector<uint32_t>> block_users;
  std::vector<int> free_blocks;
  std::vector<uint32_t> producer(num_entries, 0);
  std::vector<bool> handed_on(num_entries, false);  // its block now holds an in-place output
  std::vector<bool> released(num_entries, false);
  std::vector<bool> placed(num_entries, false);
  // Per placed entry: the tasks that used its block before; every task writing into the
  // entry (a join output's producers too) waits for them.
  std::vector<std::vector<uint32_t>> previous_users(num_entries);

  auto release = [&](uint32_t e) {
    int b = plan.block_of_entry[e];
    if (released[e] || b == MemoryPlan::kOwnStorage || handed_on[e]) return;
    released[e] = true;
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
      const uint32_t e = graph.entry_id(nid, i);
      const uint32_t h = holder(e);
      producer[e] = t;
      if (in.keep[h]) continue;  // own storage (a joined entry is a view of its holder's)
      if (i == 0 && in.inplace[t] && h == e && !holds_joined[e] && !graph.node(nid).inputs.empty()) {
        const uint32_t src = graph.entry_id(graph.node(nid).inputs[0]);
        if (plan.block_of_entry[src] != MemoryPlan::kOwnStorage && !is_joined(src) &&
            reads_left[src] == 1 && entry_bytes[src] == entry_bytes[e] && !handed_on[src]) {
          plan.block_of_entry[e] = plan.block_of_entry[src];
          handed_on[src] = true;
          // Earlier readers may still run in parallel: they finish before the overwrite.
          for (uint32_t before : readers[src])
            if (before != t) plan.reuse_dependencies.emplace_back(before, t);
          continue;
        }
      }
      if (!placed[h]) {
        const int b = acquire(entry_bytes[h]);
        plan.block_of_entry[h] = b;
        previous_users[h] = std::move(block_users[b]);
        block_users[b].clear();
        placed[h] = true;
      }
      plan.block_of_entry[e] = plan.block_of_entry[h];
      for (uint32_t before : previous_users[h])
        if (before != t) plan.reuse_dependencies.emplace_back(before, t);
    }
    for (auto& input : graph.node(nid).inputs) {
      uint32_t e = holder(graph.entry_id(input));
      if (--reads_left[e] == 0) release(e);
    }
    for (uint32_t i = 0; i < num_out; ++i) {
      uint32_t e = graph.entry_id(nid, i);
      if (!is_joined(e) && reads_left[e] == 0) release(e);  // never read (e.g. hidden BatchNorm outputs)
    }
  }
  return plan;
}

}  // namespace symbind
