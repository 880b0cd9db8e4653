// MobileNet v2's inverted residual blocks (224x224 input) one at a time: the fused kernels
// (bands of rows: InvertedResidualFusedPlanes, and InvertedResidualFusedChannelsLast where it
// applies; 0 where not) against the three convolutions and the add run one after another by their fast paths into buffers allocated once (as the executor runs the
// unfused nodes), interleaved, in process CPU time and wall time. Weights read-only, as the Predictor's folded ones are.
//
//   bench_inverted_residual [--threads T] [--batch N] [--rounds R] [--runs K]
//
// Prints per block the minimum over R rounds of the mean of K calls, ms, of each path, and the
// path InvertedResidualForward takes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_inverted_residual.h>

#include "bench_util.h"

using namespace symbind;
using namespace symbind::conv;

namespace {
double WallMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A read-only array of `shape` filled with small values (weights as the Predictor binds them).
NDArray ReadOnly(const TShape& shape, float scale) {
  NDArray a(shape);
  for (int64_t i = 0; i < a.Size(); ++i) a.fdata()[i] = scale * static_cast<float>((i * 7919) % 17 - 8);
  return NDArray::View(Storage::External(a.raw_data(), a.bytes(), a.storage(), "bench weight"), 0, a.shape(),
                       a.dtype());
}

struct Block {
  int64_t in_c, hidden, out_c, size, stride;
  bool residual;
};
}  // namespace

int Main(int argc, char** argv) {
  int threads = 2, rounds = 5, runs = 5;
  int64_t batch = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--threads") threads = v;
    else if (a == "--batch") batch = v;
    else if (a == "--rounds") rounds = v;
    else if (a == "--runs") runs = v;
    else {
      std::fprintf(stderr, "usage: bench_inverted_residual [--threads T] [--batch N] [--rounds R] [--runs K]\n");
      return 2;
    }
  }
  SetNumThreads(threads);
  const std::vector<Block> blocks = {{16, 96, 24, 112, 2, false},  {24, 144, 24, 56, 1, true},
                                     {24, 144, 32, 56, 2, false},  {32, 192, 32, 28, 1, true},
                                     {32, 192, 64, 28, 2, false},  {64, 384, 64, 14, 1, true},
                                     {64, 384, 96, 14, 1, false},  {96, 576, 96, 14, 1, true},
                                     {96, 576, 160, 14, 2, false}, {160, 960, 160, 7, 1, true},
                                     {160, 960, 320, 7, 1, false}};
  std::printf("# %d threads, batch %lld, min over %d rounds of %d calls\n", threads, static_cast<long long>(batch),
              rounds, runs);
  std::printf("%-32s %9s %9s %9s %9s %9s %9s\n", "block", "cpu unf", "cpu plane", "cpu cl", "wall unf",
              "wall plane", "wall cl");
  constexpr int kPaths = 3;  // unfused, fused with planes, fused channels-last
  double total[2 * kPaths] = {};
  for (const Block& b : blocks) {
    InvertedResidualDims d{batch, b.in_c, b.hidden, b.out_c, b.size, b.size, 3, b.stride, 1,
                           {FusedActivation::kClip, 0, 6}, {FusedActivation::kClip, 0, 6}, b.residual};
    const NDArray ew = ReadOnly(TShape({b.hidden, b.in_c, 1, 1}), 0.02f), eb = ReadOnly(TShape({b.hidden}), 0.1f);
    const NDArray dw = ReadOnly(TShape({b.hidden, 1, 3, 3}), 0.05f), db = ReadOnly(TShape({b.hidden}), 0.1f);
    const NDArray pw = ReadOnly(TShape({b.out_c, b.hidden, 1, 1}), 0.01f), pb = ReadOnly(TShape({b.out_c}), 0.1f);
    DerivedWeights kept[3];  // as the node's state keeps them
    kept[0].Use(ew);
    kept[1].Use(dw);
    kept[2].Use(pw);
    const InvertedResidualWeights w{ew.fdata(), eb.fdata(), dw.fdata(), db.fdata(), pw.fdata(), pb.fdata(),
                                    &kept[0],   &kept[1],   &kept[2]};
    std::vector<float> x(static_cast<size_t>(batch * b.in_c * b.size * b.size), 0.5f);
    std::vector<float> y(static_cast<size_t>(batch * b.out_c * d.out_height() * d.out_width()));
    std::vector<float> expanded(static_cast<size_t>(batch * b.hidden * b.size * b.size));
    std::vector<float> filtered(static_cast<size_t>(batch * b.hidden * d.out_height() * d.out_width()));
    const ConvGeom pointwise = ConvGeom::Planar(b.size, b.size, 1, 1, 0);
    const ConvGeom depthwise = ConvGeom::Planar(b.size, b.size, 3, b.stride, 1);
    const ConvGeom projection = ConvGeom::Planar(d.out_height(), d.out_width(), 1, 1, 0);
    double best[2 * kPaths];  // cpu per path, then wall per path
    std::fill(best, best + 2 * kPaths, 1e300);
    const bool channels_last = InvertedResidualChannelsLastApplies(d);
    for (int r = 0; r < rounds; ++r)
      for (int path = 0; path < kPaths; ++path) {
        if (path == 2 && !channels_last) continue;
        auto call = [&] {
          if (path == 1) return InvertedResidualFusedPlanes(x.data(), w, y.data(), d);
          if (path == 2) return InvertedResidualFusedChannelsLast(x.data(), w, y.data(), d);
          // As the executor runs the three nodes: buffers planned once, not allocated per call.
          ConvForward(x.data(), w.expand_w, w.expand_b, expanded.data(), {batch, b.in_c, b.hidden, 1}, pointwise,
                      OpReq::kWrite, w.expand, d.expand_act);
          ConvForward(expanded.data(), w.depthwise_w, w.depthwise_b, filtered.data(), {batch, b.hidden, b.hidden, b.hidden},
                      depthwise, OpReq::kWrite, w.depthwise, d.depthwise_act);
          ConvForward(filtered.data(), w.project_w, w.project_b, y.data(), {batch, b.hidden, b.out_c, 1}, projection,
                      OpReq::kWrite, w.project);
          if (b.residual)
            for (size_t i = 0; i < y.size(); ++i) y[i] += x[i];
        };
        call();  // warm-up (packed weights, buffers)
        const double c0 = bench::ProcessCpuMs(), w0 = WallMs();
        for (int i = 0; i < runs; ++i) call();
        best[path] = std::min(best[path], (bench::ProcessCpuMs() - c0) / runs);
        best[kPaths + path] = std::min(best[kPaths + path], (WallMs() - w0) / runs);
      }
    for (int i = 0; i < 2 * kPaths; ++i) total[i] += i % kPaths == 2 && !channels_last ? best[i - 1] : best[i];
    const std::string name = std::to_string(b.in_c) + "->" + std::to_string(b.hidden) + "->" +
                             std::to_string(b.out_c) + " at " + std::to_string(b.size) + " s" +
                             std::to_string(b.stride) + (b.residual ? " +x" : "");
    const char* taken = !InvertedResidualFusionPays(d) ? "unfused" : channels_last ? "channels-last" : "planes";
    std::printf("%-32s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f  (%s taken)\n", name.c_str(), best[0], best[1],
                channels_last ? best[2] : 0.0, best[3], best[4], channels_last ? best[5] : 0.0, taken);
  }
  std::printf("%-32s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f  (channels-last: planes where it does not apply)\n",
              "one of each", total[0], total[1], total[2], total[3], total[4], total[5]);
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_inverted_residual", [&] { return Main(argc, argv); }); }
