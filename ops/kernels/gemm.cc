#include <cstdlib>
#include <cstring>

#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

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
  // Blocks span all of the shorter side so each packs its slice of the longer operand once,
  // and are few and large (every block re-packs the shorter operand).
  // Four blocks measured best for convolution-sized products on one thread (vs 2, 8, 16, 64)
  // and still balance two.
  constexpr int64_t kMaxBlocks = 4;
  const int64_t side = std::max(M, N);
  const int64_t blocks_wanted = std::min<int64_t>(kMaxBlocks, std::max<int64_t>(2, work / kMinWork));
  const int64_t size = std::max<int64_t>(16, (side + blocks_wanted * 16 - 1) / (blocks_wanted * 16) * 16);
  const int64_t blocks = (side + size - 1) / size;
  ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t lo = b * size, hi = std::min(side, lo + size);
      if (M > N) block(g, lo, hi, 0, N);
      else block(g, 0, M, lo, hi);
    }
  });
}

}  // namespace symbind
