// GEMM on raw row-major float arrays, dispatched at run time to the AVX-512, AVX2 or baseline
// block kernel (ops/kernels/gemm_kernels/). Used by Convolution, FullyConnected and dot.
#pragma once
#include <cstdint>

namespace symbind {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set.
// lda/ldb/ldc are row strides of A, B, C as stored. Parallel over fixed blocks of C, so results
// do not depend on the thread count.
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc);

}  // namespace symbind
