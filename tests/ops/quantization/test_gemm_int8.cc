// The int8 GEMM (ops/kernels/gemm_int8.h) against int64 sums, for int8 and uint8 data, over
// shapes with row, column and depth tails, strided rows and deep sums; the same bits for any
// thread count. Registered per instruction set too (tests/CMakeLists.txt: gemm_int8_*).
#include <algorithm>
#include <limits>
#include <random>

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/ops/kernels/gemm_int8.h>

using namespace symbind;

namespace {

// n values uniform over all of T's levels (int8 or uint8).
template <typename T>
std::vector<T> RandomLevels(size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  std::vector<T> v(n);
  for (auto& x : v) x = T(dist(rng));
  return v;
}
const char* TypeName(int8_t) { return " int8"; }
const char* TypeName(uint8_t) { return " uint8"; }

// How many of C's M x N sums (c_at(m, n)) differ from the int64 sums over k of
// a_at(m, k) * b_at(k, n): the reference of every int8 GEMM layout below.
template <typename A, typename B, typename C>
int64_t WrongSums(int64_t M, int64_t N, int64_t K, A a_at, B b_at, C c_at) {
  int64_t wrong = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t want = 0;
      for (int64_t k = 0; k < K; ++k) want += int64_t(a_at(m, k)) * int64_t(b_at(k, n));
      wrong += int64_t(c_at(m, n)) != want;
    }
  return wrong;
}

// The weights a GEMM test draws: every level but -128 (the sign trick's range on AVX2), with a
// -128 among them (corrected after the sums there), narrow ones (each aligned pair's magnitudes
// within 128: AVX2's tile without the sign trick) or even levels (narrow once halved).
enum class Weights { kSymmetric, kMinus128, kNarrow, kEven };
const char* WeightsName(Weights w) {
  switch (w) {
    case Weights::kSymmetric: return ", weights in [-127, 127]";
    case Weights::kMinus128: return ", a -128 weight";
    case Weights::kNarrow: return ", narrow weights";
    case Weights::kEven: return ", even weights";
  }
  return "";
}

template <typename TB>
void CheckGemm(int64_t M, int64_t N, int64_t K, uint64_t seed, Weights kind = Weights::kSymmetric) {
  INFO("M " << M << " N " << N << " K " << K << TypeName(TB{}) << WeightsName(kind));
  std::mt19937_64 rng(seed);
  const int64_t lda = K + 3, ldb = N + 5, ldc = N + 2;  // rows apart by more than their length
  std::vector<int8_t> a = RandomLevels<int8_t>(size_t(M * lda), rng);
  for (auto& v : a) v = v == -128 ? int8_t(-127) : v;
  const bool is_unsigned = std::is_same_v<TB, uint8_t>;
  std::vector<TB> b = RandomLevels<TB>(size_t(std::max<int64_t>(K, 1) * ldb), rng);
  // Extremes: the largest pair of products of one sign (uint8 0 enters the sign trick as -128,
  // int8 -128 the narrow tile as 0 and 127 as 255), and the largest product of the other.
  // The pair's weight and the other product's (even weights keep all even, or they pack unhalved).
  const int8_t pair = kind == Weights::kNarrow ? 64 : kind == Weights::kEven ? -128 : 127;
  const int8_t other = kind == Weights::kNarrow ? -64 : kind == Weights::kEven ? 126 : -127;
  if (kind == Weights::kNarrow)
    for (auto& v : a) v = int8_t(v / 2);  // within [-63, 63]
  if (kind == Weights::kEven)
    for (auto& v : a) v = int8_t(v & ~1);  // within [-128, 126]
  if (M > 0 && K > 1) {
    a[0] = a[1] = pair;
    b[0] = b[size_t(ldb)] = kind == Weights::kSymmetric ? (is_unsigned ? TB(0) : TB(-128))
                                                        : (is_unsigned ? TB(255) : TB(127));
    a[2 % size_t(K)] = other;
  }
  if (M > 0 && K > 0 && kind == Weights::kMinus128) {
    a[0] = -128;
    b[0] = is_unsigned ? TB(255) : TB(-128);
  }
  std::vector<int32_t> c(size_t(M * ldc), 7), again(c);
  GemmInt8(M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc);
  CHECK(WrongSums(
            M, N, K, [&](int64_t m, int64_t k) { return a[size_t(m * lda + k)]; },
            [&](int64_t k, int64_t n) { return b[size_t(k * ldb + n)]; },
            [&](int64_t m, int64_t n) { return c[size_t(m * ldc + n)]; }) == 0);
  for (int64_t m = 0; m < M; ++m)  // nothing written past each row's N columns
    for (int64_t n = N; n < ldc; ++n) CHECK(c[size_t(m * ldc + n)] == 7);
  const int threads = GetNumThreads();
  SetNumThreads(1);
  GemmInt8(M, N, K, a.data(), lda, b.data(), ldb, again.data(), ldc);
  SetNumThreads(threads);
  CHECK(again == c);
}

}  // namespace

