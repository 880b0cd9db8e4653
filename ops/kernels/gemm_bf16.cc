// The bf16 GEMM (gemm_bf16.h). A tile is kBf16Rows rows of C by two 16-column vectors: each
// step of a pair of depths broadcasts one row's weight pair and multiplies it into both data
// vectors with vdpbf16ps (16 accumulators). B is packed per call into 32-column panels of
// depth pairs, in column groups that stay in L2 while every row block passes over them.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include <symbind/core/error.h>
#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
SYMBIND_AVX512_INTRINSICS_BEGIN
constexpr int64_t kPanelCols = 32;
#define SYMBIND_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

bool CpuHasBf16() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}
}  // namespace

bool Bf16Available() { return CpuHasBf16() && ActiveIsa() == KernelIsa::kAvx512; }

std::string Bf16Unavailable() {
  if (Bf16Available()) return "";
  if (!CpuHasBf16()) return "precision bf16 needs a CPU with AVX512_BF16 (vdpbf16ps); this one has none: use float32";
  return std::string("precision bf16 needs the AVX-512 kernels, but SYMBIND_GEMM_ISA selects ") + GemmIsa();
}

PackedBf16A::PackedBf16A(const float* A, int64_t M, int64_t K, int64_t lda)
    : rows(M), depth(K), pairs((K + 1) / 2) {
  if (M <= 0 || K <= 0) throw Error("PackedBf16A: a product of " + std::to_string(M) + " x " + std::to_string(K) + " has no weights");
  const int64_t blocks = (M + kBf16Rows - 1) / kBf16Rows;
  words.assign(static_cast<size_t>(blocks * pairs * kBf16Rows), 0u);
  ParallelFor(blocks, GrainFor(pairs * kBf16Rows), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t r = 0; r < kBf16Rows && b * kBf16Rows + r < M; ++r) {
        const float* row = A + (b * kBf16Rows + r) * lda;
        for (int64_t p = 0; p < pairs; ++p) {
          const uint32_t lo = RoundToBf16(row[2 * p]), hi = 2 * p + 1 < K ? RoundToBf16(row[2 * p + 1]) : 0u;
          words[static_cast<size_t>((b * pairs + p) * kBf16Rows + r)] = lo | hi << 16;
        }
      }
  });
}

namespace {
SYMBIND_BF16_TARGET inline __mmask16 ColumnMask(int64_t cols) {
  return cols >= 16 ? static_cast<__mmask16>(0xffff) : cols <= 0 ? 0 : static_cast<__mmask16>((1u << cols) - 1);
}

// Columns [c0, c0 + cols) of B as one panel: for each depth pair p, 32 words (B[2p][c], B[2p+1][c]),
// zero past the columns and past an odd depth.
SYMBIND_BF16_TARGET void PackPanel(const float* B, int64_t ldb, int64_t K, int64_t c0, int64_t cols, uint32_t* dst) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                           8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i order = _mm512_load_si512(kInterleave);
  const __mmask16 m0 = ColumnMask(cols), m1 = ColumnMask(cols - 16);
  const int64_t pairs = (K + 1) / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    const float* even = B + 2 * p * ldb + c0;
    const float* odd = 2 * p + 1 < K ? even + ldb : nullptr;
    for (int v = 0; v < 2; ++v) {
      const __mmask16 m = v ? m1 : m0;
      const __m512 lo = _mm512_maskz_loadu_ps(m, even + 16 * v);
      const __m512 hi = odd ? _mm512_maskz_loadu_ps(m, odd + 16 * v) : _mm512_setzero_ps();
      const __m512i both = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));  // lo's 16, then hi's
      _mm512_storeu_si512(dst + p * kPanelCols + 16 * v, _mm512_permutexvar_epi16(order, both));
    }
  }
}

