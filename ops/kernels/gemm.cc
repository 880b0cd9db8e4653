#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <immintrin.h>

#include <tbb/task_arena.h>

#include <symbind/core/error.h>
#include <symbind/core/huge_pages.h>
#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/avx512_lanes.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using BlockFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t);

using TileFn = void (*)(const PackedTileArgs&);

struct Dispatch {
  KernelIsa isa;
  bool vnni;  // AVX512-VNNI with kAvx512 (SYMBIND_GEMM_ISA=avx512 leaves it off)
  bool vbmi;  // AVX512-VBMI (byte permutes) with vnni
  const char* name;
  BlockFn block;
  TileFn tile;
  GemmMicroShape shape;
  TileFn tall_tile;
  GemmMicroShape tall_shape;
  TileFn tall_tile_bt;
};

constexpr const char* kIsaNames[] = {"base", "avx2", "avx512", "avx512vnni"};
constexpr int kWidestIsa = 3;
int IsaLevel(const char* name) {
  for (int level = 0; level <= kWidestIsa; ++level)
    if (std::strcmp(name, kIsaNames[level]) == 0) return level;
  return -1;
}
}  // namespace

int AllowedIsaLevel(const char* forced, std::ostream* warnings) {
  if (!forced || !*forced) return kWidestIsa;  // unset or empty: the CPU decides
  const int level = IsaLevel(forced);
  if (level >= 0) return level;
  if (warnings) {
    *warnings << "symbind: warning: ignoring SYMBIND_GEMM_ISA='" << forced << "' (not one of ";
    for (int l = 0; l <= kWidestIsa; ++l) *warnings << kIsaNames[l] << (l < kWidestIsa ? ", " : "");
    *warnings << "): the widest kernels this CPU has\n";
  }
  return kWidestIsa;
}

namespace {
Dispatch Choose() {
  const int widest = AllowedIsaLevel(std::getenv("SYMBIND_GEMM_ISA"), &std::cerr);
  // The named set or, where the CPU lacks it, the widest it has below it.
  auto want = [&](const char* isa) { return IsaLevel(isa) <= widest; };
  __builtin_cpu_init();
  if (want("avx512") && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")) {
    const bool vnni = want("avx512vnni") && __builtin_cpu_supports("avx512vnni");
    return {KernelIsa::kAvx512, vnni, vnni && __builtin_cpu_supports("avx512vbmi"), "avx512", gemm_avx512::GemmBlock,
            gemm_avx512::PackedTile, gemm_avx512::PackedShape(), gemm_avx512::PackedTallTile,
            gemm_avx512::PackedTallShape(), gemm_avx512::PackedTallTileBt};
  }
  if (want("avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {KernelIsa::kAvx2, false, false, "avx2", gemm_avx2::GemmBlock, gemm_avx2::PackedTile, gemm_avx2::PackedShape(),
            gemm_avx2::PackedTallTile, gemm_avx2::PackedTallShape(), gemm_avx2::PackedTallTileBt};
  return {KernelIsa::kBase, false, false, "base", gemm_base::GemmBlock, gemm_base::PackedTile, gemm_base::PackedShape(),
            gemm_base::PackedTallTile, gemm_base::PackedTallShape(), gemm_base::PackedTallTileBt};
}

const Dispatch& Selected() {
  static const Dispatch d = Choose();
  return d;
}
}  // namespace

KernelIsa ActiveIsa() { return Selected().isa; }
bool ActiveVnni() { return Selected().vnni; }
bool ActiveVnniVbmi() { return Selected().vbmi; }
const char* GemmIsa() { return Selected().name; }

namespace {
SYMBIND_AVX512_INTRINSICS_BEGIN
__attribute__((target("avx512f"))) inline void FinishGemvRow(__m512 acc, float alpha, float beta, float* y) {
  const float dot = alpha * _mm512_reduce_add_ps(acc);
  *y = beta == 0.0f ? dot : dot + beta * *y;
}
// kRows rows from row j: the dot products side by side, x loaded once per step for all of them.
template <int kRows>
__attribute__((target("avx512f"))) void GemvRowBlockAvx512(const float* x, const float* W, int64_t ldw, int64_t K,
                                                           float alpha, float beta, float* y, int64_t j) {
  constexpr int64_t kLanes = 16;
  const int64_t full = K / kLanes * kLanes;
  const __mmask16 tail = conv::LaneRange(0, K - full);
  const float* w0 = W + j * ldw;
  __m512 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < full; k += kLanes) {
    const __m512 xv = _mm512_loadu_ps(x + k);
    for (int r = 0; r < kRows; ++r) acc[r] = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + r * ldw + k), xv, acc[r]);
  }
  if (tail) {
    const __m512 xv = _mm512_maskz_loadu_ps(tail, x + full);
    for (int r = 0; r < kRows; ++r)
      acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w0 + r * ldw + full), xv, acc[r]);
  }
  for (int r = 0; r < kRows; ++r) FinishGemvRow(acc[r], alpha, beta, y + j + r);
}

