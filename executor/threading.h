// Thread count for symbind's TBB work. The environment variable SYMBIND_NUM_THREADS, read at
// library load, sets the initial value; SetNumThreads changes it for the whole process.
#pragma once
#include <cstdint>
#include <string>

namespace symbind {

// The most threads symbind uses: 4x the hardware threads (more only adds stacks and
// contention; a huge count would exhaust memory or abort inside TBB).
int MaxNumThreads();
// n <= 0 restores TBB's default (all cores); n above MaxNumThreads() is clamped to it.
// Returns the count now in effect.
int SetNumThreads(int64_t n);
int GetNumThreads();
// A thread count as written (SYMBIND_NUM_THREADS, --threads): a non-negative decimal integer
// that fits int64. Throws ParamError naming `what` otherwise. The result is not clamped.
int64_t ParseNumThreads(const std::string& text, const std::string& what);
// "" when n is within MaxNumThreads(), else the message saying it is clamped (for `what`).
std::string ThreadClampNote(int64_t n, const std::string& what);

}  // namespace symbind
