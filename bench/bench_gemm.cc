// GEMM throughput of symbind's Gemm (ops/kernels/gemm.h) against the machine's peak: the
// threads times one CPU's multiply-add rate at the kernel's vector width, measured
// (bench::FmaRate512 / FmaRate256), not the nominal clock /proc/cpuinfo reports (AMD EPYC
// guests report 2.1-2.45 GHz and run at 3.2-3.5). Shapes: square ones and the convolution GEMMs
// of ResNet-50 (filters x output pixels x C*kh*kw) at batch 1.
// Prints "gemm M N K gflops fraction_of_peak shape" lines; then "packed ..." lines the same for
// GemmPacked (the convolutions' path: weights packed once, + bias in the store) on 1x1
// convolutions of few input channels, whose short depth leaves per-tile work dominant.
// Usage: bench_gemm [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/gemm.h>
#include "bench_util.h"

using namespace symbind;
using Clock = std::chrono::steady_clock;

namespace {
double CpuMhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) return std::atof(line.substr(line.find(':') + 1).c_str());
  return 0;
}

// GFLOP/s of run() (flops each), the median of 5 timings of about 0.2 s each.
template <typename F>
double MedianGflops(const F& run, double flops) {
  run();
  auto t0 = Clock::now();
  run();
  const double once = std::max(1e-6, std::chrono::duration<double>(Clock::now() - t0).count());
  const int reps = std::max(1, static_cast<int>(0.2 / once));
  std::vector<double> gflops;
  for (int t = 0; t < 5; ++t) {
    auto s = Clock::now();
    for (int r = 0; r < reps; ++r) run();
    gflops.push_back(flops * reps / std::chrono::duration<double>(Clock::now() - s).count() / 1e9);
  }
  std::sort(gflops.begin(), gflops.end());
  return gflops[2];
}
}  // namespace

int Main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  SetNumThreads(threads);
  const double mhz = CpuMhz();
  // One CPU's rate at the kernel's vector width (the baseline kernel: the AVX2 rate, an upper
  // bound), times the threads.
  const double per_cpu = ActiveIsa() == KernelIsa::kAvx512 ? bench::FmaRate512(0.1)
                         : __builtin_cpu_supports("fma")   ? bench::FmaRate256(0.1)
                                                           : 0.0;
  const double peak = threads * per_cpu;  // GFLOP/s
  std::printf("gemm_isa %s\ncpu_mhz %.0f (nominal)\npeak_gflops %.1f (%d threads x %.1f GFLOP/s, one CPU's "
              "measured multiply-add rate)\n",
              GemmIsa(), mhz, peak, threads, per_cpu);
  struct Case {
    int64_t M, N, K;
    const char* what;
  };
  const Case cases[] = {{256, 256, 256, "square"},
                        {512, 512, 512, "square"},
                        {1024, 1024, 1024, "square"},
                        {64, 3136, 576, "resnet50 3x3 conv, 56x56"},
                        {256, 196, 2304, "resnet50 3x3 conv, 14x14"},
                        {1024, 196, 256, "resnet50 1x1 conv, 14x14"},
                        {1, 1000, 2048, "fc1000 batch 1"}};
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Case& c : cases) {
    std::vector<float> A(c.M * c.K), B(c.K * c.N), C(c.M * c.N);
    for (float& v : A) v = u(rng);
    for (float& v : B) v = u(rng);
    auto run = [&] { Gemm(false, false, c.M, c.N, c.K, 1.f, A.data(), c.K, B.data(), c.N, 0.f, C.data(), c.N); };
    const double g = MedianGflops(run, 2.0 * c.M * c.N * c.K);
    std::printf("gemm %lld %lld %lld %.1f %.2f %s\n", static_cast<long long>(c.M), static_cast<long long>(c.N),
                static_cast<long long>(c.K), g, peak > 0 ? g / peak : 0.0, c.what);
  }
  const Case packed_cases[] = {{96, 12544, 16, "mobilenet-v2 1x1 expand, 112x112"},
                               {192, 784, 32, "mobilenet-v2 1x1 expand, 28x28"},
                               {384, 196, 64, "mobilenet-v2 1x1 expand, 14x14"},
                               {64, 3025, 16, "squeezenet 1x1 expand, 55x55"},
                               {256, 3136, 64, "resnet50 1x1 conv, 56x56"},
                               {1024, 1024, 1024, "square"}};
  for (const Case& c : packed_cases) {
    std::vector<float> A(c.M * c.K), B(c.K * c.N), C(c.M * c.N), bias(c.M);
    for (float& v : A) v = u(rng);
    for (float& v : B) v = u(rng);
    for (float& v : bias) v = u(rng);
    const PackedGemmA packed(A.data(), c.M, c.K, c.K, ChooseGemmTiling(c.M, c.N));
    GemmEpilogue epilogue;
    epilogue.bias = bias.data();
    auto run = [&] { GemmPacked(packed, c.N, B.data(), c.N, C.data(), c.N, epilogue); };
    const double g = MedianGflops(run, 2.0 * c.M * c.N * c.K);
    std::printf("packed %lld %lld %lld %.1f %.2f %s\n", static_cast<long long>(c.M), static_cast<long long>(c.N),
                static_cast<long long>(c.K), g, peak > 0 ? g / peak : 0.0, c.what);
  }
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_gemm", [&] { return Main(argc, argv); }); }
