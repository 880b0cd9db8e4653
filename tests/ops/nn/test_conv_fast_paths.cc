// The convolution fast paths (direct depthwise, Winograd F(4x4,3x3) and F(6x6,3x3), packed GEMM) against a
// naive double-precision convolution written here and against the im2col + GEMM reference path;
// their results bit-identical for 1, 2 and 4 threads; fused activations bit-identical to the
// activation after the convolution; a node's derived weights (DerivedWeights) never going
// stale; the packed-GEMM and Winograd data gradients and the blocked weight gradient against
// naive double-precision gradients and the im2col + GEMM ones; a whole model's training
// gradients both ways.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/predict/predictor.h>

#include "../../model_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::conv;

namespace {

struct Case {
  int64_t batch, in_c, out_c, groups, h, w, k, stride, pad, dilate = 1;
};
// A case for one named path.
struct PathCase {
  const char* path;
  Case c;
};

ConvGeom Geom(const Case& c) {
  ConvGeom g;
  g.in[1] = c.h;
  g.in[2] = c.w;
  g.k[1] = g.k[2] = c.k;
  g.s[1] = g.s[2] = c.stride;
  g.p[1] = g.p[2] = c.pad;
  g.d[1] = g.d[2] = c.dilate;
  for (int i = 1; i < 3; ++i) g.out[i] = (g.in[i] + 2 * c.pad - c.dilate * (c.k - 1) - 1) / c.stride + 1;
  return g;
}

std::vector<float> Random(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}

// y[n,f,oh,ow] = b[f] + sum over f's group of x * w, in double.
std::vector<double> NaiveConv(const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b, const Case& c, const ConvGeom& g) {
  const int64_t cg = c.in_c / c.groups, fg = c.out_c / c.groups, OH = g.out[1], OW = g.out[2];
  std::vector<double> y(static_cast<size_t>(c.batch * c.out_c * OH * OW));
  size_t idx = 0;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t f = 0; f < c.out_c; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b[static_cast<size_t>(f)];
          for (int64_t cl = 0; cl < cg; ++cl)
            for (int64_t kh = 0; kh < c.k; ++kh)
              for (int64_t kw = 0; kw < c.k; ++kw) {
                const int64_t ih = oh * c.stride - c.pad + kh * c.dilate;
                const int64_t iw = ow * c.stride - c.pad + kw * c.dilate;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                const int64_t ch = f / fg * cg + cl;
                acc += double(x[static_cast<size_t>(((n * c.in_c + ch) * c.h + ih) * c.w + iw)]) *
                       w[static_cast<size_t>(((f * cg + cl) * c.k + kh) * c.k + kw)];
              }
          y[idx++] = acc;
        }
  return y;
}

// max |got - want| / max |want|: the accuracy contract's relative error.
template <typename A, typename B>
double RelativeError(const std::vector<A>& got, const std::vector<B>& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::fabs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  return diff / scale;
}

using ForwardFn = void (*)(const float*, const float*, const float*, float*, const ConvDims&,
                           const ConvGeom&, OpReq);

void WinogradF4NoCache(const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                       const ConvGeom& g, OpReq req) {
  WinogradConvForward(x, w, b, y, n, g, req, nullptr, {}, WinogradTile::kF4);
}

void WinogradF2NoCache(const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                       const ConvGeom& g, OpReq req) {
  WinogradConvForward(x, w, b, y, n, g, req, nullptr, {}, WinogradTile::kF2);
}

void WinogradF6NoCache(const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                       const ConvGeom& g, OpReq req) {
  WinogradConvForward(x, w, b, y, n, g, req, nullptr, {}, WinogradTile::kF6);
}

void Depthwise(const float* x, const float* w, const float* b, float* y, const ConvDims& n,
               const ConvGeom& g, OpReq req) {
  DepthwiseConvForward(x, w, b, y, n, g, req);
}

// Runs `fast` and the reference on the case: both within 1e-4 of the naive convolution, of each
// other, in write and (when `add` is set) add mode, and bit-identical for 1, 2 and 4 threads.
void CheckFastPath(ForwardFn fast, const Case& c, uint64_t seed, bool add = true) {
  CAPTURE(c.batch, c.in_c, c.out_c, c.groups, c.h, c.w, c.k, c.stride, c.pad, c.dilate);
  const ConvGeom g = Geom(c);
  const ConvDims n{c.batch, c.in_c, c.out_c, c.groups};
  const auto x = Random(c.batch * c.in_c * c.h * c.w, seed);
  const auto w = Random(c.out_c * (c.in_c / c.groups) * c.k * c.k, seed + 1);
  const auto b = Random(c.out_c, seed + 2);
  const int64_t ysize = c.batch * c.out_c * g.out_size();
  const auto naive = NaiveConv(x, w, b, c, g);

  std::vector<float> ref(static_cast<size_t>(ysize)), got(static_cast<size_t>(ysize));
  ConvForwardIm2Col(x.data(), w.data(), b.data(), ref.data(), n, g, OpReq::kWrite);
  fast(x.data(), w.data(), b.data(), got.data(), n, g, OpReq::kWrite);
  CHECK(RelativeError(ref, naive) < 1e-5);
  CHECK(RelativeError(got, naive) < 1e-4);
  CHECK(RelativeError(got, ref) < 1e-4);

  if (add) {  // y = previous y + conv
    const auto before = Random(ysize, seed + 3);
    std::vector<float> added = before;
    fast(x.data(), w.data(), b.data(), added.data(), n, g, OpReq::kAdd);
    std::vector<double> want_added(naive);
    for (size_t i = 0; i < want_added.size(); ++i) want_added[i] += before[i];
    CHECK(RelativeError(added, want_added) < 1e-4);
  }

  // Every thread count computes the same bits.
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> again(static_cast<size_t>(ysize), -7.0f);
    fast(x.data(), w.data(), b.data(), again.data(), n, g, OpReq::kWrite);
    INFO("threads " << threads);
    CHECK(std::memcmp(again.data(), got.data(), got.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("Depthwise convolution fast path matches the reference", "[conv][conv_fast][depthwise]") {
  // Run also with SYMBIND_GEMM_ISA=avx2 and base (ctest conv_depthwise_avx2 and
  // conv_depthwise_plane_loops): the AVX-512 kernel (16-column chunks, four rows at a time), the
  // AVX2 one (8-column chunks) and the plane loops.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      {1, 8, 8, 8, 9, 9, 3, 1, 1},     {2, 5, 5, 5, 11, 7, 3, 2, 1},   {1, 3, 3, 3, 12, 13, 3, 1, 0},
      {2, 4, 4, 4, 10, 9, 3, 2, 0},    {1, 6, 6, 6, 13, 17, 5, 1, 2},  {3, 2, 2, 2, 15, 14, 5, 2, 2},
      {1, 4, 4, 4, 7, 8, 5, 2, 0},     {1, 16, 16, 16, 33, 31, 3, 2, 3}, {2, 3, 3, 3, 3, 3, 3, 1, 1},
      {1, 32, 32, 32, 56, 56, 3, 1, 1},
      // MobileNet v2's small planes; chunks of 16 with a remainder; stride 2 on wide rows (the
      // AVX-512 kernel loads 32 + K - 2 columns per 16 outputs, the last chunk partial).
      {1, 8, 8, 8, 14, 14, 3, 1, 1},   {1, 8, 8, 8, 7, 7, 3, 1, 1},    {1, 4, 4, 4, 14, 14, 3, 2, 1},
      {2, 3, 3, 3, 37, 40, 3, 1, 1},   {1, 2, 2, 2, 21, 35, 5, 2, 2},  {1, 2, 2, 2, 6, 40, 5, 1, 0},
      {1, 2, 2, 2, 9, 70, 3, 2, 1},    {1, 3, 3, 3, 5, 34, 3, 2, 0},   {1, 3, 3, 3, 9, 113, 3, 2, 1},
      {1, 2, 2, 2, 8, 101, 5, 2, 2},   {1, 2, 2, 2, 12, 112, 3, 2, 1},
      // 7x7: MobileFaceNet's global depthwise layer (7x7 -> 1x1), padded and strided ones.
      {1, 12, 12, 12, 7, 7, 7, 1, 0},  {2, 3, 3, 3, 11, 9, 7, 1, 3},  {1, 4, 4, 4, 15, 16, 7, 2, 3},
      // The window is the whole plane (dot products of K * K taps, 16 lanes and a tail): many
      // channels over several tasks, batches, 3x3 and 5x5 (a tail only), strided.
      {3, 700, 700, 700, 7, 7, 7, 1, 0}, {2, 5, 5, 5, 3, 3, 3, 1, 0},  {1, 4, 4, 4, 5, 5, 5, 2, 0},
      // Narrow planes at stride 1 with same padding, in flat chunks of 16 outputs spanning rows:
      // widths 1 to 12 (12 the widest taken, 13 not), one chunk or several, a partial last one.
      {2, 40, 40, 40, 7, 7, 3, 1, 1},  {1, 3, 3, 3, 5, 3, 3, 1, 1},   {1, 4, 4, 4, 9, 12, 3, 1, 1},
      {1, 4, 4, 4, 9, 13, 3, 1, 1},    {2, 6, 6, 6, 7, 7, 5, 1, 2},   {1, 3, 3, 3, 4, 1, 3, 1, 1},
      {1, 3, 3, 3, 2, 11, 5, 1, 2},
      // AVX2 takes flat chunks of 8 for 3x3 up to width 16 (two chunks at a time, an odd last one).
      {1, 4, 4, 4, 9, 16, 3, 1, 1},    {1, 4, 4, 4, 6, 17, 3, 1, 1},  {2, 9, 9, 9, 14, 14, 3, 1, 1},
      {1, 3, 3, 3, 3, 5, 3, 1, 1},
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    REQUIRE(DepthwiseApplies({c.batch, c.in_c, c.out_c, c.groups}, Geom(c)));
    CheckFastPath(Depthwise, c, seed += 10);
  }
  // What it does not take: dilation, channel multipliers, 9x9, stride 3, ordinary groups.
  CHECK_FALSE(DepthwiseApplies({1, 4, 4, 4}, Geom({1, 4, 4, 4, 9, 9, 3, 1, 2, 2})));
  CHECK_FALSE(DepthwiseApplies({1, 4, 8, 4}, Geom({1, 4, 8, 4, 9, 9, 3, 1, 1})));
  CHECK_FALSE(DepthwiseApplies({1, 4, 4, 4}, Geom({1, 4, 4, 4, 11, 11, 9, 1, 4})));
  CHECK_FALSE(DepthwiseApplies({1, 4, 4, 4}, Geom({1, 4, 4, 4, 9, 9, 3, 3, 1})));
  CHECK_FALSE(DepthwiseApplies({1, 8, 8, 2}, Geom({1, 8, 8, 2, 9, 9, 3, 1, 1})));
  // A 3-D convolution of depth 1 with depth padding has output depth 3: not a plane.
  ConvGeom padded_depth = Geom({1, 4, 4, 4, 9, 9, 3, 1, 1});
  padded_depth.p[0] = 1;
  padded_depth.out[0] = 3;
  CHECK_FALSE(DepthwiseApplies({1, 4, 4, 4}, padded_depth));
  CHECK_FALSE(WinogradApplies({1, 16, 16, 1}, padded_depth));
}

TEST_CASE("Tiny-depth direct convolution matches the reference", "[conv][conv_fast][tiny_depth]") {
  // Run also with SYMBIND_GEMM_ISA=avx2 and base (ctest conv_tiny_depth_avx2 and
  // conv_tiny_depth_plain): the AVX-512 kernel (8 filters by 32 or 16 columns), the AVX2 one (8
  // filters by 8 columns) and the plain loops. Filter counts not a multiple of 8, rows ending in
  // a partial register tile, padding, batches, 3x3 to 7x7.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      {1, 3, 64, 1, 23, 131, 3, 2, 0}, {2, 3, 10, 1, 9, 70, 3, 1, 0},  {1, 1, 5, 1, 9, 140, 5, 2, 2},
      {1, 4, 16, 1, 8, 66, 5, 1, 1},   {3, 2, 9, 1, 7, 133, 3, 2, 1},  {1, 3, 12, 1, 12, 100, 3, 1, 1},
      {1, 3, 8, 1, 6, 64, 3, 1, 1},    {2, 3, 16, 1, 11, 45, 7, 2, 3}, {1, 3, 7, 1, 5, 16, 3, 1, 1},
      // Unpadded stride 1, read in place: rows shorter than a register tile (the last rows read a
      // copy), one output row, 5x5 and 7x7, batches.
      {1, 3, 10, 1, 12, 18, 3, 1, 0},  {3, 3, 9, 1, 7, 20, 5, 1, 0},   {1, 2, 8, 1, 9, 40, 7, 1, 0},
      {2, 1, 10, 1, 3, 18, 3, 1, 0},   {1, 3, 16, 1, 30, 200, 3, 1, 0},
  };
  const bool vector_kernel = ActiveIsa() != KernelIsa::kBase;
  uint64_t seed = 2500;
  for (const Case& c : cases) {
    CHECK(TinyDepthApplies({c.batch, c.in_c, c.out_c, c.groups}, Geom(c)) == vector_kernel);
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq) { TinyDepthConvForward(x, w, b, y, n, g); },
                  c, seed += 10, false);
  }
  // What it leaves to the packed GEMM: 5 channels, rows under 16, stride 3, 9x9, groups.
  CHECK_FALSE(TinyDepthApplies({1, 5, 8, 1}, Geom({1, 5, 8, 1, 9, 70, 3, 1, 1})));
  CHECK_FALSE(TinyDepthApplies({1, 3, 8, 1}, Geom({1, 3, 8, 1, 9, 29, 3, 2, 1})));
  CHECK_FALSE(TinyDepthApplies({1, 3, 8, 1}, Geom({1, 3, 8, 1, 9, 300, 3, 3, 1})));
  CHECK_FALSE(TinyDepthApplies({1, 3, 8, 1}, Geom({1, 3, 8, 1, 9, 140, 9, 2, 4})));
  CHECK_FALSE(TinyDepthApplies({1, 4, 8, 2}, Geom({1, 4, 8, 2, 9, 70, 3, 1, 1})));
}

