#include "huge_pages.h"

#include <algorithm>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "error.h"

namespace symbind {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's PMD size
}  // namespace

void PreferHugePages(const void* begin, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin), hi = lo + bytes;
  // Inner blocks only: a huge page reaching past the range would map bytes nobody uses.
  const uintptr_t first = (lo + kHugePage - 1) / kHugePage * kHugePage, last = hi / kHugePage * kHugePage;
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

std::shared_ptr<float> AllocateZeroedFloats(size_t floats, const char* what) {
  constexpr size_t kAlignment = 64, kPage = size_t{4} << 10;
  if (floats > (std::numeric_limits<size_t>::max() - 2 * kHugePage) / sizeof(float))
    throw OutOfMemoryError(StrCat("cannot allocate ", floats, " floats for ", what));
  const size_t bytes = std::max<size_t>(floats * sizeof(float), 1);
  const auto from_heap = [&] {
    void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (!p) throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
    std::memset(p, 0, bytes);
    return std::shared_ptr<float>(static_cast<float*>(p), [](float* q) { std::free(q); });
  };
  if (bytes < kHugePageAllocationBytes) return from_heap();
  // A mapping of its own starting on a 2 MiB boundary (fresh pages are zero): from the heap, the
  // alignment would leave gaps that other allocations partly touch. The heap still serves it
  // where no mapping is left (the process's limit on mappings).
  const size_t mapped = (bytes + kPage - 1) / kPage * kPage;
  void* raw = ::mmap(nullptr, mapped + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return from_heap();
  // Keep [start, start + mapped): what lies before and after it (together kHugePage) goes back.
  const uintptr_t lo = reinterpret_cast<uintptr_t>(raw), start = (lo + kHugePage - 1) / kHugePage * kHugePage;
  if (start > lo) ::munmap(raw, start - lo);
  ::munmap(reinterpret_cast<void*>(start + mapped), lo + kHugePage - start);
  float* p = reinterpret_cast<float*>(start);
  PreferHugePages(p, mapped);
  return std::shared_ptr<float>(p, [mapped](float* q) { ::munmap(q, mapped); });
}

}  // namespace symbind
