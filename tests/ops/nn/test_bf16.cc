// The bf16 kernels (ops/kernels/gemm_bf16.h, Bf16ConvForward) against float32 sums of the
// bf16-rounded operands, the same bits for any thread count; where the CPU has no AVX512_BF16
// (or SYMBIND_GEMM_ISA lowers the kernels: ctest entry bf16_refused_avx2) they refuse with a
// clear error instead of running float32.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <symbind/core/error.h>
#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/nn/conv_util.h>

using namespace symbind;
using namespace symbind::conv;

namespace {

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
// x as the bf16 it rounds to, widened back to float.
float Rounded(float x) { return Bits(static_cast<uint32_t>(RoundToBf16(x)) << 16); }

std::vector<float> Uniform(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A Predictor-free way to say "refused": GemmBf16 throws Error naming the reason.
bool RefusedHere() {
  if (Bf16Available()) return false;
  const PackedBf16A a(std::vector<float>(4, 1.0f).data(), 2, 2, 2);
  std::vector<float> b(4, 1.0f), c(4);
  REQUIRE_THROWS_WITH(GemmBf16(a, 2, b.data(), 2, c.data(), 2), Catch::Contains("bf16"));
  WARN("bf16 kernels unavailable here (" << Bf16Unavailable() << "): checked that they refuse");
  return true;
}

}  // namespace

TEST_CASE("bf16: rounding to nearest with ties to even, NaN stays NaN, denormals flush", "[bf16]") {
  struct Case {
    uint32_t in;
    uint16_t out;
  };
  const Case cases[] = {
      {0x3f800000u, 0x3f80},  // 1
      {0x3f808000u, 0x3f80},  // 1 + 2^-8: halfway, to the even 1
      {0x3f818000u, 0x3f82},  // 1 + 3 * 2^-8: halfway, to the even 1 + 2^-6
      {0x3f808001u, 0x3f81},  // just above halfway: up
      {0x3f807fffu, 0x3f80},  // just below: down
      {0xc0200000u, 0xc020},  // -2.5, exact
      {0x7f7fffffu, 0x7f80},  // the largest float rounds to infinity
      {0x7f800000u, 0x7f80},  // infinity
      {0xff800000u, 0xff80},  // -infinity
      {0x00000001u, 0x0000},  // the smallest denormal
      {0x807fffffu, 0x8000},  // a negative denormal keeps its sign
  };
  for (const Case& c : cases) {
    INFO("input bits " << std::hex << c.in);
    CHECK(RoundToBf16(Bits(c.in)) == c.out);
  }
  const uint16_t nan = RoundToBf16(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x007f) != 0);
  CHECK(std::isnan(Bits(0x7f800001u)) == std::isnan(Rounded(Bits(0x7f800001u))));  // a signalling NaN stays NaN
}

TEST_CASE("GemmBf16: float32 sums of the rounded operands, with bias, residual and activations", "[bf16]") {
  if (RefusedHere()) return;
  struct Shape {
    int64_t M, N, K;
  };
  // Row, column and depth tails (an odd depth's last pair is half zero), one column (the
  // FullyConnected-at-batch-1 kernel), deep sums, and columns in two blocks of packed B (66
  // panels of 32 at depth 64) split with the rows among the threads.
  const Shape shapes[] = {{1, 1, 1}, {8, 32, 2}, {9, 33, 3}, {7, 17, 5}, {64, 49, 577}, {24, 1, 100},
                          {3, 1, 1}, {130, 70, 64}, {16, 200, 1152}, {40, 2100, 64}};
  const FusedActivation relu{FusedActivation::kRelu};
  FusedActivation leaky{FusedActivation::kLeaky};
  leaky.slope = 0.1f;
  FusedActivation clip{FusedActivation::kClip};
  clip.lo = -0.5f;
  clip.hi = 0.75f;
  uint64_t seed = 1;
  for (const Shape& s : shapes)
    for (int variant = 0; variant < 4; ++variant) {
      INFO("M " << s.M << " N " << s.N << " K " << s.K << " variant " << variant);
      const int64_t lda = s.K + 3, ldb = s.N + 2, ldc = s.N + 1;
      const std::vector<float> a = Uniform(size_t(s.M * lda), ++seed), b = Uniform(size_t(s.K * ldb), ++seed);
      const std::vector<float> bias = Uniform(size_t(s.M), ++seed), residual = Uniform(size_t(s.M * ldc), ++seed);
      std::vector<float> slopes = Uniform(size_t(s.M), ++seed, 0.0f, 0.5f);
      GemmEpilogue ep;
      if (variant >= 1) ep.bias = bias.data();
      if (variant == 1) ep.act = relu;
      if (variant == 2) {
        ep.residual = residual.data();
        ep.act = leaky;
      }
      if (variant == 3) {
        ep.act = clip;
        if (s.M % 2) {
          ep.act = FusedActivation{FusedActivation::kPRelu};
          ep.act.slopes = slopes.data();
        }
      }
      const PackedBf16A packed(a.data(), s.M, s.K, lda);
      std::vector<float> c(size_t(s.M * ldc), 5.0f), again(c);
      GemmBf16(packed, s.N, b.data(), ldb, c.data(), ldc, ep);
      const int threads = GetNumThreads();
      SetNumThreads(1);
      GemmBf16(packed, s.N, b.data(), ldb, again.data(), ldc, ep);
      SetNumThreads(threads);
      CHECK(std::memcmp(c.data(), again.data(), c.size() * sizeof(float)) == 0);  // any thread count
      int64_t wrong = 0;
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < ldc; ++n) {
          const float got = c[size_t(m * ldc + n)];
          if (n >= s.N) {  // past the columns: untouched
            wrong += got != 5.0f;
            continue;
          }
          double sum = 0, magnitude = 0;
          for (int64_t k = 0; k < s.K; ++k) {
            const double p = double(Rounded(a[size_t(m * lda + k)])) * Rounded(b[size_t(k * ldb + n)]);
            sum += p;
            magnitude += std::fabs(p);
          }
          if (ep.bias) sum += bias[size_t(m)];
          if (ep.residual) sum += residual[size_t(m * ldc + n)];
          const FusedActivation act = ep.act.kind == FusedActivation::kPRelu ? ep.act.ForRow(m) : ep.act;
          const double want = act(static_cast<float>(sum));
          const double tolerance = 1e-6 * (magnitude + 1) * std::sqrt(double(s.K));
          wrong += !(std::fabs(got - want) <= tolerance);
        }
      CHECK(wrong == 0);
    }
}