namespace {
void Direct(const float* x, const float* w, const float* b, float* y, const ConvDims& n, const ConvGeom& g,
            OpReq) {
  DirectConvForward(x, w, b, y, n, g);
}
}  // namespace

TEST_CASE("Direct convolution matches the reference and the packed GEMM bit for bit",
          "[conv][conv_fast][direct]") {
  // The kernel is AVX2's: ctest conv_direct_avx2 runs this with SYMBIND_GEMM_ISA=avx2 on AVX-512
  // CPUs too. Inputs are arrays of their exact size (the sanitizer build catches reads past
  // them). Rows ending in a partial slot (55 = 6 x 8 + 7), slots of one tile on two or three
  // rows (widths under 8), tiles past the last slot, filter counts not a multiple of 4, 2x2 to
  // 5x5, padding 0-2, dilation, batches, one output position, depths above 384 (two slices in
  // the packed GEMM).
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad, dilate
      {1, 16, 64, 1, 55, 55, 3, 1, 1}, {2, 3, 10, 1, 9, 70, 3, 1, 0},   {1, 10, 16, 1, 13, 21, 3, 1, 0},
      {1, 5, 7, 1, 6, 5, 3, 1, 1},     {1, 2, 3, 1, 4, 4, 5, 1, 2},     {2, 8, 9, 1, 12, 11, 3, 1, 2, 2},
      {1, 24, 24, 1, 20, 20, 3, 1, 1}, {1, 7, 13, 1, 1, 1, 3, 1, 1},    {1, 4, 5, 1, 9, 9, 2, 1, 0},
      {1, 31, 8, 1, 10, 9, 3, 1, 1},   {1, 48, 6, 1, 7, 12, 3, 1, 1},   {3, 1, 1, 1, 3, 17, 3, 1, 0},
      // Unpadded stride 1 reads the image in place; its last rows, whose partial slots would
      // read past the array, read a copy: one row, several rows (widths 4 and 2), dilated.
      {1, 3, 5, 1, 6, 4, 3, 1, 0},     {1, 2, 3, 1, 7, 2, 2, 1, 0},     {2, 4, 6, 1, 11, 13, 3, 1, 0, 2},
      {1, 3, 10, 1, 24, 18, 3, 1, 0},
      // Stride 2 (the input split by column phase): first layers 3x3 and 7x7, odd and even
      // sizes, padding, dilation.
      {1, 3, 64, 1, 23, 131, 3, 2, 0}, {2, 3, 10, 1, 16, 33, 3, 2, 1},  {1, 3, 9, 1, 19, 21, 7, 2, 3},
      {1, 6, 5, 1, 10, 12, 3, 2, 2, 2}, {1, 2, 4, 1, 5, 4, 2, 2, 0},
  };
  const bool avx2 = ActiveIsa() == KernelIsa::kAvx2;
  uint64_t seed = 3100;
  for (const Case& c : cases) {
    const ConvGeom g = Geom(c);
    const ConvDims n{c.batch, c.in_c, c.out_c, c.groups};
    REQUIRE(DirectConvApplies(n, g) == avx2);
    if (!avx2) continue;
    CheckFastPath(Direct, c, seed += 10, false);
    // The packed GEMM's bits, and images of y apart (a Concat's output along channels).
    const auto x = Random(c.batch * c.in_c * c.h * c.w, seed + 5);
    const auto w = Random(c.out_c * c.in_c * c.k * c.k, seed + 6);
    const auto b = Random(c.out_c, seed + 7);
    const int64_t image = c.out_c * g.out_size();
    std::vector<float> want(static_cast<size_t>(c.batch * image)), got(want.size(), -7.0f);
    PackedGemmConvForward(x.data(), w.data(), b.data(), want.data(), n, g);
    DirectConvForward(x.data(), w.data(), b.data(), got.data(), n, g);
    CHECK(std::memcmp(want.data(), got.data(), got.size() * sizeof(float)) == 0);
    ConvDims apart = n;
    apart.y_image_stride = image + 5;
    std::vector<float> spread(static_cast<size_t>(c.batch * apart.y_image_stride), -7.0f);
    DirectConvForward(x.data(), w.data(), nullptr, spread.data(), apart, g);
    PackedGemmConvForward(x.data(), w.data(), nullptr, want.data(), n, g);
    for (int64_t i = 0; i < c.batch; ++i) {
      CHECK(std::memcmp(spread.data() + i * apart.y_image_stride, want.data() + i * image, image * sizeof(float)) == 0);
      CHECK(spread[static_cast<size_t>(i * apart.y_image_stride + image)] == -7.0f);  // the gap untouched
    }
  }
  // What it leaves to the other paths: stride 3, groups, 1x1, 3-D.
  CHECK_FALSE(DirectConvApplies({1, 4, 8, 1}, Geom({1, 4, 8, 1, 9, 9, 3, 3, 1})));
  CHECK_FALSE(DirectConvApplies({1, 4, 8, 2}, Geom({1, 4, 8, 2, 9, 9, 3, 1, 1})));
  CHECK_FALSE(DirectConvApplies({1, 4, 8, 1}, Geom({1, 4, 8, 1, 9, 9, 1, 1, 0})));
  ConvGeom volume = Geom({1, 4, 8, 1, 9, 9, 3, 1, 1});
  volume.in[0] = volume.out[0] = 3;
  volume.k[0] = 3;
  volume.p[0] = 1;
  CHECK_FALSE(DirectConvApplies({1, 4, 8, 1}, volume));
  // Layers on either side of its channel bound (31): whichever path ConvForward takes on this
  // CPU, the result is the reference's.
  uint64_t dispatch_seed = 700;
  for (const Case& c : {Case{1, 16, 64, 1, 55, 55, 3, 1, 1}, Case{1, 32, 128, 1, 27, 27, 3, 1, 1}})
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq req) { ConvForward(x, w, b, y, n, g, req); },
                  c, dispatch_seed += 10);
  if (!avx2) CHECK_THROWS_WITH(Direct(nullptr, nullptr, nullptr, nullptr, {1, 4, 8, 1}, Geom({1, 4, 8, 1, 9, 9, 3, 1, 1}), OpReq::kWrite),
                               Catch::Contains("AVX2"));
}

TEST_CASE("Phased-plane convolution: the packed GEMM's bits over im2col's columns, on any instruction set",
          "[conv][conv_fast][phased]") {
  // Strides 1 and 2 (one direction or both), padding, dilation, windows 2x2 to 7x7 and 1x3,
  // images narrower than a tile and odd sizes, depths past one slice (60 x 9 > 384), bands of
  // one row and several bands per task, batches, and images of y apart. Filter counts multiple
  // of every ISA's panel rows.
  struct Phased {
    int64_t batch, in_c, out_c, h, w, kh, kw, sh, sw, ph, pw, dil;
  };
  const std::vector<Phased> cases = {
      {1, 16, 24, 56, 56, 3, 3, 2, 2, 1, 1, 1}, {1, 60, 48, 15, 17, 3, 3, 2, 2, 1, 1, 1},
      {2, 5, 24, 13, 11, 3, 3, 1, 1, 1, 1, 1},  {1, 7, 24, 20, 23, 5, 5, 2, 1, 2, 2, 1},
      {1, 7, 24, 20, 23, 5, 5, 1, 2, 2, 2, 1},  {1, 4, 24, 19, 21, 3, 3, 2, 2, 2, 2, 2},
      {1, 3, 24, 37, 37, 7, 7, 2, 2, 3, 3, 1},  {1, 8, 24, 9, 9, 2, 2, 2, 2, 0, 0, 1},
      {1, 6, 24, 3, 40, 3, 3, 1, 1, 1, 1, 1},   {1, 6, 24, 12, 10, 1, 3, 1, 2, 0, 1, 1},
      {1, 6, 24, 2, 9, 3, 3, 2, 2, 1, 1, 1},
      {1, 16, 24, 150, 150, 3, 3, 1, 1, 1, 1, 1},  // several bands of rows per task
  };
  uint64_t seed = 4100;
  for (const Phased& c : cases) {
    INFO(c.in_c << " -> " << c.out_c << " at " << c.h << "x" << c.w << ", window " << c.kh << "x" << c.kw
                << ", stride " << c.sh << "," << c.sw << ", pad " << c.ph << "," << c.pw << ", dilation " << c.dil);
    ConvGeom g;
    g.in[1] = c.h, g.in[2] = c.w, g.k[1] = c.kh, g.k[2] = c.kw, g.s[1] = c.sh, g.s[2] = c.sw;
    g.p[1] = c.ph, g.p[2] = c.pw, g.d[1] = g.d[2] = c.dil;
    for (int i = 1; i < 3; ++i) g.out[i] = (g.in[i] + 2 * g.p[i] - g.d[i] * (g.k[i] - 1) - 1) / g.s[i] + 1;
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    const int64_t kdim = c.in_c * g.k_size(), osize = g.out_size(), image = c.out_c * osize;
    const auto x = Random(c.batch * c.in_c * g.in_size(), seed += 10);
    const auto w = Random(c.out_c * kdim, seed + 1);
    const auto b = Random(c.out_c, seed + 2);
    const PackedGemmA A(w.data(), c.out_c, kdim, kdim, GemmTiling::kWide);
    GemmEpilogue epilogue;
    epilogue.bias = b.data();
    epilogue.act.kind = FusedActivation::kRelu;
    std::vector<float> want(static_cast<size_t>(c.batch * image)), columns(static_cast<size_t>(kdim * osize));
    for (int64_t i = 0; i < c.batch; ++i) {
      Im2Col(x.data() + i * c.in_c * g.in_size(), g, 0, c.in_c, columns.data());
      GemmPacked(A, osize, columns.data(), osize, want.data() + i * image, osize, epilogue);
    }
    std::vector<float> got(want.size(), -7.0f);
    PhasedGemmConvForward(x.data(), A, got.data(), n, g, epilogue);
    CHECK(std::memcmp(want.data(), got.data(), got.size() * sizeof(float)) == 0);
    std::vector<float> one_thread(want.size());
    {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      PhasedGemmConvForward(x.data(), A, one_thread.data(), n, g, epilogue);
    }
    CHECK(one_thread == got);
    ConvDims apart = n;
    apart.y_image_stride = image + 3;
    std::vector<float> spread(static_cast<size_t>(c.batch * apart.y_image_stride), -7.0f);
    PhasedGemmConvForward(x.data(), A, spread.data(), apart, g, epilogue);
    for (int64_t i = 0; i < c.batch; ++i) {
      CHECK(std::memcmp(spread.data() + i * apart.y_image_stride, want.data() + i * image, image * sizeof(float)) == 0);
      CHECK(spread[static_cast<size_t>(i * apart.y_image_stride + image)] == -7.0f);
    }
  }
  // Only 2-D, strides 1 and 2, windows above 1x1, wide panels, one group (and AVX-512 kernels).
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  CHECK(PhasedColumnsApply({1, 64, 128, 1}, Geom({1, 64, 128, 1, 56, 56, 3, 2, 1}), GemmTiling::kWide) == avx512);
  CHECK_FALSE(PhasedColumnsApply({1, 64, 128, 1}, Geom({1, 64, 128, 1, 56, 56, 3, 3, 1}), GemmTiling::kWide));
  CHECK_FALSE(PhasedColumnsApply({1, 64, 128, 1}, Geom({1, 64, 128, 1, 56, 56, 1, 1, 0}), GemmTiling::kWide));
  CHECK_FALSE(PhasedColumnsApply({1, 64, 128, 1}, Geom({1, 64, 128, 1, 56, 56, 3, 2, 1}), GemmTiling::kTall));
  CHECK_FALSE(PhasedColumnsApply({1, 64, 128, 2}, Geom({1, 64, 128, 2, 56, 56, 3, 2, 1}), GemmTiling::kWide));
}