TEST_CASE("GemmInt8 equals int64 sums for int8 and uint8 data, every tail and any thread count", "[gemm_int8]") {
  uint64_t seed = 1;
  for (int64_t M : {1, 5, 6, 7, 13})
    for (int64_t N : {1, 15, 16, 17, 40})
      for (int64_t K : {1, 2, 3, 9, 64}) {
        CheckGemm<uint8_t>(M, N, K, seed++);
        CheckGemm<int8_t>(M, N, K, seed++);
      }
  // Deep sums (past one 256-quad pass) near int32's limits: 4609 products of up to 255 * 128.
  CheckGemm<uint8_t>(12, 33, 4609, 99);
  CheckGemm<int8_t>(7, 20, 1025, 100);
  for (int64_t K : {1, 7, 1100}) {
    CheckGemm<uint8_t>(7, 19, K, 200 + K, Weights::kMinus128);
    CheckGemm<int8_t>(7, 19, K, 300 + K, Weights::kMinus128);
  }
  for (Weights kind : {Weights::kNarrow, Weights::kEven})
    for (int64_t K : {1, 2, 3, 9, 64, 1100}) {
      CheckGemm<uint8_t>(7, 19, K, 400 + K, kind);
      CheckGemm<int8_t>(13, 33, K, 500 + K, kind);
    }
}

namespace {
// GemmInt8Quads on data held as channel quads (int8 levels flipped to unsigned, as the depthwise
// band writes them): the sums of the same matrix as int64, and the same bits on one thread.
template <typename TB>
void CheckGemmQuads(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  INFO("quads M " << M << " N " << N << " K " << K << TypeName(TB{}));
  std::mt19937_64 rng(seed);
  const std::vector<int8_t> a = RandomLevels<int8_t>(size_t(M * K), rng);
  const std::vector<TB> b = RandomLevels<TB>(size_t(K * N), rng);
  const PackedInt8A packed = PackedInt8A::Pack(M, K, a.data(), K);
  const int64_t plane = Int8QuadPlaneBytes(N), quads = (K + 3) / 4;
  if (!GemmInt8ReadsQuads(packed)) {  // weights packed for another kernel: refused
    std::vector<uint8_t> q(size_t(quads * plane));
    std::vector<int32_t> c(size_t(M * N));
    CHECK_THROWS_WITH(GemmInt8Quads(packed, N, q.data(), plane, false, c.data(), N), Catch::Contains("VNNI"));
    return;
  }
  REQUIRE(plane >= 4 * N);
  std::vector<uint8_t> q(size_t(quads * plane), 0xA5);  // what lies past N and K is never used
  const bool flipped = std::is_same_v<TB, int8_t>;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      q[size_t(k / 4 * plane + 4 * n + k % 4)] = static_cast<uint8_t>(static_cast<uint8_t>(b[size_t(k * N + n)]) ^ (flipped ? 0x80 : 0));
  const int64_t ldc = N + 3;
  std::vector<int32_t> c(size_t(M * ldc), 7), again(c);
  GemmInt8Quads(packed, N, q.data(), plane, flipped, c.data(), ldc);
  CHECK(WrongSums(
            M, N, K, [&](int64_t m, int64_t k) { return a[size_t(m * K + k)]; },
            [&](int64_t k, int64_t n) { return b[size_t(k * N + n)]; },
            [&](int64_t m, int64_t n) { return c[size_t(m * ldc + n)]; }) == 0);
  int64_t overwritten = 0;  // nothing written past each row's N columns
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = N; n < ldc; ++n) overwritten += c[size_t(m * ldc + n)] != 7;
  CHECK(overwritten == 0);
  const int threads = GetNumThreads();
  SetNumThreads(1);
  GemmInt8Quads(packed, N, q.data(), plane, flipped, again.data(), ldc);
  SetNumThreads(threads);
  CHECK(again == c);
  CHECK_THROWS_WITH(GemmInt8Quads(packed, N, q.data(), 4 * N - 4, flipped, c.data(), ldc),
                    Catch::Contains("shorter than the tiles read"));
}
}  // namespace