SYMBIND_BF16_TARGET inline __m512 Activate(__m512 v, const FusedActivation& act, int64_t row) {
  switch (act.kind) {
    case FusedActivation::kRelu: return _mm512_max_ps(v, _mm512_setzero_ps());
    case FusedActivation::kClip: return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(act.lo)), _mm512_set1_ps(act.hi));
    case FusedActivation::kLeaky:
    case FusedActivation::kPRelu: {
      const float slope = act.kind == FusedActivation::kPRelu ? act.slopes[row] : act.slope;
      const __mmask16 positive = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
      return _mm512_mask_blend_ps(positive, _mm512_mul_ps(_mm512_set1_ps(slope), v), v);
    }
    default: return v;
  }
}

// The second output of row `row`'s values v. Its product and sum are rounded apart (the _round_
// forms, which the compiler does not contract into one multiply-add), as FinishOutput's.
SYMBIND_BF16_TARGET inline __m512 Normalize(__m512 v, const NormalizedOutput& z, int64_t row) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  __m512 n = _mm512_sub_round_ps(v, _mm512_set1_ps(z.mean[row]), kNearest);
  n = _mm512_mul_round_ps(n, _mm512_set1_ps(z.scale[row]), kNearest);
  n = _mm512_add_round_ps(n, _mm512_set1_ps(z.shift[row]), kNearest);
  return Activate(n, z.act, row);
}

// Row `row` of C from its sums: + bias, + residual, the activation, stored under `mask`; then
// the second output from those values.
SYMBIND_BF16_TARGET inline void StoreRow(__m512 v, __mmask16 mask, const GemmEpilogue& ep, const NormalizedOutput& z,
                                         int64_t row, int64_t offset, float* C) {
  if (ep.bias) v = _mm512_add_ps(v, _mm512_set1_ps(ep.bias[row]));
  if (ep.residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ep.residual + offset));
  v = Activate(v, ep.act, row);
  _mm512_mask_storeu_ps(C + offset, mask, v);
  if (z.y) _mm512_mask_storeu_ps(z.y + offset, mask, Normalize(v, z, row));
}

// C[row0 .., c0 ..] (rows x cols of it) from block `a` and panel `b` over every depth pair.
// `next`: the block to bring into cache meanwhile (the weights stream from memory once per
// forward at batch 1, faster than the hardware prefetcher fetches them), or null.
SYMBIND_BF16_TARGET void Tile(const uint32_t* a, const uint32_t* b, int64_t pairs, int64_t row0, int rows, int64_t c0,
                              int64_t cols, float* C, int64_t ldc, const GemmEpilogue& ep, const NormalizedOutput& z,
                              const uint32_t* next) {
  __m512 acc[kBf16Rows][2];
  for (auto& r : acc) r[0] = r[1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p, a += kBf16Rows, b += kPanelCols) {
    if (next && (p & 1) == 0) _mm_prefetch(reinterpret_cast<const char*>(next + p * kBf16Rows), _MM_HINT_T0);
    const __m512bh b0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b));
    const __m512bh b1 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b + 16));
    #pragma GCC unroll 8
    for (int r = 0; r < kBf16Rows; ++r) {
      const __m512bh w = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[r])));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], w, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], w, b1);
    }
  }
  const __mmask16 m0 = ColumnMask(cols), m1 = ColumnMask(cols - 16);
  for (int r = 0; r < rows; ++r) {
    const int64_t row = row0 + r;
    StoreRow(acc[r][0], m0, ep, z, row, row * ldc + c0, C);
    if (m1) StoreRow(acc[r][1], m1, ep, z, row, row * ldc + c0 + 16, C);
  }
}

