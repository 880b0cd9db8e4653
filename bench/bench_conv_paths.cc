// The convolution fast paths against im2col + GEMM, in one process, interleaved, timed in
// process CPU time (robust on a shared, overloaded machine where wall time is not).
//
//   bench_conv_paths model SYMBOL PARAMS N,C,H,W [--threads T] [--rounds R] [--runs K]
//       whole model: R rounds of (K forwards with fast paths off, K with them on); prints the
//       min and median CPU ms per forward of each and the ratio of the minima.
//   bench_conv_paths rewrite SYMBOL PARAMS N,C,H,W fold|fuse|blocks|residual [--threads T] [--rounds R] [--runs K]
//       whole model bound twice, without and with one Predictor rewrite (BatchNorm folding,
//       activation fusion, inverted-residual block fusion or residual add fusion), timed the same way.
//   bench_conv_paths scaling SYMBOL PARAMS N,C,H,W [--rounds R] [--runs K]
//       two-thread scaling, node by node: R rounds of (K profiled forwards on 1 thread, K on 2);
//       per node the fastest round's ms per forward on each, and for the whole forward the
//       1-thread CPU time, the 2-thread wall time and the parallel efficiency
//       cpu_1 / (2 * wall_2) (minimums over the rounds).
//   bench_conv_paths regions US
//       the cost of one parallel region: ParallelFor (ops/op_util.h) over 1-64 equal chunks of
//       about US microseconds of work in all, 200 regions back to back inside one task (as the
//       executor runs ops), and the same after a serial gap of 1 ms each (the idle worker gone
//       to sleep); fastest of 7 rounds, us per region, on 1 and 2 threads.
//   bench_conv_paths layer N C F G H W K S P [--threads T]
//       one convolution (batch N, C -> F channels, G groups, HxW input, KxK kernel, stride S,
//       pad P): the fastest of 15 calls of ConvForwardIm2Col and of the fast path that applies
//       (Winograd here transforms the weights on every call: no cache; then with its weights
//       cached, checked and read-only; and F(4,3) and F(6,3) each, cached read-only), and for ungrouped ones
//       whether ConvForward takes the packed-GEMM path and its times with the weights packed
//       per call, cached and checked, cached read-only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tbb/task_group.h>

#include <symbind/executor/threading.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/op_util.h>
#include <symbind/predict/predictor.h>

#include "bench_util.h"

using namespace symbind;

namespace {
[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: bench_conv_paths model SYMBOL PARAMS N,C,H,W [--threads T] [--rounds R] [--runs K]\n"
               "       bench_conv_paths rewrite SYMBOL PARAMS N,C,H,W fold|fuse|blocks|residual [--threads T] [--rounds R] [--runs K]\n"
               "       bench_conv_paths scaling SYMBOL PARAMS N,C,H,W [--rounds R] [--runs K]\n"
               "       bench_conv_paths regions US\n"
               "       bench_conv_paths layer N C F G H W K S P [--threads T]\n");
  std::exit(2);
}

int Option(std::vector<std::string>* args, const std::string& name, int fallback) {
  auto it = std::find(args->begin(), args->end(), name);
  if (it == args->end()) return fallback;
  if (it + 1 == args->end()) Usage();
  const int v = std::atoi((it + 1)->c_str());
  args->erase(it, it + 2);
  return v;
}

// SYMBOL PARAMS N,C,H,W bound as a Predictor with its default rewrites.
Predictor BindModel(const std::vector<std::string>& a) {
  if (a.size() != 3) Usage();
  Model model = LoadModelFiles(a[0], a[1]);
  std::map<std::string, TShape> shapes;
  shapes.insert(ParseShapeSpec("data=" + a[2]));
  return Predictor(model.symbol, ReadOnlyViews(model.args), ReadOnlyViews(model.aux), shapes, PredictorOptions());
}