TEST_CASE("GemmInt8Quads (data as channel quads) equals int64 sums for int8 and uint8 data", "[gemm_int8]") {
  uint64_t seed = 500;
  for (int64_t M : {1, 8, 13})
    for (int64_t N : {1, 31, 32, 49, 1024})
      for (int64_t K : {1, 6, 96}) {
        CheckGemmQuads<uint8_t>(M, N, K, seed++);
        CheckGemmQuads<int8_t>(M, N, K, seed++);
      }
}

namespace {
template <typename TA>
void CheckGemmNT(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  INFO("NT M " << M << " N " << N << " K " << K << TypeName(TA{}));
  std::mt19937_64 rng(seed);
  const std::vector<TA> a = RandomLevels<TA>(size_t(M * K), rng);
  const std::vector<int8_t> b = RandomLevels<int8_t>(size_t(N * K), rng);
  std::vector<int32_t> c(size_t(M * N));
  GemmInt8NT(M, N, K, a.data(), b.data(), c.data());
  CHECK(WrongSums(
            M, N, K, [&](int64_t m, int64_t k) { return a[size_t(m * K + k)]; },
            [&](int64_t k, int64_t n) { return b[size_t(n * K + k)]; },
            [&](int64_t m, int64_t n) { return c[size_t(m * N + n)]; }) == 0);
}
}  // namespace

TEST_CASE("GemmInt8NT (FullyConnected's layout) equals int64 sums for int8 and uint8 data", "[gemm_int8]") {
  uint64_t seed = 7;
  for (int64_t M : {1, 3})
    for (int64_t N : {1, 10, 33})
      for (int64_t K : {1, 15, 16, 17, 64, 128, 800}) {
        CheckGemmNT<uint8_t>(M, N, K, seed++);
        CheckGemmNT<int8_t>(M, N, K, seed++);
      }
}

namespace {
// The int64 sums of a grouped 2-D convolution of NCHW levels x (batch images) with filters w,
// zeros on the padding: the reference for ConvInt8.
template <typename T>
std::vector<int64_t> NaiveConvSums(const std::vector<T>& x, const std::vector<int8_t>& w, int64_t batch, int64_t C,
                                   int64_t F, int64_t groups, const conv::ConvGeom& g) {
  const int64_t gc = C / groups, gf = F / groups, H = g.in[1], W = g.in[2], kh = g.k[1], kw = g.k[2];
  std::vector<int64_t> sums;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          int64_t sum = 0;
          for (int64_t c = 0; c < gc; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ih = oh * g.s[1] - g.p[1] + i * g.d[1], iw = ow * g.s[2] - g.p[2] + j * g.d[2];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                sum += int64_t(w[size_t((f * gc + c) * kh * kw + i * kw + j)]) *
                       x[size_t(((n * C + f / gf * gc + c) * H + ih) * W + iw)];
              }
          sums.push_back(sum);
        }
  return sums;
}

// fn() on one thread.
template <typename F>
void OnOneThread(const F& fn) {
  const int threads = GetNumThreads();
  SetNumThreads(1);
  fn();
  SetNumThreads(threads);
}
}  // namespace

