#include "scratch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "error.h"
#include "huge_pages.h"
#include "ndarray.h"

namespace symbind {

namespace {
// Pooled sizes are rounded up to 16 KB steps, and a free block serves requests down to a
// quarter of its size, so one block covers a kernel's calls over slightly varying shapes.
constexpr size_t kRoundFloats = 4096;
constexpr size_t kMaxWaste = 4;

class ScratchPool {
 public:
  // A free block of at least `floats` (and at most kMaxWaste times that), or null: the smallest
  // that the calling thread gave back if one fits, else the smallest. A block another core wrote
  // last is read and rewritten from that core's cache, line by line, which costs a two-thread
  // kernel more than its own work on some hosts (cores that share no cache).
  float* Take(size_t floats, size_t* capacity) {
    const unsigned self = ThisThreadTag();
    std::lock_guard<std::mutex> lock(mutex_);
    auto first = free_.lower_bound(floats);
    if (first == free_.end() || first->first / kMaxWaste > floats) return nullptr;
    auto pick = first;
    for (auto it = first; it != free_.end() && it->first / kMaxWaste <= floats; ++it)
      if (it->second.owner == self) {
        pick = it;
        break;
      }
    float* block = pick->second.data;
    *capacity = pick->first;
    bytes_ -= pick->first * sizeof(float);
    free_.erase(pick);
    return block;
  }
  // Keeps the block for later calls, or frees it when the pool is full.
  void Give(float* block, size_t capacity) {
    const unsigned self = ThisThreadTag();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes_ + capacity * sizeof(float) <= ScratchBuffer::kMaxPooledBytes) {
        free_.emplace(capacity, FreeBlock{block, self});
        bytes_ += capacity * sizeof(float);
        return;
      }
    }
    std::free(block);
  }
  size_t Bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }
  void Clear() {
    std::multimap<size_t, FreeBlock> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(free_);
      bytes_ = 0;
    }
    for (auto& b : blocks) std::free(b.second.data);
  }

 private:
  struct FreeBlock {
    float* data;
    unsigned owner;  // ThisThreadTag of the thread that gave it back
  };
  // A small number per thread, the same for the thread's life.
  static unsigned ThisThreadTag() {
    static std::atomic<unsigned> next{0};
    thread_local const unsigned tag = next.fetch_add(1, std::memory_order_relaxed);
    return tag;
  }
  std::mutex mutex_;
  std::multimap<size_t, FreeBlock> free_;  // capacity in floats -> block
  size_t bytes_ = 0;
};

ScratchPool& Pool() {
  static ScratchPool* pool = new ScratchPool;  // never destroyed: buffers may outlive statics
  return *pool;
}

// Blocks below the pool's sizes, rounded up to kSmallRoundFloats, kept per thread (a few each): kernels
// take one per task (a packed B chunk, a depthwise plane's floats), and aligned_alloc plus free
// for each cost glibc a memalign split and a consolidation, several percent of a small int8
// model's forward. Per thread, so taking one needs no lock.
constexpr size_t kSmallRoundFloats = 1024;
class SmallBlocks {
 public:
  // A kept block of at least `floats` (and at most kMaxWaste times that), or null.
  float* Take(size_t floats, size_t* capacity) {
    for (Block& b : blocks_)
      if (b.data && b.capacity >= floats && b.capacity / kMaxWaste <= floats) {
        *capacity = b.capacity;
        return std::exchange(b.data, nullptr);
      }
    return nullptr;
  }
  // Keeps the block if a slot is free; false leaves it to the caller.
  bool Give(float* block, size_t capacity) {
    for (Block& b : blocks_)
      if (!b.data) {
        b = {block, capacity};
        return true;
      }
    return false;
  }
  void Clear() {
    for (Block& b : blocks_) std::free(std::exchange(b.data, nullptr));
  }
  ~SmallBlocks() { Clear(); }

 private:
  struct Block {
    float* data = nullptr;
    size_t capacity = 0;
  };
  Block blocks_[4];
};
thread_local SmallBlocks small_blocks;

float* Allocate(size_t floats) {
  if (floats > std::numeric_limits<size_t>::max() / sizeof(float) - Storage::kAlignment)
    throw OutOfMemoryError(StrCat("scratch buffer of ", floats, " floats is too large"));
  const size_t bytes = (floats * sizeof(float) + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment;
  void* p = std::aligned_alloc(Storage::kAlignment, bytes);
  if (!p) throw OutOfMemoryError(StrCat("cannot allocate a scratch buffer of ", bytes, " bytes"));
  if (bytes >= kHugePageAllocationBytes) PreferHugePages(p, bytes);
  return static_cast<float*>(p);
}
}  // namespace

ScratchBuffer::ScratchBuffer(int64_t floats) : size_(std::max<int64_t>(floats, 0)) {
  const size_t wanted = static_cast<size_t>(std::max<int64_t>(size_, 1));
  // Release sends blocks of kPooledFloats and more to the pool, smaller ones to the thread's.
  const size_t small = (wanted + kSmallRoundFloats - 1) / kSmallRoundFloats * kSmallRoundFloats;
  if (small >= static_cast<size_t>(kPooledFloats)) {
    const size_t rounded = (wanted + kRoundFloats - 1) / kRoundFloats * kRoundFloats;
    data_ = Pool().Take(rounded, &capacity_);
    if (!data_) {
      data_ = Allocate(rounded);
      capacity_ = rounded;
    }
  } else {
    // Tiny requests too (a kernel's one-float placeholder for an unused buffer, taken per task):
    // a kept 4 KB block costs nothing where malloc and free each time did.
    data_ = small_blocks.Take(small, &capacity_);
    if (!data_) {
      data_ = Allocate(small);
      capacity_ = small;
    }
  }
#ifdef SYMBIND_POISON_SCRATCH
  std::fill(data_, data_ + capacity_, std::numeric_limits<float>::quiet_NaN());
#endif
}

ScratchBuffer::~ScratchBuffer() { Release(); }

ScratchBuffer::ScratchBuffer(ScratchBuffer&& other) noexcept
    : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.capacity_ = 0;
}

ScratchBuffer& ScratchBuffer::operator=(ScratchBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.capacity_ = 0;
  }
  return *this;
}

void ScratchBuffer::Release() noexcept {
  if (!data_) return;
  if (capacity_ >= static_cast<size_t>(kPooledFloats)) Pool().Give(data_, capacity_);
  else if (!small_blocks.Give(data_, capacity_)) std::free(data_);
  data_ = nullptr;
}

size_t ScratchPoolBytes() { return Pool().Bytes(); }
void ReleaseScratchPool() {
  Pool().Clear();
  small_blocks.Clear();
}

}  // namespace symbind