TEST_CASE("Winograd convolution fast path matches the reference", "[conv][conv_fast]") {
  // Each case through F(2,3), F(4,3) and F(6,3): tiles past the image edge (sizes not a multiple of 4
  // or 6, pads 0-2), tiles of one chunk in two images, chunks of equal tiles (F(4,3): 81 tiles
  // as 41 + 40, 160 over two images as 54 + 54 + 52), partly filled blocks of 16 tiles (the
  // transforms' vector lanes), one tile per image.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      {1, 16, 16, 1, 8, 8, 3, 1, 1},   {2, 17, 19, 1, 11, 9, 3, 1, 1},  {1, 16, 24, 1, 13, 10, 3, 1, 0},
      {3, 20, 16, 1, 7, 7, 3, 1, 1},   {1, 32, 16, 1, 5, 6, 3, 1, 2},   {1, 64, 64, 1, 28, 28, 3, 1, 1},
      {2, 16, 32, 1, 3, 3, 3, 1, 0},   {1, 128, 96, 1, 14, 14, 3, 1, 1},
      {1, 16, 16, 1, 36, 36, 3, 1, 1}, {2, 16, 24, 1, 30, 37, 3, 1, 1}, {3, 24, 17, 1, 25, 19, 3, 1, 1},
      {1, 40, 32, 1, 60, 20, 3, 1, 1},
  };
  uint64_t seed = 500;
  for (const Case& c : cases) {
    REQUIRE(WinogradApplies({c.batch, c.in_c, c.out_c, c.groups}, Geom(c)));
    for (const WinogradTile tile : {WinogradTile::kF2, WinogradTile::kF4, WinogradTile::kF6}) {
      INFO("F(" << (tile == WinogradTile::kF2 ? 2 : tile == WinogradTile::kF4 ? 4 : 6) << ",3)");
      CheckFastPath(tile == WinogradTile::kF2   ? WinogradF2NoCache
                    : tile == WinogradTile::kF4 ? WinogradF4NoCache
                                                : WinogradF6NoCache,
                    c, seed += 10);
    }
  }
  CHECK_FALSE(WinogradApplies({1, 16, 16, 1}, Geom({1, 16, 16, 1, 9, 9, 3, 2, 1})));
  CHECK_FALSE(WinogradApplies({1, 16, 16, 1}, Geom({1, 16, 16, 1, 9, 9, 3, 1, 2, 2})));
  CHECK_FALSE(WinogradApplies({1, 32, 32, 2}, Geom({1, 32, 32, 2, 9, 9, 3, 1, 1})));
  CHECK_FALSE(WinogradApplies({1, 8, 16, 1}, Geom({1, 8, 16, 1, 9, 9, 3, 1, 1})));
}

TEST_CASE("Winograd F6x6, F4x4 and F2x2 on realistic weights and activations stay within 1e-4 of double precision",
          "[conv][conv_fast]") {
  // F(6,3)'s transforms (points +-1/2, entries up to 32 and 21/4, 1/90 in G) lose more than
  // F(4,3)'s. A trained network's scales: He-initialised filters (std sqrt(2 / (9 channels))),
  // inputs as after BatchNorm + relu (half of them 0, the rest |N(0, 1)|), small biases; deep
  // sums (256 channels) as in ResNet's 14x14 layers.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      {1, 64, 64, 1, 30, 30, 3, 1, 1}, {1, 256, 24, 1, 12, 14, 3, 1, 1}, {2, 32, 40, 1, 20, 17, 3, 1, 1}};
  std::mt19937_64 rng(77);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Case& c : cases) {
    CAPTURE(c.batch, c.in_c, c.out_c, c.h, c.w);
    const ConvGeom g = Geom(c);
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    std::vector<float> x(static_cast<size_t>(c.batch * c.in_c * c.h * c.w)), w(static_cast<size_t>(c.out_c * c.in_c * 9)),
        b(static_cast<size_t>(c.out_c));
    for (float& v : x) v = std::max(0.0f, normal(rng));
    const float he = std::sqrt(2.0f / (9.0f * static_cast<float>(c.in_c)));
    for (float& v : w) v = he * normal(rng);
    for (float& v : b) v = 0.1f * normal(rng);
    const auto naive = NaiveConv(x, w, b, c, g);
    const size_t ysize = naive.size();
    std::vector<float> ref(ysize), f2(ysize), f4(ysize), f6(ysize);
    ConvForwardIm2Col(x.data(), w.data(), b.data(), ref.data(), n, g, OpReq::kWrite);
    WinogradConvForward(x.data(), w.data(), b.data(), f2.data(), n, g, OpReq::kWrite, nullptr, {}, WinogradTile::kF2);
    WinogradConvForward(x.data(), w.data(), b.data(), f4.data(), n, g, OpReq::kWrite, nullptr, {}, WinogradTile::kF4);
    WinogradConvForward(x.data(), w.data(), b.data(), f6.data(), n, g, OpReq::kWrite, nullptr, {}, WinogradTile::kF6);
    CHECK(RelativeError(ref, naive) < 1e-5);
    CHECK(RelativeError(f2, naive) < 1e-5);  // entries of 1 and 1/2 only: as accurate as im2col
    CHECK(RelativeError(f4, naive) < 1e-4);
    CHECK(RelativeError(f6, naive) < 1e-4);
    CHECK(RelativeError(f6, ref) < 1e-4);
  }
}

TEST_CASE("Packed-GEMM convolution matches the reference", "[conv][conv_fast]") {
  // Edges of the micro-kernel's tile in rows (filters) and columns (positions), depths above
  // one 384-step slice, strided / padded / 7x7 / grouped kernels, batches.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      {1, 16, 96, 1, 12, 12, 1, 1, 0},  {1, 13, 7, 1, 9, 11, 1, 1, 0},   {2, 400, 33, 1, 7, 7, 1, 1, 0},
      {1, 800, 20, 1, 6, 9, 1, 1, 0},   {1, 3, 32, 1, 23, 21, 3, 2, 1},  {2, 16, 24, 1, 12, 13, 3, 2, 1},
      {1, 3, 17, 1, 30, 29, 7, 2, 3},   {1, 12, 18, 3, 10, 9, 3, 1, 1},  {2, 8, 12, 2, 8, 8, 1, 1, 0},
      {1, 5, 9, 1, 40, 3, 1, 1, 0},     {1, 48, 1024, 1, 6, 6, 1, 1, 0}, {1, 4, 6, 1, 12, 12, 3, 1, 1, 2},
      // Tall tiles (filters in vectors): 7x7 outputs, deep 1x1 and 3x3, depth in two slices.
      {1, 576, 160, 1, 7, 7, 1, 1, 0}, {1, 64, 96, 1, 7, 7, 3, 1, 1},   {2, 1100, 64, 1, 5, 6, 1, 1, 0},
      {1, 200, 40, 1, 3, 4, 1, 1, 0},
      // im2col's strided rows: stride 3 with wide padding, stride 2 dilated, a 7x7 stride-2 stem.
      {1, 3, 8, 1, 17, 19, 3, 3, 2},   {1, 4, 6, 1, 15, 16, 3, 2, 3, 2}, {1, 3, 16, 1, 37, 35, 7, 2, 3},
      // Several im2col tiles of equal rows (one image: 100 rows as 34 + 34 + 32; two images).
      {1, 3, 8, 1, 100, 100, 3, 1, 1}, {2, 4, 8, 1, 70, 60, 3, 2, 1},
  };
  uint64_t seed = 1300;
  for (const Case& c : cases) {
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq) { PackedGemmConvForward(x, w, b, y, n, g); },
                  c, seed += 10, /*add=*/false);
  }
  // What ConvForward gives it: not a 5x5 output (mostly padding in the micro-kernel's
  // columns), nor depths above 384 (the 400- and 800-channel cases above, tested for the
  // slicing of the depth), nor groups: those stay on im2col + Eigen's GEMM.
  CHECK(PackedGemmApplies({1, 16, 96, 1}, Geom(cases[0])));
  CHECK(PackedGemmApplies({1, 3, 17, 1}, Geom(cases[6])));
  CHECK_FALSE(PackedGemmApplies({1, 8, 8, 1}, Geom({1, 8, 8, 1, 5, 5, 1, 1, 0})));
  CHECK_FALSE(PackedGemmApplies({2, 400, 33, 1}, Geom(cases[2])));
  CHECK_FALSE(PackedGemmApplies({1, 12, 18, 3}, Geom(cases[7])));  // grouped
  // Deeper than 384 with tall tiles: only where the node keeps the packed weights, read-only
  // or writable alike (the same path, so the same bits); never packed per call (no DerivedWeights).
  const ConvDims deep{1, 576, 160, 1};
  const TShape wshape({160, 576, 1, 1});
  auto buffer = std::shared_ptr<float>(static_cast<float*>(std::aligned_alloc(64, wshape.Size() * 4)), std::free);
  const NDArray read_only = NDArray::View(Storage::External(buffer.get(), wshape.Size() * 4, buffer, "w"), 0, wshape);
  const NDArray writable(wshape, std::vector<float>(wshape.Size(), 0.5f));
  DerivedWeights kept_read_only, kept_writable;
  kept_read_only.Use(read_only);
  kept_writable.Use(writable);
  const ConvGeom g7 = Geom({1, 576, 160, 1, 7, 7, 1, 1, 0});
  CHECK_FALSE(PackedGemmApplies(deep, g7));
  CHECK(PackedGemmApplies(deep, g7, &kept_read_only));
  CHECK(PackedGemmApplies(deep, g7, &kept_writable));
  // Deep 1x1 layers take it with either tiling; deep layers through im2col tiles only with tall
  // ones, else im2col + Eigen, unless one image is one im2col tile (filled by every thread on
  // the packed path). Which tiling a 3x3 layer at 8x8 gets depends on the ISA's tile widths
  // (SYMBIND_GEMM_ISA), so the expectation asks ChooseGemmTiling.
  CHECK(PackedGemmApplies({1, 576, 24, 1}, Geom({1, 576, 24, 1, 8, 8, 1, 1, 0}), &kept_writable));
  const bool tall_8x8 = ChooseGemmTiling(24, 64) == GemmTiling::kTall;
  CHECK(PackedGemmApplies({2, 64, 24, 1}, Geom({2, 64, 24, 1, 8, 8, 3, 1, 1}), &kept_writable) == tall_8x8);
  CHECK(PackedGemmApplies({1, 64, 24, 1}, Geom({1, 64, 24, 1, 8, 8, 3, 1, 1}), &kept_writable));
  CHECK_FALSE(PackedGemmApplies({1, 64, 24, 1}, Geom({1, 64, 24, 1, 8, 8, 3, 1, 1})));  // no kept weights
}

namespace {
// The signature of the gradient kernels: (dy, w or x, gradient, dims, geometry, req).
using GradientFn = void (*)(const float*, const float*, float*, const ConvDims&, const ConvGeom&, OpReq);

// `fast` against the naive gradient and the `reference` path (within 1e-4; the reference
// within 1e-5 of naive), in write and add mode, bit-identical for 1, 2 and 4 threads; when
// given, `dispatch` (what the ops call, for cases it sends to `fast`) gives the same bits.
void CheckGradientPath(GradientFn fast, GradientFn reference, GradientFn dispatch, const std::vector<float>& dy,
                       const std::vector<float>& other, const std::vector<double>& naive, const ConvDims& n,
                       const ConvGeom& g, uint64_t seed) {
  const size_t size = naive.size();
  std::vector<float> ref(size), got(size, -3.0f);
  reference(dy.data(), other.data(), ref.data(), n, g, OpReq::kWrite);
  fast(dy.data(), other.data(), got.data(), n, g, OpReq::kWrite);
  CHECK(RelativeError(ref, naive) < 1e-5);
  CHECK(RelativeError(got, naive) < 1e-4);
  CHECK(RelativeError(got, ref) < 1e-4);
  const auto before = Random(static_cast<int64_t>(size), seed);  // kAdd: previous + gradient
  std::vector<float> added = before;
  fast(dy.data(), other.data(), added.data(), n, g, OpReq::kAdd);
  std::vector<double> want_added(naive);
  for (size_t i = 0; i < size; ++i) want_added[i] += before[i];
  CHECK(RelativeError(added, want_added) < 1e-4);
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> again(size, 5.0f);
    fast(dy.data(), other.data(), again.data(), n, g, OpReq::kWrite);
    INFO("threads " << threads);
    CHECK(std::memcmp(again.data(), got.data(), size * sizeof(float)) == 0);
  }
  if (!dispatch) return;
  std::vector<float> dispatched(size, 5.0f);
  dispatch(dy.data(), other.data(), dispatched.data(), n, g, OpReq::kWrite);
  CHECK(std::memcmp(dispatched.data(), got.data(), size * sizeof(float)) == 0);
}