// Pairs p and p + 1 of the block's rows (p + 1 zero past the depth) into s.
SYMBIND_BF16_TARGET inline __attribute__((always_inline)) void ColumnStep(const uint32_t* a, const uint32_t* x,
                                                                          int64_t pairs, int64_t p, __m512& s) {
  const __mmask16 m = p + 1 < pairs ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>(0x00ff);
  const __m512i w = _mm512_maskz_loadu_epi32(m, a + p * kBf16Rows);
  const __m512i xs = _mm512_inserti64x4(_mm512_set1_epi32(static_cast<int>(x[p])),
                                        _mm256_set1_epi32(static_cast<int>(x[p + 1])), 1);
  s = _mm512_dpbf16_ps(s, reinterpret_cast<__m512bh>(w), reinterpret_cast<__m512bh>(xs));
}

// One column (FullyConnected at batch 1), row block `blk`: its rows in the lanes, even pairs in
// lanes 0-7 and odd ones in 8-15. Eight accumulators, pair p's step into accumulator (p / 2) mod
// 8, so that eight multiply-adds are in flight (two accumulators left the weights' stream waiting
// on the dot product's latency); they and then each row's two halves are added in a fixed order.
// x: B's depth pairs as words, one past the last zero.
SYMBIND_BF16_TARGET void ColumnBlock(const PackedBf16A& A, int64_t blk, const uint32_t* x, float* C, int64_t ldc,
                                     const GemmEpilogue& ep, const NormalizedOutput& z) {
  constexpr int kAcc = 8;
  // Lines asked 8 KiB ahead (into the next blocks, up to the last): a forward reads the weights
  // once, from memory, and this one stream per thread otherwise waits on each miss.
  constexpr int64_t kPrefetchPairs = 256;
  const int64_t pairs = A.pairs;
  const uint32_t* a = A.words.data() + blk * pairs * kBf16Rows;
  const int64_t pairs_left = static_cast<int64_t>(A.words.size()) / kBf16Rows - blk * pairs;
  __m512 acc[kAcc];
  for (__m512& s : acc) s = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 2 * kAcc <= pairs; p += 2 * kAcc) {
    for (int i = 0; i < kAcc; ++i)
      if (p + kPrefetchPairs + 2 * i < pairs_left)
        _mm_prefetch(reinterpret_cast<const char*>(a + (p + kPrefetchPairs + 2 * i) * kBf16Rows), _MM_HINT_T0);
    for (int i = 0; i < kAcc; ++i) ColumnStep(a, x, pairs, p + 2 * i, acc[i]);
  }
  for (; p < pairs; p += 2) ColumnStep(a, x, pairs, p, acc[(p / 2) % kAcc]);
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])),
                                   _mm512_add_ps(_mm512_add_ps(acc[4], acc[5]), _mm512_add_ps(acc[6], acc[7])));
  alignas(64) float sums[16];
  _mm512_store_ps(sums, sum);
  for (int r = 0; r < kBf16Rows && blk * kBf16Rows + r < A.rows; ++r) {
    const int64_t row = blk * kBf16Rows + r;
    float v = sums[r] + sums[8 + r];
    if (ep.bias) v += ep.bias[row];
    if (ep.residual) v += ep.residual[row * ldc];
    v = ep.act.ForRow(row)(v);
    C[row * ldc] = v;
    if (z.y) z.y[row * ldc] = _mm512_cvtss_f32(Normalize(_mm512_set1_ps(v), z, row));
  }
}

void Column(const PackedBf16A& A, const float* B, int64_t ldb, float* C, int64_t ldc, const GemmEpilogue& ep,
            const NormalizedOutput& z, bool parallel) {
  const int64_t pairs = A.pairs, K = A.depth;
  std::vector<uint32_t> x(static_cast<size_t>(pairs + 1), 0u);
  for (int64_t p = 0; p < pairs; ++p)
    x[static_cast<size_t>(p)] = RoundToBf16(B[2 * p * ldb]) |
                                (2 * p + 1 < K ? static_cast<uint32_t>(RoundToBf16(B[(2 * p + 1) * ldb])) << 16 : 0u);
  const int64_t blocks = (A.rows + kBf16Rows - 1) / kBf16Rows;
  ParallelFor(blocks, parallel ? GrainFor(pairs * kBf16Rows, 1 << 16) : blocks, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) ColumnBlock(A, blk, x.data(), C, ldc, ep, z);
  });
}
SYMBIND_AVX512_INTRINSICS_END

