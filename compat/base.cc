#include "mxnet-cpp/base.h"

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

Context::Context(const DeviceType& type, int id) : type_(type), id_(id) {}

symbind::Context Context::native() const {
  if (type_ == DeviceType::kGPU) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "symbind: a GPU context was requested; symbind computes on the CPU "
                           "only, so GPU arrays and executors run on the CPU\n");
    });
  } else if (type_ != DeviceType::kCPU && type_ != DeviceType::kCPUPinned &&
             static_cast<int>(type_) != 5) {
    throw symbind::Error("unknown device type " + std::to_string(static_cast<int>(type_)) +
                             " (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)");
  }
  return symbind::Context::CPU(id_);
}

Shape::Shape(const symbind::TShape& s) {
  if (!s.ndim_known()) return;
  for (int i = 0; i < s.ndim(); ++i) dims_.push_back(static_cast<index_t>(s[i] < 0 ? 0 : s[i]));
}

symbind::TShape Shape::ToTShape() const {
  std::vector<int64_t> d(dims_.begin(), dims_.end());
  return symbind::TShape(d);
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '(';
  // Dims above INT_MAX print as the negative ints they came from (Reshape's -1, -2, ...).
  for (size_t i = 0; i < s.ndim(); ++i) os << (i ? "," : "") << static_cast<int>(s[i]);
  if (s.ndim() == 1) os << ',';
  return os << ')';
}


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