// Every tap of an ungrouped convolution: fn(dy index, x index, w index) for each output
// position, input channel and kernel offset whose input lies inside the image.
template <typename F>
void ForEachTap(const Case& c, const ConvGeom& g, const F& fn) {
  const int64_t OH = g.out[1], OW = g.out[2];
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t f = 0; f < c.out_c; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t ch = 0; ch < c.in_c; ++ch)
            for (int64_t kh = 0; kh < c.k; ++kh)
              for (int64_t kw = 0; kw < c.k; ++kw) {
                const int64_t ih = oh * c.stride - c.pad + kh * c.dilate;
                const int64_t iw = ow * c.stride - c.pad + kw * c.dilate;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                fn(static_cast<size_t>(((n * c.out_c + f) * OH + oh) * OW + ow),
                   static_cast<size_t>(((n * c.in_c + ch) * c.h + ih) * c.w + iw),
                   static_cast<size_t>(((f * c.in_c + ch) * c.k + kh) * c.k + kw));
              }
}

// dx[n,c,ih,iw] = sum of dy[n,f,oh,ow] * w[f,c,kh,kw] over the taps that read (ih, iw), in
// double (a scatter, independent of im2col/col2im). Ungrouped.
std::vector<double> NaiveDataGradient(const std::vector<float>& dy, const std::vector<float>& w, const Case& c,
                                      const ConvGeom& g) {
  std::vector<double> dx(static_cast<size_t>(c.batch * c.in_c * c.h * c.w));
  ForEachTap(c, g, [&](size_t yi, size_t xi, size_t wi) { dx[xi] += double(dy[yi]) * w[wi]; });
  return dx;
}
}  // namespace

TEST_CASE("Packed-GEMM data gradient matches a naive scatter and the im2col reference", "[conv][conv_fast][grad]") {
  // 1x1 (written straight into dx), padded 3x3, strided, the 7x7 stride-2 stem, a dilated
  // kernel, deep 7x7 outputs (tall tiles, depth over one slice), tile edges in rows and columns.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad(, dilate)
      {2, 16, 24, 1, 9, 11, 1, 1, 0},  {3, 13, 7, 1, 12, 10, 3, 1, 1},  {2, 16, 24, 1, 12, 13, 3, 2, 1},
      {1, 3, 17, 1, 30, 29, 7, 2, 3},  {2, 4, 6, 1, 12, 12, 3, 1, 2, 2}, {2, 40, 520, 1, 7, 7, 3, 1, 1},
      {2, 64, 33, 1, 14, 14, 1, 2, 0}, {1, 5, 9, 1, 40, 3, 1, 1, 0},
      // Deep enough that the output rows fold back in several tiles (one image: channels in
      // parallel; strided; dilated).
      {1, 64, 40, 1, 31, 30, 3, 1, 1}, {2, 96, 8, 1, 40, 38, 3, 2, 1}, {1, 40, 12, 1, 30, 33, 3, 1, 2, 2},
      // Outputs under 128 positions of several images with weights of 2^18 floats and more:
      // blocks of channels over the images side by side (one group: two groups need over 2048
      // columns, too slow for the naive gradient under ASan).
      {2, 64, 460, 1, 9, 9, 3, 1, 0}, {3, 90, 120, 1, 17, 15, 5, 2, 2},
  };
  uint64_t seed = 2600;
  for (const Case& c : cases) {
    CAPTURE(c.batch, c.in_c, c.out_c, c.h, c.w, c.k, c.stride, c.pad, c.dilate);
    const ConvGeom g = Geom(c);
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    REQUIRE(PackedBackwardDataApplies(n, g));
    const auto dy = Random(c.batch * c.out_c * g.out_size(), seed += 10);
    const auto w = Random(c.out_c * c.in_c * c.k * c.k, seed + 1);
    CheckGradientPath(PackedBackwardData, ConvBackwardDataIm2Col,
                      WinogradBackwardDataApplies(n, g) ? nullptr : ConvBackwardData, dy, w,
                      NaiveDataGradient(dy, w, c, g), n, g, seed + 2);
  }
  // Grouped convolutions and outputs under 32 positions stay on the reference.
  CHECK_FALSE(PackedBackwardDataApplies({1, 12, 18, 3}, Geom({1, 12, 18, 3, 10, 9, 3, 1, 1})));
  CHECK_FALSE(PackedBackwardDataApplies({1, 8, 8, 1}, Geom({1, 8, 8, 1, 5, 5, 1, 1, 0})));
}

TEST_CASE("Winograd data gradient of 3x3 stride-1 convolutions matches a naive scatter and the im2col reference",
          "[conv][conv_fast][grad]") {
  // Pads 0, 1 and 2 (transposed pads 2, 1, 0), odd sizes, more filters than channels and fewer;
  // tiles past the image edge.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad
      // (The data gradient is a convolution from out_c to in_c channels.)
      {2, 16, 40, 1, 18, 17, 3, 1, 1}, {1, 20, 32, 1, 30, 27, 3, 1, 0}, {3, 16, 33, 1, 14, 15, 3, 1, 2},
      {3, 33, 36, 1, 11, 23, 3, 1, 1},
  };
  uint64_t seed = 3300;
  for (const Case& c : cases) {
    CAPTURE(c.batch, c.in_c, c.out_c, c.h, c.w, c.pad);
    const ConvGeom g = Geom(c);
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    REQUIRE(WinogradBackwardDataApplies(n, g));
    const auto dy = Random(c.batch * c.out_c * g.out_size(), seed += 10);
    const auto w = Random(c.out_c * c.in_c * c.k * c.k, seed + 1);
    CheckGradientPath(WinogradBackwardData, ConvBackwardDataIm2Col, ConvBackwardData, dy, w,
                      NaiveDataGradient(dy, w, c, g), n, g, seed + 2);
  }
  // Not for strides, other kernels, pads past 2, few channels (under 16 filters: the transposed
  // convolution's input) or few tiles (5x5: 4 tiles of 4 padding it to 8x8).
  CHECK_FALSE(WinogradBackwardDataApplies({2, 16, 40, 1}, Geom({2, 16, 40, 1, 18, 17, 3, 2, 1})));
  CHECK_FALSE(WinogradBackwardDataApplies({2, 16, 40, 1}, Geom({2, 16, 40, 1, 18, 17, 5, 1, 2})));
  CHECK_FALSE(WinogradBackwardDataApplies({2, 16, 40, 1}, Geom({2, 16, 40, 1, 18, 17, 3, 1, 3})));
  CHECK_FALSE(WinogradBackwardDataApplies({2, 40, 12, 1}, Geom({2, 40, 12, 1, 18, 17, 3, 1, 1})));
  CHECK_FALSE(WinogradBackwardDataApplies({1, 16, 40, 1}, Geom({1, 16, 40, 1, 5, 5, 3, 1, 1})));
}

namespace {
// dw[f,c,kh,kw] = sum over images and output positions of dy[n,f,oh,ow] * x[n,c,ih,iw], in
// double, straight from the definition. Ungrouped.
std::vector<double> NaiveWeightGradient(const std::vector<float>& dy, const std::vector<float>& x, const Case& c,
                                        const ConvGeom& g) {
  std::vector<double> dw(static_cast<size_t>(c.out_c * c.in_c * c.k * c.k));
  ForEachTap(c, g, [&](size_t yi, size_t xi, size_t wi) { dw[wi] += double(dy[yi]) * x[xi]; });
  return dw;
}
}  // namespace

TEST_CASE("Blocked and packed weight gradients match a naive sum and the im2col reference", "[conv][conv_fast][grad]") {
  // Batches split into chunks of images (10 into 5 x 2, 16 at 7x7 into 8 x 2), 1x1, strided,
  // padded, dilated and the 7x7 stem; one image (dw written or added directly), several images per
  // slice (the 1x1 and 7x7 cases), outputs cut into row slices (31 x 30 with 64 channels),
  // channel blocks with a short last one (100 channels), filters past one tall panel and not a
  // multiple of it; tile edges in rows and columns.
  const std::vector<Case> cases = {
      // batch, in_c, out_c, groups, h, w, k, stride, pad(, dilate)
      {10, 16, 24, 1, 9, 11, 1, 1, 0}, {3, 13, 7, 1, 12, 10, 3, 1, 1},   {2, 16, 24, 1, 12, 13, 3, 2, 1},
      {1, 3, 17, 1, 30, 29, 7, 2, 3},  {5, 4, 6, 1, 12, 12, 3, 1, 2, 2},  {16, 40, 70, 1, 7, 7, 3, 1, 1},
      {9, 64, 33, 1, 14, 14, 1, 2, 0}, {1, 5, 9, 1, 40, 3, 1, 1, 0},     {3, 3, 5, 1, 2, 2, 3, 1, 1},
      {2, 64, 40, 1, 31, 30, 3, 1, 1}, {1, 100, 20, 1, 6, 5, 3, 1, 1},   {4, 7, 65, 1, 11, 9, 5, 2, 2},
      {4, 16, 64, 1, 9, 10, 3, 1, 1},
  };
  uint64_t seed = 3900;
  for (const Case& c : cases) {
    CAPTURE(c.batch, c.in_c, c.out_c, c.h, c.w, c.k, c.stride, c.pad, c.dilate);
    const ConvGeom g = Geom(c);
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    const auto dy = Random(c.batch * c.out_c * g.out_size(), seed += 10);
    const auto x = Random(c.batch * c.in_c * c.h * c.w, seed + 1);
    const auto naive = NaiveWeightGradient(dy, x, c, g);
    {
      INFO("blocked");
      CheckGradientPath(BlockedBackwardWeight, ConvBackwardWeightIm2Col,
                        BlockedBackwardWeightApplies(n, g) ? ConvBackwardWeight : nullptr, dy, x, naive, n, g, seed + 2);
    }
    INFO("packed");
    const bool packed_taken = !BlockedBackwardWeightApplies(n, g) && PackedBackwardWeightApplies(n, g);
    CheckGradientPath(PackedBackwardWeight, ConvBackwardWeightIm2Col, packed_taken ? ConvBackwardWeight : nullptr, dy,
                      x, naive, n, g, seed + 3);
  }
  // What ConvBackwardWeight takes it for: ungrouped convolutions whose filters tall tiles pad no
  // more than wide ones (64 filters: yes; LeNet's 20 and 50: no); grouped ones stay on the reference.
  CHECK(BlockedBackwardWeightApplies({16, 64, 64, 1}, Geom({16, 64, 64, 1, 56, 56, 3, 1, 1})));
  CHECK(BlockedBackwardWeightApplies({16, 512, 512, 1}, Geom({16, 512, 512, 1, 7, 7, 3, 1, 1})));
  CHECK(BlockedBackwardWeightApplies({4, 16, 64, 1}, Geom(cases.back())));
  CHECK_FALSE(BlockedBackwardWeightApplies({1, 64, 64, 1}, Geom({1, 64, 64, 1, 56, 56, 3, 1, 1})));  // 3 tasks
  // LeNet's filters pad tall tiles more than wide ones at AVX2/AVX-512 tile sizes, not at the
  // base instruction set's (SYMBIND_GEMM_ISA=base), where the blocked path may take them.
  for (const Case& lenet : {Case{100, 1, 20, 1, 28, 28, 5, 1, 0}, Case{100, 20, 50, 1, 12, 12, 5, 1, 0}}) {
    const ConvGeom g = Geom(lenet);
    const bool tall = TallTilesFit(lenet.out_c, lenet.in_c * g.k_size(), lenet.batch * g.out_size());
    CHECK(BlockedBackwardWeightApplies({lenet.batch, lenet.in_c, lenet.out_c, 1}, g) == tall);
  }
  CHECK_FALSE(BlockedBackwardWeightApplies({1, 12, 18, 3}, Geom({1, 12, 18, 3, 10, 9, 3, 1, 1})));  // grouped
  // The packed path where the blocked one does not apply, under 128 positions (LeNet's conv2).
  CHECK(PackedBackwardWeightApplies({100, 20, 50, 1}, Geom({100, 20, 50, 1, 12, 12, 5, 1, 0})));
  CHECK_FALSE(PackedBackwardWeightApplies({100, 1, 20, 1}, Geom({100, 1, 20, 1, 28, 28, 5, 1, 0})));
}

