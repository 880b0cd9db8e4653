// The one accounting of what an executor allocates against MaxBindBytes(): bind (op outputs,
// SimpleBind's own arrays), Backward's gradient buffers and Reshape's new arrays are all
// checked here before anything is allocated. Internal to executor/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <symbind/core/graph.h>

namespace symbind {

// The dtype an entry is allocated with (float32 where inference left it open).
inline DType EntryDType(const std::vector<int>& types, uint32_t e) {
  return e >= types.size() || types[e] < 0 ? DType::kFloat32 : static_cast<DType>(types[e]);
}

// An array an executor is about to allocate.
struct PlannedArray {
  std::string name;
  NodeEntry entry;  // for op outputs: named only when a message needs it
  TShape shape;
  DType dtype;
  std::string Name() const;
};

// Throws OutOfMemoryError, before anything is allocated, when one planned array or all of
// them together with `already_held` bytes exceed MaxBindBytes(), or when an array's loop
// extent (its dims with empty ones counted as 1) exceeds the limit as if allocated: a
// zero-size tensor with a 2^40 axis holds no bytes but a kernel could still loop over it.
// Arrays of unknown shape are skipped (binding reports those itself).
void CheckBindMemory(const std::vector<PlannedArray>& arrays, const char* who,
                     uint64_t already_held = 0);

// The op outputs an executor allocates for `graph` (variables are bound, not allocated);
// `types` may be empty (float32).
std::vector<PlannedArray> PlannedOpOutputs(const Graph& graph, const std::vector<TShape>& shapes,
                                           const std::vector<int>& types);

}  // namespace symbind
