// Integer GEMM for quantized layers: int8 weights times int8 or uint8 data, summed exactly in
// int32 (MXNet's quantized convolution and FullyConnected, as oneDNN's u8s8s32 and s8s8s32
// primitives compute them, without their output scaling).
//
//   GemmInt8(filters, pixels, depth, w, depth, columns, pixels, acc, pixels);  // acc = w * columns
//
// Every sum is exact, so results are the same bits for any thread count and any blocking.
#pragma once
#include <cstdint>

namespace symbind {

// C (M x N) = A (M x K) * B (K x N); rows lda, ldb, ldc elements apart. Sums that leave int32
// wrap as two's complement (they cannot for K < 65536 with int8 times uint8).
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const uint8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc);
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const int8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc);

// C (M x N) = A (M x K) * B^T with B (N x K), all rows contiguous: FullyConnected's layout (data
// rows times weight rows).
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const uint8_t* A, const int8_t* B, int32_t* C);
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const int8_t* A, const int8_t* B, int32_t* C);

}  // namespace symbind