namespace {
// C = epilogue(A * B) in double, C being M x N.
std::vector<double> NaiveGemm(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& bias,
                              int64_t M, int64_t N, int64_t K, int64_t ldb) {
  std::vector<double> c(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = bias[static_cast<size_t>(i)];
      for (int64_t k = 0; k < K; ++k) s += double(a[static_cast<size_t>(i * K + k)]) * b[static_cast<size_t>(k * ldb + j)];
      c[static_cast<size_t>(i * N + j)] = s;
    }
  return c;
}
}  // namespace

TEST_CASE("Packed GEMM: tall and wide tiles compute the same bits, within 1e-4 of a naive product", "[conv][conv_fast]") {
  // Tall tiles hold filters in vectors and broadcast columns; both tilings sum every output in
  // k order from zero, then add the bias and apply the activation, so they must agree exactly,
  // at row and column edges, across depth slices (> 384 wide, > 1024 tall) and thread counts.
  // 17 x 5120 x 64: five column blocks of wide tiles made six, so that two threads share them
  // evenly; 200 x 30 x 2100: tall tiles prefetching the next panel, and across the depth slice
  // the first panel of the next slice. Up to 8 panels (M <= 64 on AVX-512), or any number with
  // a B of at most 64K floats, wide tiles read B in place and pack only a partial last column
  // tile: 16 x 3025 x 128 (SqueezeNet's squeeze), 64 x 100 x 400 (two depth slices, the second
  // adding to C), 96 x 196 x 70 (12 panels), 200 x 120 x 40 (25-34 panels). From 8 panels tall tiles read B packed, in column tiles of even
  // widths (49 columns: 4 x 6 + 5 x 5 on AVX2): 320 x 49 x 160, 200 x 30 x 2100, 256 x 196 x 1100
  // (two depth slices, several column blocks).
  struct Shape {
    int64_t M, N, K;
  };
  const std::vector<Shape> shapes = {{1, 1, 1},     {33, 49, 960},   {64, 1, 1280},  {40, 13, 7},    {96, 196, 70},
                                     {17, 5, 1100}, {320, 49, 160}, {17, 5120, 64}, {200, 30, 2100},
                                     {16, 3025, 128}, {64, 100, 400}, {256, 196, 1100}, {200, 120, 40}};
  uint64_t seed = 2100;
  for (const Shape& sh : shapes)
    for (const FusedActivation& act : {FusedActivation{}, FusedActivation{FusedActivation::kClip, -0.5f, 0.5f}}) {
      CAPTURE(sh.M, sh.N, sh.K, int(act.kind));
      const int64_t ldb = sh.N + 2, ldc = sh.N + 3;  // row strides wider than the rows
      const auto a = Random(sh.M * sh.K, seed += 10), b = Random(sh.K * ldb, seed + 1), bias = Random(sh.M, seed + 2);
      const PackedGemmA tall(a.data(), sh.M, sh.K, sh.K, GemmTiling::kTall), wide(a.data(), sh.M, sh.K, sh.K);
      CHECK(tall.tiling() == GemmTiling::kTall);
      CHECK(wide.tiling() == GemmTiling::kWide);
      auto run = [&](const PackedGemmA& packed) {
        std::vector<float> c(static_cast<size_t>(sh.M * ldc), -7.0f);
        GemmPacked(packed, sh.N, b.data(), ldb, c.data(), ldc, GemmEpilogue{bias.data(), act});
        return c;
      };
      const auto c_tall = run(tall), c_wide = run(wide);
      CHECK(std::memcmp(c_tall.data(), c_wide.data(), c_tall.size() * sizeof(float)) == 0);  // padding too
      auto want = NaiveGemm(a, b, bias, sh.M, sh.N, sh.K, ldb);
      for (double& v : want) v = act(static_cast<float>(v));
      std::vector<float> got;
      for (int64_t i = 0; i < sh.M; ++i) {
        got.insert(got.end(), c_tall.begin() + i * ldc, c_tall.begin() + i * ldc + sh.N);
        CHECK(c_tall[static_cast<size_t>(i * ldc + sh.N)] == -7.0f);  // nothing written past a row
      }
      CHECK(RelativeError(got, want) < 1e-4);
      for (int threads : {1, 2, 3, 4}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        INFO("threads " << threads);
        CHECK(run(tall) == c_tall);
        CHECK(run(wide) == c_tall);
      }
      // A residual R (laid out as C): act((A * B + bias) + R), the bits of the product, an
      // elemwise_add and the activation one after another; nothing written past a row.
      const auto residual = Random(sh.M * ldc, seed + 3);
      std::vector<float> want_r(static_cast<size_t>(sh.M * ldc), -7.0f), plain(want_r);
      GemmPacked(wide, sh.N, b.data(), ldb, plain.data(), ldc, GemmEpilogue{bias.data(), {}});
      for (int64_t i = 0; i < sh.M; ++i)
        for (int64_t j = 0; j < sh.N; ++j) {
          const size_t at = static_cast<size_t>(i * ldc + j);
          want_r[at] = act(plain[at] + residual[at]);
        }
      for (const PackedGemmA* packed : {&tall, &wide}) {
        std::vector<float> c(static_cast<size_t>(sh.M * ldc), -7.0f);
        GemmPacked(*packed, sh.N, b.data(), ldb, c.data(), ldc, GemmEpilogue{bias.data(), act, residual.data()});
        INFO("residual, " << (packed == &tall ? "tall" : "wide"));
        CHECK(std::memcmp(c.data(), want_r.data(), c.size() * sizeof(float)) == 0);
      }
    }
}

TEST_CASE("Gemm: matrix-vector products match a naive sum, every output's bits the same over threads",
          "[conv][conv_fast][gemv]") {
  // One sample's FullyConnected (x W^T: M = 1, B transposed) and a 1x1 convolution of one
  // position (W x: N = 1): depths with and without a tail of the 16 lanes, row counts around the
  // eight rows a step takes, padded leading dimensions, alpha and every kind of beta.
  struct Product {
    bool row_times_matrix;
    int64_t rows, K, ld;
    float alpha, beta;
  };
  const std::vector<Product> products = {
      {true, 1000, 512, 512, 1.0f, 0.0f}, {true, 13, 17, 20, 0.5f, 1.0f}, {true, 8, 16, 16, 1.0f, 0.25f},
      {true, 3, 1280, 1283, 2.0f, 0.0f},  {false, 1000, 1280, 1280, 1.0f, 0.0f}, {false, 37, 100, 103, 1.0f, 1.0f},
      {false, 9, 31, 31, -1.0f, 0.5f},
  };
  uint64_t seed = 700;
  for (const Product& p : products) {
    CAPTURE(p.row_times_matrix, p.rows, p.K, p.ld, p.alpha, p.beta);
    const auto matrix = Random(p.rows * p.ld, seed++);
    const auto vector = Random(p.K, seed++);
    const auto before = Random(p.rows, seed++);
    std::vector<double> want(static_cast<size_t>(p.rows));
    for (int64_t j = 0; j < p.rows; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < p.K; ++k) dot += double(matrix[static_cast<size_t>(j * p.ld + k)]) * vector[static_cast<size_t>(k)];
      want[static_cast<size_t>(j)] = p.alpha * dot + (p.beta == 0.0f ? 0.0 : double(p.beta) * before[static_cast<size_t>(j)]);
    }
    auto run = [&] {
      std::vector<float> c = before;
      if (p.row_times_matrix)
        Gemm(false, true, 1, p.rows, p.K, p.alpha, vector.data(), p.K, matrix.data(), p.ld, p.beta, c.data(), p.rows);
      else
        Gemm(false, false, p.rows, 1, p.K, p.alpha, matrix.data(), p.ld, vector.data(), 1, p.beta, c.data(), 1);
      return c;
    };
    const std::vector<float> got = run();
    CHECK(RelativeError(got, want) < 1e-5);
    for (int threads : {1, 2, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      CHECK(run() == got);
    }
  }
  // beta == 0 never reads C (it may hold NaN, as a fresh buffer can).
  std::vector<float> c(4, std::nanf(""));
  const auto w = Random(4 * 32, 1), x = Random(32, 2);
  Gemm(false, true, 1, 4, 32, 1.0f, x.data(), 32, w.data(), 32, 0.0f, c.data(), 4);
  for (float v : c) CHECK(std::isfinite(v));
}

TEST_CASE("Packed GEMM with B transposed: the tall tiles' bits, accumulating into C", "[conv][conv_fast][grad]") {
  // GemmPackedTallBt reads B's columns as rows of Bt (im2col rows for a weight gradient); each
  // sum runs in k order from zero like GemmPacked's tall tiles, so the two agree bit for bit at
  // row and column edges and across depth slices (> 1024); with accumulate it adds into C.
  struct Shape {
    int64_t M, N, K;
  };
  const std::vector<Shape> shapes = {{1, 1, 1}, {33, 49, 960}, {64, 13, 1280}, {40, 13, 7}, {96, 26, 70}, {17, 5, 2100}};
  uint64_t seed = 2300;
  for (const Shape& sh : shapes) {
    CAPTURE(sh.M, sh.N, sh.K);
    const int64_t ldbt = sh.K + 5, ldc = sh.N + 3;
    const auto a = Random(sh.M * sh.K, seed += 10), bt = Random(sh.N * ldbt, seed + 1);
    std::vector<float> b(static_cast<size_t>(sh.K * sh.N));  // B row-major, for GemmPacked
    for (int64_t k = 0; k < sh.K; ++k)
      for (int64_t j = 0; j < sh.N; ++j) b[static_cast<size_t>(k * sh.N + j)] = bt[static_cast<size_t>(j * ldbt + k)];
    const PackedGemmA tall(a.data(), sh.M, sh.K, sh.K, GemmTiling::kTall);
    std::vector<float> want(static_cast<size_t>(sh.M * ldc), -7.0f), got = want;
    GemmPacked(tall, sh.N, b.data(), sh.N, want.data(), ldc);
    GemmPackedTallBt(tall, sh.N, bt.data(), ldbt, got.data(), ldc, false);
    CHECK(std::memcmp(want.data(), got.data(), got.size() * sizeof(float)) == 0);  // untouched padding too
    const auto before = Random(sh.M * ldc, seed + 2);
    std::vector<float> added = before;
    GemmPackedTallBt(tall, sh.N, bt.data(), ldbt, added.data(), ldc, true);
    std::vector<double> want_added(before.begin(), before.end());
    for (int64_t i = 0; i < sh.M; ++i)
      for (int64_t j = 0; j < sh.N; ++j) want_added[static_cast<size_t>(i * ldc + j)] += want[static_cast<size_t>(i * ldc + j)];
    CHECK(RelativeError(added, want_added) < 1e-5);
  }
  const float one = 1.0f;
  float c = 0.0f;
  const PackedGemmA wide(&one, 1, 1, 1, GemmTiling::kWide);
  CHECK_THROWS_WITH(GemmPackedTallBt(wide, 1, &one, 1, &c, 1, false), Catch::Contains("tall tiles"));
}