TEST_CASE("Bf16ConvForward: the float32 convolution of the rounded input and weights", "[bf16]") {
  if (RefusedHere()) return;
  struct Case {
    int64_t batch, in_c, out_c, h, w, k, stride, pad;
  };
  const Case cases[] = {{1, 16, 24, 9, 9, 1, 1, 0},  {2, 8, 16, 10, 10, 3, 2, 1}, {1, 32, 40, 8, 8, 1, 2, 0},
                        {1, 3, 16, 23, 23, 7, 2, 3}, {2, 5, 9, 6, 7, 3, 1, 1}};
  uint64_t seed = 100;
  for (const Case& c : cases)
    for (bool fused : {false, true}) {
      INFO("batch " << c.batch << " " << c.in_c << " -> " << c.out_c << " at " << c.h << "x" << c.w << " kernel "
                    << c.k << " stride " << c.stride << " pad " << c.pad << (fused ? ", residual + relu" : ""));
      const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
      const ConvGeom g = MakeGeom(TShape({c.batch, c.in_c, c.h, c.w}), TShape({c.batch, c.out_c, oh, ow}),
                                  TShape({c.k, c.k}), TShape({c.stride, c.stride}), TShape({1, 1}), TShape({c.pad, c.pad}));
      const ConvDims n{c.batch, c.in_c, c.out_c, 1};
      const int64_t xs = c.batch * c.in_c * g.in_size(), ws = c.out_c * c.in_c * g.k_size(), ys = c.batch * c.out_c * g.out_size();
      std::vector<float> x = Uniform(size_t(xs), ++seed), w = Uniform(size_t(ws), ++seed), bias = Uniform(size_t(c.out_c), ++seed);
      const std::vector<float> residual = Uniform(size_t(ys), ++seed);
      std::vector<float> xr(x), wr(w);
      for (auto& v : xr) v = Rounded(v);
      for (auto& v : wr) v = Rounded(v);
      const FusedActivation act = fused ? FusedActivation{FusedActivation::kRelu} : FusedActivation{};
      std::vector<float> got(static_cast<size_t>(ys)), want(static_cast<size_t>(ys));
      Bf16ConvForward(x.data(), w.data(), bias.data(), got.data(), n, g, nullptr, act, fused ? residual.data() : nullptr);
      ConvForwardIm2Col(xr.data(), wr.data(), bias.data(), want.data(), n, g, OpReq::kWrite);
      int64_t wrong = 0;
      for (int64_t i = 0; i < ys; ++i) {
        float expect = want[size_t(i)];
        if (fused) expect = act(expect + residual[size_t(i)]);
        wrong += !(std::fabs(got[size_t(i)] - expect) <= 2e-5f * (1 + std::fabs(expect)) * std::sqrt(float(c.in_c * g.k_size())));
      }
      CHECK(wrong == 0);
    }
}

