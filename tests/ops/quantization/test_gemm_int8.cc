// The int8 GEMM (ops/kernels/gemm_int8.h) against int64 sums, for int8 and uint8 data, over
// shapes with row, column and depth tails, strided rows and deep sums; the same bits for any
// thread count. Registered per instruction set too (tests/CMakeLists.txt: gemm_int8_*).
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include <symbind/executor/threading.h>
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

// weights: "no -128" (the AVX2 kernel's range: every level but -128) or "all levels" (a -128
// among them, which the AVX2 path hands to the portable loop).
template <typename TB>
void CheckGemm(int64_t M, int64_t N, int64_t K, uint64_t seed, bool with_minus_128 = false) {
  INFO("M " << M << " N " << N << " K " << K << TypeName(TB{}) << (with_minus_128 ? ", a -128 weight" : ""));
  std::mt19937_64 rng(seed);
  const int64_t lda = K + 3, ldb = N + 5, ldc = N + 2;  // rows apart by more than their length
  std::vector<int8_t> a = RandomLevels<int8_t>(size_t(M * lda), rng);
  for (auto& v : a) v = v == -128 ? int8_t(-127) : v;
  std::vector<TB> b = RandomLevels<TB>(size_t(std::max<int64_t>(K, 1) * ldb), rng);
  // Extremes: the largest pair of products of one sign (uint8 0 enters the AVX2 kernel as -128),
  // and the largest product of the other.
  if (M > 0 && K > 1) {
    a[0] = a[1] = 127;
    b[0] = b[size_t(ldb)] = std::is_same_v<TB, uint8_t> ? TB(0) : TB(-128);
    a[2 % size_t(K)] = -127;
  }
  if (M > 0 && K > 0 && with_minus_128) {
    a[0] = -128;
    b[0] = std::is_same_v<TB, uint8_t> ? TB(255) : TB(-128);
  }
  std::vector<int32_t> c(size_t(M * ldc), 7), again(c);
  GemmInt8(M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc);
  int64_t wrong = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t want = 0;
      for (int64_t k = 0; k < K; ++k) want += int64_t(a[size_t(m * lda + k)]) * b[size_t(k * ldb + n)];
      wrong += c[size_t(m * ldc + n)] != want;
    }
  CHECK(wrong == 0);
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
    CheckGemm<uint8_t>(7, 19, K, 200 + K, true);
    CheckGemm<int8_t>(7, 19, K, 300 + K, true);
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
  int64_t wrong = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t want = 0;
      for (int64_t k = 0; k < K; ++k) want += int64_t(a[size_t(m * K + k)]) * b[size_t(n * K + k)];
      wrong += c[size_t(m * N + n)] != want;
    }
  CHECK(wrong == 0);
}
}  // namespace

TEST_CASE("GemmInt8NT (FullyConnected's layout) equals int64 sums for int8 and uint8 data", "[gemm_int8]") {
  uint64_t seed = 7;
  for (int64_t M : {1, 3})
    for (int64_t N : {1, 10, 33})
      for (int64_t K : {1, 15, 16, 17, 800}) {
        CheckGemmNT<uint8_t>(M, N, K, seed++);
        CheckGemmNT<int8_t>(M, N, K, seed++);
      }
}