namespace {
// Every path with a fused activation: bit-identical to the same path without it followed by the
// activation op's formula (the unfused graph), within 1e-4 of the reference path with it, the
// same bits for every thread count, and in add mode (ConvForward only) previous y + act(conv).
void CheckFusedActivation(const char* path, const Case& c, const FusedActivation& act, uint64_t seed) {
  CAPTURE(path, c.batch, c.in_c, c.out_c, c.groups, c.h, c.w, c.k, c.stride, c.pad, int(act.kind), act.lo, act.hi);
  const ConvGeom g = Geom(c);
  const ConvDims n{c.batch, c.in_c, c.out_c, c.groups};
  const auto x = Random(c.batch * c.in_c * c.h * c.w, seed);
  const auto w = Random(c.out_c * (c.in_c / c.groups) * c.k * c.k, seed + 1);
  const auto b = Random(c.out_c, seed + 2);
  const size_t ysize = static_cast<size_t>(c.batch * c.out_c * g.out_size());
  auto run = [&](const FusedActivation& a, float* y, OpReq req) {
    const std::string p = path;
    if (p == "depthwise") DepthwiseConvForward(x.data(), w.data(), b.data(), y, n, g, req, a);
    else if (p == "winograd") WinogradConvForward(x.data(), w.data(), b.data(), y, n, g, req, nullptr, a, WinogradTile::kF4);
    else if (p == "winograd2") WinogradConvForward(x.data(), w.data(), b.data(), y, n, g, req, nullptr, a, WinogradTile::kF2);
    else if (p == "winograd6") WinogradConvForward(x.data(), w.data(), b.data(), y, n, g, req, nullptr, a, WinogradTile::kF6);
    else if (p == "tiny_depth") TinyDepthConvForward(x.data(), w.data(), b.data(), y, n, g, a);
    else if (p == "direct") DirectConvForward(x.data(), w.data(), b.data(), y, n, g, a);
    else if (p == "packed") PackedGemmConvForward(x.data(), w.data(), b.data(), y, n, g, a);
    else if (p == "im2col") ConvForwardIm2Col(x.data(), w.data(), b.data(), y, n, g, req, a);
    else ConvForward(x.data(), w.data(), b.data(), y, n, g, req, nullptr, a);
  };
  std::vector<float> fused(ysize), unfused(ysize), ref(ysize);
  run(act, fused.data(), OpReq::kWrite);
  run({}, unfused.data(), OpReq::kWrite);
  const int64_t osize = g.out_size();  // prelu: each output channel's plane its own slope
  for (size_t i = 0; i < ysize; ++i) unfused[i] = act.ForRow(static_cast<int64_t>(i) / osize % c.out_c)(unfused[i]);
  CHECK(std::memcmp(fused.data(), unfused.data(), ysize * sizeof(float)) == 0);
  ConvForwardIm2Col(x.data(), w.data(), b.data(), ref.data(), n, g, OpReq::kWrite, act);
  // Relative to the convolution's magnitude, not the clipped one's (clip to 0.25 shrinks it).
  std::vector<float> conv_ref(ysize);
  ConvForwardIm2Col(x.data(), w.data(), b.data(), conv_ref.data(), n, g, OpReq::kWrite);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < ysize; ++i) {
    diff = std::max(diff, std::fabs(double(fused[i]) - ref[i]));
    scale = std::max(scale, std::fabs(double(conv_ref[i])));
  }
  CHECK(diff / scale < 1e-4);
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    std::vector<float> again(ysize, -7.0f);
    run(act, again.data(), OpReq::kWrite);
    INFO("threads " << threads);
    CHECK(std::memcmp(again.data(), fused.data(), ysize * sizeof(float)) == 0);
  }
  // A residual added before the activation, and a second output normalised as a BatchNorm
  // (+ leaky) reading the output would, through ConvForward's choice of path (and the packed
  // path called directly): the bits of the convolution, an elemwise_add, the activation and
  // the _fused_batch_norm_act one after another.
  const auto residual = Random(static_cast<int64_t>(ysize), seed + 4);
  const auto coefficients = Random(3 * c.out_c, seed + 5);
  const FusedActivation second_act{FusedActivation::kLeaky, 0, 0, 0.2f};
  using Conv = std::function<void(const FusedActivation&, const float*, float*, const NormalizedOutput&)>;
  auto check_residual = [&](const char* how, const Conv& conv) {
    for (bool with_residual : {true, false}) {
      std::vector<float> want(ysize, -7.0f), got(ysize, -7.0f), want_z(ysize), got_z(ysize, -7.0f);
      conv({}, nullptr, want.data(), {});
      for (size_t i = 0; i < ysize; ++i) {
        const int64_t ch = static_cast<int64_t>(i) / osize % c.out_c;
        want[i] = act.ForRow(ch)(with_residual ? want[i] + residual[i] : want[i]);
        const float mean = coefficients[static_cast<size_t>(ch)], scale = coefficients[static_cast<size_t>(c.out_c + ch)];
        want_z[i] = second_act((want[i] - mean) * scale + coefficients[static_cast<size_t>(2 * c.out_c + ch)]);
      }
      const NormalizedOutput z{got_z.data(), coefficients.data(), coefficients.data() + c.out_c,
                               coefficients.data() + 2 * c.out_c, second_act};
      conv(act, with_residual ? residual.data() : nullptr, got.data(), z);
      INFO("residual " << with_residual << ", second output, " << how);
      CHECK(std::memcmp(got.data(), want.data(), ysize * sizeof(float)) == 0);
      CHECK(std::memcmp(got_z.data(), want_z.data(), ysize * sizeof(float)) == 0);
      if (!with_residual) continue;
      std::fill(got.begin(), got.end(), -7.0f);
      conv(act, residual.data(), got.data(), {});
      INFO("residual alone");
      CHECK(std::memcmp(got.data(), want.data(), ysize * sizeof(float)) == 0);
    }
  };
  check_residual("ConvForward", [&](const FusedActivation& a, const float* r, float* y, const NormalizedOutput& z) {
    ConvForward(x.data(), w.data(), b.data(), y, n, g, OpReq::kWrite, nullptr, a, r, z);
  });
  if (std::string(path) == "packed")
    check_residual("packed", [&](const FusedActivation& a, const float* r, float* y, const NormalizedOutput& z) {
      PackedGemmConvForward(x.data(), w.data(), b.data(), y, n, g, a, nullptr, r, z);
    });
  if (std::string(path) == "dispatch") {
    const auto before = Random(static_cast<int64_t>(ysize), seed + 3);
    std::vector<float> added = before;
    run(act, added.data(), OpReq::kAdd);
    for (size_t i = 0; i < ysize; ++i) CHECK(added[i] == before[i] + fused[i]);
  }
}
}  // namespace

TEST_CASE("Fused relu / clip / leaky / prelu on every convolution path: the same bits as the activation after it, "
          "with and without a residual added before it and a normalized second output", "[conv][conv_fast]") {
  // prelu: slopes of both signs, zero and above 1, one per output channel (at most 64 here).
  std::vector<float> slopes(64);
  for (size_t i = 0; i < slopes.size(); ++i) slopes[i] = 0.25f * static_cast<float>(i % 9) - 0.75f;
  FusedActivation prelu{FusedActivation::kPRelu};
  prelu.slopes = slopes.data();
  const std::vector<FusedActivation> acts = {{FusedActivation::kRelu, 0, 0},       {FusedActivation::kClip, 0, 6},
                                             {FusedActivation::kClip, -0.5f, 0.25f}, {FusedActivation::kLeaky, 0, 0, 0.1f},
                                             {FusedActivation::kLeaky, 0, 0, -1.5f}, prelu};
  const std::vector<PathCase> cases = {
      {"depthwise", {2, 8, 8, 8, 11, 10, 3, 1, 1}}, {"depthwise", {1, 6, 6, 6, 13, 12, 5, 2, 2}},
      {"winograd", {1, 16, 24, 1, 13, 10, 3, 1, 1}}, {"winograd6", {2, 16, 24, 1, 13, 20, 3, 1, 1}},
      {"winograd2", {2, 16, 20, 1, 9, 13, 3, 1, 1}},
      {"packed", {1, 16, 40, 1, 9, 11, 1, 1, 0}},
      {"packed", {2, 8, 12, 1, 11, 10, 3, 2, 1}},   {"im2col", {1, 6, 10, 2, 9, 8, 3, 1, 1}},
      {"dispatch", {1, 6, 10, 2, 9, 8, 3, 1, 1}},   {"dispatch", {1, 16, 32, 1, 30, 27, 3, 1, 1}},
      {"dispatch", {2, 12, 20, 1, 6, 7, 1, 1, 0}},  {"dispatch", {1, 4, 4, 4, 9, 9, 3, 2, 1}},
      {"tiny_depth", {1, 3, 10, 1, 7, 133, 3, 2, 1}}, {"dispatch", {2, 3, 12, 1, 6, 70, 3, 1, 1}},
      // Groups on the packed path (prelu's slopes per group), a tall tile (few columns).
      {"packed", {1, 8, 12, 2, 9, 9, 3, 1, 1}},     {"packed", {1, 64, 48, 1, 5, 5, 1, 1, 0}},
      {"depthwise", {1, 16, 16, 16, 7, 7, 7, 1, 0}},
      // Narrow planes in flat chunks of 16 outputs (7x7 3x3, 6x9 5x5).
      {"depthwise", {2, 9, 9, 9, 7, 7, 3, 1, 1}},   {"depthwise", {1, 5, 5, 5, 6, 9, 5, 1, 2}},
      // The direct kernel (AVX2 only): filters past a panel of 4, slots over two rows; full
      // tiles (rows of 16 outputs, 8 filters) stored from the registers.
      {"direct", {2, 5, 7, 1, 6, 13, 3, 1, 1}}, {"direct", {1, 3, 10, 1, 9, 20, 3, 2, 1}},
      {"direct", {1, 4, 8, 1, 5, 16, 3, 1, 1}},
  };
  uint64_t seed = 1700;
  for (const PathCase& pc : cases) {
    if (std::string(pc.path) == "direct" && !DirectConvApplies({pc.c.batch, pc.c.in_c, pc.c.out_c, 1}, Geom(pc.c)))
      continue;
    for (const FusedActivation& act : acts) CheckFusedActivation(pc.path, pc.c, act, seed += 10);
  }
}

TEST_CASE("Packed GEMM: epilogue keeps the activation ops' NaN and signed-zero results", "[conv][conv_fast]") {
  // C = A * B with A = 1 (one row, depth 1): every output is B's value, plus the bias 0.
  const std::vector<float> b = {NAN, -0.0f, 0.0f, -1.0f, 7.0f, 0.1f, -3.0f, 2.0f};
  const float one = 1.0f, zero = 0.0f;
  PackedGemmA a(&one, 1, 1, 1);
  const float slope = -0.5f;
  FusedActivation prelu{FusedActivation::kPRelu};
  prelu.slopes = &slope;
  for (const FusedActivation& act : {FusedActivation{FusedActivation::kRelu, 0, 0},
                                     FusedActivation{FusedActivation::kClip, 0, 6},
                                     FusedActivation{FusedActivation::kClip, -2, 1},
                                     FusedActivation{FusedActivation::kLeaky, 0, 0, 0.0f},
                                     FusedActivation{FusedActivation::kLeaky, 0, 0, 0.25f}, prelu}) {
    std::vector<float> c(b.size());
    GemmPacked(a, static_cast<int64_t>(b.size()), b.data(), static_cast<int64_t>(b.size()), c.data(),
               static_cast<int64_t>(b.size()), GemmEpilogue{&zero, act});
    for (size_t i = 0; i < b.size(); ++i) {
      const float want = act.ForRow(0)(b[i] + 0.0f);
      INFO("act " << int(act.kind) << " x " << b[i]);
      CHECK(std::memcmp(&c[i], &want, sizeof(float)) == 0);
    }
  }
  // Relu of NaN is 0 (Activation's `x > 0 ? x : 0`), clip keeps it (clip's comparisons).
  CHECK(FusedActivation{FusedActivation::kRelu, 0, 0}(NAN) == 0.0f);
  CHECK(std::isnan(FusedActivation{FusedActivation::kClip, 0, 6}(NAN)));
  // Leaky keeps NaN and gives slope * x below zero: -0 for slope 0 (LeakyReLU's `x > 0 ? x : slope * x`).
  CHECK(std::isnan(FusedActivation{FusedActivation::kLeaky, 0, 0, 0.5f}(NAN)));
  CHECK(std::signbit(FusedActivation{FusedActivation::kLeaky, 0, 0, 0.0f}(-3.0f)));
}

TEST_CASE("ConvForward dispatch agrees with the im2col reference on every path", "[conv][conv_fast]") {
  // Depthwise, Winograd, 1x1 (GEMM on the input), and grouped / strided ones left to im2col.
  const std::vector<Case> cases = {
      {2, 8, 8, 8, 10, 10, 3, 1, 1}, {1, 32, 32, 1, 30, 27, 3, 1, 1}, {2, 12, 20, 1, 6, 7, 1, 1, 0},
      {1, 12, 12, 3, 9, 8, 3, 1, 1}, {1, 16, 16, 1, 9, 9, 3, 2, 1}, {1, 4, 4, 4, 9, 9, 3, 1, 2, 2},
      {1, 48, 64, 1, 12, 12, 3, 1, 1},
  };
  // Which path and which Winograd tile each layer gets is a tuning choice (it may differ by CPU
  // and change with measurements), so only the results are checked: on both sides of each of the
  // Winograd bounds (16 tiles, few tiles that pad the output by at most half from 32 channels,
  // F(6,3)'s padding against F(4,3)'s, the transformed weights' size with read-only weights).
  const std::vector<Case> near_bounds = {
      {1, 16, 64, 1, 55, 55, 3, 1, 1}, {1, 48, 64, 1, 8, 8, 3, 1, 1},  {1, 32, 32, 1, 9, 9, 3, 1, 1},
      {1, 32, 64, 1, 5, 5, 3, 1, 1},   {1, 24, 64, 1, 8, 8, 3, 1, 1},  {1, 64, 64, 1, 4, 8, 3, 1, 1},
      {1, 64, 32, 1, 15, 20, 3, 1, 1}, {1, 64, 64, 1, 60, 80, 3, 1, 1}, {1, 256, 256, 1, 14, 14, 3, 1, 1},
  };
  // With read-only weights (transformed or packed once) and writable:
  // Past the transformed weights' bound; then below 32 input channels at batch 1, where the
  // product over phase planes may take Winograd's place (SqueezeNet's fire2, P-Net's conv3).
  const std::vector<Case> wide = {{1, 384, 320, 1, 7, 7, 3, 1, 1}, {1, 512, 512, 1, 7, 7, 3, 1, 1},
                                  {1, 512, 512, 1, 2, 2, 3, 1, 1}, {1, 16, 64, 1, 55, 55, 3, 1, 1},
                                  {1, 16, 32, 1, 20, 20, 3, 1, 0}};
  uint64_t seed = 900;
  for (const Case& c : wide) {
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n, const ConvGeom& g,
                     OpReq req) {
      const NDArray weights = ReadOnlyView(NDArray(TShape({n.out_c * n.in_c * 9}), std::vector<float>(w, w + n.out_c * n.in_c * 9)), "test weights");
      DerivedWeights kept;
      kept.Use(weights);
      ConvForward(x, weights.fdata(), b, y, n, g, req, &kept);
    }, c, seed += 10);
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq req) { ConvForward(x, w, b, y, n, g, req); },
                  c, seed += 10);
  }
  for (const Case& c : near_bounds)
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq req) { ConvForward(x, w, b, y, n, g, req); },
                  c, seed += 10);
  for (const Case& c : cases) {
    CheckFastPath([](const float* x, const float* w, const float* b, float* y, const ConvDims& n,
                     const ConvGeom& g, OpReq req) { ConvForward(x, w, b, y, n, g, req); },
                  c, seed += 10);
  }
}

