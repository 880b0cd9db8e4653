// ScratchBuffer: pooled temporaries that nested kernels never share, reused across calls.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include <symbind/core/error.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/scratch.h>

using namespace symbind;

TEST_CASE("ScratchBuffer: pooled blocks are reused after release and never shared while alive",
          "[core][scratch]") {
  ReleaseScratchPool();
  REQUIRE(ScratchPoolBytes() == 0);
  const int64_t n = ScratchBuffer::kPooledFloats * 3 + 5;
  float *first = nullptr, *second = nullptr;
  {
    ScratchBuffer a(n);
    first = a.data();
    CHECK(a.size() == n);
    CHECK(reinterpret_cast<uintptr_t>(a.data()) % Storage::kAlignment == 0);
    a.data()[0] = 1.0f;
    a.data()[n - 1] = 2.0f;  // the whole size is usable
    ScratchBuffer nested(n);  // same size while `a` is alive: other memory
    second = nested.data();
    CHECK(second != first);
    CHECK(ScratchPoolBytes() == 0);
  }
  CHECK(ScratchPoolBytes() >= 2 * n * sizeof(float));  // both blocks kept
  {
    ScratchBuffer again(n);  // a kept block serves the next call of the same size
    CHECK((again.data() == first || again.data() == second));
    ScratchBuffer smaller(n - 100);  // and the other one a slightly smaller call
    CHECK((smaller.data() == first || smaller.data() == second));
    CHECK(smaller.data() != again.data());
    CHECK(ScratchPoolBytes() == 0);
    ScratchBuffer tiny(ScratchBuffer::kPooledFloats);  // far smaller than the kept blocks: new
    CHECK(tiny.data() != again.data());
    CHECK(tiny.data() != smaller.data());
  }
  ReleaseScratchPool();
  CHECK(ScratchPoolBytes() == 0);
}

TEST_CASE("ScratchBuffer: small blocks are kept per thread, reused after release, never shared while alive",
          "[core][scratch]") {
  ReleaseScratchPool();  // none kept from earlier cases
  const int64_t n = 3000;  // 12 KB: below the pool's sizes
  float *first = nullptr, *second = nullptr;
  {
    ScratchBuffer a(n), b(n);
    first = a.data(), second = b.data();
    CHECK(first != second);
    CHECK(reinterpret_cast<uintptr_t>(first) % Storage::kAlignment == 0);
    a.data()[n - 1] = 1.0f;  // the whole size is usable
    b.data()[n - 1] = 2.0f;
    CHECK(a.data()[n - 1] == 1.0f);
  }
  ScratchBuffer again(n), other(n - 200);  // the kept blocks serve the next calls
  CHECK((again.data() == first || again.data() == second));
  CHECK((other.data() == first || other.data() == second));
  CHECK(again.data() != other.data());
  ScratchBuffer third(n);  // both kept blocks in use: other memory
  CHECK(third.data() != again.data());
  CHECK(third.data() != other.data());
}

TEST_CASE("ScratchBuffer: tiny buffers are kept per thread too, not returned to malloc", "[core][scratch]") {
  ReleaseScratchPool();
  float *first = nullptr, *second = nullptr;
  {
    ScratchBuffer a(1), b(10);  // kernels' placeholders for a buffer a task does not need
    first = a.data(), second = b.data();
  }
  // Had they gone back to malloc, these would take their places.
  void* p = std::aligned_alloc(Storage::kAlignment, 64);
  void* q = std::aligned_alloc(Storage::kAlignment, 64);
  ScratchBuffer again(1), other(7);
  CHECK((again.data() == first || again.data() == second));
  CHECK((other.data() == first || other.data() == second));
  CHECK(again.data() != other.data());
  std::free(p);
  std::free(q);
}

TEST_CASE("ScratchBuffer: small and empty buffers, moves, absurd sizes", "[core][scratch]") {
  ScratchBuffer empty(0);
  CHECK(empty.size() == 0);
  CHECK(empty.data() != nullptr);
  ScratchBuffer small(10);
  small.data()[9] = 3.0f;
  ScratchBuffer moved(std::move(small));
  CHECK(moved.data()[9] == 3.0f);
  CHECK(small.data() == nullptr);
  ScratchBuffer assigned(ScratchBuffer::kPooledFloats);
  assigned = std::move(moved);
  CHECK(assigned.size() == 10);
  CHECK(assigned.data()[9] == 3.0f);
  CHECK_THROWS_AS(ScratchBuffer(std::numeric_limits<int64_t>::max() / 2), OutOfMemoryError);
}

#ifdef SYMBIND_POISON_SCRATCH
TEST_CASE("ScratchBuffer: poisoned with NaN in the sanitizer build", "[core][scratch]") {
  const int64_t n = ScratchBuffer::kPooledFloats * 2;
  {
    ScratchBuffer written(n);
    std::fill(written.data(), written.data() + n, 0.0f);
  }
  ScratchBuffer again(n);  // the same block, poisoned again
  CHECK(std::isnan(again.data()[0]));
  CHECK(std::isnan(again.data()[n - 1]));
}
#endif