// GemvRowBlockAvx512 on 8 lanes (AVX2 CPUs), the lanes summed in one fixed order; faster than
// Eigen's matrix-vector product on classifiers (MobileNet v2's 1280 -> 1000).
__attribute__((target("avx2,fma"))) inline void FinishGemvRowAvx2(__m256 acc, float alpha, float beta, float* y) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 1));
  const float dot = alpha * _mm_cvtss_f32(sum);
  *y = beta == 0.0f ? dot : dot + beta * *y;
}
template <int kRows>
__attribute__((target("avx2,fma"))) void GemvRowBlockAvx2(const float* x, const float* W, int64_t ldw, int64_t K,
                                                          float alpha, float beta, float* y, int64_t j) {
  constexpr int64_t kLanes = 8;
  const int64_t full = K / kLanes * kLanes;
  const __m256i tail = conv::LaneMask8(0, K - full);
  const float* w0 = W + j * ldw;
  __m256 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < full; k += kLanes) {
    const __m256 xv = _mm256_loadu_ps(x + k);
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + r * ldw + k), xv, acc[r]);
  }
  if (full < K) {
    const __m256 xv = _mm256_maskload_ps(x + full, tail);
    for (int r = 0; r < kRows; ++r)
      acc[r] = _mm256_fmadd_ps(_mm256_maskload_ps(w0 + r * ldw + full, tail), xv, acc[r]);
  }
  for (int r = 0; r < kRows; ++r) FinishGemvRowAvx2(acc[r], alpha, beta, y + j + r);
}
// y[j] = alpha * (x . row j of W) (+ beta * y[j]) for rows [j0, j1) of W (ldw apart). Each dot
// product runs in the vector's lanes over k (k in lane k % lanes, the tail masked), then sums
// the lanes; eight rows at a time, so that x is loaded once per eight. Every output's sum has
// one order however the rows are split. Eight rows per load of x read a classifier's weights
// (ResNet-18's 512 -> 1000, 2 MB) faster than Eigen's matrix-vector product.
template <bool kAvx512>
void GemvRows(const float* x, const float* W, int64_t ldw, int64_t K, float alpha, float beta, float* y, int64_t j0,
              int64_t j1) {
  constexpr int kRows = 8;
  const auto block = kAvx512 ? GemvRowBlockAvx512<kRows> : GemvRowBlockAvx2<kRows>;
  const auto one = kAvx512 ? GemvRowBlockAvx512<1> : GemvRowBlockAvx2<1>;
  int64_t j = j0;
  for (; j + kRows <= j1; j += kRows) block(x, W, ldw, K, alpha, beta, y, j);
  for (; j < j1; ++j) one(x, W, ldw, K, alpha, beta, y, j);
}
SYMBIND_AVX512_INTRINSICS_END
}  // namespace

void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
          const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
          int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  // A matrix times a vector: one sample's FullyConnected (x W^T), a 1x1 convolution of one
  // position (W x). Rows of the matrix in chunks of ~128 KB.
  const bool row_times_matrix = M == 1 && !trans_a && trans_b;
  const bool matrix_times_column = N == 1 && !trans_a && !trans_b && ldb == 1 && ldc == 1;
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512, avx2 = ActiveIsa() == KernelIsa::kAvx2;
  if ((row_times_matrix || matrix_times_column) && K >= 16 && (avx512 || avx2)) {
    const float* matrix = row_times_matrix ? B : A;
    const float* vector = row_times_matrix ? A : B;
    const int64_t ld = row_times_matrix ? ldb : lda;
    return ParallelFor(row_times_matrix ? N : M, GrainFor(K), [&](int64_t j0, int64_t j1) {
      if (avx512) GemvRows<true>(vector, matrix, ld, K, alpha, beta, C, j0, j1);
      else GemvRows<false>(vector, matrix, ld, K, alpha, beta, C, j0, j1);
    });
  }
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
  // Four blocks suit convolution-sized products on one thread better than 2, 8, 16 or 64, and
  // still balance two.
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

