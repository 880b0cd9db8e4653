// What the host gives this guest right now, for reading a benchmark run: each CPU's multiply-add
// rate alone and with all CPUs busy, each CPU's rate reading 8 MB alone and with all CPUs
// reading, and the round trip of a cache line between the first two CPUs.
// On shared guests these move by up to 2x within minutes (another tenant on a core's sibling,
// vCPUs moved between chiplets), and a ratio between engines measured then means less.
//
//   bench_host_probe [milliseconds per measurement, default 60]
//
// Prints one line:
//   host_probe isa=avx512 fma_gflops_alone=305,309 fma_gflops_together=303,301 read_8mb_gbs_alone=41,40
//              read_8mb_gbs_together=40,39 round_trip_ns=570
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace {
using Clock = std::chrono::steady_clock;
namespace bench = symbind::bench;

// GB/s reading a buffer of `bytes` this thread wrote, summed in 8 float lanes, for `seconds`.
double ReadRate(size_t bytes, double seconds) {
  std::vector<float> buffer(bytes / sizeof(float), 1.0f);
  float sums[8] = {};
  int64_t passes = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    for (size_t i = 0; i + 8 <= buffer.size(); i += 8)
      for (int l = 0; l < 8; ++l) sums[l] += buffer[i + l];
    ++passes;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  volatile float sink = sums[0];
  (void)sink;
  return static_cast<double>(passes) * static_cast<double>(bytes) / elapsed / 1e9;
}

const char* Isa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return nullptr;
}

double Rate(double seconds) {
  return std::string(Isa()) == "avx512" ? bench::FmaRate512(seconds) : bench::FmaRate256(seconds);
}

bool Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// Each CPU's multiply-add rate (or read rate over `read_bytes`), one CPU at a time or all at once.
std::vector<double> Rates(const std::vector<int>& cpus, double seconds, bool together, size_t read_bytes = 0) {
  std::vector<double> rates(cpus.size(), 0.0);
  auto run = [&](size_t i) {
    Pin(cpus[i]);
    rates[i] = read_bytes ? ReadRate(read_bytes, seconds) : Rate(seconds);
  };
  if (!together) {
    for (size_t i = 0; i < cpus.size(); ++i) std::thread(run, i).join();
    return rates;
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i) threads.emplace_back(run, i);
  for (auto& t : threads) t.join();
  return rates;
}

// Nanoseconds for a value to go from cpu a to cpu b and back, median of 9 rounds.
double RoundTrip(int a, int b, int rounds_of) {
  alignas(64) std::atomic<int64_t> flag{0};
  std::vector<double> ns;
  for (int round = 0; round < 9; ++round) {
    flag.store(0);
    std::thread other([&] {
      Pin(b);
      for (int64_t i = 0; i < rounds_of; ++i) {
        while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        flag.store(2 * i + 2, std::memory_order_release);
      }
    });
    Pin(a);
    const auto start = Clock::now();
    for (int64_t i = 0; i < rounds_of; ++i) {
      flag.store(2 * i + 1, std::memory_order_release);
      while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / rounds_of);
    other.join();
  }
  std::nth_element(ns.begin(), ns.begin() + 4, ns.end());
  return ns[4];
}

std::string Join(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : ",") + std::to_string(static_cast<int>(x + 0.5));
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  const double seconds = (argc > 1 ? std::atof(argv[1]) : 60.0) / 1000.0;
  if (!(seconds > 0)) {
    std::fprintf(stderr, "usage: bench_host_probe [milliseconds per measurement > 0]\n");
    return 2;
  }
  if (!Isa()) {
    std::printf("host_probe isa=none (no AVX2 + FMA: not measured)\n");
    return 0;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof(allowed), &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 64; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  const std::vector<double> alone = Rates(cpus, seconds, false), together = Rates(cpus, seconds, true);
  // 8 MB: past a core's L2, within a chiplet's L3, where layers' activations and weights meet.
  // Together: whether the CPUs share a cache or a memory path that halves each one's rate.
  const std::vector<double> reads = Rates(cpus, seconds, false, size_t{8} << 20),
                            reads_together = Rates(cpus, seconds, true, size_t{8} << 20);
  std::printf("host_probe isa=%s fma_gflops_alone=%s fma_gflops_together=%s read_8mb_gbs_alone=%s read_8mb_gbs_together=%s",
              Isa(), Join(alone).c_str(), Join(together).c_str(), Join(reads).c_str(), Join(reads_together).c_str());
  if (cpus.size() >= 2) std::printf(" round_trip_ns=%.0f", RoundTrip(cpus[0], cpus[1], 20000));
  std::printf("\n");
  return 0;
}
