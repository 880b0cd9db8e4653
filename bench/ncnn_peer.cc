// Tencent's ncnn as a peer for bench/run.sh: runs a model that ncnn's own tools converted from
// the bench's MXNet files (mxnet2ncnn, then ncnnoptimize) on the input symbind gets. Built only
// when CMake is given an installed ncnn (-DSYMBIND_BENCH_NCNN_DIR=DIR).
//
//   ncnn_peer MODEL.param MODEL.bin --input data=X.npy | --shape data=1,C,H,W
//       [--threads T] [--runs R] [--output BLOB]... [--expect BLOB=REF.npy]... [--profile]
//       [--ncnn-defaults]
//
// Prints "key value" lines:
//   --expect     max_abs_diff_<BLOB>, rel_diff_<BLOB> (max |ncnn - ref| / max |ref|) and
//                cos_<BLOB> (cosine similarity) of one forward on --input (REF: what `symbind run ... --all-outputs` wrote)
//   --runs R     after 2 warm-up forwards, R timed ones, each extracting the --output blobs
//                (default: the --expect blobs, else the last layer's output): times_ms (wall
//                clock of every run), cpu_times_ms (process CPU time of every run, all
//                threads), latency_ms / latency_min_ms (median / minimum wall), cpu_ms (median)
//   --profile    per layer (ncnn's own order), the median over max(R, 5) runs of that layer
//                alone: its inputs are computed first in the same extractor (lightmode off, so
//                that they stay), then the layer's output is extracted and timed. Lines
//                "layer TYPE NAME ms" sorted by cost, then "layer_type TYPE ms count".
// Options: T threads (opt.num_threads, OpenMP; default 2). Storage is fp32 everywhere: ncnn's
// fp16 storage/arithmetic (on by default, used on x86 for weights where the CPU has F16C) and
// bf16 storage are switched off, packed layouts (pack4/8/16, fp32) stay on; --ncnn-defaults
// keeps ncnn's default Option instead. ncnn flushes denormals (its default) in both cases.
// OpenMP's wait policy is the environment's (OMP_WAIT_POLICY): spinning threads add to the
// CPU time, so CPU-time comparisons should run with OMP_WAIT_POLICY=PASSIVE.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cpu.h"  // ncnn's (its package puts include/ncnn on the path)
#include "net.h"

#include <symbind/core/error.h>
#include <symbind/io/model_report.h>
#include <symbind/io/npy.h>

#include "bench_util.h"

using symbind::StrCat;

namespace {
struct Options {
  std::string param, bin, input_name = "data", input_file;
  std::vector<int64_t> input_shape;  // N,C,H,W with N = 1
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::string>> expects;
  int threads = 2, runs = 0;
  bool profile = false, ncnn_defaults = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "ncnn_peer: %s\nusage: ncnn_peer MODEL.param MODEL.bin --input data=X.npy | --shape data=1,C,H,W "
               "[--threads T] [--runs R] [--output BLOB]... [--expect BLOB=REF.npy]... [--profile] "
               "[--ncnn-defaults]\n",
               problem.c_str());
  std::exit(2);
}

std::pair<std::string, std::string> Split(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) Usage("expected NAME=VALUE, got '" + spec + "'");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

Options Parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") std::tie(o.input_name, o.input_file) = Split(value());
    else if (a == "--shape") {
      const auto [name, shape] = symbind::ParseShapeSpec(value());
      o.input_name = name;
      o.input_shape = shape.dims();
    } else if (a == "--threads") o.threads = std::atoi(value().c_str());
    else if (a == "--runs") o.runs = std::atoi(value().c_str());
    else if (a == "--output") o.outputs.push_back(value());
    else if (a == "--expect") o.expects.push_back(Split(value()));
    else if (a == "--profile") o.profile = true;
    else if (a == "--ncnn-defaults") o.ncnn_defaults = true;
    else if (a.rfind("--", 0) == 0) Usage("unknown option " + a);
    else positional.push_back(a);
  }
  if (positional.size() != 2) Usage("expected MODEL.param and MODEL.bin");
  if (o.input_file.empty() && o.input_shape.empty()) Usage("give --input or --shape");
  if (!o.expects.empty() && o.input_file.empty()) Usage("--expect needs --input");
  o.param = positional[0];
  o.bin = positional[1];
  return o;
}

double WallMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// NCHW (N = 1) values as an ncnn Mat (w, h, c): ncnn pads every channel to 16 bytes.
ncnn::Mat ToMat(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  if (shape.size() != 4 || shape[0] != 1)
    throw symbind::ShapeError(StrCat("ncnn_peer: the input must be 1,C,H,W, got ", shape.size(), " dims"));
  const int c = static_cast<int>(shape[1]), h = static_cast<int>(shape[2]), w = static_cast<int>(shape[3]);
  ncnn::Mat m(w, h, c);
  for (int q = 0; q < c; ++q) {
    float* dst = m.channel(q);
    std::copy_n(values.data() + static_cast<size_t>(q) * w * h, static_cast<size_t>(w) * h, dst);
  }
  return m;
}

// A Mat's values in C, D, H, W order without the channel padding.
std::vector<float> FromMat(const ncnn::Mat& m) {
  const size_t plane = static_cast<size_t>(m.w) * m.h * m.d;
  std::vector<float> v(plane * m.c);
  for (int q = 0; q < m.c; ++q) {
    const float* p = m.channel(q);
    std::copy_n(p, plane, v.data() + plane * q);
  }
  return v;
}

std::vector<float> RandomInput(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  uint32_t seed = 1;
  for (float& x : v) {
    seed = seed * 1103515245u + 12345u;
    x = static_cast<float>((seed >> 8) * (1.0 / 16777216.0)) * 2 - 1;
  }
  return v;
}

struct Peer {
  ncnn::Net net;
  ncnn::Mat input;
  std::string input_name;

