#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace symbind {

void PreferHugePages(const void* begin, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin), hi = lo + bytes;
  // Inner blocks only: a huge page reaching past the range would map bytes nobody uses.
  const uintptr_t first = (lo + kHugePage - 1) / kHugePage * kHugePage, last = hi / kHugePage * kHugePage;
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace symbind
