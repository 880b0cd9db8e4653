// The fused inverted residual kernels (ops/kernels/conv_inverted_residual.h: bands of planes,
// and channels-last bands where they apply) against a naive double-precision block written
// here, against the three convolutions run one after another (the same bits), for 1, 2 and 4 threads (the same bits), with the fast paths off (the
// reference paths), on small residual and non-residual blocks, strides 1 and 2, 3x3 and 5x5,
// odd sizes, and images cut into several bands and parts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_inverted_residual.h>
#include <symbind/ops/kernels/gemm_kernels.h>

#include "../../op_test_util.h"

using namespace symbind;
using namespace symbind::conv;

namespace {

std::vector<float> Random(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// The activation of hidden channel c (prelu: that channel's slope).
double Activate(double v, const FusedActivation& a, int64_t c) {
  switch (a.kind) {
    case FusedActivation::kRelu: return v > 0 ? v : 0;
    case FusedActivation::kClip: return std::min<double>(a.hi, std::max<double>(a.lo, v));
    case FusedActivation::kLeaky: return v > 0 ? v : a.slope * v;
    case FusedActivation::kPRelu: return v > 0 ? v : a.slopes[c] * v;
    default: return v;
  }
}

struct BlockData {
  std::vector<float> x, ew, eb, dw, db, pw, pb;
  InvertedResidualWeights weights() const {
    return {ew.data(), eb.data(), dw.data(), db.data(), pw.data(), pb.data()};
  }
};

BlockData RandomBlock(const InvertedResidualDims& d, uint64_t seed) {
  const int64_t k2 = d.kernel * d.kernel;
  return {Random(d.batch * d.in_c * d.height * d.width, seed),
          Random(d.hidden_c * d.in_c, seed + 1, 1.0f / std::sqrt(float(d.in_c))),
          Random(d.hidden_c, seed + 2),
          Random(d.hidden_c * k2, seed + 3, 1.0f / std::sqrt(float(k2))),
          Random(d.hidden_c, seed + 4),
          Random(d.out_c * d.hidden_c, seed + 5, 1.0f / std::sqrt(float(d.hidden_c))),
          Random(d.out_c, seed + 6)};
}

// The block in double: expansion, depthwise (zeros outside the image), projection, + x.
std::vector<double> NaiveBlock(const BlockData& b, const InvertedResidualDims& d) {
  const int64_t H = d.height, W = d.width, OH = d.out_height(), OW = d.out_width(), K = d.kernel;
  std::vector<double> y;
  for (int64_t n = 0; n < d.batch; ++n) {
    const float* x = b.x.data() + n * d.in_c * H * W;
    std::vector<double> e(static_cast<size_t>(d.hidden_c * H * W)), f(static_cast<size_t>(d.hidden_c * OH * OW));
    for (int64_t c = 0; c < d.hidden_c; ++c)
      for (int64_t p = 0; p < H * W; ++p) {
        double s = b.eb[static_cast<size_t>(c)];
        for (int64_t i = 0; i < d.in_c; ++i) s += double(b.ew[static_cast<size_t>(c * d.in_c + i)]) * x[i * H * W + p];
        e[static_cast<size_t>(c * H * W + p)] = Activate(s, d.expand_act, c);
      }
    for (int64_t c = 0; c < d.hidden_c; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b.db[static_cast<size_t>(c)];
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              const int64_t ih = oh * d.stride - d.pad + kh, iw = ow * d.stride - d.pad + kw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                s += double(b.dw[static_cast<size_t>(c * K * K + kh * K + kw)]) * e[static_cast<size_t>((c * H + ih) * W + iw)];
            }
          f[static_cast<size_t>((c * OH + oh) * OW + ow)] = Activate(s, d.depthwise_act, c);
        }
    for (int64_t o = 0; o < d.out_c; ++o)
      for (int64_t p = 0; p < OH * OW; ++p) {
        double s = b.pb[static_cast<size_t>(o)];
        for (int64_t c = 0; c < d.hidden_c; ++c) s += double(b.pw[static_cast<size_t>(o * d.hidden_c + c)]) * f[static_cast<size_t>(c * OH * OW + p)];
        if (d.residual) s += x[o * H * W + p];
        y.push_back(s);
      }
  }
  return y;
}

double RelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return diff / scale;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const FusedActivation kRelu6{FusedActivation::kClip, 0, 6}, kRelu{FusedActivation::kRelu, 0, 0}, kNone{};

InvertedResidualDims Block(int64_t batch, int64_t in_c, int64_t hidden, int64_t out_c, int64_t h, int64_t w,
                           int64_t k, int64_t s, int64_t pad, bool residual, FusedActivation expand = kRelu6,
                           FusedActivation depthwise = kRelu6) {
  return {batch, in_c, hidden, out_c, h, w, k, s, pad, expand, depthwise, residual};
}

// Fused and unfused within 1e-4 of the naive block, and the same bits where the dispatch fuses
// (`applies`: both 1x1 convolutions on the packed GEMM; below 32 output positions they are not);
// the fused one the same bits for 1, 2 and 4 threads; InvertedResidualForward adding into y
// under kAdd.
void CheckBlock(const InvertedResidualDims& d, uint64_t seed, bool applies = true) {
  CAPTURE(d.batch, d.in_c, d.hidden_c, d.out_c, d.height, d.width, d.kernel, d.stride, d.pad, d.residual);
  const BlockData b = RandomBlock(d, seed);
  const auto naive = NaiveBlock(b, d);
  const size_t ysize = naive.size();
  std::vector<float> fused(ysize, -7.0f), unfused(ysize, -7.0f), planes(ysize, -7.0f);
  InvertedResidualFused(b.x.data(), b.weights(), fused.data(), d);
  InvertedResidualUnfused(b.x.data(), b.weights(), unfused.data(), d, OpReq::kWrite);
  InvertedResidualFusedPlanes(b.x.data(), b.weights(), planes.data(), d);
  CHECK(RelativeError(unfused, naive) < 1e-4);
  CHECK(RelativeError(fused, naive) < 1e-4);
  CHECK(InvertedResidualFusionApplies(d, b.weights()) == applies);
  if (applies) CHECK(SameBits(fused, unfused));
  CHECK(SameBits(planes, fused));
  if (InvertedResidualChannelsLastApplies(d)) {  // whether or not it pays here
    std::vector<float> channels_last(ysize, -7.0f);
    InvertedResidualFusedChannelsLast(b.x.data(), b.weights(), channels_last.data(), d);
    INFO("channels-last");
    CHECK(SameBits(channels_last, fused));
  }
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> again(ysize, -7.0f);
    InvertedResidualFused(b.x.data(), b.weights(), again.data(), d);
    INFO("threads " << threads);
    CHECK(SameBits(again, fused));
  }
  const auto before = Random(static_cast<int64_t>(ysize), seed + 9);
  std::vector<float> added = before;
  InvertedResidualForward(b.x.data(), b.weights(), added.data(), d, OpReq::kAdd);
  std::vector<double> want(naive);
  for (size_t i = 0; i < want.size(); ++i) want[i] += before[i];
  CHECK(RelativeError(added, want) < 1e-4);
}

}  // namespace

