#include "mxnet-cpp/base.h"

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

Context::Context(const DeviceType& type, int id) try : type_(type), id_(id) {} SYMBIND_CPP_RECORD_ERRORS

namespace compat {

symbind::Context Native(const Context& context) {
  const DeviceType type = context.GetDeviceType();
  if (type == DeviceType::kGPU) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "symbind: a GPU context was requested; symbind computes on the CPU "
                           "only, so GPU arrays and executors run on the CPU\n");
    });
  } else if (type != DeviceType::kCPU && type != DeviceType::kCPUPinned &&
             static_cast<int>(type) != 5) {
    throw symbind::Error("unknown device type " + std::to_string(static_cast<int>(type)) +
                             " (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)");
  }
  // cpu_pinned and cpu_shared stay what the caller asked for (they are CPU memory here).
  if (type == DeviceType::kCPUPinned || static_cast<int>(type) == 5)
    return symbind::Context{static_cast<symbind::Context::DeviceType>(type), context.GetDeviceId()};
  return symbind::Context::CPU(context.GetDeviceId());
}

Shape ToShape(const symbind::TShape& s) {
  std::vector<index_t> dims;
  if (!s.ndim_known()) return Shape();
  for (int i = 0; i < s.ndim(); ++i) dims.push_back(static_cast<index_t>(s[i] < 0 ? 0 : s[i]));
  return Shape(dims);
}

symbind::TShape ToTShape(const Shape& s) {
  return symbind::TShape(std::vector<int64_t>(s.dims().begin(), s.dims().end()));
}

}  // namespace compat

std::ostream& operator<<(std::ostream& os, const Shape& s) try {
  os << '(';
  // Dims above INT_MAX print as the negative ints they came from (Reshape's -1, -2, ...).
  for (size_t i = 0; i < s.ndim(); ++i) os << (i ? "," : "") << static_cast<int>(s[i]);
  if (s.ndim() == 1) os << ',';
  return os << ')';
} SYMBIND_CPP_RECORD_ERRORS


namespace compat {

namespace {
std::mutex& RngMutex() {
  static std::mutex m;
  return m;
}
std::mt19937_64& RngUnlocked() {
  static std::mt19937_64 rng(0);
  return rng;
}
}  // namespace

void SeedRandom(uint64_t seed) {
  std::lock_guard<std::mutex> lock(RngMutex());
  RngUnlocked().seed(seed);
}

void WithRandom(const std::function<void(std::mt19937_64&)>& f) {
  std::lock_guard<std::mutex> lock(RngMutex());
  f(RngUnlocked());
}

}  // namespace compat
}  // namespace cpp
}  // namespace mxnet
