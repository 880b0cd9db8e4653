#include <symbind/ops/kernels/gemm_batched.h>

#include <algorithm>

#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/op_util.h>

namespace symbind {

void ForEachBatchedProduct(int64_t batch, int64_t M, int64_t N, int64_t K, const std::function<void(int64_t)>& fn) {
  // About 2^18 multiply-adds per task: below that a task costs more than it saves.
  const int64_t work = std::max<int64_t>(1, M * N * std::max<int64_t>(K, 1));
  ParallelFor(batch, std::max<int64_t>(1, (int64_t{1} << 18) / work), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b);
  });
}

void GemmStridedBatched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
                        float alpha, const float* A, int64_t lda, int64_t stride_a, const float* B,
                        int64_t ldb, int64_t stride_b, float beta, float* C, int64_t ldc, int64_t stride_c) {
  ForEachBatchedProduct(batch, M, N, K, [&](int64_t b) {
    Gemm(trans_a, trans_b, M, N, K, alpha, A + b * stride_a, lda, B + b * stride_b, ldb, beta,
         C + b * stride_c, ldc);
  });
}

}  // namespace symbind
