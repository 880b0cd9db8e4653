#include <symbind/ops/kernels/gemm_int8.h>

#include <algorithm>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
constexpr int64_t kRows = 4;     // rows of A sharing each load of B
constexpr int64_t kCols = 256;   // columns of C per block: kRows x kCols int32 sums stay in L1

// One block of C: rows [m0, m0 + rows) and columns [n0, n0 + cols). The inner loop widens and
// multiplies element by element, which the compiler vectorises; sums are int32 throughout
// (unsigned arithmetic, so a wrap is defined).
template <typename TB>
void GemmBlock(int64_t m0, int64_t rows, int64_t n0, int64_t cols, int64_t K, const int8_t* A, int64_t lda,
               const TB* B, int64_t ldb, int32_t* C, int64_t ldc) {
  uint32_t acc[kRows][kCols] = {};
  for (int64_t k = 0; k < K; ++k) {
    const TB* b = B + k * ldb + n0;
    for (int64_t i = 0; i < rows; ++i) {
      const uint32_t a = static_cast<uint32_t>(static_cast<int32_t>(A[(m0 + i) * lda + k]));
      if (a == 0) continue;
      uint32_t* row = acc[i];
      for (int64_t n = 0; n < cols; ++n) row[n] += a * static_cast<uint32_t>(static_cast<int32_t>(b[n]));
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < cols; ++n) C[(m0 + i) * ldc + n0 + n] = static_cast<int32_t>(acc[i][n]);
}

template <typename TB>
void GemmInt8Of(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const TB* B, int64_t ldb,
                int32_t* C, int64_t ldc) {
  const int64_t row_blocks = (M + kRows - 1) / kRows, col_blocks = (N + kCols - 1) / kCols;
  ParallelFor(row_blocks * col_blocks, GrainFor(kRows * kCols * std::max<int64_t>(K, 1)), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = (b / col_blocks) * kRows, n0 = (b % col_blocks) * kCols;
      GemmBlock(m0, std::min(kRows, M - m0), n0, std::min(kCols, N - n0), K, A, lda, B, ldb, C, ldc);
    }
  });
}
template <typename TA>
void GemmInt8NTOf(int64_t M, int64_t N, int64_t K, const TA* A, const int8_t* B, int32_t* C) {
  ParallelFor(N, GrainFor(M * std::max<int64_t>(K, 1)), [&](int64_t n0, int64_t n1) {
    for (int64_t m = 0; m < M; ++m) {
      const TA* a = A + m * K;
      for (int64_t n = n0; n < n1; ++n) {
        const int8_t* b = B + n * K;
        uint32_t sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += static_cast<uint32_t>(static_cast<int32_t>(a[k]) * static_cast<int32_t>(b[k]));
        C[m * N + n] = static_cast<int32_t>(sum);
      }
    }
  });
}
}  // namespace

void GemmInt8NT(int64_t M, int64_t N, int64_t K, const uint8_t* A, const int8_t* B, int32_t* C) {
  GemmInt8NTOf(M, N, K, A, B, C);
}
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const int8_t* A, const int8_t* B, int32_t* C) {
  GemmInt8NTOf(M, N, K, A, B, C);
}

void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const uint8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc) {
  GemmInt8Of(M, N, K, A, lda, B, ldb, C, ldc);
}
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const int8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc) {
  GemmInt8Of(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace symbind
