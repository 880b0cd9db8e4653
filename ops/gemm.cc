#include <Eigen/Core>

#include "kernel_util.h"

namespace symbind {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
using MutMap = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;

// One block of rows [r0, r1) and columns [c0, c1) of C, single-threaded Eigen.
void GemmBlock(bool trans_a, bool trans_b, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
               int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const int64_t rows = r1 - r0, cols = c1 - c0;
  MutMap c(C + r0 * ldc + c0, rows, cols, Eigen::OuterStride<>(ldc));
  // A is (M,K) or stored (K,M); take the rows of op(A) we need.
  ConstMap a_full(A, trans_a ? K : M, trans_a ? M : K, Eigen::OuterStride<>(lda));
  ConstMap b_full(B, trans_b ? N : K, trans_b ? K : N, Eigen::OuterStride<>(ldb));
  if (beta == 0.0f) c.setZero();
  else if (beta != 1.0f) c *= beta;
  if (!trans_a && !trans_b)
    c.noalias() += alpha * (a_full.middleRows(r0, rows) * b_full.middleCols(c0, cols));
  else if (!trans_a && trans_b)
    c.noalias() += alpha * (a_full.middleRows(r0, rows) * b_full.middleRows(c0, cols).transpose());
  else if (trans_a && !trans_b)
    c.noalias() += alpha * (a_full.middleCols(r0, rows).transpose() * b_full.middleCols(c0, cols));
  else
    c.noalias() += alpha * (a_full.middleCols(r0, rows).transpose() *
                            b_full.middleRows(c0, cols).transpose());
}
}  // namespace

void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  Eigen::setNbThreads(1);
  // Split C into blocks of rows (or columns when there are few rows); block sizes depend only
  // on the problem so every thread count computes the same sums in the same order.
  const int64_t work = M * N * std::max<int64_t>(K, 1);
  const int64_t kMinWork = int64_t{1} << 18;
  if (work < 2 * kMinWork) {
    GemmBlock(trans_a, trans_b, 0, M, 0, N, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  if (M >= 64) {
    int64_t rows = std::max<int64_t>(16, kMinWork / (N * std::max<int64_t>(K, 1)));
    rows = std::min(rows, (M + 1) / 2);
    int64_t blocks = (M + rows - 1) / rows;
    ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        GemmBlock(trans_a, trans_b, b * rows, std::min(M, (b + 1) * rows), 0, N, M, N, K, alpha,
                  A, lda, B, ldb, beta, C, ldc);
    });
  } else {
    int64_t cols = std::max<int64_t>(16, kMinWork / (M * std::max<int64_t>(K, 1)));
    cols = std::min(cols, (N + 1) / 2);
    int64_t blocks = (N + cols - 1) / cols;
    ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        GemmBlock(trans_a, trans_b, 0, M, b * cols, std::min(N, (b + 1) * cols), M, N, K, alpha,
                  A, lda, B, ldb, beta, C, ldc);
    });
  }
}

}  // namespace symbind