namespace {
// Rows [p * mr, p * mr + mr) of A (M x K, lda apart) as one panel: k-major, zero-padded rows.
// In blocks of depth, so that the part of the panel every row is scattered into stays in L1
// (a whole deep panel does not, and packing a weight gradient's head gradients, 32 x ~1000,
// would cost as much as its product).
// Full panels go through 4x4 transposes (SSE, in every x86-64 build): a scalar scatter is a
// large share of a weight gradient's product.
void PackPanel(const float* A, int64_t M, int64_t K, int64_t lda, int mr, int64_t p, float* dst) {
  const int64_t rows = std::min<int64_t>(mr, M - p * mr);
  if (rows < mr) std::fill(dst, dst + K * mr, 0.0f);
  constexpr int64_t kDepthBlock = 64;
  const int64_t vector_rows = rows == mr && mr % 4 == 0 ? rows : 0;
  for (int64_t k0 = 0; k0 < K; k0 += kDepthBlock) {
    const int64_t k1 = std::min(K, k0 + kDepthBlock), k4 = k0 + (k1 - k0) / 4 * 4;
    for (int64_t r = 0; r < vector_rows; r += 4) {
      const float* src = A + (p * mr + r) * lda;
      for (int64_t k = k0; k < k4; k += 4) {
        __m128 r0 = _mm_loadu_ps(src + k), r1 = _mm_loadu_ps(src + lda + k);
        __m128 r2 = _mm_loadu_ps(src + 2 * lda + k), r3 = _mm_loadu_ps(src + 3 * lda + k);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(dst + k * mr + r, r0);
        _mm_storeu_ps(dst + (k + 1) * mr + r, r1);
        _mm_storeu_ps(dst + (k + 2) * mr + r, r2);
        _mm_storeu_ps(dst + (k + 3) * mr + r, r3);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = A + (p * mr + r) * lda;
      for (int64_t k = r < vector_rows ? k4 : k0; k < k1; ++k) dst[k * mr + r] = src[k];
    }
  }
}
}  // namespace

namespace {
// The padded work (rows x columns computed) of an M x N product in wide and in tall tiles.
struct PaddedWork {
  int64_t wide, tall;
};
PaddedWork PaddedTileWork(int64_t M, int64_t N) {
  const Dispatch& d = Selected();
  auto padded = [](int64_t x, int64_t to) { return (x + to - 1) / to * to; };
  return {padded(M, d.shape.mr) * padded(N, d.shape.nr), padded(M, d.tall_shape.mr) * N};
}
}  // namespace

GemmTiling ChooseGemmTiling(int64_t M, int64_t N) {
  // Tall where it saves a tenth of the padded work. Wide tiles run a block's column tiles in
  // one call (PackedTileArgs::tiles) and beat tall ones at equal padding however deep.
  const PaddedWork w = PaddedTileWork(M, N);
  return 10 * w.tall < 9 * w.wide ? GemmTiling::kTall : GemmTiling::kWide;
}

GemmTiling ChooseGemmTiling(int64_t M, int64_t N, int64_t K) {
  constexpr int64_t kMinTallDepth = 256, kMaxTallColumns = 1024;
  const PaddedWork w = PaddedTileWork(M, N);
  if (K >= kMinTallDepth && N <= kMaxTallColumns && w.tall <= w.wide) return GemmTiling::kTall;
  return ChooseGemmTiling(M, N);
}

bool TallTilesFit(int64_t M, int64_t N, int64_t K) {
  constexpr int64_t kTallDepth = 128;
  const PaddedWork w = PaddedTileWork(M, N);
  return 10 * w.tall < 9 * w.wide || (K > kTallDepth && w.tall <= w.wide);
}

namespace {
int PanelRows(GemmTiling tiling) {
  return tiling == GemmTiling::kTall ? Selected().tall_shape.mr : Selected().shape.mr;
}
}  // namespace

float* PackedGemmA::Allocate() {
  std::shared_ptr<float> panels = AllocateZeroedFloats(static_cast<size_t>(floats()), "packed GEMM panels");
  float* data = panels.get();
  data_ = data;
  keep_ = std::move(panels);
  return data;
}

int64_t PackedGemmA::PanelFloats(int64_t M, int64_t K, GemmTiling tiling) {
  const int64_t mr = PanelRows(tiling);
  return (M + mr - 1) / mr * mr * K;
}

std::shared_ptr<const PackedGemmA> PackedGemmA::View(int64_t M, int64_t K, int mr, GemmTiling tiling,
                                                     const float* data, int64_t floats,
                                                     std::shared_ptr<const void> keep) {
  constexpr int64_t kMaxSide = int64_t{1} << 31;  // so that the panels' size cannot overflow
  if (M <= 0 || K <= 0 || M > kMaxSide || K > kMaxSide || mr <= 0 ||
      (tiling != GemmTiling::kWide && tiling != GemmTiling::kTall))
    throw Error(StrCat("packed GEMM panels of ", M, " x ", K, " rows by ", mr, ": not a valid shape"));
  if (mr != PanelRows(tiling)) return nullptr;
  std::shared_ptr<PackedGemmA> a(new PackedGemmA(M, K, mr, tiling));
  if (floats != a->floats())
    throw Error(StrCat("packed GEMM panels of ", M, " x ", K, " need ", a->floats(), " floats, not ", floats));
  a->data_ = data;
  a->keep_ = std::move(keep);
  return a;
}

PackedGemmA::PackedGemmA(const float* A, int64_t M, int64_t K, int64_t lda, GemmTiling tiling)
    : M_(M), K_(K), mr_(PanelRows(tiling)), tiling_(tiling) {
  Pack(A, lda, Allocate());
}

PackedGemmA::PackedGemmA(const float* A, int64_t M, int64_t K, int64_t lda, GemmTiling tiling, float* panels,
                         std::shared_ptr<const void> keep)
    : M_(M), K_(K), mr_(PanelRows(tiling)), tiling_(tiling), keep_(std::move(keep)), data_(panels) {
  Pack(A, lda, panels);
}

void PackedGemmA::Pack(const float* A, int64_t lda, float* data) const {
  const int64_t panels = (M_ + mr_ - 1) / mr_;
  ParallelFor(panels, GrainFor(K_ * mr_), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) PackPanel(A, M_, K_, lda, mr_, p, data + p * K_ * mr_);
  });
}

