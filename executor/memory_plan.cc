#include "memory_plan.h"

#include <algorithm>
#include <cstdint>

namespace symbind {

namespace {

// Marks the join inputs planned inside their join's output (MemoryPlanInputs::join_offsets),
// resolved to the outermost output when joins nest.
void PlanJoins(const Graph& graph, const MemoryPlanInputs& in, MemoryPlan* plan) {
  std::vector<int64_t> parent(graph.num_entries(), MemoryPlan::kNotJoined);
  std::vector<size_t> offset(graph.num_entries(), 0);
  std::vector<uint32_t> last_reader(graph.num_entries(), 0);
  for (uint32_t t = 0; t < in.op_nodes.size(); ++t)
    for (const auto& x : graph.node(in.op_nodes[t]).inputs) last_reader[graph.entry_id(x)] = t;
  for (uint32_t t = 0; t < in.op_nodes.size(); ++t) {
    const auto& offsets = in.join_offsets.empty() ? std::vector<size_t>() : in.join_offsets[t];
    const auto& inputs = graph.node(in.op_nodes[t]).inputs;
    if (offsets.empty() || offsets.size() > inputs.size() || in.inplace[t]) continue;
    const size_t row_bytes = in.join_row_bytes.empty() ? 0 : in.join_row_bytes[t];
    const bool rewrites = !in.join_rewrites.empty() && in.join_rewrites[t];
    const uint32_t out = graph.entry_id(in.op_nodes[t], 0);
    for (size_t k = 0; k < offsets.size(); ++k) {  // the leading inputs the join holds
      const uint32_t e = graph.entry_id(inputs[k]);
      const bool once = std::count_if(inputs.begin(), inputs.end(),
                                      [&](const auto& x) { return graph.entry_id(x) == e; }) == 1;
      if (in.keep[e] || in.entry_bytes[e] == 0 || parent[e] != MemoryPlan::kNotJoined || !once ||
          offsets[k] + in.entry_bytes[e] > in.entry_bytes[out] || (row_bytes > 0 && !in.strided_writer[e]) ||
          (rewrites && last_reader[e] != t))
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
  plan.offset_of_entry.assign(num_entries, 0);
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

  // Each planned entry (with the in-place outputs that take over its bytes) is one tenant of
  // the block: its bytes, the tasks from its first write to its last read, the tasks that write
  // into it and all that touch it. Lifetimes first, in task order; then offsets.
  struct Tenant {
    size_t bytes = 0, offset = 0;
    uint32_t first = 0, last = UINT32_MAX;
    std::vector<uint32_t> writers, users;
  };
  std::vector<Tenant> tenants;
  std::vector<int> tenant_of(num_entries, -1);
  std::vector<uint32_t> producer(num_entries, 0);
  std::vector<bool> handed_on(num_entries, false);  // its bytes now hold an in-place output
  std::vector<bool> released(num_entries, false);

  auto release = [&](uint32_t e, uint32_t t) {
    if (released[e] || tenant_of[e] < 0 || handed_on[e]) return;
    released[e] = true;
    Tenant& tenant = tenants[static_cast<size_t>(tenant_of[e])];
    tenant.last = t;
    tenant.users.insert(tenant.users.end(), readers[e].begin(), readers[e].end());
    tenant.users.push_back(producer[e]);
  };

  for (uint32_t t = 0; t < op_nodes.size(); ++t) {
    const uint32_t nid = op_nodes[t];
    const uint32_t num_out = graph.num_node_outputs(nid);
    // Outputs take their bytes before inputs give theirs up: an op never writes over its inputs.
    for (uint32_t i = 0; i < num_out; ++i) {
      const uint32_t e = graph.entry_id(nid, i);
      const uint32_t h = holder(e);
      producer[e] = t;
      if (in.keep[h]) continue;  // own storage (a joined entry is a view of its holder's)
      if (i == 0 && in.inplace[t] && h == e && !holds_joined[e] && !graph.node(nid).inputs.empty()) {
        const uint32_t src = graph.entry_id(graph.node(nid).inputs[0]);
        if (tenant_of[src] >= 0 && !is_joined(src) && reads_left[src] == 1 && entry_bytes[src] == entry_bytes[e] &&
            !handed_on[src]) {
          tenant_of[e] = tenant_of[src];
          handed_on[src] = true;
          // Earlier readers may still run in parallel: they finish before the overwrite.
          for (uint32_t before : readers[src])
            if (before != t) plan.reuse_dependencies.emplace_back(before, t);
          continue;
        }
      }
      if (tenant_of[h] < 0) {
        tenant_of[h] = static_cast<int>(tenants.size());
        Tenant tenant;
        tenant.bytes = entry_bytes[h];
        tenant.first = t;
        tenants.push_back(std::move(tenant));
      }
      tenant_of[e] = tenant_of[h];
      tenants[static_cast<size_t>(tenant_of[h])].writers.push_back(t);
    }
    for (auto& input : graph.node(nid).inputs) {
      uint32_t e = holder(graph.entry_id(input));
      if (--reads_left[e] == 0) release(e, t);
    }
    for (uint32_t i = 0; i < num_out; ++i) {
      uint32_t e = graph.entry_id(nid, i);
      if (!is_joined(e) && reads_left[e] == 0) release(e, t);  // never read (e.g. hidden BatchNorm outputs)
    }
  }

  // Offsets: tenants in a given order, each at the best-fitting gap among those placed before it
  // whose lifetimes meet its own, else after the last of them. Empty ones take one unit, so that
  // every tenant has bytes of its own. Two orders, the smaller block kept: largest first (best
  // on most nets) and first written first (a chain that narrows and widens, as MTCNN's P-Net).
  auto units = [](size_t bytes) {
    return std::max<size_t>(1, (bytes + MemoryPlan::kAlignment - 1) / MemoryPlan::kAlignment) * MemoryPlan::kAlignment;
  };
  auto meet = [&](const Tenant& a, const Tenant& b) { return a.first <= b.last && b.first <= a.last; };
  auto place = [&](const std::vector<size_t>& order, std::vector<size_t>* offsets) {
    size_t top = 0;
    offsets->assign(tenants.size(), 0);
    std::vector<size_t> done;
    std::vector<std::pair<size_t, size_t>> taken;  // (offset, end) of the placed tenants it meets
    for (size_t u : order) {
      const size_t need = units(tenants[u].bytes);
      taken.clear();
      for (size_t v : done)
        if (meet(tenants[u], tenants[v])) taken.emplace_back((*offsets)[v], (*offsets)[v] + units(tenants[v].bytes));
      std::sort(taken.begin(), taken.end());
      size_t best = SIZE_MAX, best_gap = SIZE_MAX, gap_begin = 0;
      for (const auto& [begin, end] : taken) {
        if (begin > gap_begin && begin - gap_begin >= need && begin - gap_begin < best_gap) {
          best = gap_begin;
          best_gap = begin - gap_begin;
        }
        gap_begin = std::max(gap_begin, end);
      }
      (*offsets)[u] = best != SIZE_MAX ? best : gap_begin;
      top = std::max(top, (*offsets)[u] + need);
      done.push_back(u);
    }
    return top;
  };
  std::vector<size_t> by_time(tenants.size());
  for (size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;  // tenants are made in task order
  std::vector<size_t> by_size = by_time;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return tenants[a].bytes > tenants[b].bytes; });
  std::vector<size_t> offsets, offsets_by_time;
  size_t top = place(by_size, &offsets);
  const size_t top_by_time = place(by_time, &offsets_by_time);
  if (top_by_time < top) {
    top = top_by_time;
    offsets = std::move(offsets_by_time);
  }
  for (size_t u = 0; u < tenants.size(); ++u) tenants[u].offset = offsets[u];

  // A tenant's writers wait for every task that touched an earlier tenant of any of its bytes.
  // In order of first writes: tenants whose last read came before are retired, and a tenant
  // waits for the retired ones it overlaps. A retired one wholly inside it is dropped then:
  // whoever takes those bytes later overlaps this tenant, whose writers waited for it.
  std::vector<size_t> by_last(tenants.size());
  for (size_t i = 0; i < by_last.size(); ++i) by_last[i] = i;
  std::stable_sort(by_last.begin(), by_last.end(), [&](size_t a, size_t b) { return tenants[a].last < tenants[b].last; });
  std::vector<size_t> retired;
  size_t next_to_retire = 0;
  for (const Tenant& later : tenants) {  // made in task order: by first write
    while (next_to_retire < by_last.size() && tenants[by_last[next_to_retire]].last < later.first)
      retired.push_back(by_last[next_to_retire++]);
    const size_t begin = later.offset, end = later.offset + units(later.bytes);
    std::vector<size_t> kept;
    for (size_t r : retired) {
      const Tenant& earlier = tenants[r];
      const size_t r_begin = earlier.offset, r_end = earlier.offset + units(earlier.bytes);
      const bool overlap = r_begin < end && begin < r_end;
      if (overlap)
        for (uint32_t writer : later.writers)
          for (uint32_t user : earlier.users)
            if (user != writer) plan.reuse_dependencies.emplace_back(user, writer);
      if (!(overlap && begin <= r_begin && r_end <= end)) kept.push_back(r);
    }
    retired = std::move(kept);
  }
  std::sort(plan.reuse_dependencies.begin(), plan.reuse_dependencies.end());
  plan.reuse_dependencies.erase(std::unique(plan.reuse_dependencies.begin(), plan.reuse_dependencies.end()),
                                plan.reuse_dependencies.end());

  for (uint32_t e = 0; e < num_entries; ++e)
    if (tenant_of[e] >= 0 && !is_joined(e)) {
      plan.block_of_entry[e] = 0;
      plan.offset_of_entry[e] = tenants[static_cast<size_t>(tenant_of[e])].offset;
    }
  // A joined entry lives in its holder (Executor adds the holder's offset).
  for (uint32_t e = 0; e < num_entries; ++e)
    if (is_joined(e) && tenant_of[holder(e)] >= 0) plan.block_of_entry[e] = 0;
  if (top > 0) plan.block_bytes.push_back(top);
  return plan;
}

}  // namespace symbind
