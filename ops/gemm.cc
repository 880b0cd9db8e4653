#include <cstdlib>
#include <cstring>

#include "gemm_kernels.h"
#include "kernel_util.h"

namespace symbind {

namespace {
using BlockFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t);

struct Dispatch {
  const char* isa;
  BlockFn block;
};

Dispatch Choose() {
  const char* forced = std::getenv("SYMBIND_GEMM_ISA");
  auto want = [&](const char* isa) { return !forced || std::strcmp(forced, isa) == 0; };
  __builtin_cpu_init();
  if (want("avx512") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
    return {"avx512", gemm_avx512::GemmBlock};
  if (want("avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2", gemm_avx2::GemmBlock};
  return {"base", gemm_base::GemmBlock};
}

const Dispatch& Selected() {
  static const Dispatch d = Choose();
  return d;
}
}  // namespace

const char* GemmIsa() { return Selected().isa; }

void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  const GemmArgs g{trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
  BlockFn block = Selected().block;
  // Split C into blocks of rows (or columns when there are few rows); block sizes depend only
  // on the problem so every thread count computes the same sums in the same order.
  const int64_t k = std::max<int64_t>(K, 1);
  const int64_t work = M * N * k;
  const int64_t kMinWork = int64_t{1} << 18;
  if (work < 2 * kMinWork) {
    block(g, 0, M, 0, N);
    return;
  }
  // Blocks span all of the shorter side so each packs its slice of the longer operand once.
  auto round16 = [](int64_t v) { return (v + 15) / 16 * 16; };
  if (M > N) {
    int64_t rows = std::min(round16(std::max<int64_t>(64, kMinWork / (N * k))), round16((M + 1) / 2));
    int64_t blocks = (M + rows - 1) / rows;
    ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) block(g, b * rows, std::min(M, (b + 1) * rows), 0, N);
    });
  } else {
    int64_t cols = std::min(round16(std::max<int64_t>(64, kMinWork / (M * k))), round16((N + 1) / 2));
    int64_t blocks = (N + cols - 1) / cols;
    ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) block(g, 0, M, b * cols, std::min(N, (b + 1) * cols));
    });
  }
}

}  // namespace symbind