PackedGemmA::PackedGemmA(Transposed, const float* At, int64_t M, int64_t K, int64_t ldat, GemmTiling tiling)
    : M_(M), K_(K), mr_(PanelRows(tiling)), tiling_(tiling) {
  const int64_t panels = (M + mr_ - 1) / mr_;
  float* data = Allocate();  // zeros: the last panel's padding
  ParallelFor(panels, GrainFor(K * mr_), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t r0 = p * mr_, rows = std::min<int64_t>(mr_, M - r0);
      float* dst = data + p * K * mr_;
      for (int64_t k = 0; k < K; ++k) std::copy(At + k * ldat + r0, At + k * ldat + r0 + rows, dst + k * mr_);
    }
  });
}

namespace {
// B[k0:k0+kc, ...] as one panel per column tile, each kc x nr (k-major): tile t holds B's columns
// starts[t] to starts[t + 1] (at most nr), then zeros. Row by row, so that B is read
// sequentially (panel by panel, each row's short piece of every panel was a stream of its own,
// which the hardware prefetcher did not follow when B came from memory). kNr: nr fixed at
// compile time, so that a piece is a few moves instead of a memcpy call.
template <int kNr>
void PackBPanels(const float* B, int64_t ldb, int64_t k0, int64_t kc, const int64_t* starts, int64_t tiles,
                 float* dst) {
  for (int64_t k = 0; k < kc; ++k) {
    const float* src = B + (k0 + k) * ldb;
    float* d = dst + k * kNr;
    for (int64_t t = 0; t < tiles; ++t, d += kc * kNr) {
      const int64_t c0 = starts[t], width = starts[t + 1] - c0;
      if (width == kNr) {
        std::memcpy(d, src + c0, sizeof(float) * kNr);
      } else {
        #pragma GCC unroll 32
        for (int c = 0; c < kNr; ++c) d[c] = c < width ? src[c0 + c] : 0.0f;
      }
    }
  }
}
void PackB(const float* B, int64_t ldb, int64_t k0, int64_t kc, const int64_t* starts, int64_t tiles, int nr,
           float* dst) {
  switch (nr) {  // the micro-kernels' widths: wide 32/16/8, tall 12/6/4 (AVX-512/AVX2/SSE)
    case 4: return PackBPanels<4>(B, ldb, k0, kc, starts, tiles, dst);
    case 6: return PackBPanels<6>(B, ldb, k0, kc, starts, tiles, dst);
    case 8: return PackBPanels<8>(B, ldb, k0, kc, starts, tiles, dst);
    case 12: return PackBPanels<12>(B, ldb, k0, kc, starts, tiles, dst);
    case 16: return PackBPanels<16>(B, ldb, k0, kc, starts, tiles, dst);
    case 32: return PackBPanels<32>(B, ldb, k0, kc, starts, tiles, dst);
    default: throw Error("GemmPacked: no B packing for micro-kernel width " + std::to_string(nr));
  }
}
}  // namespace

