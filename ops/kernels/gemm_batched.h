// A batch of GEMMs whose matrices sit at fixed strides in their buffers (batch_dot's stacked
// matrices, or the heads of an attention projection, whose matrices interleave row by row).
#pragma once
#include <cstdint>
#include <functional>

namespace symbind {

// C_b = alpha * op(A_b) * op(B_b) + beta * C_b for b in [0, batch), with X_b = X + b * stride_x
// (in floats) and each matrix's rows lda/ldb/ldc apart, as Gemm (kernels/gemm.h). The C_b must
// not overlap; they may interleave.
void GemmStridedBatched(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K,
                        float alpha, const float* A, int64_t lda, int64_t stride_a, const float* B,
                        int64_t ldb, int64_t stride_b, float beta, float* C, int64_t ldc, int64_t stride_c);

// Runs fn(b) for b in [0, batch), each call one M x N x K product: small products in parallel
// across the batch, large ones in turn (Gemm parallelises inside). The split depends on the
// sizes only, so results do not depend on the thread count.
void ForEachBatchedProduct(int64_t batch, int64_t M, int64_t N, int64_t K, const std::function<void(int64_t)>& fn);

}  // namespace symbind