TEST_CASE("Bf16ConvForward: the second output (a fused BatchNorm + relu) from y as stored, the bits of a pass after",
          "[bf16]") {
  if (RefusedHere()) return;
  struct Case {
    int64_t batch, in_c, out_c, h, w, k, stride, pad;
  };
  // GEMM tiles with row and column tails, im2col at stride 2, one output position (the column
  // kernel), Winograd.
  const Case cases[] = {{2, 16, 20, 9, 9, 1, 1, 0}, {1, 8, 16, 10, 10, 3, 2, 1}, {1, 64, 12, 1, 1, 1, 1, 0},
                        {1, 24, 20, 13, 17, 3, 1, 1}};
  uint64_t seed = 300;
  for (const Case& c : cases) {
    INFO("batch " << c.batch << " " << c.in_c << " -> " << c.out_c << " at " << c.h << "x" << c.w << " kernel " << c.k);
    const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    const ConvGeom g = MakeGeom(TShape({c.batch, c.in_c, c.h, c.w}), TShape({c.batch, c.out_c, oh, ow}),
                                TShape({c.k, c.k}), TShape({c.stride, c.stride}), TShape({1, 1}), TShape({c.pad, c.pad}));
    const ConvDims n{c.batch, c.in_c, c.out_c, 1};
    const int64_t ys = c.batch * c.out_c * g.out_size();
    const std::vector<float> x = Uniform(size_t(c.batch * c.in_c * g.in_size()), ++seed),
                             w = Uniform(size_t(c.out_c * c.in_c * g.k_size()), ++seed),
                             bias = Uniform(size_t(c.out_c), ++seed), residual = Uniform(size_t(ys), ++seed),
                             mean = Uniform(size_t(c.out_c), ++seed), scale = Uniform(size_t(c.out_c), ++seed),
                             shift = Uniform(size_t(c.out_c), ++seed);
    std::vector<float> y(static_cast<size_t>(ys)), z(static_cast<size_t>(ys), -7.0f);
    const FusedActivation relu{FusedActivation::kRelu};
    const NormalizedOutput normalized{z.data(), mean.data(), scale.data(), shift.data(), relu};
    Bf16ConvForward(x.data(), w.data(), bias.data(), y.data(), n, g, nullptr, relu, residual.data(), normalized);
    int64_t wrong = 0;
    for (int64_t i = 0; i < ys; ++i) {
      const int64_t ch = i / g.out_size() % c.out_c;
      const float centred = y[size_t(i)] - mean[size_t(ch)];
      const float scaled = centred * scale[size_t(ch)];
      const float want = relu(scaled + shift[size_t(ch)]);
      wrong += std::memcmp(&want, &z[size_t(i)], sizeof want) != 0;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("Winograd with bf16 products: close to the exact convolution, not float32's, the same bits on any thread count",
          "[bf16]") {
  if (RefusedHere()) return;
  const int64_t batch = 2, in_c = 24, out_c = 20, h = 13, w = 17;
  const ConvGeom g = MakeGeom(TShape({batch, in_c, h, w}), TShape({batch, out_c, h, w}), TShape({3, 3}), TShape({1, 1}),
                              TShape({1, 1}), TShape({1, 1}));
  const ConvDims n{batch, in_c, out_c, 1};
  const int64_t ys = batch * out_c * h * w;
  const std::vector<float> x = Uniform(size_t(batch * in_c * h * w), 7), wt = Uniform(size_t(out_c * in_c * 9), 8),
                           bias = Uniform(size_t(out_c), 9);
  // The exact convolution, and the sum of |products| each output's error scales with.
  std::vector<double> exact(static_cast<size_t>(ys)), magnitude(static_cast<size_t>(ys));
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t f = 0; f < out_c; ++f)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xo = 0; xo < w; ++xo) {
          double sum = bias[size_t(f)], mag = std::fabs(bias[size_t(f)]);
          for (int64_t c = 0; c < in_c; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = y + ky - 1, ix = xo + kx - 1;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const double p = double(wt[size_t(((f * in_c + c) * 3 + ky) * 3 + kx)]) * x[size_t(((i * in_c + c) * h + iy) * w + ix)];
                sum += p, mag += std::fabs(p);
              }
          const size_t at = size_t(((i * out_c + f) * h + y) * w + xo);
          exact[at] = sum, magnitude[at] = mag;
        }
  // The tiles Bf16ConvForward takes (F(6,3) becomes F(4,3) there), with the worst error each may
  // make, over the sum of |products| of the output: bf16 keeps 8 significant bits (2^-9 relative
  // per operand), and F(4,3)'s transforms add and subtract values scaled by up to 8 before and
  // after the products (measured here: 0.15% for F(2,3), 2.1% for F(4,3)).
  for (auto [tile, bound] : {std::pair{WinogradTile::kF2, 0.005}, std::pair{WinogradTile::kF4, 0.04}}) {
    INFO("tile F(" << (tile == WinogradTile::kF2 ? 2 : 4) << ",3)");
    std::vector<float> got(static_cast<size_t>(ys)), fp32(static_cast<size_t>(ys)), again(static_cast<size_t>(ys));
    WinogradConvForward(x.data(), wt.data(), bias.data(), got.data(), n, g, OpReq::kWrite, nullptr, {}, tile, true);
    WinogradConvForward(x.data(), wt.data(), bias.data(), fp32.data(), n, g, OpReq::kWrite, nullptr, {}, tile, false);
    const int threads = GetNumThreads();
    SetNumThreads(1);
    WinogradConvForward(x.data(), wt.data(), bias.data(), again.data(), n, g, OpReq::kWrite, nullptr, {}, tile, true);
    SetNumThreads(threads);
    CHECK(again == got);
    CHECK(got != fp32);
    double worst = 0;
    for (int64_t i = 0; i < ys; ++i)
      worst = std::max(worst, std::fabs(got[size_t(i)] - exact[size_t(i)]) / magnitude[size_t(i)]);
    CHECK(worst <= bound);
  }
}