namespace {
// ConvInt8 with each group's filters packed once (PackConvInt8Weights), as the convolution nodes
// run it, against int64 sums of the padded image: the VNNI kernel reads these columns from the
// image, packing them as it goes or, at stride 1 and for windows over 9 taps at stride 2, from
// the image rearranged once (GemmInt8ReadsImages); other kernels from im2col's buffer.
template <typename T>
void CheckConvInt8(int64_t C, int64_t F, int64_t groups, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh,
                   int64_t sw, int64_t ph, int64_t pw, int64_t dil, uint64_t seed) {
  conv::ConvGeom g;
  g.in[1] = H, g.in[2] = W, g.k[1] = kh, g.k[2] = kw, g.s[1] = sh, g.s[2] = sw, g.p[1] = ph, g.p[2] = pw;
  g.d[1] = g.d[2] = dil;
  g.out[1] = (H + 2 * ph - dil * (kh - 1) - 1) / sh + 1;
  g.out[2] = (W + 2 * pw - dil * (kw - 1) - 1) / sw + 1;
  INFO("C " << C << " F " << F << " groups " << groups << " image " << H << "x" << W << " kernel " << kh << "x" << kw
            << " stride " << sh << "," << sw << " pad " << ph << "," << pw << " dilation " << dil << TypeName(T{}));
  std::mt19937_64 rng(seed);
  const int64_t batch = 2, depth = C / groups * kh * kw, pixels = g.out_size();
  const std::vector<T> x = RandomLevels<T>(size_t(batch * C * H * W), rng);
  const std::vector<int8_t> w = RandomLevels<int8_t>(size_t(F * depth), rng);
  const std::vector<PackedInt8A> packed = quant::PackConvInt8Weights(w.data(), C, F, groups, g);
  std::vector<int32_t> y(size_t(batch * F * pixels), 7);
  quant::ConvInt8(x.data(), w.data(), y.data(), batch, C, F, groups, g, &packed);
  const std::vector<int64_t> want = NaiveConvSums(x, w, batch, C, F, groups, g);
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) wrong += y[i] != want[i];
  CHECK(wrong == 0);
  std::vector<int32_t> again(y.size());
  OnOneThread([&] { quant::ConvInt8(x.data(), w.data(), again.data(), batch, C, F, groups, g, &packed); });
  CHECK(again == y);
}
}  // namespace