TEST_CASE("A node's Winograd-transformed weights are never stale",
          "[conv][conv_fast]") {
  const Case c{1, 32, 16, 1, 32, 32, 3, 1, 1};  // 64 tiles
  const ConvGeom g = Geom(c);
  const ConvDims n{1, 32, 16, 1};
  const TShape wshape({16, 32, 3, 3});
  const auto x = Random(32 * 32 * 32, 1);
  const auto b = Random(16, 2);
  // One aligned buffer viewed as read-only weights twice, with different contents between the
  // two views: the second storage has the same data pointer but must not use the first's forms.
  auto buffer = std::shared_ptr<float>(static_cast<float*>(std::aligned_alloc(64, wshape.Size() * 4)),
                                       std::free);
  DerivedWeights kept;
  auto run_read_only = [&](uint64_t seed) {
    const auto w = Random(wshape.Size(), seed);
    std::memcpy(buffer.get(), w.data(), w.size() * sizeof(float));
    NDArray weights = NDArray::View(Storage::External(buffer.get(), w.size() * 4, buffer, "weights"),
                                    0, wshape);
    REQUIRE(weights.read_only());
    std::vector<float> y(16 * 1024), y2(16 * 1024);
    kept.Use(weights);
    WinogradConvForward(x.data(), weights.fdata(), b.data(), y.data(), n, g, OpReq::kWrite, &kept);
    CHECK(kept.num_forms() == 1);
    kept.Use(weights);
    WinogradConvForward(x.data(), weights.fdata(), b.data(), y2.data(), n, g, OpReq::kWrite, &kept);
    CHECK(kept.num_forms() == 1);
    CHECK(std::memcmp(y.data(), y2.data(), y.size() * 4) == 0);  // the kept transform
    CHECK(RelativeError(y, NaiveConv(x, w, b, c, g)) < 1e-4);
    // F(6,3) and F(2,3) on the same array: each its own form beside F(4,3)'s, not its transform.
    for (const WinogradTile tile : {WinogradTile::kF6, WinogradTile::kF2}) {
      std::vector<float> cached(16 * 1024), cached_again(16 * 1024), uncached(16 * 1024);
      for (std::vector<float>* out : {&cached, &cached_again}) {
        kept.Use(weights);
        WinogradConvForward(x.data(), weights.fdata(), b.data(), out->data(), n, g, OpReq::kWrite, &kept, {}, tile);
      }
      WinogradConvForward(x.data(), w.data(), b.data(), uncached.data(), n, g, OpReq::kWrite, nullptr, {}, tile);
      CHECK(std::memcmp(cached.data(), uncached.data(), cached.size() * 4) == 0);
      CHECK(std::memcmp(cached_again.data(), uncached.data(), cached.size() * 4) == 0);
      CHECK(RelativeError(cached, NaiveConv(x, w, b, c, g)) < 1e-4);
    }
  };
  run_read_only(3);
  run_read_only(4);

  // Writable weights overwritten between forwards of a bound Convolution: the second forward
  // sees the new weights.
  KwArgs params = {{"kernel", "(3,3)"}, {"num_filter", "16"}, {"pad", "(1,1)"}};
  NDArray data({1, 32, 32, 32}, x), bias({16}, b), weight(wshape, Random(wshape.Size(), 5));
  auto exec = test::BindSingleOp("Convolution", params,
                                 {{"data", data}, {"weight", weight}, {"bias", bias}}, {}, OpReq::kNull);
  exec->Forward(false);
  const auto w6 = Random(wshape.Size(), 6);
  weight.SyncCopyFromCPU(w6.data(), w6.size());
  exec->Forward(false);
  CHECK(RelativeError(exec->outputs()[0].ToVector(), NaiveConv(x, w6, b, c, g)) < 1e-4);
  // One weight changed in place: the kept transform (made from the old bits) is not used.
  auto w7 = w6;
  w7[100] += 0.5f;
  weight.SetFlat(100, w7[100]);
  exec->Forward(false);
  CHECK(RelativeError(exec->outputs()[0].ToVector(), NaiveConv(x, w7, b, c, g)) < 1e-4);
  // The bound op did take the Winograd path: bit-identical to a direct call.
  std::vector<float> direct(16 * 1024);
  WinogradConvForward(x.data(), w7.data(), b.data(), direct.data(), n, g, OpReq::kWrite);
  const auto cached = exec->outputs()[0].ToVector();
  CHECK(std::memcmp(cached.data(), direct.data(), direct.size() * 4) == 0);
}

TEST_CASE("Storage versions move with every write through symbind's doors", "[conv][conv_fast]") {
  NDArray a(TShape({4, 3}));
  NDArray view = a.Slice(1, 3);
  auto version = [&] { return a.storage()->version(); };
  uint64_t last = version();
  auto moved = [&] {
    const uint64_t now = version();
    const bool m = now != last;
    last = now;
    return m;
  };
  CHECK_FALSE(moved());
  const std::vector<float> values(12, 1.5f);
  a.SyncCopyFromCPU(values.data(), values.size());
  CHECK(moved());
  view.Fill(2.0f);  // a view writes the same storage
  CHECK(moved());
  a.SetFlat(3, 7.0f);
  CHECK(moved());
  NDArray b(TShape({4, 3}));
  b.CopyTo(&a);
  CHECK(moved());
  a.fdata()[0] = 9.0f;  // a raw write is recorded by its writer
  CHECK_FALSE(moved());
  a.MarkWritten();
  CHECK(moved());
  (void)a.ToVector();  // reads leave it
  CHECK_FALSE(moved());
  // An operator's output, written by a bound executor's kernel.
  auto exec = test::BindSingleOp("relu", {}, {{"data", NDArray(TShape({4, 3}), values)}}, {}, OpReq::kNull);
  const uint64_t before = exec->outputs()[0].storage()->version();
  exec->Forward(false);
  CHECK(exec->outputs()[0].storage()->version() != before);
  // Bytes borrowed from elsewhere (DLPack) may change unseen: every read is a new version.
  auto owner = std::make_shared<std::vector<float>>(4, 0.0f);
  auto borrowed = Storage::Borrowed(owner->data(), 16, owner);
  CHECK(borrowed->version() != borrowed->version());
}

TEST_CASE("DerivedWeights: a form is made once per array and version", "[conv][conv_fast]") {
  NDArray w(TShape({8}), std::vector<float>(8, 1.0f));
  DerivedWeights kept;
  int made = 0;
  auto sum = [&] {
    kept.Use(w);
    return *kept.Get<float>({0}, [&](const float* v) {
      ++made;
      float s = 0;
      for (int i = 0; i < 8; ++i) s += v[i];
      return s;
    });
  };
  CHECK(sum() == 8.0f);
  CHECK(sum() == 8.0f);
  CHECK(made == 1);
  w.SetFlat(2, 3.0f);
  CHECK(sum() == 10.0f);
  CHECK(made == 2);
  // Another array at another address: made again, even with equal values.
  NDArray other = w.Copy();
  kept.Use(other);
  CHECK(*kept.Get<float>({0}, [&](const float*) { ++made; return 10.0f; }) == 10.0f);
  CHECK(made == 3);
  // Another layout of the same array and version is a second form; both stay.
  kept.Use(other);
  kept.Get<float>({1}, [&](const float*) { ++made; return 0.0f; });
  CHECK(kept.num_forms() == 2);
  // Writable storage keeps no forms of its own: another node reading `other` makes its own.
  DerivedWeights second_node;
  second_node.Use(other);
  second_node.Get<float>({1}, [&](const float*) { ++made; return 0.0f; });
  CHECK(made == 5);
  CHECK(other.storage()->num_derived_forms() == 0);
}

TEST_CASE("DerivedWeights: nodes reading one read-only array share each form through its storage", "[conv][conv_fast]") {
  const NDArray source(TShape({2, 8}), std::vector<float>(16, 1.0f));
  const NDArray w = ReadOnlyView(source, "shared weights");
  REQUIRE(w.read_only());
  int made = 0;
  auto sum = [&](DerivedWeights& node, const NDArray& array, int64_t layout) {
    node.Use(array);
    return *node.Get<float>({layout}, [&](const float* v) {
      ++made;
      float s = 0;
      for (int64_t i = 0; i < array.Size(); ++i) s += v[i];
      return s;
    });
  };
  DerivedWeights first, second;  // two predictors' nodes over the same parameters
  CHECK(sum(first, w, 0) == 16.0f);
  CHECK(sum(second, w, 0) == 16.0f);
  CHECK(made == 1);
  CHECK(w.storage()->num_derived_forms() == 1);
  // Another layout, and another view of the same bytes with another shape, are forms of their own.
  CHECK(sum(second, w, 1) == 16.0f);
  CHECK(sum(first, w.Reshape(TShape({16})), 0) == 16.0f);
  CHECK(made == 3);
  CHECK(w.storage()->num_derived_forms() == 3);
  // Row 1 alone (another offset into the storage) reads its own 8 values.
  CHECK(sum(second, w.Slice(1, 2), 0) == 8.0f);
  CHECK(made == 4);
}

TEST_CASE("A node's packed GEMM weights are never stale", "[conv][conv_fast]") {
  const Case c{1, 24, 40, 1, 12, 12, 1, 1, 0};
  const ConvGeom g = Geom(c);
  const ConvDims n{1, 24, 40, 1};
  REQUIRE(PackedGemmApplies(n, g));
  const TShape wshape({40, 24, 1, 1});
  const auto x = Random(24 * 144, 11);
  const auto b = Random(40, 12);
  // Read-only views of one buffer with different contents: the second must not use the first's form.
  DerivedWeights kept;
  auto buffer = std::shared_ptr<float>(static_cast<float*>(std::aligned_alloc(64, 64 * ((wshape.Size() * 4 + 63) / 64))),
                                       std::free);
  for (uint64_t seed : {13, 14}) {
    const auto w = Random(wshape.Size(), seed);
    std::memcpy(buffer.get(), w.data(), w.size() * sizeof(float));
    NDArray weights = NDArray::View(Storage::External(buffer.get(), w.size() * 4, buffer, "weights"), 0, wshape);
    std::vector<float> y(40 * 144), y2(40 * 144);
    kept.Use(weights);
    PackedGemmConvForward(x.data(), weights.fdata(), b.data(), y.data(), n, g, {}, &kept);
    kept.Use(weights);
    PackedGemmConvForward(x.data(), weights.fdata(), b.data(), y2.data(), n, g, {}, &kept);
    CHECK(std::memcmp(y.data(), y2.data(), y.size() * 4) == 0);
    CHECK(RelativeError(y, NaiveConv(x, w, b, c, g)) < 1e-4);
  }
  // Writable weights overwritten between calls, wholly and one value: the writes move the
  // storage's version, so the panels are packed again.
  NDArray weight(wshape, Random(wshape.Size(), 15));
  std::vector<float> y(40 * 144);
  kept.Use(weight);
  PackedGemmConvForward(x.data(), weight.fdata(), b.data(), y.data(), n, g, {}, &kept);
  auto w16 = Random(wshape.Size(), 16);
  weight.SyncCopyFromCPU(w16.data(), w16.size());
  kept.Use(weight);
  PackedGemmConvForward(x.data(), weight.fdata(), b.data(), y.data(), n, g, {}, &kept);
  CHECK(RelativeError(y, NaiveConv(x, w16, b, c, g)) < 1e-4);
  w16[501] -= 0.25f;
  weight.SetFlat(501, w16[501]);
  kept.Use(weight);
  PackedGemmConvForward(x.data(), weight.fdata(), b.data(), y.data(), n, g, {}, &kept);
  CHECK(RelativeError(y, NaiveConv(x, w16, b, c, g)) < 1e-4);
  std::vector<float> direct(40 * 144);
  PackedGemmConvForward(x.data(), w16.data(), b.data(), direct.data(), n, g);
  CHECK(std::memcmp(y.data(), direct.data(), direct.size() * 4) == 0);
}

