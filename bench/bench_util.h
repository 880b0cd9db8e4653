// Shared by the benchmarks: timing helpers.
#pragma once
#include <time.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace symbind::bench {

// Process CPU time (all threads) in milliseconds: steadier than wall time on a loaded machine.
inline double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
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

}  // namespace symbind::bench