TEST_CASE("ConvInt8 with packed filters equals int64 sums: padding, strides, dilation, narrow and wide images",
          "[gemm_int8]") {
  uint64_t seed = 500;
  for (bool is_unsigned : {true, false}) {
    auto check = [&](auto... a) {
      if (is_unsigned) CheckConvInt8<uint8_t>(a..., seed++);
      else CheckConvInt8<int8_t>(a..., seed++);
    };
    // C, F, groups, H, W, kernel h, w, stride h, w, pad h, w, dilation
    check(16, 24, 1, 9, 9, 3, 3, 1, 1, 1, 1, 1);     // panels spanning output rows
    check(5, 7, 1, 23, 37, 3, 3, 1, 1, 1, 1, 1);     // depth 45: a partial quad; row tails
    check(8, 16, 1, 6, 5, 3, 3, 1, 1, 1, 1, 1);      // rows narrower than a panel: up to 4 rows per panel
    check(4, 8, 1, 5, 3, 3, 3, 1, 1, 1, 1, 1);       // narrower still
    check(4, 9, 1, 12, 40, 5, 5, 1, 1, 2, 2, 1);     // 5x5
    check(6, 8, 1, 14, 14, 3, 3, 2, 1, 1, 1, 1);     // row stride 2, column stride 1
    check(6, 8, 1, 14, 14, 3, 3, 2, 2, 1, 1, 1);     // stride 2
    check(6, 8, 1, 15, 41, 3, 3, 2, 2, 1, 1, 1);     // stride 2, odd sizes
    check(3, 16, 1, 37, 37, 7, 7, 2, 2, 3, 3, 1);    // an RGB stem's 7x7 at stride 2
    check(4, 8, 1, 12, 13, 3, 3, 1, 3, 1, 1, 1);     // stride 3: im2col's columns
    check(4, 12, 1, 11, 21, 3, 3, 1, 1, 2, 2, 2);    // dilation 2
    check(3, 5, 1, 8, 19, 1, 7, 1, 1, 0, 3, 1);      // 1x7
    check(8, 8, 2, 10, 10, 3, 3, 1, 1, 0, 0, 1);     // groups, no padding
    check(4, 4, 1, 5, 5, 3, 3, 1, 1, 3, 3, 1);       // padding wider than the kernel reaches
    check(64, 256, 1, 7, 7, 3, 3, 1, 1, 1, 1, 1);    // more filters than 4 x pixels
    check(48, 96, 1, 13, 13, 3, 3, 1, 1, 1, 1, 1);   // weights outweigh the image: a task takes 7 groups
    // Windows over 9 taps at stride 2: the image split by row and column phase.
    check(6, 8, 1, 17, 23, 5, 5, 2, 1, 2, 2, 1);     // row stride 2 only
    check(6, 8, 1, 17, 23, 5, 5, 1, 2, 2, 2, 1);     // column stride 2 only
    check(5, 20, 1, 16, 19, 5, 5, 2, 2, 1, 2, 2);    // dilation 2, unequal padding
    check(9, 12, 1, 2, 70, 3, 3, 1, 1, 1, 1, 1);     // two rows: the last positions read past the plane
    // 3x3 over at most 4 channels: rows gathered once for all filters on VNNI with VBMI.
    check(3, 32, 1, 37, 45, 3, 3, 2, 2, 1, 1, 1);    // an RGB first layer at stride 2 (MobileNet's)
    check(1, 5, 1, 9, 70, 3, 3, 1, 1, 1, 1, 1);      // one channel, rows wider than a window
    check(2, 7, 1, 8, 17, 3, 3, 2, 1, 0, 1, 1);      // unequal strides and padding
    check(3, 9, 1, 4, 3, 3, 3, 2, 2, 1, 1, 1);       // fewer positions than a vector
    // Depthwise (groups = C = F), plane by plane: 3x3 at strides 1 and 2 on VNNI with VBMI.
    check(12, 12, 12, 9, 37, 3, 3, 1, 1, 1, 1, 1);   // rows of 16 positions and a tail
    check(8, 8, 8, 15, 41, 3, 3, 2, 2, 1, 1, 1);     // stride 2, odd sizes
    check(4, 4, 4, 6, 70, 3, 3, 2, 2, 0, 0, 1);      // no padding: windows up to the row's end
    check(4, 4, 4, 7, 7, 3, 3, 1, 1, 2, 2, 1);       // padding wider than the kernel reaches
    check(4, 4, 4, 9, 11, 3, 3, 1, 2, 1, 0, 1);      // unequal strides and padding
    check(6, 6, 6, 10, 10, 5, 5, 1, 1, 2, 2, 1);     // 5x5: the float kernel
    check(4, 4, 4, 11, 11, 3, 3, 1, 1, 2, 2, 2);     // dilation 2
  }
}

