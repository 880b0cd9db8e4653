// One GEMM block with Eigen, compiled once per instruction set (see CMakeLists.txt). Eigen's
// namespace is renamed per build so the variants' template instances never merge at link time.
#define Eigen SYMBIND_EIGEN_NAMESPACE
#include <Eigen/Core>

#include <cstdint>

#include "../gemm_kernels.h"

namespace symbind::SYMBIND_GEMM_VARIANT {

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
using MutMap = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;
}  // namespace

void GemmBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  // Blocks already run in parallel on TBB, so Eigen must not thread (it could only with
  // OpenMP). setNbThreads writes a global and blocks run concurrently: set it once, race-free.
  static const bool eigen_single_threaded = [] {
    Eigen::setNbThreads(1);
    return true;
  }();
  (void)eigen_single_threaded;
  const int64_t rows = r1 - r0, cols = c1 - c0;
  MutMap c(g.C + r0 * g.ldc + c0, rows, cols, Eigen::OuterStride<>(g.ldc));
  ConstMap a(g.A, g.trans_a ? g.K : g.M, g.trans_a ? g.M : g.K, Eigen::OuterStride<>(g.lda));
  ConstMap b(g.B, g.trans_b ? g.N : g.K, g.trans_b ? g.K : g.N, Eigen::OuterStride<>(g.ldb));
  if (g.beta == 0.0f) c.setZero();
  else if (g.beta != 1.0f) c *= g.beta;
  if (!g.trans_a && !g.trans_b)
    c.noalias() += g.alpha * (a.middleRows(r0, rows) * b.middleCols(c0, cols));
  else if (!g.trans_a && g.trans_b)
    c.noalias() += g.alpha * (a.middleRows(r0, rows) * b.middleRows(c0, cols).transpose());
  else if (g.trans_a && !g.trans_b)
    c.noalias() += g.alpha * (a.middleCols(r0, rows).transpose() * b.middleCols(c0, cols));
  else
    c.noalias() += g.alpha * (a.middleCols(r0, rows).transpose() * b.middleRows(c0, cols).transpose());
}

}  // namespace symbind::SYMBIND_GEMM_VARIANT