// gemm_kernels.h: shared with the bf16 GEMM.
Blocks BalancedBlocks(int64_t panels, int64_t tiles, int64_t min_cols, int64_t max_tasks) {
  constexpr int64_t kChoices = 8;
  min_cols = std::clamp<int64_t>(min_cols, 1, tiles);
  Blocks best{1, min_cols};
  if (max_tasks <= 1) return best;
  const int64_t threads = std::max(2, tbb::this_task_arena::max_concurrency());
  int64_t rows_per[kChoices + 1], tiles_per[kChoices];  // the largest block for r row blocks, min_cols + i column blocks
  for (int64_t r = 1; r <= kChoices; ++r) rows_per[r] = (panels + r - 1) / r;
  for (int64_t i = 0; i < kChoices; ++i) tiles_per[i] = (tiles + min_cols + i - 1) / (min_cols + i);
  // At least two tasks per thread where the product allows, so that a thread busy elsewhere
  // (independent nodes run concurrently) leaves the other one work to take.
  const int64_t min_tasks = std::min(2 * threads, std::min(max_tasks, panels * tiles));
  int64_t best_span = -1;
  for (int64_t r = 1; r <= std::min(panels, kChoices); ++r)
    for (int64_t i = 0; i < kChoices && min_cols + i <= tiles && r * (min_cols + i) <= max_tasks; ++i) {
      const int64_t tasks = r * (min_cols + i);
      if (tasks < min_tasks) continue;
      const int64_t span = (tasks + threads - 1) / threads * rows_per[r] * tiles_per[i];
      if (best_span < 0 || span < best_span || (span == best_span && tasks < best.rows * best.cols)) {
        best = {r, min_cols + i};
        best_span = span;
      }
    }
  return best;
}