namespace {
// ConvInt8 with output levels (a fused convolution's requantization, in the VNNI tile's registers
// or from the sums' blocks elsewhere) against the formula on int64 sums, element by element.
template <typename T, typename TO>
// symmetric: weights in [-127, 127], as `symbind quantize` writes them (the AVX2 kernel then
// requantizes each block as it finishes; a -128 weight needs its correction first).
void CheckConvLevels(int64_t C, int64_t F, int64_t groups, int64_t H, int64_t W, int64_t k, int64_t pad, bool with_sum,
                     uint64_t seed, int64_t stride = 1, bool symmetric = false) {
  conv::ConvGeom g = conv::ConvGeom::Planar(H, W, k, stride, pad);
  INFO("C " << C << " F " << F << " image " << H << "x" << W << " kernel " << k << " stride " << stride << TypeName(T{}) << " to" << TypeName(TO{})
            << (with_sum ? " with a sum" : ""));
  std::mt19937_64 rng(seed);
  const int64_t batch = 2, depth = C / groups * k * k, pixels = g.out_size();
  const std::vector<T> x = RandomLevels<T>(size_t(batch * C * H * W), rng);
  std::vector<int8_t> w = RandomLevels<int8_t>(size_t(F * depth), rng);
  if (symmetric) std::replace(w.begin(), w.end(), int8_t{-128}, int8_t{-127});
  const std::vector<uint8_t> sum = RandomLevels<uint8_t>(size_t(batch * F * pixels), rng);
  std::vector<int32_t> bias(static_cast<size_t>(F));
  std::vector<float> scale(static_cast<size_t>(F));
  std::uniform_int_distribution<int32_t> bias_dist(-100000, 100000);
  std::uniform_real_distribution<float> scale_dist(1e-5f, 2e-3f);
  for (int64_t f = 0; f < F; ++f) bias[size_t(f)] = bias_dist(rng), scale[size_t(f)] = scale_dist(rng);
  scale[0] = 1.0f;  // sums far outside the output's range: saturation
  // A NaN scale makes every level of its row 0, an infinite one saturates (NaN where a sum is 0).
  if (F > 2) scale[1] = std::numeric_limits<float>::quiet_NaN(), scale[2] = std::numeric_limits<float>::infinity();
  const float sum_scale = 0.37f;
  const std::vector<PackedInt8A> packed = quant::PackConvInt8Weights(w.data(), C, F, groups, g);
  std::vector<int32_t> scratch(size_t(batch * F * pixels));
  std::vector<TO> q(size_t(batch * F * pixels));
  quant::Int8Levels levels;
  levels.bias = bias.data(), levels.scale = scale.data(), levels.out = q.data(), levels.ld_out = pixels;
  levels.out_unsigned = std::is_same_v<TO, uint8_t>;
  if (with_sum) levels.sum = sum.data(), levels.ld_sum = pixels, levels.sum_unsigned = true, levels.sum_scale = sum_scale;
  quant::ConvInt8(x.data(), w.data(), scratch.data(), batch, C, F, groups, g, &packed, &levels);
  const std::vector<int64_t> sums = NaiveConvSums(x, w, batch, C, F, groups, g);
  int64_t wrong = 0;
  for (size_t i = 0; i < sums.size(); ++i) {
    const size_t f = i / size_t(pixels) % size_t(F);
    float v = float(int32_t(sums[i] + bias[f])) * scale[f];
    if (with_sum) v = v + float(sum[i]) * sum_scale;
    wrong += q[i] != quant::SaturateRound<TO>(v);
  }
  CHECK(wrong == 0);
  std::vector<TO> again(q.size());
  levels.out = again.data();
  OnOneThread([&] { quant::ConvInt8(x.data(), w.data(), scratch.data(), batch, C, F, groups, g, &packed, &levels); });
  CHECK(again == q);
}
}  // namespace

TEST_CASE("ConvInt8 to output levels: the requantization formula on exact sums, with and without a sum input",
          "[gemm_int8]") {
  uint64_t seed = 900;
  for (bool with_sum : {false, true}) {
    // C, F, groups, H, W, kernel, pad
    CheckConvLevels<uint8_t, uint8_t>(16, 24, 1, 9, 9, 3, 1, with_sum, seed++);   // rows and columns with tails
    CheckConvLevels<int8_t, int8_t>(5, 13, 1, 11, 17, 3, 1, with_sum, seed++);
    CheckConvLevels<uint8_t, int8_t>(40, 8, 1, 6, 6, 1, 0, with_sum, seed++);     // 1x1
    CheckConvLevels<int8_t, uint8_t>(130, 12, 1, 7, 9, 3, 1, with_sum, seed++);   // depth 1170: two passes over depth
    CheckConvLevels<uint8_t, uint8_t>(64, 256, 1, 5, 5, 3, 1, with_sum, seed++);  // more filters than 4 x pixels
    CheckConvLevels<uint8_t, uint8_t>(24, 24, 24, 13, 11, 3, 1, with_sum, seed++);  // depthwise, plane by plane
    CheckConvLevels<int8_t, int8_t>(16, 16, 16, 15, 14, 3, 1, with_sum, seed++, 2);  // depthwise, stride 2
    CheckConvLevels<uint8_t, int8_t>(8, 8, 8, 9, 12, 5, 2, with_sum, seed++);        // depthwise 5x5, 108 pixels
    CheckConvLevels<int8_t, int8_t>(3, 16, 1, 17, 19, 7, 3, with_sum, seed++);    // an RGB stem
    CheckConvLevels<int8_t, uint8_t>(3, 32, 1, 23, 29, 3, 1, with_sum, seed++, 2);  // an RGB 3x3 at stride 2
    CheckConvLevels<uint8_t, int8_t>(4, 12, 1, 9, 40, 3, 1, with_sum, seed++);      // 4 channels, stride 1
    // Symmetric weights: blocks of rows and columns requantized as the tiles finish them.
    CheckConvLevels<uint8_t, uint8_t>(16, 24, 1, 9, 9, 3, 1, with_sum, seed++, 1, true);
    CheckConvLevels<int8_t, uint8_t>(130, 12, 1, 7, 9, 3, 1, with_sum, seed++, 1, true);
    CheckConvLevels<uint8_t, int8_t>(40, 72, 1, 6, 6, 1, 0, with_sum, seed++, 1, true);
    CheckConvLevels<uint8_t, uint8_t>(64, 256, 1, 5, 5, 3, 1, with_sum, seed++, 1, true);
  }
}

