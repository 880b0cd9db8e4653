// Helpers shared by the compat sources (not installed).
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <symbind/core/op.h>

namespace mxnet {
namespace cpp {
namespace compat {

void SeedRandom(uint64_t seed);
// Runs `f` with the process-wide generator, under its lock.
void WithRandom(const std::function<void(std::mt19937_64&)>& f);

// MXNet's reshape codes: 0 keeps the input's dim, -1 is inferred from the size (at most one).
// Throws symbind::Error when the result does not hold the same number of elements.
symbind::TShape ResolveReshape(const symbind::TShape& from, const std::vector<int64_t>& dims);

inline symbind::OpReq ToNative(int req) { return static_cast<symbind::OpReq>(req); }

// The symbind arrays behind mxnet-cpp arrays (shared storage, not copies).
template <typename Array>
std::vector<symbind::NDArray> Natives(const std::vector<Array>& arrays) {
  std::vector<symbind::NDArray> natives;
  natives.reserve(arrays.size());
  for (const Array& a : arrays) natives.push_back(a.native());
  return natives;
}

}  // namespace compat
}  // namespace cpp
}  // namespace mxnet
