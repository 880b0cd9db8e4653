// Shared by the benchmarks: timing helpers.
#pragma once
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

namespace symbind::bench {

// CPU time of every thread of this process so far, in milliseconds: the measure that a shared,
// loaded machine disturbs least (wall time there mostly measures waiting for a core).
inline double ProcessCpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// The median wall time of `runs` calls of fn, in milliseconds, after `warmup` untimed calls.
template <typename F>
double MedianMs(int runs, const F& fn, int warmup = 0) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// A benchmark's main: body()'s exit code, or one line "NAME: error: ..." and 1 for an exception
// (a missing model file, a bad shape), never an abort.
template <typename F>
int RunMain(const char* name, const F& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace symbind::bench
