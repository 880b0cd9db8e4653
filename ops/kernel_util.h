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

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set.
// lda/ldb/ldc are row strides of A, B, C as stored. Parallel over fixed blocks of C.
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc);

}  // namespace symbind

namespace symbind {

// Makes the legacy op `legacy` (MXNet's *_v1 ops, whose parameters are a subset of a current
// op's) run as the registered op `modern`: `legacy` keeps its own parameter schema, which
// validates the attributes first; then they are parsed as `modern` parses them, and the names,
// shape and type inference and kernels are `modern`'s, looked up when used (registration order
// across files is unspecified).
template <typename LegacyParam>
Op& RunAs(Op& legacy, const std::string& modern) {
  auto target = [modern]() -> const Op& { return OpRegistry::Global().Get(modern); };
  legacy.set_params<LegacyParam>();
  legacy.parse_params = [target](const KwArgs& kw) {
    LegacyParam::Parse(kw);
    return target().parse_params(kw);
  };
  legacy.set_arguments([target](const NodeAttrs& a) { return target().ListArguments(a); })
      .set_aux_states([target](const NodeAttrs& a) { return target().ListAuxStates(a); })
      .set_outputs([target](const NodeAttrs& a) { return target().ListOutputs(a); })
      .set_num_visible_outputs([target](const NodeAttrs& a) { return target().NumVisibleOutputs(a); })
      .set_infer_shape([target](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        if (target().infer_shape) target().infer_shape(a, in, out);
      })
      .set_infer_type([target](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
        if (target().infer_type) target().infer_type(a, in, out);
        else InferSameType(a, in, out);
      })
      .set_forward([target](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        target().forward(ctx, a, in, req, out);
      })
      .set_backward([target](const OpContext& ctx, const NodeAttrs& a, const BackwardArgs& args) {
        target().backward(ctx, a, args);
      });
  return legacy;
}

}  // namespace symbind
