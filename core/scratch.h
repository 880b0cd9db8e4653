// Temporary float buffers for one kernel call, reused across calls.
//
//   ScratchBuffer col(kdim * ncols);  // uninitialised, 64-byte aligned
//   Im2Col(..., col.data());
//   Gemm(..., col.data(), ...);       // col goes back to the pool at the end of its scope
//
// Buffers from kPooledFloats up come from a process-wide pool and return to it on destruction
// instead of going through malloc: glibc hands large freed blocks back to the kernel and faults
// them in again on the next call, page by page, a sizeable share of a small model's forward
// (MobileNet v2's). Every live buffer is its own memory, so kernels that nest (a TBB thread
// waiting inside one op may run another op's task) never share one. The pool keeps the free
// blocks up to kMaxPooledBytes, as MXNet's pooled storage keeps its temporary space;
// ReleaseScratchPool frees them. Smaller buffers (rounded up to 4 KB; one per task in many
// kernels) are kept a few per thread, so that taking one needs neither malloc nor a lock.
//
// Builds with SYMBIND_POISON_SCRATCH (the sanitizer build) fill every buffer with NaN when it is
// handed out, so a kernel that reads an element it did not write fails the numeric tests.
#pragma once
#include <cstddef>
#include <cstdint>

namespace symbind {

class ScratchBuffer {
 public:
  static constexpr int64_t kPooledFloats = int64_t{1} << 14;  // 64 KB
  static constexpr size_t kMaxPooledBytes = size_t{1} << 28;  // 256 MB
  // `floats` uninitialised floats (at least one is allocated); throws OutOfMemoryError.
  explicit ScratchBuffer(int64_t floats);
  ~ScratchBuffer();
  ScratchBuffer(ScratchBuffer&& other) noexcept;
  ScratchBuffer& operator=(ScratchBuffer&& other) noexcept;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  float* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  void Release() noexcept;
  float* data_ = nullptr;
  int64_t size_ = 0;
  size_t capacity_ = 0;  // floats allocated; pooled blocks are reused for requests up to it
};

// Bytes of free blocks the pool holds now.
size_t ScratchPoolBytes();
// Frees the pool's free blocks and the calling thread's kept small ones (buffers in use are freed
// when they are destroyed).
void ReleaseScratchPool();

}  // namespace symbind