  void Extract(ncnn::Extractor& ex, const std::string& blob, ncnn::Mat* out, int type = 0) {
    if (ex.extract(blob.c_str(), *out, type) != 0 || out->empty())
      throw symbind::Error(StrCat("ncnn_peer: cannot extract blob '", blob, "' (no such blob, or its layer failed)"));
  }
  ncnn::Extractor Start() {
    ncnn::Extractor ex = net.create_extractor();
    if (ex.input(input_name.c_str(), input) != 0)
      throw symbind::Error(StrCat("ncnn_peer: the model has no input blob '", input_name, "'"));
    return ex;
  }
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void PrintTimes(const char* key, const std::vector<double>& v) {
  std::printf("%s", key);
  for (double t : v) std::printf(" %.3f", t);
  std::printf("\n");
}

void Profile(Peer& peer, int runs) {
  const auto& layers = peer.net.layers();
  const auto& blobs = peer.net.blobs();
  std::vector<std::pair<double, const ncnn::Layer*>> cost;
  std::map<std::string, std::pair<double, int>> by_type;
  double total = 0;
  for (const ncnn::Layer* layer : layers) {
    if (layer->type == "Input" || layer->tops.empty()) continue;
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      ncnn::Extractor ex = peer.Start();
      ex.set_light_mode(false);  // keep the inputs computed first instead of recycling them
      ncnn::Mat m;
      for (int b : layer->bottoms) peer.Extract(ex, blobs[static_cast<size_t>(b)].name, &m, 1);
      const double t0 = WallMs();
      peer.Extract(ex, blobs[static_cast<size_t>(layer->tops[0])].name, &m, 1);
      ms.push_back(WallMs() - t0);
    }
    const double t = Median(ms);
    cost.emplace_back(t, layer);
    by_type[layer->type].first += t;
    by_type[layer->type].second += 1;
    total += t;
  }
  std::sort(cost.begin(), cost.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::printf("profile_total_ms %.3f\n", total);
  for (auto& [t, layer] : cost) std::printf("layer %s %s %.3f\n", layer->type.c_str(), layer->name.c_str(), t);
  std::vector<std::pair<double, std::string>> types;
  for (auto& [type, tc] : by_type) types.emplace_back(tc.first, type);
  std::sort(types.rbegin(), types.rend());
  for (auto& [t, type] : types) std::printf("layer_type %s %.3f %d\n", type.c_str(), t, by_type[type].second);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = Parse(argc, argv);
    Peer peer;
    peer.input_name = o.input_name;
    ncnn::set_omp_dynamic(0);
    ncnn::set_omp_num_threads(o.threads);
    ncnn::Option& opt = peer.net.opt;
    opt.num_threads = o.threads;
    if (!o.ncnn_defaults) {
      opt.use_fp16_packed = opt.use_fp16_storage = opt.use_fp16_arithmetic = false;
      opt.use_bf16_storage = opt.use_bf16_packed = false;
    }
    if (peer.net.load_param(o.param.c_str()) != 0)
      throw symbind::IOError(StrCat("ncnn_peer: cannot load ", o.param, " (ncnn's messages above say why)"));
    if (peer.net.load_model(o.bin.c_str()) != 0)
      throw symbind::IOError(StrCat("ncnn_peer: cannot load ", o.bin, " for ", o.param));
    if (!o.input_file.empty()) {
      const symbind::NDArray x = symbind::LoadNpy(o.input_file);
      peer.input = ToMat(x.shape().dims(), x.ToVector());  // ToVector converts to float32
    } else {
      peer.input = ToMat(o.input_shape, RandomInput(o.input_shape));
    }
    std::printf("ncnn_options threads %d fp16_storage %d bf16_storage %d packing %d winograd %d\n", opt.num_threads,
                opt.use_fp16_storage ? 1 : 0, opt.use_bf16_storage ? 1 : 0, opt.use_packing_layout ? 1 : 0,
                opt.use_winograd_convolution ? 1 : 0);

    for (const auto& [blob, ref_file] : o.expects) {
      ncnn::Extractor ex = peer.Start();
      ncnn::Mat out;
      peer.Extract(ex, blob, &out);
      const std::vector<float> got = FromMat(out);
      const std::vector<float> want = symbind::LoadNpy(ref_file).ToVector();
      if (got.size() != want.size())
        throw symbind::ShapeError(StrCat("ncnn_peer: blob '", blob, "' has ", got.size(), " values, ", ref_file,
                                         " has ", want.size()));
      double diff = 0, scale = 1e-30;
      double dot = 0, got_norm = 0, want_norm = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const double d = std::fabs(double(got[i]) - want[i]);
        diff = std::isnan(d) || d > diff ? d : diff;  // a NaN anywhere is the answer, not skipped
        scale = std::max(scale, std::fabs(double(want[i])));
        dot += double(got[i]) * want[i];
        got_norm += double(got[i]) * got[i];
        want_norm += double(want[i]) * want[i];
      }
      std::printf("max_abs_diff_%s %.3g\nrel_diff_%s %.3g\ncos_%s %.4f\n", blob.c_str(), diff, blob.c_str(), diff / scale,
                  blob.c_str(), dot / std::sqrt(got_norm * want_norm));
    }

    std::vector<std::string> outputs = o.outputs;
    if (outputs.empty())
      for (auto& e : o.expects) outputs.push_back(e.first);
    if (outputs.empty()) {
      const ncnn::Layer* last = peer.net.layers().back();
      outputs.push_back(peer.net.blobs()[static_cast<size_t>(last->tops[0])].name);
    }
    if (o.runs > 0) {
      std::vector<double> wall, cpu;
      for (int i = 0; i < o.runs + 2; ++i) {
        const double w0 = WallMs(), c0 = symbind::bench::ProcessCpuMs();
        ncnn::Extractor ex = peer.Start();
        ncnn::Mat out;
        for (auto& blob : outputs) peer.Extract(ex, blob, &out);
        if (i < 2) continue;
        wall.push_back(WallMs() - w0);
        cpu.push_back(symbind::bench::ProcessCpuMs() - c0);
      }
      PrintTimes("times_ms", wall);
      PrintTimes("cpu_times_ms", cpu);
      std::printf("latency_ms %.3f\nlatency_min_ms %.3f\ncpu_ms %.3f\n", Median(wall),
                  *std::min_element(wall.begin(), wall.end()), Median(cpu));
    }
    if (o.profile) Profile(peer, std::max(o.runs, 5));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncnn_peer: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