TEST_CASE("Whole models: fast paths within 1e-4 of the im2col path, bit-identical over threads",
          "[conv][conv_fast][real][shared]") {
  struct Model {
    const char* name;
    test::SharedModel model;
    TShape data;
  };
  // Input sizes chosen so that Winograd has enough tiles for some layers (ResNet-18's 28x28
  // stage and its 14x14 one on tall tiles; the MTCNN nets' 3x3 layers go to the packed path).
  std::vector<Model> models = {{"resnet-18", test::ResNet18Logits(TShape({2, 3, 112, 112})), TShape({2, 3, 112, 112})},
                               {"det1", test::LoadMtcnnModel("det1"), TShape({1, 3, 120, 160})},
                               {"det2", test::LoadMtcnnModel("det2"), TShape({8, 3, 24, 24})},
                               {"det3", test::LoadMtcnnModel("det3"), TShape({2, 3, 48, 48})},
                               // Generated: depthwise, 1x1 (packed GEMM) and a stride-2 stem.
                               {"mobilenet-v2",
                                test::GaussianModel(LoadSymbolFile(std::string(SYMBIND_SOURCE_DIR) +
                                                                   "/bench/models/mobilenet-v2-symbol.json"),
                                                    TShape({1, 3, 64, 64})),
                                TShape({1, 3, 64, 64})}};
  const bool was_enabled = FastPathsEnabled();
  for (const Model& m : models) {
    INFO(m.name);
    NDArray data = test::RandomArray(m.data, 3);
    auto exec = test::BindShared(m.model, data);
    SetFastPathsEnabled(false);
    exec->Forward(false);
    const auto reference = test::CopyOutputs(*exec);
    SetFastPathsEnabled(true);
    exec->Forward(false);
    const auto fast = test::CopyOutputs(*exec);
    CHECK_FALSE(test::BitIdentical(fast, reference));  // a fast path did run
    for (size_t i = 0; i < fast.size(); ++i)
      CHECK(RelativeError(fast[i].ToVector(), reference[i].ToVector()) < 1e-4);
    for (int threads : {1, 2, 4}) {
      test::ScopedNumThreads scoped(threads);
      exec->Forward(false);
      INFO("threads " << threads);
      CHECK(test::BitIdentical(test::CopyOutputs(*exec), fast));
    }
  }
  SetFastPathsEnabled(was_enabled);
}

TEST_CASE("Whole-model training: gradients on the fast paths within 1e-4 of the reference paths, bit-identical over threads",
          "[conv][conv_fast][grad][real][shared]") {
  // ResNet-18 at 112x112, batch 2, in training mode: every gradient path of its layers (the
  // blocked weight gradient at 56x56 to 14x14 and the stem, the packed one at 7x7, Winograd and
  // packed data gradients, BatchNorm, relu and pooling backward), with a gradient for the data
  // too (the stem's data gradient).
  const TShape shape({2, 3, 112, 112});
  const test::SharedModel m = test::ResNet18Logits(shape);
  std::map<std::string, NDArray> args = m.params;
  args["data"] = test::RandomArray(shape, 5);
  std::map<std::string, OpReq> reqs;
  for (const std::string& name : m.symbol.ListArguments()) reqs[name] = OpReq::kWrite;
  auto exec = SimpleBind(m.symbol, Context::CPU(), args, {}, reqs, m.aux);
  const NDArray head = test::RandomArray(exec->outputs()[0].shape(), 7);
  auto backward = [&] {
    exec->Backward({head});
    std::vector<NDArray> copies;
    for (const NDArray& g : exec->grad_arrays()) copies.push_back(g.Copy());
    return copies;
  };
  auto gradients = [&] {
    exec->Forward(true);
    return backward();
  };
  // Both backward passes run on one forward pass (the fast paths'). Two forward passes round
  // differently (the paths' sums; under SYMBIND_GEMM_ISA=base Eigen's against ours), and a relu
  // whose input lies within rounding of zero then passes its gradient in one and not in the
  // other: one such position moves a gradient by far more than 1e-4 (under base: 1.6% in
  // `data`, starting in one channel of stage2_unit1_bn1). The forward paths are compared in
  // "Whole models: fast paths within 1e-4 of the im2col path".
  const bool was_enabled = FastPathsEnabled();
  SetFastPathsEnabled(true);
  const auto fast = gradients();
  CHECK(test::BitIdentical(backward(), fast));  // Backward repeats on the same forward pass
  SetFastPathsEnabled(false);
  const auto reference = backward();
  SetFastPathsEnabled(was_enabled);
  CHECK_FALSE(test::BitIdentical(fast, reference));  // a fast path did run
  // BatchNorm's gamma gradient sums xhat * dy, whose terms cancel (xhat sums to zero per
  // channel): it turns the paths' differences in dy (1e-5 relative in the other gradients)
  // into up to ~1e-3 (bn0, after 17 layers of backward); its beta gradient and every weight
  // gradient stay within 1e-4. fix_gamma's zero gradients must stay zero.
  const auto names = m.symbol.ListArguments();
  for (size_t i = 0; i < fast.size(); ++i) {
    INFO(names[i]);
    const auto want = reference[i].ToVector(), got = fast[i].ToVector();
    if (std::all_of(want.begin(), want.end(), [](float v) { return v == 0.0f; })) {
      CHECK(got == want);
      continue;
    }
    CHECK(RelativeError(got, want) < (EndsWith(names[i], "_gamma") ? 2e-3 : 1e-4));
  }
  for (int threads : {1, 2, 4}) {
    test::ScopedNumThreads scoped(threads);
    INFO("threads " << threads);
    CHECK(test::BitIdentical(gradients(), fast));
  }
}

TEST_CASE("Predictor models at 224x224: deep layers on tall tiles within 1e-4 of im2col, bit-identical over threads",
          "[conv][conv_fast][real][shared]") {
  // Deep 1x1 and 3x3 layers at 14x14 and 7x7 (MobileNet v2's projections, ResNet-18's last
  // two stages) take the packed path with tall tiles, here with the Predictor's folded,
  // read-only weights.
  const std::string bench = std::string(SYMBIND_SOURCE_DIR) + "/bench/models/";
  const TShape shape({1, 3, 224, 224});
  const bool was_enabled = FastPathsEnabled();
  for (const std::string& path : {bench + "mobilenet-v2-symbol.json",
                                  symbind_test::SharedDir() + "/models/symbols/resnet-18-symbol.json"}) {
    INFO(path);
    const test::SharedModel m = test::GaussianModel(LoadSymbolFile(path), shape);
    Predictor p(m.symbol, m.params, m.aux, {{"data", shape}});
    p.SetInput("data", test::RandomArray(shape, 5));
    auto outputs = [&] {
      p.Forward();
      std::vector<NDArray> out;
      for (const NDArray& o : p.Outputs()) out.push_back(o.Copy());
      return out;
    };
    SetFastPathsEnabled(false);
    const auto reference = outputs();
    SetFastPathsEnabled(true);
    const auto fast = outputs();
    for (size_t i = 0; i < fast.size(); ++i)
      CHECK(RelativeError(fast[i].ToVector(), reference[i].ToVector()) < 1e-4);
    for (int threads : {1, 2, 4}) {
      test::ScopedNumThreads scoped(threads);
      INFO("threads " << threads);
      CHECK(test::BitIdentical(outputs(), fast));
    }
  }
  SetFastPathsEnabled(was_enabled);
}

TEST_CASE("ConvForward writes images apart (y_image_stride) on every path, the same bits as contiguous",
          "[conv][conv_fast][strided]") {
  // y's images inside a larger array, as an executor places a Concat's input along channels at
  // batch > 1: each image must equal the contiguous result bit for bit, the floats between
  // images untouched. The packed GEMM (1x1 and tiled 3x3) and Winograd write so; depthwise,
  // grouped (im2col) and tiny-depth layers go through a temporary.
  const std::vector<PathCase> cases = {
      {"packed 1x1", {2, 16, 24, 1, 9, 9, 1, 1, 0}},   {"packed 3x3", {3, 8, 20, 1, 11, 10, 3, 1, 1}},
      {"winograd", {2, 16, 16, 1, 12, 12, 3, 1, 1}},   {"depthwise", {2, 8, 8, 8, 9, 9, 3, 1, 1}},
      {"grouped", {2, 8, 12, 2, 7, 7, 3, 1, 1}},      {"tiny depth", {2, 3, 8, 1, 9, 40, 3, 2, 1}},
  };
  uint64_t seed = 3100;
  for (const PathCase& pc : cases) {
    const Case& c = pc.c;
    CAPTURE(pc.path);
    const ConvGeom g = Geom(c);
    const auto x = Random(c.batch * c.in_c * c.h * c.w, seed += 10);
    const std::vector<float> w_values = Random(c.out_c * (c.in_c / c.groups) * c.k * c.k, seed + 1);
    const auto b = Random(c.out_c, seed + 2);
    // Read-only weights, as a Predictor's: the paths that cache derived weights take them.
    const NDArray w = ReadOnlyView(NDArray(TShape({static_cast<int64_t>(w_values.size())}), w_values), "weights");
    DerivedWeights kept;
    kept.Use(w);
    const FusedActivation relu{FusedActivation::kRelu};
    const int64_t image = c.out_c * g.out_size(), gap = 5 * g.out_size() + 3;
    std::vector<float> contiguous(static_cast<size_t>(c.batch * image));
    ConvForward(x.data(), w.fdata(), b.data(), contiguous.data(), {c.batch, c.in_c, c.out_c, c.groups}, g,
                OpReq::kWrite, &kept, relu);
    const float kUntouched = -12345.0f;
    std::vector<float> strided(static_cast<size_t>(c.batch * (image + gap)), kUntouched);
    ConvDims apart{c.batch, c.in_c, c.out_c, c.groups};
    apart.y_image_stride = image + gap;
    ConvForward(x.data(), w.fdata(), b.data(), strided.data() + gap / 2, apart, g, OpReq::kWrite, &kept, relu);
    for (int64_t i = 0; i < c.batch; ++i) {
      CAPTURE(i);
      const float* at = strided.data() + gap / 2 + i * (image + gap);
      CHECK(std::memcmp(at, contiguous.data() + i * image, static_cast<size_t>(image) * sizeof(float)) == 0);
      if (i + 1 < c.batch) CHECK(std::all_of(at + image, at + image + gap, [&](float v) { return v == kUntouched; }));
    }
    CHECK(std::all_of(strided.begin(), strided.begin() + gap / 2, [&](float v) { return v == kUntouched; }));
    // What it does not do: add into y, or a residual, with images apart.
    CHECK_THROWS_WITH(ConvForward(x.data(), w.fdata(), b.data(), strided.data(), apart, g, OpReq::kAdd, &kept),
                      Catch::Contains("y_image_stride"));
  }
}

TEST_CASE("SYMBIND_GEMM_ISA: unset, empty or unknown leaves every kernel set, a name caps it", "[gemm][gemm_isa]") {
  std::ostringstream warnings;
  CHECK(AllowedIsaLevel(nullptr, &warnings) == 3);
  CHECK(AllowedIsaLevel("", &warnings) == 3);
  CHECK(warnings.str().empty());
  CHECK(AllowedIsaLevel("base", &warnings) == 0);
  CHECK(AllowedIsaLevel("avx2", &warnings) == 1);
  CHECK(AllowedIsaLevel("avx512", &warnings) == 2);
  CHECK(AllowedIsaLevel("avx512vnni", &warnings) == 3);
  CHECK(warnings.str().empty());
  // A typo must not silently select the portable kernels (several times slower).
  for (const char* typo : {"AVX2", "avx-512", "sse", " avx2"}) {
    std::ostringstream said;
    CHECK(AllowedIsaLevel(typo, &said) == 3);
    CHECK_THAT(said.str(), Catch::Contains(std::string("ignoring SYMBIND_GEMM_ISA='") + typo + "'") &&
                               Catch::Contains("base, avx2, avx512, avx512vnni"));
  }
  CHECK(AllowedIsaLevel("avx", nullptr) == 3);  // no stream: no warning, no crash
  // This process (ctest runs it also with the variable empty and misspelt): the widest set the
  // CPU has up to the one the variable names.
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const int allowed = AllowedIsaLevel(std::getenv("SYMBIND_GEMM_ISA"), nullptr);
  CHECK(std::string(GemmIsa()) == (avx512 && allowed >= 2 ? "avx512" : avx2 && allowed >= 1 ? "avx2" : "base"));
}