namespace {
// The residual of the tile at C + offset, for the tiles of the last depth slice (which apply the
// epilogue).
const float* ResidualAt(const GemmEpilogue& epilogue, bool last_slice, int64_t offset) {
  return last_slice && epilogue.residual ? epilogue.residual + offset : nullptr;
}

void RunGemmPacked(const PackedGemmA& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                   const GemmEpilogue& epilogue, bool parallel) {
  const int64_t M = A.rows(), K = A.depth();
  if (M <= 0 || N <= 0) return;
  const Dispatch& d = Selected();
  const bool tall = A.tiling() == GemmTiling::kTall;
  const GemmMicroShape shape = tall ? d.tall_shape : d.shape;
  const TileFn tile = tall ? d.tall_tile : d.tile;
  const int mr = shape.mr, nr = shape.nr;
  // Depth in slices of at most 384 for wide tiles (a B panel slice of 384 x nr stays in L1 with
  // the A panel), 1024 for tall ones (each slice transposes its tile of C in and out); sums of
  // later slices continue from C. All sizes depend on the problem only.
  const int64_t kMaxDepth = tall ? 1024 : 384;
  constexpr int64_t kBlockFloats = int64_t{1} << 16;
  const int64_t slices = (std::max<int64_t>(K, 1) + kMaxDepth - 1) / kMaxDepth;
  const int64_t kc_max = (K + slices - 1) / slices;
  // Columns in blocks of whole tiles whose packed B slice is ~256 KB (in L2 while every A panel
  // passes over it); when run in parallel, rows in blocks of panels and maybe more column blocks,
  // chosen by BalancedBlocks so that the threads get even shares. Tasks run row blocks
  // outermost, so each thread writes whole rows of C: ordered by column block first, two
  // threads would write the two halves of the same rows at once, contending for the cache line
  // shared at the boundary of rows that are not line-aligned. The split changes no bits: every
  // sum runs in k order within its tile whatever the block.
  const int64_t col_tiles = (N + nr - 1) / nr, panels = (M + mr - 1) / mr;
  const int64_t max_block_tiles = std::max<int64_t>(1, kBlockFloats / std::max<int64_t>(kc_max, 1) / nr);
  const int64_t flops = 2 * M * N * K;
  const Blocks blocks = BalancedBlocks(panels, col_tiles, (col_tiles + max_block_tiles - 1) / max_block_tiles,
                                       parallel ? std::min<int64_t>(kMaxGemmTasks, flops / kMinParallelGemmTaskFlops) : 1);
  const int64_t col_blocks = blocks.cols, row_blocks = blocks.rows;
  const int64_t tasks = col_blocks * row_blocks;
  const int64_t flops_per_task = flops / tasks;
  const int64_t nc = (col_tiles + col_blocks - 1) / col_blocks * nr;  // the widest block
  // Few rows (SqueezeNet's squeezes: 16-64 filters), or a B of at most 256 KB (MobileFaceNet's
  // 64 -> 128 at 28x28): wide tiles read B where it lies, every row panel of C over one column
  // tile before the next, so each B tile comes from memory once and from L1 for the other
  // panels. Packing B first costs more than the product there (its copy from memory does not
  // overlap any arithmetic); with a larger B each B element is used often enough to pay for
  // packing, and B's rows, far apart, no longer stay in cache.
  constexpr int64_t kMaxInPlacePanels = 8, kSmallBFloats = int64_t{1} << 16, kRunFloats = 4096;
  const bool b_in_place = !tall && (panels <= kMaxInPlacePanels || K * N <= kSmallBFloats);
  // Tall tiles broadcast B's columns where they lie unless B's rows are a page or more apart
  // (each k step on another page): nearer rows stream from cache, and packing, which copies all
  // of B once per row block, cost more than it saved on every shape measured.
  constexpr int64_t kTallPackRowFloats = 1024;
  const bool pack_b = !b_in_place && (!tall || ldb >= kTallPackRowFloats);
  // Where column tile t starts: wide tiles nr apart (the last cut at N); tall ones spread
  // evenly, N / col_tiles columns each rounded (at most nr), so that no tile is left with 1-3
  // columns, whose few sums wait on the multiply-add latency: 7x7 = 49 positions as 8 x 6 + 1
  // spent on the ninth tile two thirds of a full one's time, 4 x 6 + 5 x 5 keeps every tile at
  // full rate. A sum does not depend on its tile, so neither do the bits.
  auto tile_start = [&](int64_t t) { return tall ? t * N / col_tiles : std::min(N, t * nr); };
  ParallelFor(tasks, parallel && flops_per_task >= kMinParallelGemmTaskFlops ? 1 : tasks, [&](int64_t t0, int64_t t1) {
    // One buffer per thread, reused across calls (tasks never nest inside one another's body).
    thread_local std::vector<float> packed_b;
    thread_local std::vector<int64_t> starts;
    const int64_t packed_cols = b_in_place ? nr : nc;  // in place, only a last partial tile is packed
    if ((pack_b || b_in_place) && packed_b.size() < static_cast<size_t>(kc_max * packed_cols))
      packed_b.resize(static_cast<size_t>(kc_max * packed_cols));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rb = t / col_blocks, cb = t % col_blocks;
      const int64_t jt0 = cb * col_tiles / col_blocks, tiles = (cb + 1) * col_tiles / col_blocks - jt0;
      starts.resize(static_cast<size_t>(tiles + 1));
      for (int64_t i = 0; i <= tiles; ++i) starts[static_cast<size_t>(i)] = tile_start(jt0 + i);
      const int64_t j0 = starts[0], cols_here = starts[static_cast<size_t>(tiles)] - j0;
      const int64_t p_lo = rb * panels / row_blocks, p_hi = (rb + 1) * panels / row_blocks;
      if (b_in_place) {
        for (int64_t s = 0; s < slices; ++s) {
          const int64_t k0 = s * kc_max, kc = std::min(kc_max, K - k0);
          // Full tiles in runs of one call each (PackedTileArgs::tiles) whose B stays in L1
          // (16 KB) while every panel passes over it.
          const int64_t run_max = std::max<int64_t>(1, kRunFloats / (kc * nr));
          for (int64_t j = 0, run = 1; j < cols_here; j += run * nr) {
            const int cols = static_cast<int>(std::min<int64_t>(nr, cols_here - j));
            run = cols < nr ? 1 : std::min(run_max, (cols_here - j) / nr);
            const float* b = B + k0 * ldb + j0 + j;
            int64_t b_step = ldb;
            if (cols < nr) {  // a full-width read would pass the end of B's rows
              const int64_t edge[2] = {j0 + j, j0 + j + cols};
              PackB(B, ldb, k0, kc, edge, 1, nr, packed_b.data());
              b = packed_b.data();
              b_step = nr;
            }
            for (int64_t p = p_lo; p < p_hi; ++p) {
              const int rows = static_cast<int>(std::min<int64_t>(mr, M - p * mr));
              PackedTileArgs args{kc, A.panel(p) + k0 * mr, b, b_step, C + p * mr * ldc + j0 + j, ldc, rows, cols,
                                  s > 0, s + 1 == slices ? &epilogue : nullptr, p * mr};
              args.residual = ResidualAt(epilogue, s + 1 == slices, p * mr * ldc + j0 + j);
              // The first panel streams the B rows of the tile after next into L2 (strided rows
              // defeat the hardware prefetcher; one tile ahead, into L1, hides too little of the
              // latency, and three ahead does no better); the other panels find this tile in L1.
              if (p == p_lo && b_step == ldb && j + nr < cols_here) args.b_prefetch_ahead = 2 * nr;
              args.tiles = static_cast<int>(run);
              args.b_tile_step = nr;
              tile(args);
            }
          }
        }
        continue;
      }
      for (int64_t s = 0; s < slices; ++s) {
        const int64_t k0 = s * kc_max, kc = std::min(kc_max, K - k0);
        if (pack_b) PackB(B, ldb, k0, kc, starts.data(), tiles, nr, packed_b.data());
        for (int64_t p = p_lo; p < p_hi; ++p) {
          const int rows = static_cast<int>(std::min<int64_t>(mr, M - p * mr));
          // Tall tiles bring the next panel's slice into cache over this panel's column tiles
          // after the first (which reads this panel from memory itself), evenly spread.
          const float* next = !tall          ? nullptr
                              : p + 1 < p_hi     ? A.panel(p + 1) + k0 * mr
                              : s + 1 < slices   ? A.panel(p_lo) + (k0 + kc) * mr
                                                 : nullptr;
          const int64_t next_kc = p + 1 < p_hi ? kc : std::min(kc_max, K - k0 - kc);
          const int64_t pf_tiles = std::max<int64_t>(1, tiles - 1);
          const int64_t pf_lines = next ? (next_kc * mr * 4 + 63) / 64 : 0;
          const int64_t pf_lines_per_tile = (pf_lines + pf_tiles - 1) / pf_tiles;
          const int pf_per_step = static_cast<int>((pf_lines_per_tile + kc - 1) / kc);
          for (int64_t jt = 0, run = 1; jt < tiles; jt += run) {
            const int64_t j = starts[static_cast<size_t>(jt)];
            const int cols = static_cast<int>(starts[static_cast<size_t>(jt + 1)] - j);
            // Wide tiles: the full ones in one call (the last may be partial).
            run = tall || cols < nr ? 1 : (starts[static_cast<size_t>(tiles)] - j) / nr;
            const float* b = pack_b ? packed_b.data() + jt * kc * nr : B + k0 * ldb + j;
            PackedTileArgs args{kc, A.panel(p) + k0 * mr, b, pack_b ? nr : ldb, C + p * mr * ldc + j, ldc, rows, cols,
                                s > 0, s + 1 == slices ? &epilogue : nullptr, p * mr};
            args.residual = ResidualAt(epilogue, s + 1 == slices, p * mr * ldc + j);
            // The first panel also streams in the B rows of the tile after next (see above).
            if (!pack_b && p == p_lo && jt + 1 < tiles) args.b_prefetch_ahead = 2 * nr;
            args.tiles = static_cast<int>(run);
            args.b_tile_step = pack_b ? kc * nr : nr;
            const int64_t pf_tile = pf_tiles == 1 ? 0 : jt - 1;
            if (next && pf_tile >= 0) {
              const char* base = reinterpret_cast<const char*>(next);
              args.prefetch = base + std::min(pf_lines, pf_tile * pf_lines_per_tile) * 64;
              args.prefetch_end = base + std::min(pf_lines, (pf_tile + 1) * pf_lines_per_tile) * 64;
              args.prefetch_lines_per_step = pf_per_step;
            }
            tile(args);
          }
        }
      }
    }
  });
}

}  // namespace