TEST_CASE("Inverted residual: fused blocks match a naive block and the unfused fast paths bit for bit",
          "[conv][conv_fast][inverted_residual]") {
  CheckBlock(Block(1, 8, 24, 8, 9, 7, 3, 1, 1, true), 10);          // residual, odd sizes
  CheckBlock(Block(3, 8, 24, 12, 11, 13, 3, 2, 1, false), 20);      // stride 2, several images
  CheckBlock(Block(1, 6, 20, 6, 10, 10, 5, 1, 2, true, kRelu, kRelu), 30);  // 5x5, relu
  CheckBlock(Block(2, 5, 16, 7, 15, 9, 5, 2, 2, false, kNone, kRelu6), 40);  // linear expansion
  CheckBlock(Block(1, 4, 12, 5, 8, 9, 3, 1, 0, false), 50);         // no padding
  CheckBlock(Block(1, 3, 8, 4, 1, 1, 3, 1, 1, false), 60, false);   // a 1x1 image
  CheckBlock(Block(1, 3, 8, 4, 2, 3, 3, 2, 1, false), 70, false);   // one output row
}

TEST_CASE("Inverted residual: prelu and leaky activations (MobileFaceNet's blocks)",
          "[conv][conv_fast][inverted_residual]") {
  // Slopes one per hidden channel, some negative, so that a slope taken from the wrong channel
  // changes the result.
  const std::vector<float> expand_slopes = Random(96, 130, 0.6f), depthwise_slopes = Random(96, 131, 0.6f);
  const FusedActivation expand_prelu{FusedActivation::kPRelu, 0, 0, 0, expand_slopes.data()};
  const FusedActivation depthwise_prelu{FusedActivation::kPRelu, 0, 0, 0, depthwise_slopes.data()};
  const FusedActivation leaky{FusedActivation::kLeaky, 0, 0, 0.1f};
  CheckBlock(Block(1, 16, 96, 16, 29, 40, 3, 1, 1, true, expand_prelu, depthwise_prelu), 140);  // bands, two parts
  CheckBlock(Block(2, 16, 96, 24, 14, 14, 3, 2, 1, false, expand_prelu, depthwise_prelu), 150);
  CheckBlock(Block(1, 8, 96, 8, 7, 7, 3, 1, 1, true, leaky, depthwise_prelu), 160);
}

