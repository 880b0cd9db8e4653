// GEMM block kernels, one per instruction set; ops/kernels/gemm.cc picks one at run time.
#pragma once
#include <cstdint>

namespace symbind {

struct GemmArgs {
  bool trans_a, trans_b;
  int64_t M, N, K;
  float alpha;
  const float* A;
  int64_t lda;
  const float* B;
  int64_t ldb;
  float beta;
  float* C;
  int64_t ldc;
};

// C[r0:r1, c0:c1] of the product described by `g`.
namespace gemm_base { void GemmBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1); }
namespace gemm_avx2 { void GemmBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1); }
namespace gemm_avx512 { void GemmBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1); }

// "avx512", "avx2" or "base": the kernel this CPU runs (SYMBIND_GEMM_ISA overrides, for tests).
const char* GemmIsa();

}  // namespace symbind
