// GEMM block kernels, one per instruction set; ops/kernels/gemm.cc picks one at run time.
#pragma once
#include <cstdint>
#include <iosfwd>

// Around code calling AVX-512 intrinsics from functions with a target attribute: GCC 12 warns
// inside its own avx512fintrin.h (-Wmaybe-uninitialized), about none of our code.
#if defined(__GNUC__) && !defined(__clang__)
#define SYMBIND_AVX512_INTRINSICS_BEGIN                                  \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define SYMBIND_AVX512_INTRINSICS_END _Pragma("GCC diagnostic pop")
#else
#define SYMBIND_AVX512_INTRINSICS_BEGIN
#define SYMBIND_AVX512_INTRINSICS_END
#endif

#include "gemm.h"

namespace symbind {

// A product's blocks for its parallel tasks: `rows` blocks of row panels by `cols` blocks of
// column tiles.
struct Blocks {
  int64_t rows, cols;
};
constexpr int64_t kMaxGemmTasks = 16;
// A product runs in parallel from this many flops per task (MobileFaceNet's small 1x1 layers;
// 1M kept them serial).
constexpr int64_t kMinParallelGemmTaskFlops = int64_t{1} << 18;
// The split of `panels` x `tiles` into at most max_tasks blocks (at least min_cols column
// blocks) whose slowest thread has the least work, counted as rounds of tasks (tasks / threads,
// rounded up) times the largest block; ties go to fewer tasks. Blocks of uneven size cost
// their largest: 3 panels in 2 row blocks by 2 column blocks left one thread 4 of 6 units
// (96 x 196 x 576 on 2 threads), 1 row block by 2 column blocks gives each 3. Searched over up
// to 8 row blocks and min_cols to min_cols + 7 column blocks: cheap next to a product large
// enough to run in parallel (512k flops and more). Block b of n over `count` items covers
// [b * count / n, (b + 1) * count / n).
Blocks BalancedBlocks(int64_t panels, int64_t tiles, int64_t min_cols, int64_t max_tasks);

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

// One tile of a packed GEMM (gemm_packed.cc): C[rows, cols] (ldc apart) = (load_c ? C : 0) +
// the kc-step product of a packed A panel (kc x mr) and B panel (kc x nr; for the tall tile
// B's own rows, ldb apart), then the epilogue when given (bias[row0 + r], the residual tile and
// the activation).
struct PackedTileArgs {
  int64_t kc;
  const float* a;
  const float* b;
  int64_t ldb;  // the step between B's k rows: nr for a packed wide panel, B's row stride where a tile
                // reads B in place; transposed B (tall tiles): the column stride
  float* c;
  int64_t ldc;
  int rows, cols;
  bool load_c;
  const GemmEpilogue* epilogue;  // null: store the sums as they are
  int64_t row0;
  const float* residual = nullptr;  // the epilogue's residual at this tile (ldc apart), or null
  // Tall tiles: memory to bring into cache while computing (the next A panel, whose first
  // reading would otherwise wait on DRAM: weights streamed once per forward at batch 1), as
  // prefetch_lines_per_step 64-byte lines per k step from prefetch up to prefetch_end.
  const char* prefetch = nullptr;
  const char* prefetch_end = nullptr;
  int prefetch_lines_per_step = 0;
  // Tiles reading B in place (tall, or wide over few panels): at each k step, also bring B's
  // row k from b_prefetch_ahead floats on into L2 (a later tile's columns; 0: none).
  int64_t b_prefetch_ahead = 0;
  // Wide tiles: `tiles` full tiles side by side in one call, the same A panel over tile i's B at
  // b + i * b_tile_step and its C (and residual) i * nr columns on: shallow products spend less
  // on calls and set-up per tile.
  int tiles = 1;
  int64_t b_tile_step = 0;
  // Wide tiles over a convolution's phase planes (GemmPackedTaps): B's row k, for channel
  // k / taps and tap k % taps, starts at b + (k / taps) * plane_floats + tap_offsets[k % taps].
  // Full tiles only, no residual.
  const int64_t* tap_offsets = nullptr;
  int64_t taps = 0;
  int64_t plane_floats = 0;
};
struct GemmMicroShape {
  int mr, nr;  // rows and columns of C one micro-kernel call computes
};

// C[r0:r1, c0:c1] of the product described by `g`; PackedTile (GemmTiling::kWide: columns in
// vectors) and PackedTallTile (kTall: rows in vectors, columns broadcast; the B panel is
// PackedTallShape().nr wide, args.cols at most that) and the tile shapes they take;
// PackedTallTileBt: the tall tile with B transposed (column c at args.b + c * args.ldb).
#define SYMBIND_GEMM_VARIANT_DECLS                                                      \
  void GemmBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1); \
  void PackedTile(const PackedTileArgs& t);                                            \
  GemmMicroShape PackedShape();                                                        \
  void PackedTallTile(const PackedTileArgs& t);                                        \
  void PackedTallTileBt(const PackedTileArgs& t);                                      \
  GemmMicroShape PackedTallShape();
namespace gemm_base { SYMBIND_GEMM_VARIANT_DECLS }
namespace gemm_avx2 { SYMBIND_GEMM_VARIANT_DECLS }
namespace gemm_avx512 { SYMBIND_GEMM_VARIANT_DECLS }
#undef SYMBIND_GEMM_VARIANT_DECLS

// The instruction set of every kernel of this process (the GEMM's tiles, the direct, depthwise,
// tiny-depth and pooling kernels), chosen once from CPUID: the one dispatch point. Kernels say
// what they need by comparing with it. SYMBIND_GEMM_ISA=base|avx2|avx512|avx512vnni caps it
// (AllowedIsaLevel), so tests run each kernel set on one CPU.
enum class KernelIsa { kBase, kAvx2, kAvx512 };
KernelIsa ActiveIsa();
// Whether the int8 kernels use AVX512-VNNI (vpdpbusd): with kAvx512 on CPUs that have it, unless
// SYMBIND_GEMM_ISA=avx512.
bool ActiveVnni();
// Whether they may also permute bytes (AVX512-VBMI's vpermb): ActiveVnni on CPUs that have it.
bool ActiveVnniVbmi();
// Its name: "avx512", "avx2" or "base".
const char* GemmIsa();
// The widest kernel set SYMBIND_GEMM_ISA's value `forced` allows, as an index into base, avx2,
// avx512, avx512vnni: all for null or empty; for an unknown name also all, with a warning line
// to `warnings` (when given). A CPU without the named set gets the widest it has below it.
int AllowedIsaLevel(const char* forced, std::ostream* warnings);

}  // namespace symbind
