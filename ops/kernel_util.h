// Shared helpers for operator kernels.
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>

#include <symbind/core/op.h>

namespace symbind {

// Runs fn(begin, end) over [0, n) in chunks of `grain`. The chunking depends only on n and
// grain, never on the thread count, so results are identical with 1 or many threads.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, const F& fn) {
  if (n <= 0) return;
  if (n <= grain) {
    fn(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); },
                    tbb::simple_partitioner());
}

// Grain for cheap elementwise loops.
constexpr int64_t kElementwiseGrain = 1 << 15;

// out[i] (written or added per req) = f(i) over n elements, in parallel.
template <typename F>
void MapWithReq(float* out, int64_t n, OpReq req, const F& f) {
  if (req == OpReq::kNull) return;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (req == OpReq::kAdd)
      for (int64_t i = b; i < e; ++i) out[i] += f(i);
    else
      for (int64_t i = b; i < e; ++i) out[i] = f(i);
  });
}

// "Error in operator NAME (OP)": how a kernel's error message starts (shape errors get it from
// the graph; errors found while running name the node themselves).
inline std::string InOperator(const NodeAttrs& attrs) {
  return StrCat("Error in operator ", attrs.name, " (", attrs.op ? attrs.op->name : "?", ")");
}

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set.
// lda/ldb/ldc are row strides of A, B, C as stored. Parallel over fixed blocks of C.
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc);

}  // namespace symbind