void TimeModel(const std::vector<std::string>& a, int rounds, int runs) {
  Predictor predictor = BindModel(a);
  Executor& exec = predictor.executor();
  std::vector<double> ms[2];
  for (int r = 0; r < rounds; ++r)
    for (int fast = 0; fast < 2; ++fast) {
      conv::SetFastPathsEnabled(fast == 1);
      exec.Forward(false);  // warm-up (and the Winograd weight cache)
      const double t0 = bench::ProcessCpuMs();
      for (int i = 0; i < runs; ++i) exec.Forward(false);
      ms[fast].push_back((bench::ProcessCpuMs() - t0) / runs);
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  std::printf("cpu_ms_im2col min %.2f median %.2f\ncpu_ms_fast min %.2f median %.2f\nratio_min %.2f\n",
              ms[0][0], ms[0][rounds / 2], ms[1][0], ms[1][rounds / 2], ms[1][0] / ms[0][0]);
}

void TimeRewrite(const std::vector<std::string>& a, int rounds, int runs) {
  if (a.size() != 4 || (a[3] != "fold" && a[3] != "fuse" && a[3] != "blocks" && a[3] != "residual")) Usage();
  Model model = LoadModelFiles(a[0], a[1]);
  std::map<std::string, TShape> shapes;
  shapes.insert(ParseShapeSpec("data=" + a[2]));
  std::vector<Predictor> predictors;
  for (int with = 0; with < 2; ++with) {
    PredictorOptions options;
    const char* pass = a[3] == "fold"     ? "fold_batch_norm"
                       : a[3] == "fuse"   ? "fuse_activations"
                       : a[3] == "blocks" ? "fuse_inverted_residuals"
                                          : "fuse_residual_adds";
    if (with == 0) options.disabled_passes.insert(pass);
    predictors.emplace_back(model.symbol, model.args, model.aux, shapes, options);
  }
  std::vector<double> ms[2];
  for (int r = 0; r < rounds; ++r)
    for (int with = 0; with < 2; ++with) {
      Executor& exec = predictors[static_cast<size_t>(with)].executor();
      exec.Forward(false);  // warm-up
      const double t0 = bench::ProcessCpuMs();
      for (int i = 0; i < runs; ++i) exec.Forward(false);
      ms[with].push_back((bench::ProcessCpuMs() - t0) / runs);
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  std::printf("cpu_ms_without min %.2f median %.2f\ncpu_ms_with min %.2f median %.2f\nratio_min %.2f\n", ms[0][0],
              ms[0][rounds / 2], ms[1][0], ms[1][rounds / 2], ms[1][0] / ms[0][0]);
}

double WallMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void TimeScaling(const std::vector<std::string>& a, int rounds, int runs) {
  Predictor predictor = BindModel(a);
  Executor& exec = predictor.executor();
  // [threads - 1]: per node the fastest round's ms per forward; whole forwards' wall and CPU ms.
  std::vector<double> node_ms[2];
  double wall[2] = {1e300, 1e300}, cpu[2] = {1e300, 1e300}, summed[2] = {1e300, 1e300};
  for (int r = 0; r < rounds; ++r)
    for (int t = 0; t < 2; ++t) {
      SetNumThreads(t + 1);
      exec.Forward(false);  // warm-up (and the weight caches)
      const double c0 = bench::ProcessCpuMs();
      for (int i = 0; i < runs; ++i) {
        const double w0 = WallMs();
        exec.Forward(false);
        wall[t] = std::min(wall[t], WallMs() - w0);
      }
      cpu[t] = std::min(cpu[t], (bench::ProcessCpuMs() - c0) / runs);
      exec.SetProfiling(true);
      for (int i = 0; i < runs; ++i) exec.Forward(false);
      exec.SetProfiling(false);
      const std::vector<NodeTiming> rows = exec.ForwardProfile();
      node_ms[t].resize(rows.size(), 1e300);
      double sum = 0;
      for (size_t k = 0; k < rows.size(); ++k) {
        const double ms = rows[k].calls ? rows[k].total_ms / static_cast<double>(rows[k].calls) : 0.0;
        node_ms[t][k] = std::min(node_ms[t][k], ms);
        sum += ms;
      }
      summed[t] = std::min(summed[t], sum);
    }
  const std::vector<NodeTiming> rows = exec.ForwardProfile();
  std::printf("%-28s %-18s %-18s %9s %9s %8s\n", "node", "op", "output", "1T ms", "2T ms", "1T/2T");
  for (size_t k = 0; k < rows.size(); ++k) {
    std::ostringstream shape;
    shape << rows[k].output_shape;
    std::printf("%-28s %-18s %-18s %9.3f %9.3f %7.2fx\n", rows[k].name.c_str(), rows[k].op.c_str(),
                shape.str().c_str(), node_ms[0][k], node_ms[1][k], node_ms[0][k] / std::max(node_ms[1][k], 1e-9));
  }
  std::printf("nodes_summed_ms 1T %.3f 2T %.3f\nforward_wall_ms 1T %.3f 2T %.3f\nforward_cpu_ms 1T %.3f 2T %.3f\n",
              summed[0], summed[1], wall[0], wall[1], cpu[0], cpu[1]);
  std::printf("speedup_wall %.2f\nparallel_efficiency %.3f\n", wall[0] / wall[1], cpu[0] / (2 * wall[1]));
}

void TimeLayer(const std::vector<std::string>& a) {
  if (a.size() != 9) Usage();
  int64_t v[9];
  for (int i = 0; i < 9; ++i) v[i] = std::atoll(a[static_cast<size_t>(i)].c_str());
  const conv::ConvDims n{v[0], v[1], v[2], v[3]};
  const conv::ConvGeom g = conv::ConvGeom::Planar(v[4], v[5], v[6], v[7], v[8]);
  std::vector<float> x(static_cast<size_t>(n.batch * n.in_c * g.in_size()), 0.5f);
  std::vector<float> w(static_cast<size_t>(n.out_c * (n.in_c / n.groups) * g.k_size()), 0.1f);
  std::vector<float> b(static_cast<size_t>(n.out_c), 0.0f);
  std::vector<float> y(static_cast<size_t>(n.batch * n.out_c * g.out_size()));
  auto fastest = [](const std::function<void()>& fn) {
    double best = 1e300;
    for (int r = 0; r < 15; ++r) {
      const double t0 = bench::ProcessCpuMs();
      fn();
      best = std::min(best, bench::ProcessCpuMs() - t0);
    }
    return best;
  };
  const double ref = fastest([&] {
    conv::ConvForwardIm2Col(x.data(), w.data(), b.data(), y.data(), n, g, OpReq::kWrite);
  });
  const char* path = "none";
  double fast = 0;
  if (conv::DepthwiseApplies(n, g)) {
    path = "depthwise";
    fast = fastest([&] {
      conv::DepthwiseConvForward(x.data(), w.data(), b.data(), y.data(), n, g, OpReq::kWrite);
    });
  } else if (conv::TinyDepthApplies(n, g)) {
    path = "tiny_depth";
    fast = fastest([&] { conv::TinyDepthConvForward(x.data(), w.data(), b.data(), y.data(), n, g); });
  } else if (conv::WinogradApplies(n, g)) {
    path = conv::WinogradPays(n, g) ? "winograd" : "winograd(not taken by ConvForward)";
    fast = fastest([&] {
      conv::WinogradConvForward(x.data(), w.data(), b.data(), y.data(), n, g, OpReq::kWrite);
    });
  }
  std::printf("cpu_ms_im2col %.3f\ncpu_ms_fast %.3f\npath %s\n", ref, fast, path);
  // Derived forms kept by a node's DerivedWeights, for a writable array and for read-only
  // (memory-mapped) weights: the same cost once made, but only read-only weights make wide
  // layers choose Winograd.
  const TShape wshape({static_cast<int64_t>(w.size())});
  NDArray writable(wshape, w);
  auto buffer = std::shared_ptr<float>(static_cast<float*>(std::aligned_alloc(64, w.size() * 4 + 64)), std::free);
  std::copy(w.begin(), w.end(), buffer.get());
  NDArray read_only = NDArray::View(Storage::External(buffer.get(), w.size() * 4, buffer, "weights"), 0, wshape);
  DerivedWeights kept_writable, kept_read_only;
  kept_writable.Use(writable);
  kept_read_only.Use(read_only);
  if (conv::WinogradApplies(n, g)) {
    const conv::WinogradTile chosen = conv::ChooseWinogradTile(n, g, &kept_read_only);  // as a Predictor's weights
    std::printf("winograd_chosen %s\n", chosen == conv::WinogradTile::kF6   ? "F(6,3)"
                                        : chosen == conv::WinogradTile::kF4 ? "F(4,3)"
                                        : chosen == conv::WinogradTile::kF2 ? "F(2,3)"
                                                                             : "none");
    const double kept = fastest([&] {
      conv::WinogradConvForward(x.data(), read_only.fdata(), b.data(), y.data(), n, g, OpReq::kWrite, &kept_read_only);
    });
    std::printf("cpu_ms_winograd_kept %.3f\n", kept);
    // Each variant with its weights kept, whichever ChooseWinogradTile picks.
    for (conv::WinogradTile tile : {conv::WinogradTile::kF2, conv::WinogradTile::kF4, conv::WinogradTile::kF6})
      std::printf("cpu_ms_winograd_%s_read_only %.3f\n",
                  tile == conv::WinogradTile::kF6 ? "f6" : tile == conv::WinogradTile::kF4 ? "f4" : "f2", fastest([&] {
                    conv::WinogradConvForward(x.data(), read_only.fdata(), b.data(), y.data(), n, g, OpReq::kWrite,
                                              &kept_read_only, {}, tile);
                  }));
  }
  if (conv::DirectConvApplies(n, g))
    std::printf("direct_taken_by_ConvForward %d\ncpu_ms_direct_read_only %.3f\n", conv::DirectConvPays(n, g) ? 1 : 0,
                fastest([&] {
                  conv::DirectConvForward(x.data(), read_only.fdata(), b.data(), y.data(), n, g, {}, &kept_read_only);
                }));
  if (n.groups != 1) return;
  // The packed-GEMM path: weights packed on every call, and kept by the node. Whether
  // ConvForward takes it when an executor runs the node (with its DerivedWeights).
  std::printf("packed_taken_by_ConvForward %d\n", conv::PackedGemmApplies(n, g, &kept_writable) ? 1 : 0);
  const double per_call = fastest([&] { conv::PackedGemmConvForward(x.data(), w.data(), b.data(), y.data(), n, g); });
  const double kept = fastest([&] {
    conv::PackedGemmConvForward(x.data(), writable.fdata(), b.data(), y.data(), n, g, {}, &kept_writable);
  });
  std::printf("cpu_ms_packed_per_call %.3f\ncpu_ms_packed_kept %.3f\n", per_call, kept);
  // As a Predictor runs the layer in float32 and in bf16 (weights kept, read-only), alone and as
  // a pre-activation ResNet's fused node: a residual added and the next unit's BatchNorm + relu
  // written as a second output.
  if (!Bf16Available()) return;
  std::vector<float> residual(y.size(), 0.25f), second(y.size()), mean(static_cast<size_t>(n.out_c), 0.1f),
      scale(static_cast<size_t>(n.out_c), 0.9f), shift(static_cast<size_t>(n.out_c), 0.05f);
  const conv::NormalizedOutput normalized{second.data(), mean.data(), scale.data(), shift.data(),
                                          FusedActivation{FusedActivation::kRelu}};
  const bool bf16 = conv::Bf16ConvApplies(n, g, &kept_read_only);
  std::printf("bf16_taken %d\n", bf16 ? 1 : 0);
  for (int fused = 0; fused < 2; ++fused) {
    const float* r = fused ? residual.data() : nullptr;
    const conv::NormalizedOutput z = fused ? normalized : conv::NormalizedOutput{};
    const double f32 = bench::MedianMs(60, [&] {
      conv::ConvForward(x.data(), read_only.fdata(), b.data(), y.data(), n, g, OpReq::kWrite, &kept_read_only, {}, r, z);
    });
    const double b16 = !bf16 ? 0.0 : bench::MedianMs(60, [&] {
      conv::Bf16ConvForward(x.data(), read_only.fdata(), b.data(), y.data(), n, g, &kept_read_only, {}, r, z);
    });
    std::printf("wall_ms_%s_fp32 %.3f\nwall_ms_%s_bf16 %.3f\n", fused ? "fused" : "plain", f32, fused ? "fused" : "plain", b16);
  }
}
// Spin work of about `us` microseconds (calibrated once).
void SpinFor(double us) {
  static const double per_us = [] {
    volatile float sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10000000; ++i) sink = sink + 0.5f;
    return 10000000 / std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }();
  volatile float sink = 0;
  for (int64_t i = 0, n = static_cast<int64_t>(us * per_us); i < n; ++i) sink = sink + 0.5f;
}

void TimeRegions(const std::vector<std::string>& a) {
  if (a.size() != 1) Usage();
  const double us = std::atof(a[0].c_str());
  std::printf("%-8s %10s %12s %12s %12s %12s\n", "chunks", "work_us", "1T_us", "2T_us", "1T_gap_us", "2T_gap_us");
  for (int64_t chunks : {1, 2, 4, 8, 16, 64}) {
    double best[2][2];  // [threads - 1][after a gap]
    for (int t = 0; t < 2; ++t) {
      SetNumThreads(t + 1);
      for (int gap = 0; gap < 2; ++gap) {
        const int regions = gap ? 20 : 200;
        best[t][gap] = 1e30;
        for (int round = 0; round < 7; ++round) {
          double total = 0;
          tbb::task_group group;  // regions nested in a task, as the executor's forward runs them
          group.run([&] {
            for (int r = 0; r < regions; ++r) {
              if (gap) std::this_thread::sleep_for(std::chrono::milliseconds(1));
              const auto t0 = std::chrono::steady_clock::now();
              ParallelFor(chunks, 1, [&](int64_t b, int64_t e) { SpinFor(us * static_cast<double>(e - b) / chunks); });
              total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            }
          });
          group.wait();
          best[t][gap] = std::min(best[t][gap], total / regions);
        }
      }
    }
    std::printf("%-8lld %10.1f %12.2f %12.2f %12.2f %12.2f\n", static_cast<long long>(chunks), us, best[0][0], best[1][0],
                best[0][1], best[1][1]);
  }
}
}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) Usage();
  const std::string mode = args[0];
  args.erase(args.begin());
  SetNumThreads(Option(&args, "--threads", 1));
  const int rounds = Option(&args, "--rounds", 5), runs = Option(&args, "--runs", 5);
  if (mode == "model") TimeModel(args, rounds, runs);
  else if (mode == "rewrite") TimeRewrite(args, rounds, runs);
  else if (mode == "scaling") TimeScaling(args, rounds, runs);
  else if (mode == "layer") TimeLayer(args);
  else if (mode == "regions") TimeRegions(args);
  else Usage();
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_conv_paths", [&] { return Main(argc, argv); }); }