void GemmPacked(const PackedGemmA& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                const GemmEpilogue& epilogue) {
  RunGemmPacked(A, N, B, ldb, C, ldc, epilogue, true);
}

void GemmPackedSerial(const PackedGemmA& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                      const GemmEpilogue& epilogue) {
  RunGemmPacked(A, N, B, ldb, C, ldc, epilogue, false);
}

int64_t GemmPackedTapsColumns() { return Selected().shape.nr; }

void GemmPackedTaps(const PackedGemmA& A, int64_t N, const float* planes, int64_t plane_floats,
                    const int64_t* tap_offsets, int64_t taps, float* C, int64_t ldc, const GemmEpilogue& epilogue,
                    int64_t first_row, int64_t last_row) {
  const Dispatch& d = Selected();
  const int mr = d.shape.mr, nr = d.shape.nr;
  const int64_t M = A.rows(), K = A.depth();
  if (last_row < 0) last_row = M;
  if (A.tiling() != GemmTiling::kWide || M % mr != 0 || N % nr != 0 || taps <= 0 || K % taps != 0 ||
      epilogue.residual || first_row % mr != 0 || last_row % mr != 0 || first_row < 0 || last_row > M)
    throw Error("GemmPackedTaps: needs wide panels, whole tiles, a depth of channels x taps, whole panels of rows "
                "and no residual");
  // Depth in slices of whole channels, about as deep as GemmPacked's (the slice's window of the
  // planes and the A panel's slice stay in L1 while the row panels pass over a column tile);
  // later slices continue from C, so every sum runs in k order as GemmPacked's.
  constexpr int64_t kMaxDepth = 384;
  const int64_t channels = K / taps, slice_channels = std::max<int64_t>(1, kMaxDepth / taps);
  for (int64_t c0 = 0; c0 < channels; c0 += slice_channels) {
    const int64_t cs = std::min(slice_channels, channels - c0);
    for (int64_t j = 0; j < N; j += nr)
      for (int64_t p = first_row / mr; p < last_row / mr; ++p) {
        PackedTileArgs args{cs * taps, A.panel(p) + c0 * taps * mr, planes + c0 * plane_floats + j, 0,
                            C + (p * mr - first_row) * ldc + j, ldc, mr, nr, c0 > 0,
                            c0 + cs == channels ? &epilogue : nullptr, p * mr};
        args.tap_offsets = tap_offsets;
        args.taps = taps;
        args.plane_floats = plane_floats;
        d.tile(args);
      }
  }
}