TEST_CASE("Inverted residual: images cut into several bands and parts, rows kept across bands",
          "[conv][conv_fast][inverted_residual]") {
  // 96 expanded channels of 40 columns: bands of a few rows, so every band but the first of a
  // part keeps the rows the band before expanded; one image runs as two parts.
  CheckBlock(Block(1, 16, 96, 16, 37, 40, 3, 1, 1, true), 80);
  CheckBlock(Block(1, 16, 96, 24, 45, 41, 3, 2, 1, false), 90);
  CheckBlock(Block(2, 12, 96, 12, 23, 40, 5, 1, 2, true), 100);
  CheckBlock(Block(1, 8, 160, 8, 21, 44, 5, 2, 2, false, kRelu6, kNone), 110);
}

TEST_CASE("Inverted residual: the channels-last kernel applies where its vectors fit",
          "[conv][conv_fast][inverted_residual]") {
  // Applicability is a property of the kernels the CPU has; whether a path pays is a tuning
  // choice and is not asserted (the results of every path are checked above).
  const InvertedResidualDims one = Block(1, 16, 96, 24, 112, 112, 3, 2, 1, false);
  const InvertedResidualDims padded = Block(1, 24, 144, 24, 56, 56, 3, 1, 1, true);
  const bool avx2 = ActiveIsa() == KernelIsa::kAvx2;
  CHECK(InvertedResidualChannelsLastApplies(one) == avx2);
  CHECK(InvertedResidualChannelsLastApplies(padded) == avx2);
  CHECK_FALSE(InvertedResidualChannelsLastApplies(Block(1, 8, 20, 8, 9, 7, 3, 1, 1, true)));  // 20 channels
  CHECK_FALSE(InvertedResidualChannelsLastApplies(Block(1, 8, 24, 8, 15, 15, 7, 1, 3, true)));  // 7x7
}

TEST_CASE("Inverted residual: with fast paths off the block runs the reference convolutions",
          "[conv][conv_fast][inverted_residual]") {
  const InvertedResidualDims d = Block(1, 8, 24, 8, 9, 7, 3, 1, 1, true);
  const BlockData b = RandomBlock(d, 120);
  const auto naive = NaiveBlock(b, d);
  std::vector<float> y(naive.size()), fast(naive.size());
  InvertedResidualForward(b.x.data(), b.weights(), fast.data(), d, OpReq::kWrite);
  const bool was_enabled = FastPathsEnabled();
  SetFastPathsEnabled(false);
  InvertedResidualForward(b.x.data(), b.weights(), y.data(), d, OpReq::kWrite);
  SetFastPathsEnabled(was_enabled);
  CHECK(RelativeError(y, naive) < 1e-5);
  CHECK(RelativeError(fast, naive) < 1e-4);
  CHECK_FALSE(SameBits(y, fast));  // the reference path (im2col + Eigen) sums in another order
}
