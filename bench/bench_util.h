// Shared by the benchmarks: timing helpers and this CPU's measured multiply-add rate.
#pragma once
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

// This CPU's float32 multiply-add rate in GFLOP/s, measured over `seconds`: independent chains
// of multiply-adds, enough to fill both FMA pipes, on 512-bit (avx512) or 256-bit vectors.
// A measured peak, not the nominal clock's (guests report 2.1-2.45 GHz and run at 3.2-3.5).
#define SYMBIND_BENCH_FMA_RATE(Name, Target, V, kLanes, Fma, Set)                      \
  __attribute__((target(Target))) inline double Name(double seconds) {                 \
    using Clock = std::chrono::steady_clock;                                           \
    constexpr int kChains = 12, kBlock = 1 << 16; /* ~0.1 ms between clock reads */  \
    V acc[kChains];                                                                    \
    for (int i = 0; i < kChains; ++i) acc[i] = Set(1.0f + static_cast<float>(i));     \
    const V m = Set(0.9999999f), c = Set(1e-7f);                                       \
    int64_t steps = 0;                                                                 \
    const auto start = Clock::now();                                                   \
    double elapsed = 0;                                                                \
    do {                                                                               \
      for (int r = 0; r < kBlock; ++r)                                                 \
        for (int i = 0; i < kChains; ++i) acc[i] = Fma(acc[i], m, c);                  \
      steps += kBlock;                                                                 \
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();           \
    } while (elapsed < seconds);                                                       \
    V total = Set(0.0f);                                                               \
    for (int i = 0; i < kChains; ++i) total = Fma(acc[i], Set(1.0f), total);           \
    float lanes[kLanes];                                                               \
    std::memcpy(lanes, &total, sizeof(lanes));                                         \
    volatile float sink = lanes[0];                                                    \
    (void)sink;                                                                        \
    return static_cast<double>(steps) * kChains * kLanes * 2 / elapsed / 1e9;          \
  }
SYMBIND_BENCH_FMA_RATE(FmaRate512, "avx512f", __m512, 16, _mm512_fmadd_ps, _mm512_set1_ps)
SYMBIND_BENCH_FMA_RATE(FmaRate256, "avx2,fma", __m256, 8, _mm256_fmadd_ps, _mm256_set1_ps)
#undef SYMBIND_BENCH_FMA_RATE

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