void GemmPackedTallBt(const PackedGemmA& A, int64_t N, const float* Bt, int64_t ldbt, float* C, int64_t ldc,
                      bool accumulate, const GemmEpilogue* epilogue) {
  const int64_t M = A.rows(), K = A.depth();
  if (M <= 0 || N <= 0) return;
  if (A.tiling() != GemmTiling::kTall)
    throw Error("GemmPackedTallBt: A must be packed for tall tiles (GemmTiling::kTall), got wide ones");
  const Dispatch& d = Selected();
  const int mr = d.tall_shape.mr, nr = d.tall_shape.nr;
  // Depth in GemmPacked's tall slices. The larger operand outermost: with columns outermost the
  // nr rows of Bt a tile broadcasts from stay in L1 while every A panel passes over them (a
  // weight gradient's im2col rows); with A's panels outermost, each panel stays in cache over
  // all the columns (weights of 600 KB against 49 positions: read once, not once per tile).
  // Columns in tiles of even widths, as GemmPacked's tall tiles.
  constexpr int64_t kMaxDepth = 1024;
  const int64_t slices = (std::max<int64_t>(K, 1) + kMaxDepth - 1) / kMaxDepth;
  const int64_t kc_max = (K + slices - 1) / slices;
  const int64_t panels = (M + mr - 1) / mr, tiles = (N + nr - 1) / nr;
  const bool panels_outer = M > N;
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t k0 = s * kc_max, kc = std::min(kc_max, K - k0);
    const bool last = s + 1 == slices;
    for (int64_t outer = 0; outer < (panels_outer ? panels : tiles); ++outer)
      for (int64_t inner = 0; inner < (panels_outer ? tiles : panels); ++inner) {
        const int64_t p = panels_outer ? outer : inner, t = panels_outer ? inner : outer;
        const int64_t j = t * N / tiles, cols = (t + 1) * N / tiles - j;
        PackedTileArgs args{kc, A.panel(p) + k0 * mr, Bt + j * ldbt + k0, ldbt, C + p * mr * ldc + j, ldc,
                            static_cast<int>(std::min<int64_t>(mr, M - p * mr)), static_cast<int>(cols),
                            accumulate || s > 0, last ? epilogue : nullptr, p * mr};
        if (last && epilogue && epilogue->residual) args.residual = epilogue->residual + p * mr * ldc + j;
        d.tall_tile_bt(args);
      }
  }
}

}  // namespace symbind
