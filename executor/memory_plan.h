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
  static constexpr int64_t kNotJoined = -1;
  static constexpr size_t kAlignment = 64;  // every offset in the block is a multiple of this
  // Per graph entry: index of the shared block it lives in (0: planned entries share one
  // block), or kOwnStorage; and its byte offset there.
  std::vector<int> block_of_entry;
  std::vector<size_t> offset_of_entry;
  std::vector<size_t> block_bytes;
  // Per graph entry written straight into a join's output (a Concat input): the entry it lives
  // in (the outermost join output when joins nest, itself never joined) and the byte offset
  // there; kNotJoined otherwise. Such an entry's block_of_entry is that of its join output.
  std::vector<int64_t> joined_into;
  std::vector<size_t> joined_offset;
  // Per joined entry: bytes from one of its images to the next inside the join output (its
  // producer writes them that far apart: MemoryPlanInputs::join_row_bytes); 0 when the entry
  // is one contiguous run there, and for entries not joined.
  std::vector<size_t> joined_row_bytes;
  size_t num_joined = 0;
  // (before, after) task pairs: a task writing bytes an earlier entry held waits for every task
  // that read or wrote that entry, so parallel branches never overwrite live data.
  std::vector<std::pair<uint32_t, uint32_t>> reuse_dependencies;
};

// What the planner is told about each task and entry.
struct MemoryPlanInputs {
  // Op node ids in execution (topological) order; task t runs op_nodes[t].
  std::vector<uint32_t> op_nodes;
  // Size of every entry.
  std::vector<size_t> entry_bytes;
  // Entries that need their own storage (graph outputs, variables).
  std::vector<bool> keep;
  // inplace[t]: task t may write its output 0 over its input 0 (Op::forward_inplace); it does
  // when that input is planned, the same size, and read by no later task.
  std::vector<bool> inplace;
  // join_offsets[t] (empty, or one per leading input): task t's output 0 holds those inputs
  // end to end, input k at byte join_offsets[t][k] (a Concat with nothing before its axis; a
  // quantized concat's levels, not its ranges). An input that
  // is an op output, not kept, read once by task t and joined nowhere else, is then planned
  // inside output 0: its producer writes it in place and the join has nothing to copy.
  std::vector<std::vector<size_t>> join_offsets;
  // join_row_bytes[t] (empty, or one per task): 0 for the joins above; for a Concat along
  // axis 1 at batch > 1, the bytes of one image of its output. Its inputs' images are then
  // runs that far apart, input k's first at join_offsets[t][k], and only inputs whose
  // producer can write so (strided_writer, per entry) are planned inside the output.
  std::vector<size_t> join_row_bytes;
  // join_rewrites[t] (empty, or one per task): task t's forward may rewrite the inputs it
  // joins (Op::join_rewrites_inputs), so an input read by a later task stays apart.
  std::vector<bool> join_rewrites;
  std::vector<bool> strided_writer;
};

// Entries are placed in one block, each at an offset. Their lifetimes come first, in task
// order; then each takes the best-fitting gap among the entries placed before it whose lifetimes
// meet its own, else the bytes after the last of them (the block grows). Two placement orders
// are tried, largest first and first written first, and the smaller block is kept. A join
// output (with the inputs planned inside it) holds its bytes from the first of their producers
// on until the last read of it or of any of them.
MemoryPlan PlanMemory(const Graph& graph, const MemoryPlanInputs& in);

}  // namespace symbind
