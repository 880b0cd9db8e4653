// bfloat16 products with float32 sums (AVX512_BF16's vdpbf16ps), the kernels behind
// PredictorOptions::precision = Precision::kBfloat16:
//
//   if (!Bf16Available()) throw Error(Bf16Unavailable());  // e.g. an AVX2-only CPU
//   const PackedBf16A a(W, M, K, K);             // once per node: the weights rounded to bf16
//   GemmBf16(a, N, B, ldb, C, ldc, epilogue);    // C = a * bf16(B), then bias, residual, activation
//
// Both operands are rounded to the nearest bf16 (ties to even); the products of two bf16 are
// exact in float32 and every element sums them in k order, so results are the same for any
// thread count and for any split of C.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <symbind/ops/kernels/gemm.h>

namespace symbind {

// Whether this process runs the bf16 kernels: the CPU has AVX512_BF16 and the kernel set is
// AVX-512 (SYMBIND_GEMM_ISA=avx2 or base turns it off, so the refusal can be tested anywhere).
bool Bf16Available();
// Why not, as a sentence for an Error; empty when Bf16Available().
std::string Bf16Unavailable();

// x rounded to the nearest bf16, ties to even (NaN stays NaN, denormals flush to zero as
// vcvtne2ps2bf16 does): the high 16 bits of its float.
inline uint16_t RoundToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// A (M x K, lda apart) rounded to bf16, in blocks of kBf16Rows rows; within a block, for each
// pair of depths p, one 32-bit word per row holding (A[r][2p], A[r][2p + 1]) (an odd K's last
// pair and the rows past M are zero).
constexpr int64_t kBf16Rows = 8;
struct PackedBf16A {
  PackedBf16A(const float* A, int64_t M, int64_t K, int64_t lda);
  int64_t rows, depth, pairs;
  std::vector<uint32_t> words;  // block b, pair p, row r at (b * pairs + p) * kBf16Rows + r
};

// C (M x N, ldc apart) = A times B (K x N, ldb apart, rounded to bf16 as it is packed), then the
// epilogue (bias per row, the residual laid out as C, the activation), and the second output
// when normalized.y (laid out as C, a row's coefficients per row) from C's values as they are
// stored. Needs Bf16Available().
void GemmBf16(const PackedBf16A& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
              const GemmEpilogue& epilogue = {}, const NormalizedOutput& normalized = {});
// The same on the calling thread only (for callers that split the work themselves: Winograd's
// points). The same bits.
void GemmBf16Serial(const PackedBf16A& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                    const GemmEpilogue& epilogue = {}, const NormalizedOutput& normalized = {});

}  // namespace symbind
