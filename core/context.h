#pragma once
#include <ostream>
#include <string>

namespace symbind {

// Where an array lives. symbind computes on the CPU only; GPU contexts exist so that
// files saved from a GPU load (they are placed on the CPU).
struct Context {
  enum DeviceType : int { kCPU = 1, kGPU = 2, kCPUPinned = 3, kCPUShared = 5 };
  DeviceType dev_type = kCPU;
  int dev_id = 0;

  static Context CPU(int id = 0) { return Context{kCPU, id}; }
  bool operator==(const Context& o) const { return dev_type == o.dev_type && dev_id == o.dev_id; }
  bool operator!=(const Context& o) const { return !(*this == o); }
  std::string ToString() const;
  // Parses ToString's form ("cpu(0)", "cpu_shared(1)", ...), as MXNet writes an op's `ctx`
  // parameter. Returns false on anything else.
  static bool Parse(const std::string& text, Context* out);
};

std::ostream& operator<<(std::ostream& os, const Context& c);

}  // namespace symbind
