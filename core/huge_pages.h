// Transparent huge pages for memory that is read or written whole, again and again.
#pragma once
#include <cstddef>
#include <memory>

namespace symbind {

// Asks the kernel to back the whole 2 MiB blocks within [begin, begin + bytes) with huge pages
// (MADV_HUGEPAGE): one page fault per 2 MiB instead of one per 4 KiB page, and page faults are
// costly on paravirtualised guests. Only for bytes used whole, since a huge page is resident
// whole. Does nothing where the kernel has no transparent huge pages.
void PreferHugePages(const void* begin, size_t bytes);

// Allocations from this size on ask for huge pages (Storage, ScratchBuffer).
constexpr size_t kHugePageAllocationBytes = size_t{2} << 20;

// `floats` zeroed floats, 64-byte aligned (2 MiB from kHugePageAllocationBytes on, on huge
// pages), freed with the last owner: for kernels' derived weights, written once and read on
// every call. Throws OutOfMemoryError naming `what`.
std::shared_ptr<float> AllocateZeroedFloats(size_t floats, const char* what);

}  // namespace symbind
