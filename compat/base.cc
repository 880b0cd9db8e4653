#include "mxnet-cpp/base.h"

#include <stdexcept>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

Context::Context(const DeviceType& type, int id) : type_(type), id_(id) {
  if (type == DeviceType::kGPU)
    throw std::runtime_error("symbind has no GPU support: use Context::cpu()");
}

Context Context::gpu(int device_id) { return Context(DeviceType::kGPU, device_id); }

symbind::Context Context::native() const { return symbind::Context::CPU(id_); }

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

int MXGetGPUCount() { return 0; }
void MXNotifyShutdown() {}
void MXRandomSeed(int seed) { compat::SeedRandom(static_cast<uint64_t>(seed)); }

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
