// The one accounting of what an executor allocates against MaxBindBytes(): bind (op outputs,
// SimpleBind's own arrays, a Predictor's inputs), Backward's gradient buffers and Reshape's new
// arrays are all checked here before anything is allocated, together with what the process's
// other executors hold. Internal to executor/.
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

// Bytes counted against the process-wide budget (MaxBindBytes) while an executor holds what it
// allocated: the budget bounds all live executors together, not each bind alone (a thousand
// predictors of a model each under the limit are refused as one would be). Returned when the
// reservation is destroyed.
class BindMemoryReservation {
 public:
  explicit BindMemoryReservation(uint64_t bytes = 0) : bytes_(bytes) {}
  ~BindMemoryReservation();
  BindMemoryReservation(BindMemoryReservation&& other) noexcept : bytes_(other.bytes_) { other.bytes_ = 0; }
  BindMemoryReservation& operator=(BindMemoryReservation&&) = delete;
  BindMemoryReservation(const BindMemoryReservation&) = delete;
  uint64_t bytes() const { return bytes_; }
  // Returns up to `bytes` of the reservation: what a bind reserved for op outputs as if each had
  // its own buffer, once the memory plan has shared them.
  void Release(uint64_t bytes);

 private:
  uint64_t bytes_;
};

// Bytes the live reservations of the process hold.
uint64_t ReservedBindBytes();

// Reserves what `arrays` need, before anything is allocated. Throws OutOfMemoryError when one
// planned array, or all of them with `already_held` bytes, or all of them with what the other
// live executors of the process reserved (without `own_reserved`, the caller's own), exceed
// MaxBindBytes(); or when an array's loop extent (its dims with empty ones counted as 1)
// exceeds the limit as if allocated: a zero-size tensor with a 2^40 axis holds no bytes but a
// kernel could still loop over it. Arrays of unknown shape are skipped (binding reports those
// itself).
BindMemoryReservation ReserveBindMemory(const std::vector<PlannedArray>& arrays, const char* who,
                                        uint64_t already_held = 0, uint64_t own_reserved = 0);

// The op outputs an executor allocates for `graph` (variables are bound, not allocated);
// `types` may be empty (float32).
std::vector<PlannedArray> PlannedOpOutputs(const Graph& graph, const std::vector<TShape>& shapes,
                                           const std::vector<int>& types);

}  // namespace symbind
