// The convolution gradient paths against their im2col + GEMM references, one layer at a time, in
// process CPU time (robust on a shared, overloaded machine where wall time is not).
//
//   bench_conv_backward N C F H W K S P [--threads T] [--runs R]
//       one ungrouped convolution (batch N, C -> F channels, HxW input, KxK kernel, stride S,
//       pad P): the fastest of R calls (default 7) of each weight-gradient path
//       (ConvBackwardWeightIm2Col, BlockedBackwardWeight, PackedBackwardWeight) and each
//       data-gradient path (ConvBackwardDataIm2Col, PackedBackwardData, WinogradBackwardData
//       where it applies), and which ones
//       ConvBackwardWeight / ConvBackwardData take. Prints "key value" lines. --only KEY times
//       one path alone (weight_im2col, weight_blocked, weight_packed, data_im2col, data_packed,
//       data_winograd), for a profiler.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/conv.h>

#include "bench_util.h"

using namespace symbind;

int Main(int argc, char** argv) {
  int threads = 1, runs = 7;
  std::string only;
  std::vector<int64_t> v;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--threads" || arg == "--runs") && i + 1 < argc) (arg == "--threads" ? threads : runs) = std::atoi(argv[++i]);
    else if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else v.push_back(std::atoll(argv[i]));
  }
  if (v.size() != 8 || runs < 1) {
    std::fprintf(stderr, "usage: bench_conv_backward N C F H W K S P [--threads T] [--runs R] [--only KEY]\n");
    return 2;
  }
  SetNumThreads(threads);
  const conv::ConvDims n{v[0], v[1], v[2], 1};
  const conv::ConvGeom g = conv::ConvGeom::Planar(v[3], v[4], v[5], v[6], v[7]);
  std::vector<float> x(static_cast<size_t>(n.batch * n.in_c * g.in_size()), 0.5f), dx(x.size());
  std::vector<float> w(static_cast<size_t>(n.out_c * n.in_c * g.k_size()), 0.1f), dw(w.size());
  std::vector<float> dy(static_cast<size_t>(n.batch * n.out_c * g.out_size()), 0.25f);
  auto fastest = [&](const std::function<void()>& fn) {
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
      const double t0 = bench::ProcessCpuMs();
      fn();
      best = std::min(best, bench::ProcessCpuMs() - t0);
    }
    return best;
  };
  using GradientFn = void (*)(const float*, const float*, float*, const conv::ConvDims&, const conv::ConvGeom&, OpReq);
  auto time = [&](GradientFn fn, const std::vector<float>& other, std::vector<float>* out) {
    return fastest([&] { fn(dy.data(), other.data(), out->data(), n, g, OpReq::kWrite); });
  };
  if (!only.empty()) {  // one path alone (for a profiler): weight_im2col, data_winograd, ...
    const std::map<std::string, std::pair<GradientFn, bool>> paths = {
        {"weight_im2col", {conv::ConvBackwardWeightIm2Col, true}}, {"weight_blocked", {conv::BlockedBackwardWeight, true}},
        {"weight_packed", {conv::PackedBackwardWeight, true}},
        {"data_im2col", {conv::ConvBackwardDataIm2Col, false}},    {"data_packed", {conv::PackedBackwardData, false}},
        {"data_winograd", {conv::WinogradBackwardData, false}}};
    const auto it = paths.find(only);
    if (it == paths.end()) {
      std::fprintf(stderr, "bench_conv_backward: unknown --only %s\n", only.c_str());
      return 2;
    }
    const auto [fn, weight] = it->second;
    std::printf("%s_cpu_ms %.3f\n", only.c_str(), weight ? time(fn, x, &dw) : time(fn, w, &dx));
    return 0;
  }
  const double gflop = 2.0 * n.batch * n.out_c * g.out_size() * n.in_c * g.k_size() / 1e9;
  std::printf("gflop_per_gradient %.3f\n", gflop);
  std::printf("weight_cpu_ms_im2col %.3f\n", time(conv::ConvBackwardWeightIm2Col, x, &dw));
  std::printf("weight_cpu_ms_blocked %.3f\n", time(conv::BlockedBackwardWeight, x, &dw));
  std::printf("weight_cpu_ms_packed %.3f\n", time(conv::PackedBackwardWeight, x, &dw));
  std::printf("weight_cpu_ms_dispatch %.3f\n", time(conv::ConvBackwardWeight, x, &dw));
  std::printf("weight_dispatch %s\n", conv::BlockedBackwardWeightApplies(n, g)  ? "blocked"
                                      : conv::PackedBackwardWeightApplies(n, g) ? "packed"
                                                                                : "im2col");
  std::printf("data_cpu_ms_im2col %.3f\n", time(conv::ConvBackwardDataIm2Col, w, &dx));
  std::printf("data_cpu_ms_packed %.3f\n", time(conv::PackedBackwardData, w, &dx));
  if (conv::WinogradBackwardDataApplies(n, g))
    std::printf("data_cpu_ms_winograd %.3f\n", time(conv::WinogradBackwardData, w, &dx));
  std::printf("data_dispatch %s\n", conv::WinogradBackwardDataApplies(n, g) ? "winograd"
                                    : conv::PackedBackwardDataApplies(n, g) ? "packed"
                                                                            : "im2col");
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_conv_backward", [&] { return Main(argc, argv); }); }