namespace {
// n bytes that end (or start) exactly at an inaccessible page, so that a read past the end (or
// before the start) faults instead of passing unseen.
class GuardedBytes {
 public:
  GuardedBytes(size_t n, bool guard_before) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), data = (n + page - 1) / page * page;
    size_ = data + 2 * page;
    base_ = static_cast<uint8_t*>(mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(base_ != MAP_FAILED);
    REQUIRE(mprotect(base_ + page, data, PROT_READ | PROT_WRITE) == 0);
    bytes_ = guard_before ? base_ + page : base_ + page + data - n;
  }
  ~GuardedBytes() { munmap(base_, size_); }
  uint8_t* data() const { return bytes_; }

 private:
  uint8_t* base_;
  uint8_t* bytes_;
  size_t size_;
};
}  // namespace

TEST_CASE("ConvInt8 reads nothing outside its image, whose first and last bytes border unmapped pages", "[gemm_int8]") {
  struct Case {
    int64_t C, H, W, k, stride, pad;
  };
  // Widths where the last row's last segments are whole (plain loads) and where they are clipped.
  for (const Case& c : {Case{4, 8, 32, 3, 1, 1}, Case{4, 8, 48, 3, 1, 0}, Case{3, 9, 64, 3, 2, 1}, Case{3, 11, 67, 7, 2, 3},
                        Case{8, 5, 17, 3, 1, 1}, Case{5, 6, 16, 1, 1, 0}}) {
    const conv::ConvGeom g = conv::ConvGeom::Planar(c.H, c.W, c.k, c.stride, c.pad);
    INFO(c.C << " channels of " << c.H << "x" << c.W << ", kernel " << c.k << ", stride " << c.stride << ", pad " << c.pad);
    const int64_t F = 16, in = c.C * c.H * c.W, pixels = g.out_size();
    std::mt19937_64 rng(static_cast<uint64_t>(in));
    const std::vector<uint8_t> x = RandomLevels<uint8_t>(size_t(in), rng);
    const std::vector<int8_t> w = RandomLevels<int8_t>(size_t(F * c.C * c.k * c.k), rng);
    const std::vector<PackedInt8A> packed = quant::PackConvInt8Weights(w.data(), c.C, F, 1, g);
    const std::vector<int64_t> want = NaiveConvSums(x, w, 1, c.C, F, 1, g);
    for (bool guard_before : {false, true}) {
      GuardedBytes image(size_t(in), guard_before);
      std::copy(x.begin(), x.end(), image.data());
      std::vector<int32_t> y(size_t(F * pixels));
      quant::ConvInt8(image.data(), w.data(), y.data(), 1, c.C, F, 1, g, &packed);
      CHECK(std::equal(y.begin(), y.end(), want.begin()));
    }
    // The same image as depthwise planes (one filter per channel: DepthwiseConvInt8's kernels).
    const std::vector<int8_t> dw(w.begin(), w.begin() + c.C * c.k * c.k);
    const std::vector<int64_t> want_dw = NaiveConvSums(x, dw, 1, c.C, c.C, c.C, g);
    for (bool guard_before : {false, true}) {
      GuardedBytes image(size_t(in), guard_before);
      std::copy(x.begin(), x.end(), image.data());
      std::vector<int32_t> y(size_t(c.C * pixels));
      quant::ConvInt8(image.data(), dw.data(), y.data(), 1, c.C, c.C, c.C, g);
      CHECK(std::equal(y.begin(), y.end(), want_dw.begin()));
    }
  }
}
