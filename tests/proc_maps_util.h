// What the kernel says about this process's memory: the VmFlags of the mapping that holds an
// address (/proc/self/smaps), e.g. "hg" for huge pages advised, "nh" for none.
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>

namespace symbind_test {

// Whether the kernel has transparent huge pages at all (madvise asks for nothing otherwise).
inline bool KernelHasHugePages() {
  struct stat st;
  return ::stat("/sys/kernel/mm/transparent_hugepage/enabled", &st) == 0;
}

// The VmFlags line's flags of the mapping that holds `address`, space-separated with a space on
// either side (" rd mr hg "), or "" when no mapping holds it.
inline std::string VmFlagsAt(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return " " + line.substr(8) + " ";
    }
  }
  return "";
}

}  // namespace symbind_test