void RunGemmBf16(const PackedBf16A& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                 const GemmEpilogue& epilogue, const NormalizedOutput& normalized, bool parallel) {
  if (!Bf16Available()) throw Error(Bf16Unavailable());
  const int64_t M = A.rows, pairs = A.pairs;
  if (M <= 0 || N <= 0) return;
  if (N == 1) return Column(A, B, ldb, C, ldc, epilogue, normalized, parallel);
  const int64_t panels = (N + kPanelCols - 1) / kPanelCols, blocks = (M + kBf16Rows - 1) / kBf16Rows;
  const int64_t panel_words = pairs * kPanelCols;
  // Parallel from 256k flops per task, as the float32 GEMM; a smaller product runs on the
  // calling thread.
  const int64_t max_tasks =
      parallel ? std::min<int64_t>(kMaxGemmTasks, 2 * M * N * A.depth / kMinParallelGemmTaskFlops) : 1;
  const ScratchBuffer packed_floats(panels * panel_words);  // words, as floats of the same size
  uint32_t* packed = reinterpret_cast<uint32_t*>(packed_floats.data());
  ParallelFor(panels, max_tasks > 1 ? 1 : panels, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      PackPanel(B, ldb, A.depth, j * kPanelCols, std::min(kPanelCols, N - j * kPanelCols), packed + j * panel_words);
  });
  // Column blocks of at most about 256 KB of packed B (in L2 while every row block passes over
  // them), rows and columns split into even shares per thread (BalancedBlocks); tasks run row
  // blocks outermost, so each thread writes whole rows of C. No split changes a sum.
  constexpr int64_t kGroupBytes = int64_t{1} << 18;
  const int64_t max_group_panels = std::clamp<int64_t>(kGroupBytes / (panel_words * 4), 1, panels);
  const Blocks split = BalancedBlocks(blocks, panels, (panels + max_group_panels - 1) / max_group_panels, max_tasks);
  const int64_t tasks = split.rows * split.cols;
  ParallelFor(tasks, max_tasks > 1 ? 1 : tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rb = t / split.cols, cb = t % split.cols;
      const int64_t r0 = rb * blocks / split.rows, r1 = (rb + 1) * blocks / split.rows;
      const int64_t j0 = cb * panels / split.cols, j1 = (cb + 1) * panels / split.cols;
      for (int64_t blk = r0; blk < r1; ++blk) {
        const uint32_t* a = A.words.data() + blk * pairs * kBf16Rows;
        const int rows = static_cast<int>(std::min(kBf16Rows, M - blk * kBf16Rows));
        const uint32_t* next = blk + 1 < r1 ? a + pairs * kBf16Rows : nullptr;
        for (int64_t j = j0; j < j1; ++j)
          Tile(a, packed + j * panel_words, pairs, blk * kBf16Rows, rows, j * kPanelCols,
               std::min(kPanelCols, N - j * kPanelCols), C, ldc, epilogue, normalized, j == j0 ? next : nullptr);
      }
    }
  });
}

}  // namespace

void GemmBf16(const PackedBf16A& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
              const GemmEpilogue& epilogue, const NormalizedOutput& normalized) {
  RunGemmBf16(A, N, B, ldb, C, ldc, epilogue, normalized, true);
}

void GemmBf16Serial(const PackedBf16A& A, int64_t N, const float* B, int64_t ldb, float* C, int64_t ldc,
                    const GemmEpilogue& epilogue, const NormalizedOutput& normalized) {
  RunGemmBf16(A, N, B, ldb, C, ldc, epilogue, normalized, false);
}

}  // namespace symbind
