#include <symbind/ops/kernels/gemm_int8.h>

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/requantize_avx512.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using quant::LaneRun;
using quant::StoreLevels16;
constexpr int64_t kRows = 4;     // rows of A sharing each load of B
constexpr int64_t kCols = 256;   // columns of C per block: kRows x kCols int32 sums stay in L1

// One block of C: rows [m0, m0 + rows) and columns [n0, n0 + cols). The inner loop widens and
// multiplies element by element, which the compiler vectorises; sums are int32 throughout
// (unsigned arithmetic, so a wrap is defined).
template <typename TB>
void GemmBlock(int64_t m0, int64_t rows, int64_t n0, int64_t cols, int64_t K, const int8_t* A, int64_t lda,
               const TB* B, int64_t ldb, int32_t* C, int64_t ldc) {
  uint32_t acc[kRows][kCols] = {};
  for (int64_t k = 0; k < K; ++k) {
    const TB* b = B + k * ldb + n0;
    for (int64_t i = 0; i < rows; ++i) {
      const uint32_t a = static_cast<uint32_t>(static_cast<int32_t>(A[(m0 + i) * lda + k]));
      if (a == 0) continue;
      uint32_t* row = acc[i];
      for (int64_t n = 0; n < cols; ++n) row[n] += a * static_cast<uint32_t>(static_cast<int32_t>(b[n]));
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < cols; ++n) C[(m0 + i) * ldc + n0 + n] = static_cast<int32_t>(acc[i][n]);
}

// AVX2: vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16, saturating;
// vpmaddwd by ones then adds pairs of those into int32. With |data| <= 128 (the unsigned
// operand, vpabsb) and weights in [-127, 127] carrying the data's signs (vpsignb), a pair sums to
// at most 2 * 128 * 127 = 32512: nothing saturates, every sum is exact. uint8 data enters as
// x - 128 (x ^ 0x80), and 128 times the row's weight sum is added back at the store. Narrow
// weights (each aligned pair's magnitudes summing to at most 128, after dividing out a common
// factor 2 where all are even) take unsigned data as it is: 255 * 128 = 32640 cannot saturate
// either; int8 data then enters as x + 128 and the offsets are subtracted, as on VNNI. A is packed
// (PackedInt8A: once per node, or per call) as 4-byte quads (a[k..k+3]) per row, kMr rows
// interleaved; B a panel of kNr columns at a time, each column's quad in 4 consecutive bytes,
// zero past K (A is zero there too).
constexpr int64_t kMr = 4, kNr = 16;  // 8 accumulators of 8 int32, with room for the data and its signs
constexpr int64_t kKc = 256;          // k quads per pass: a B panel of 16 KB

// C[rows x cols] (+)= the sums of `quads` k-quads of a packed A block (quad-major, kMr rows
// each) and a packed B panel (quad-major, kNr columns of 4 bytes each): signed data (the sign
// trick), or with kNarrow unsigned data and narrow weights (PackedInt8A::narrow: no pair of
// products can saturate vpmaddubsw, so it multiplies them as they are, a third fewer
// instructions), whose row offsets are subtracted and sums shifted left by `shift` at the store.
template <bool kNarrow>
__attribute__((target("avx2"))) void Int8Tile(const int32_t* a, const int8_t* b, int64_t quads, int32_t* C,
                                              int64_t ldc, int64_t rows, int64_t cols, bool accumulate,
                                              const int32_t* row_offsets, int shift) {
  __m256i acc[kMr][2];
  for (int64_t r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t p = 0; p < quads; ++p, a += kMr, b += 4 * kNr) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32));
    if constexpr (kNarrow) {
      #pragma GCC unroll 4
      for (int64_t r = 0; r < kMr; ++r) {
        const __m256i w = _mm256_set1_epi32(a[r]);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(b0, w), ones));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(b1, w), ones));
      }
    } else {
      const __m256i u0 = _mm256_abs_epi8(b0), u1 = _mm256_abs_epi8(b1);
      #pragma GCC unroll 4
      for (int64_t r = 0; r < kMr; ++r) {
        const __m256i w = _mm256_set1_epi32(a[r]);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(w, b0)), ones));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(w, b1)), ones));
      }
    }
  }
  // The sums leave the registers by fixed indices only: indexing `acc` by the run-time row count
  // made GCC keep a stack copy of accumulators and move them around on every step of the loop.
  alignas(32) int32_t tile[kMr][kNr];
  #pragma GCC unroll 4
  for (int64_t r = 0; r < kMr; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r]), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r] + 8), acc[r][1]);
  }
  const __m128i count = _mm_cvtsi32_si128(shift);
  if (cols == kNr) {  // whole rows of the tile: the offsets added and stored as vectors
    for (int64_t r = 0; r < rows; ++r) {
      const __m256i offset = _mm256_set1_epi32(row_offsets ? row_offsets[r] : 0);
      __m256i* c = reinterpret_cast<__m256i*>(C + r * ldc);
      __m256i s0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile[r]));
      __m256i s1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(tile[r] + 8));
      if constexpr (kNarrow) {
        s0 = _mm256_sll_epi32(_mm256_sub_epi32(s0, offset), count);
        s1 = _mm256_sll_epi32(_mm256_sub_epi32(s1, offset), count);
      } else {
        s0 = _mm256_add_epi32(s0, offset);
        s1 = _mm256_add_epi32(s1, offset);
      }
      if (accumulate) {
        s0 = _mm256_add_epi32(s0, _mm256_loadu_si256(c));
        s1 = _mm256_add_epi32(s1, _mm256_loadu_si256(c + 1));
      }
      _mm256_storeu_si256(c, s0);
      _mm256_storeu_si256(c + 1, s1);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* c = C + r * ldc;
    const uint32_t offset = row_offsets ? static_cast<uint32_t>(row_offsets[r]) : 0u;
    for (int64_t j = 0; j < cols; ++j) {
      const uint32_t sum = kNarrow ? (static_cast<uint32_t>(tile[r][j]) - offset) << shift
                                   : static_cast<uint32_t>(tile[r][j]) + offset;
      c[j] = static_cast<int32_t>(accumulate ? static_cast<uint32_t>(c[j]) + sum : sum);
    }
  }
}

// AVX512-VNNI: vpdpbusd adds the four products of unsigned data bytes and signed weight bytes
// of each lane to its int32 sum, without saturation: every sum is exact. int8 data enters as
// x + 128 (x ^ 0x80), and 128 times the row's weight sum is subtracted at the store. One zmm holds
// a panel's k-quad (kNr columns x 4 bytes); a tile is two row blocks (a0, a1) by two panels
// (b0, b1): 16 sums, each weight broadcast serving two loads of data. A missing block or panel
// repeats the first (its sums are not stored).
//
// acc + the lane-wise dot products of data (unsigned bytes) and weights (signed bytes). Written
// as asm because GCC 12 allocates _mm512_dpbusd_epi32's accumulator to zmm0-15 only, copying
// all 16 sums in and out of zmm16-31 on every step (the tile ran at 70% of this speed).
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline __m512i DotBytes(__m512i acc, __m512i data,
                                                                                             __m512i weights) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(data), "v"(weights));
  return acc;
}

// One k-quad of a tile: rows a0[0..kMr) and a1[0..kMr) (one weight quad each, broadcast) times
// two vectors of data quads.
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline void TileStep(
    __m512i (&acc)[2 * kMr][2], const int32_t* a0, const int32_t* a1, __m512i x0, __m512i x1) {
  #pragma GCC unroll 4
  for (int64_t r = 0; r < kMr; ++r) {
    const __m512i w0 = _mm512_set1_epi32(a0[r]), w1 = _mm512_set1_epi32(a1[r]);
    acc[r][0] = DotBytes(acc[r][0], x0, w0);
    acc[r][1] = DotBytes(acc[r][1], x1, w0);
    acc[kMr + r][0] = DotBytes(acc[kMr + r][0], x0, w1);
    acc[kMr + r][1] = DotBytes(acc[kMr + r][1], x1, w1);
  }
}

SYMBIND_AVX512_INTRINSICS_BEGIN
// `levels` (rows from m_first, columns from n_first): the chunk is the last, so the sums are
// final and become levels instead of being stored.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void Int8TileVnni(
    const int32_t* a0, const int32_t* a1, const int8_t* b0, const int8_t* b1, int64_t quads, int32_t* C, int64_t ldc,
    int64_t rows, int64_t cols, bool accumulate, const int32_t* row_offsets, const quant::Int8Levels* levels,
    int64_t m_first, int64_t n_first, int64_t b_stride = 4 * kNr) {
  // A copy the output's byte stores cannot alias, so its fields stay in registers.
  const quant::Int8Levels L = levels ? *levels : quant::Int8Levels{};
  __m512i acc[2 * kMr][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
  for (int64_t p = 0; p < quads; ++p, a0 += kMr, a1 += kMr, b0 += b_stride, b1 += b_stride) {
    const __m512i x0 = _mm512_loadu_si512(b0), x1 = _mm512_loadu_si512(b1);
    TileStep(acc, a0, a1, x0, x1);
  }
  // Sums wrap as two's complement (vpaddd), like the scalar kernels' unsigned arithmetic.
  if (levels && !L.sum && !accumulate && rows == 2 * kMr && cols == 2 * kNr) {
    // The whole tile to levels (most tiles of a layer): each row in one store.
    #pragma GCC unroll 8
    for (int64_t r = 0; r < 2 * kMr; ++r) {
      quant::StoreLevels32(acc[r][0], acc[r][1], L, m_first + r, n_first,
                           row_offsets ? 0u - static_cast<uint32_t>(row_offsets[r]) : 0u);
    }
    return;
  }
  const __mmask16 m0 = quant::FirstLanes(cols), m1 = cols > kNr ? quant::FirstLanes(cols - kNr) : 0;
  #pragma GCC unroll 8
  for (int64_t r = 0; r < 2 * kMr; ++r) {
    if (r >= rows) break;
    int32_t* c = C + r * ldc;
    const __m512i offset =
        _mm512_set1_epi32(row_offsets ? static_cast<int32_t>(0u - static_cast<uint32_t>(row_offsets[r])) : 0);
    __m512i v0 = _mm512_add_epi32(acc[r][0], offset), v1 = _mm512_add_epi32(acc[r][1], offset);
    if (accumulate) {
      v0 = _mm512_add_epi32(v0, _mm512_maskz_loadu_epi32(m0, c));
      v1 = _mm512_add_epi32(v1, _mm512_maskz_loadu_epi32(m1, c + kNr));
    }
    if (levels) {
      const LaneRun run0{n_first, m0}, run1{n_first + kNr, m1};
      StoreLevels16(v0, L, m_first + r, &run0, 1);
      if (m1) StoreLevels16(v1, L, m_first + r, &run1, 1);
      continue;
    }
    _mm512_mask_storeu_epi32(c, m0, v0);
    _mm512_mask_storeu_epi32(c + kNr, m1, v1);
  }
}

// The VNNI tile over a padded quad image (PaddedQuadImage): rows as Int8TileVnni's, 32 positions
// of the padded plane from `at` (two vectors of 16), whose data for tap t and channel quad q lie
// at at + tap_offsets[t] + q * plane_bytes: plain loads, nothing packed. `runs` map each vector's
// lanes to output columns (positions in the padding's columns are not stored).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void Int8TileVnniPadded(
    const int32_t* a0, const int32_t* a1, const uint8_t* at, const int64_t* tap_offsets, int64_t taps,
    int64_t tap_quads, int64_t plane_bytes, const LaneRun* const (&runs)[2], const int (&run_counts)[2], int64_t rows,
    int32_t* C, int64_t ldc, const int32_t* row_offsets, const quant::Int8Levels* levels, int64_t m_first) {
  const quant::Int8Levels L = levels ? *levels : quant::Int8Levels{};  // as in Int8TileVnni
  __m512i acc[2 * kMr][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* b = at + tap_offsets[t];
    for (int64_t q = 0; q < tap_quads; ++q, a0 += kMr, a1 += kMr, b += plane_bytes) {
      const __m512i x0 = _mm512_loadu_si512(b), x1 = _mm512_loadu_si512(b + 4 * kNr);
      TileStep(acc, a0, a1, x0, x1);
    }
  }
  #pragma GCC unroll 8
  for (int64_t r = 0; r < 2 * kMr; ++r) {
    if (r >= rows) break;
    const __m512i offset =
        _mm512_set1_epi32(row_offsets ? static_cast<int32_t>(0u - static_cast<uint32_t>(row_offsets[r])) : 0);
    const __m512i v[2] = {_mm512_add_epi32(acc[r][0], offset), _mm512_add_epi32(acc[r][1], offset)};
    for (int h = 0; h < 2; ++h) {
      if (levels) {
        if (run_counts[h]) StoreLevels16(v[h], L, m_first + r, runs[h], run_counts[h]);
        continue;
      }
      for (int i = 0; i < run_counts[h]; ++i) _mm512_mask_storeu_epi32(C + r * ldc + runs[h][i].n, runs[h][i].mask, v[h]);
    }
  }
}
SYMBIND_AVX512_INTRINSICS_END

// Four 16-byte rows (k..k+3 of 16 columns) stored as one packed k-quad: each column's 4 bytes
// together, by byte and word unpacks.
__attribute__((target("avx2"), always_inline)) inline void InterleaveQuad(const __m128i (&r)[4], int8_t* out) {
  const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpackhi_epi8(r[0], r[1]);
  const __m128i t2 = _mm_unpacklo_epi8(r[2], r[3]), t3 = _mm_unpackhi_epi8(r[2], r[3]);
  __m128i* dst = reinterpret_cast<__m128i*>(out);
  _mm_storeu_si128(dst, _mm_unpacklo_epi16(t0, t2));
  _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(t0, t2));
  _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(t1, t3));
  _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(t1, t3));
}

// One k-quad of a B panel: columns n0.. (cols of them) of rows k..k+3, each column's 4 bytes
// together, signed (uint8 data as x ^ 0x80 = x - 128); zeros past K and past the last column.
__attribute__((target("avx2"))) void PackQuad(const void* B, int64_t ldb, int64_t K, int64_t k, int64_t n0,
                                              int64_t cols, bool flip, int8_t* out) {
  const uint8_t* base = static_cast<const uint8_t*>(B);
  if (cols == kNr && k + 4 <= K) {
    const __m128i bias = _mm_set1_epi8(flip ? static_cast<char>(0x80) : 0);
    __m128i r[4];
    for (int i = 0; i < 4; ++i)
      r[i] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(base + (k + i) * ldb + n0)), bias);
    InterleaveQuad(r, out);
    return;
  }
  std::memset(out, 0, 4 * kNr);
  for (int64_t i = 0; i < 4 && k + i < K; ++i) {
    const uint8_t* row = base + (k + i) * ldb + n0;
    for (int64_t j = 0; j < cols; ++j) out[4 * j + i] = static_cast<int8_t>(flip ? row[j] ^ 0x80u : row[j]);
  }
}

SYMBIND_AVX512_INTRINSICS_BEGIN
// PackQuad's quads [p0, p0 + quads) on AVX-512: a whole quad is its 4 rows in the 4 lanes of one
// vector, transposed by InterleaveQuads16.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void PackQuadsAvx512(const void* B, int64_t ldb, int64_t K,
                                                                         int64_t p0, int64_t quads, int64_t n0,
                                                                         int64_t cols, bool flip, int8_t* out) {
  const __m512i bias = _mm512_set1_epi8(flip ? static_cast<char>(0x80) : 0);
  const uint8_t* base = static_cast<const uint8_t*>(B) + n0;
  // A panel's last columns and the depth's last rows: masked loads (the lanes past them hold
  // values no stored sum reads: A is zero past K, and columns past N are not stored).
  const __mmask16 columns = quant::FirstLanes(cols);
  for (int64_t p = 0; p < quads; ++p, out += 4 * kNr) {
    const int64_t k = 4 * (p0 + p);
    const uint8_t* row = base + k * ldb;
    __m128i r[4];
    for (int64_t i = 0; i < 4; ++i) {
      const uint8_t* at = row + i * ldb;
      if (cols == kNr && k + 4 <= K) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
      else r[i] = k + i < K ? _mm_maskz_loadu_epi8(columns, at) : _mm_setzero_si128();
    }
    const __m512i v = quant::InterleaveQuads16(r);
    _mm512_storeu_si512(out, _mm512_xor_si512(v, bias));
  }
}
SYMBIND_AVX512_INTRINSICS_END

// B as a matrix (K rows of N columns, ldb apart): `quads` k-quads from quad p0 on of the panel of
// columns n0.. (cols of them), each 4 * kNr bytes.
template <typename TB>
struct MatrixColumns {
  const TB* B;
  int64_t ldb, K;
  bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  void Pack(int64_t n0, int64_t cols, int64_t p0, int64_t quads, bool flip, int8_t* out) const {
    if (avx512) return PackQuadsAvx512(B, ldb, K, p0, quads, n0, cols, flip, out);
    for (int64_t p = 0; p < quads; ++p) PackQuad(B, ldb, K, 4 * (p0 + p), n0, cols, flip, out + p * 4 * kNr);
  }
};

// B as the columns of a 2-D convolution at column stride 1 or 2, read from its image as they are
// packed (im2col's rows, never stored). A panel's segment of one depth is one 16-byte load per
// output row the panel spans (stride 2: 32 bytes, whose even bytes vpmovwb keeps): plain where the
// segment lies wholly in its image row, masked at the edges, where lanes in the padding stay 0
// (then flipped like any level).
struct ImageColumns {
  // Kernel windows of at most this many taps, panels over at most this many output rows (images at
  // least kNr / kMaxPieces columns wide): the per-panel load table stays on the stack.
  static constexpr int64_t kMaxTaps = 49, kMaxPieces = 4;
  struct Depth {
    int64_t plane, tap;  // depth k's channel offset in the image, and its tap (kernel row x width + column)
  };
  const uint8_t* image;  // int8 or uint8 levels, channels x H x W
  conv::ConvGeom g;
  int64_t K;
  std::vector<Depth> depths;

  static bool Takes(const conv::ConvGeom& g) {
    return g.is_planar() && (g.s[2] == 1 || g.s[2] == 2) && g.k[1] * g.k[2] <= kMaxTaps &&
           1 + (kNr - 1 + g.out[2] - 1) / g.out[2] <= kMaxPieces;  // the most rows a panel can span
  }
  ImageColumns(const void* img, const conv::ConvGeom& geom, int64_t depth)
      : image(static_cast<const uint8_t*>(img)), g(geom), K(depth), depths(size_t(depth)) {
    const int64_t taps = g.k[1] * g.k[2];
    for (int64_t k = 0; k < K; ++k) depths[size_t(k)] = {k / taps * g.in[1] * g.in[2], k % taps};
  }
  // Per tap and output row a panel spans: where the load starts relative to the channel's plane,
  // and which of its bytes read inside the image (lane t's at bit stride * t).
  struct Load {
    int64_t offset;
    __mmask32 mask;
    bool plain;  // every lane inside the image, and every byte of a plain load (16 or 32) in its row
  };
  void Pack(int64_t n0, int64_t cols, int64_t p0, int64_t quads, bool flip, int8_t* out) const;
  template <int64_t kStride, int64_t kPieces>
  void PackQuads(const Load (*loads)[kMaxPieces], int64_t p0, int64_t quads, __m128i bias, int8_t* out) const;
};

SYMBIND_AVX512_INTRINSICS_BEGIN
// Quads [p0, p0 + quads) of a panel from its load table; kPieces loads per depth (empty ones
// read nothing).
template <int64_t kStride, int64_t kPieces>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void ImageColumns::PackQuads(const Load (*loads)[kMaxPieces],
                                                                                  int64_t p0, int64_t quads,
                                                                                  __m128i bias, int8_t* out) const {
  const int64_t whole = std::max<int64_t>(0, std::min(quads, K / 4 - p0));  // quads inside the depth
  for (int64_t p = 0; p < quads; ++p, out += 4 * kNr) {
    __m128i r[4];
    #pragma GCC unroll 4
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t k = 4 * (p0 + p) + i;
      __m128i v = _mm_setzero_si128();
      if (p < whole || k < K) {  // past the depth the packed weights are 0
        const Depth& d = depths[size_t(k)];
        const Load* row = loads[d.tap];
        const uint8_t* plane = image + d.plane;
        // A whole row segment inside the image: a plain load (masked ones cost more).
        if (row[0].plain) {
          const uint8_t* at = plane + row[0].offset;
          if constexpr (kStride == 1) v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
          else v = _mm256_cvtepi16_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)));
          r[i] = _mm_xor_si128(v, bias);
          continue;
        }
        // Masked-off lanes are not read (nor can they fault), so a base may lie outside the image.
        #pragma GCC unroll 4
        for (int64_t j = 0; j < kPieces; ++j) {
          if constexpr (kStride == 1) v = _mm_mask_loadu_epi8(v, static_cast<__mmask16>(row[j].mask), plane + row[j].offset);
          else v = _mm_or_si128(v, _mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(row[j].mask, plane + row[j].offset)));
        }
      }
      r[i] = _mm_xor_si128(v, bias);
    }
    InterleaveQuad(r, out);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void ImageColumns::Pack(int64_t n0, int64_t cols, int64_t p0,
                                                                             int64_t quads, bool flip,
                                                                             int8_t* out) const {
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], SH = g.s[1], SW = g.s[2], taps = g.k[1] * g.k[2];
  Load loads[kMaxTaps][kMaxPieces];
  int64_t pieces = 0;
  for (int64_t lane = 0, oh = n0 / OW, ow = n0 % OW; lane < cols; ++oh, ow = 0, ++pieces) {
    const int64_t len = std::min(cols - lane, OW - ow);
    for (int64_t t = 0; t < taps; ++t) {
      // Lane lane + j reads column iw0 + SW * j: inside the row for j in [lo, hi).
      const int64_t ih = oh * SH + t / g.k[2] * g.d[1] - g.p[1], iw0 = ow * SW + t % g.k[2] * g.d[2] - g.p[2];
      const int64_t lo = iw0 >= 0 ? 0 : (-iw0 + SW - 1) / SW, hi = std::min(len, W - iw0 <= 0 ? 0 : (W - iw0 + SW - 1) / SW);
      uint32_t mask = 0;
      if (ih >= 0 && ih < H)
        for (int64_t j = lo; j < hi; ++j) mask |= 1u << (SW * (lane + j));
      const bool plain = len == kNr && lo == 0 && hi == kNr && ih >= 0 && ih < H && iw0 + SW * kNr <= W;
      loads[t][pieces] = {ih * W + iw0 - SW * lane, mask, plain};
    }
    lane += len;
  }
  // Two pieces at most (images at least kNr - 1 columns wide) take the unrolled loop; the rest
  // pad their table with empty loads (mask 0 reads nothing).
  for (int64_t j = pieces; j < (pieces <= 2 ? 2 : kMaxPieces); ++j)
    for (int64_t t = 0; t < taps; ++t) loads[t][j] = {0, 0, false};
  const __m128i bias = _mm_set1_epi8(flip ? static_cast<char>(0x80) : 0);
  if (SW == 1 && pieces <= 2) PackQuads<1, 2>(loads, p0, quads, bias, out);
  else if (SW == 1) PackQuads<1, kMaxPieces>(loads, p0, quads, bias, out);
  else if (pieces <= 2) PackQuads<2, 2>(loads, p0, quads, bias, out);
  else PackQuads<2, kMaxPieces>(loads, p0, quads, bias, out);
}
SYMBIND_AVX512_INTRINSICS_END

// Convolutions that GemmInt8PaddedImage runs: those whose image splits by stride phase
// (StridePhases), so that 16 outputs of a row read 16 consecutive positions of one phase.
// Not 1x1 windows: each quad of the rearranged image would serve one tap only, and reading 16
// positions from each of many planes costs more than packing panels that stay in L1. Stride 2
// only for windows of more than 9 taps (7x7 stems gain): with 3x3 ones ImageColumns' packing
// cost less than the rearranged image, which both threads read (docs/benchmarks-history.md).
bool PaddedImageTakes(const conv::ConvGeom& g) {
  if (!conv::StridePhases::Fit(g) || (g.k[1] == 1 && g.k[2] == 1)) return false;
  return !((g.s[1] == 2 || g.s[2] == 2) && g.k[1] * g.k[2] <= 9);
}

SYMBIND_AVX512_INTRINSICS_BEGIN
// The image of a convolution as channel quads, split by stride phase (conv::StridePhases over
// all its output rows), for Int8TileVnniPadded: quad q's plane holds at each position the bytes
// of channels 4q..4q+3 there, flipped by `flip` (x ^ 0x80: int8 data to the tile's unsigned
// bytes). The padding, channels past the image's and 2 * kNr positions past the last phase (which
// the last tiles read) hold the flipped zero.
struct PaddedQuadImage {
  conv::StridePhases phases;
  int64_t plane_bytes;
  ScratchBuffer buffer;
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(buffer.data()); }

  PaddedQuadImage(const uint8_t* image, int64_t channels, const conv::ConvGeom& g, bool flip)
      : phases(g, 0, g.out[1]),
        plane_bytes(4 * ((phases.sh * phases.sw * phases.PhasePositions() + 3 * kNr - 1) / kNr * kNr)),
        buffer((channels + 3) / 4 * plane_bytes / 4) {
    uint8_t* planes = reinterpret_cast<uint8_t*>(buffer.data());
    ParallelFor((channels + 3) / 4, GrainFor(plane_bytes), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        if (phases.sw == 1) FillPlane<1>(image, channels, g, q, flip, planes + q * plane_bytes);
        else FillPlane<2>(image, channels, g, q, flip, planes + q * plane_bytes);
      }
    });
  }

  // Quad q's plane, phase by phase and row by row: 4 channel rows of the image interleaved 16
  // positions at a time (at column stride 2, the even bytes of 32; masked loads at a row's end:
  // nothing past the image is read). A row's last store runs on into the padding and the next
  // row with flipped zeros, which that row then writes over.
  template <int64_t kSw>
  __attribute__((target("avx512f,avx512bw,avx512vl"))) void FillPlane(const uint8_t* image, int64_t channels,
                                                                        const conv::ConvGeom& g, int64_t q, bool flip,
                                                                        uint8_t* plane) const {
    const int64_t H = g.in[1], W = g.in[2], ph = g.p[1], pw = g.p[2], sh = phases.sh, Wph = phases.Wph;
    const int pad = flip ? 0x80 : 0;
    const __m128i bias = _mm_set1_epi8(static_cast<char>(pad));
    const uint8_t* channel[4];
    for (int64_t i = 0; i < 4; ++i) channel[i] = 4 * q + i < channels ? image + (4 * q + i) * H * W : nullptr;
    uint8_t* row = plane;
    for (int64_t a = 0; a < sh; ++a)
      for (int64_t b = 0; b < kSw; ++b) {
        // Phase columns [lo, lo + n) lie in the image, from image column ix0 on.
        const int64_t lo = std::max<int64_t>(0, (pw - b + kSw - 1) / kSw), ix0 = kSw * lo + b - pw;
        const int64_t n = ix0 < W ? std::min(Wph - lo, (W - ix0 + kSw - 1) / kSw) : 0;
        for (int64_t i = phases.first; i < phases.first + phases.rows; ++i, row += 4 * Wph) {
          const int64_t iy = sh * i + a - ph;
          if (iy < 0 || iy >= H || n == 0) {
            std::memset(row, pad, size_t(4 * Wph));
            continue;
          }
          std::memset(row, pad, size_t(4 * lo));
          for (int64_t t = 0; t < n; t += kNr) {
            const int64_t count = std::min(kNr, n - t), at = iy * W + ix0 + kSw * t;
            __m128i r[4];
            for (int64_t c = 0; c < 4; ++c) {
              if (!channel[c]) {
                r[c] = bias;
                continue;
              }
              __m128i v;
              if constexpr (kSw == 1) {
                v = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << count) - 1), channel[c] + at);
              } else {  // bytes at, at + 2, ...: the low bytes of 16-bit words
                const __mmask32 mask = static_cast<__mmask32>((uint64_t{1} << (2 * count - 1)) - 1);
                v = _mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(mask, channel[c] + at));
              }
              r[c] = _mm_xor_si128(v, bias);
            }
            InterleaveQuad(r, reinterpret_cast<int8_t*>(row + 4 * (lo + t)));
          }
          std::memset(row + 4 * (lo + n), pad, size_t(4 * (Wph - lo - n)));
        }
      }
    std::memset(row, pad, size_t(plane_bytes - (row - plane)));
  }
};

SYMBIND_AVX512_INTRINSICS_END

// The output columns of the 16 positions from j of a phase plane `width` positions wide: one run
// per output row they meet (positions past OW in a row, or past the last row OH, have none).
int OutputRuns(int64_t j, int64_t width, int64_t OW, int64_t OH, LaneRun* runs) {
  int count = 0;
  for (int64_t lane = 0; lane < kNr;) {
    const int64_t pos = j + lane, y = pos / width, x = pos % width;
    if (y >= OH) break;
    const int64_t span = std::min(kNr - lane, width - x), valid = std::min(span, std::max<int64_t>(0, OW - x));
    if (valid > 0) runs[count++] = {y * OW + x - lane, static_cast<__mmask16>(((1u << valid) - 1) << lane)};
    lane += span;
  }
  return count;
}

// Into how many parts a GEMM's `steps` row steps split, given its `groups` column tasks: enough
// for kMinTasks tasks in all, so that deep layers over few columns keep every thread busy; one
// part on one thread (a fused block's band runs its layers serially), where another part would
// only pack or read its columns again.
constexpr int64_t kMinTasks = 8;
int64_t RowParts(int64_t steps, int64_t groups) {
  return UsableThreads() == 1 ? 1 : std::min(steps, (kMinTasks + groups - 1) / groups);
}

// The tasks of a VNNI GEMM over data it reads unpacked: groups of 2 * kNr positions by parts of
// the steps of 2 * kMr rows (RowParts). Where the weights outweigh the data
// (`weights_once`: deep layers over small images), a task takes every group of its steps, each
// step's weights then read from memory once and from cache for the other groups, instead of
// once per group.
struct VnniTileTasks {
  static constexpr int64_t kMaxSharedGroups = 8;
  int64_t groups, steps, group_tasks, row_parts, steps_per_part;
  VnniTileTasks(int64_t M, int64_t positions, bool weights_once)
      : groups((positions + 2 * kNr - 1) / (2 * kNr)),
        steps(((M + kMr - 1) / kMr + 1) / 2),
        group_tasks(weights_once && groups <= kMaxSharedGroups ? 1 : groups),
        row_parts(RowParts(steps, group_tasks)),
        steps_per_part((steps + row_parts - 1) / row_parts) {}
  int64_t count() const { return group_tasks * row_parts; }
  int64_t grain(int64_t quads) const {
    return GrainFor(steps_per_part * groups / group_tasks * quads * 2 * kMr * 2 * kNr);
  }
  // Task t's groups [first_group, end_group) and steps [first_step, end_step).
  int64_t first_group(int64_t t) const { return group_tasks == 1 ? 0 : t / row_parts; }
  int64_t end_group(int64_t t) const { return group_tasks == 1 ? groups : t / row_parts + 1; }
  int64_t first_step(int64_t t) const { return t % row_parts * steps_per_part; }
  int64_t end_step(int64_t t) const { return std::min(steps, first_step(t) + steps_per_part); }
};

// Whether the weights (M rows of `quads` 4-byte quads) outweigh the data a GEMM reads unpacked.
bool WeightsOutweigh(int64_t M, int64_t quads, int64_t data_bytes) { return M * quads * 4 > 2 * data_bytes; }

// C = A (PackedInt8A::PackTapMajor) times the columns of a convolution (PaddedImageTakes): the
// image rearranged once into channel quads (PaddedQuadImage), then every tile reads its data
// there as it is. Output rows are a phase row apart: the sums of the positions past OW are
// computed and dropped (2 of 58 at 56x56 and stride 1, 2 of 9 at 7x7, 1 of 29 at 56x56 and
// stride 2).
template <bool kUnsigned>
void GemmInt8PaddedImage(const PackedInt8A& A, const uint8_t* image, const conv::ConvGeom& g, int32_t* C,
                         int64_t ldc, const quant::Int8Levels* levels) {
  const int64_t tap_quads = (A.image_channels + 3) / 4, kw = g.k[2], taps = g.k[1] * kw;
  const bool flip = !kUnsigned;  // the VNNI tile takes unsigned data
  const PaddedQuadImage padded(image, A.image_channels, g, flip);
  std::vector<int64_t> tap_offsets(static_cast<size_t>(taps));
  for (int64_t t = 0; t < taps; ++t) tap_offsets[size_t(t)] = 4 * padded.phases.TapOffset(g, t / kw, t % kw);
  const int64_t M = A.rows, quads = taps * tap_quads, width = padded.phases.Wph, OW = g.out[2], OH = g.out[1];
  const int32_t* offsets = flip ? A.offsets.data() : nullptr;
  const VnniTileTasks tasks(M, (OH - 1) * width + OW, WeightsOutweigh(M, quads, tap_quads * padded.plane_bytes));
  ParallelFor(tasks.count(), tasks.grain(quads), [&](int64_t t0, int64_t t1) {
    // The lane runs of the task's groups (at most kMaxSharedGroups), made once per task.
    LaneRun run_store[VnniTileTasks::kMaxSharedGroups][2][kNr];
    int counts[VnniTileTasks::kMaxSharedGroups][2];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t g0 = tasks.first_group(t), g1 = tasks.end_group(t);
      for (int64_t grp = g0; grp < g1; ++grp)
        for (int64_t h = 0; h < 2; ++h)
          counts[grp - g0][h] = OutputRuns((2 * grp + h) * kNr, width, OW, OH, run_store[grp - g0][h]);
      for (int64_t s = tasks.first_step(t); s < tasks.end_step(t); ++s) {
        const int64_t m0 = 2 * s * kMr, rows = std::min(2 * kMr, M - m0);
        const int32_t* a0 = A.quads.data() + m0 * quads;
        for (int64_t grp = g0; grp < g1; ++grp) {
          const LaneRun* const runs[2] = {run_store[grp - g0][0], run_store[grp - g0][1]};
          Int8TileVnniPadded(a0, rows > kMr ? a0 + quads * kMr : a0, padded.data() + 4 * 2 * kNr * grp,
                             tap_offsets.data(), taps, tap_quads, padded.plane_bytes, runs, counts[grp - g0], rows,
                             C + m0 * ldc, ldc, offsets ? offsets + m0 : nullptr, levels, m0);
        }
      }
    }
  });
}

// Whether the packed kernels run here.
bool PackedKernelTakes(int64_t M, int64_t K) { return ActiveIsa() != KernelIsa::kBase && M > 0 && K > 0; }

// The sums of weights of -128, which the packed kernels hold as -127: C[m][n] -= B[k][n] for each
// such weight (row m, depth k). Exact in int32, so the result does not depend on the order.
template <typename TB>
void ApplyMinus128(const PackedInt8A& A, int64_t N, const TB* B, int64_t ldb, int32_t* C, int64_t ldc) {
  if (A.minus128.empty()) return;
  const int64_t rows = int64_t(A.minus128_rows.size()) - 1;
  ParallelFor(rows, GrainFor(N), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int32_t i = A.minus128_rows[size_t(m)]; i < A.minus128_rows[size_t(m) + 1]; ++i) {
        const int64_t k = A.minus128[size_t(i)];
        const TB* b = B + k * ldb;
        int32_t* c = C + m * ldc;
        for (int64_t n = 0; n < N; ++n)
          c[n] = static_cast<int32_t>(static_cast<uint32_t>(c[n]) - static_cast<uint32_t>(static_cast<int32_t>(b[n])));
      }
  });
}

// C = A times the columns `source` packs (MatrixColumns or ImageColumns), of int8 or uint8 data
// (kUnsigned), through the AVX2 or VNNI tile A was packed for.
template <bool kUnsigned, typename Source>
void GemmInt8Packed(const PackedInt8A& A, int64_t N, const Source& source, int32_t* C, int64_t ldc,
                    const quant::Int8Levels* levels) {
  const int64_t M = A.rows, K = A.depth, quads = (K + 3) / 4, row_blocks = (M + kMr - 1) / kMr;
  const int64_t panels = (N + kNr - 1) / kNr;
  // The AVX2 tile takes signed data (uint8 flipped to x - 128, its offsets added back), the VNNI
  // tile and the AVX2 tile of narrow weights unsigned data (int8 flipped to x + 128, its offsets
  // subtracted).
  const bool vnni = A.vnni;
  const bool flip = vnni || A.narrow ? !kUnsigned : kUnsigned;
  const int32_t* offsets = flip ? A.offsets.data() : nullptr;
  // A tile: row blocks [rb, rb + step) by panels [q, q + width) of one packed B chunk (panel q at
  // `b`, the next `panel_stride` bytes on) into C.
  const int64_t step = vnni ? 2 : 1, width = vnni ? 2 : 1;
  // c_block: where the tile's sums go (C's row rb * kMr and column n0 unless given).
  auto tile = [&](int64_t rb, int64_t p0, int64_t chunk, const int8_t* b, int64_t panel_stride, int64_t n0,
                  int32_t* c_block = nullptr, int64_t ld_block = 0) {
    const int64_t rows = std::min(step * kMr, M - rb * kMr), cols = std::min(width * kNr, N - n0);
    const int32_t* a0 = A.quads.data() + (rb * quads + p0) * kMr;
    const int32_t* row_offsets = offsets && p0 == 0 ? offsets + rb * kMr : nullptr;
    int32_t* c = c_block ? c_block : C + rb * kMr * ldc + n0;
    const int64_t ldc_here = c_block ? ld_block : ldc;
    if (vnni)
      return Int8TileVnni(a0, rows > kMr ? a0 + quads * kMr : a0, b, cols > kNr ? b + panel_stride : b, chunk, c, ldc_here,
                          rows, cols, p0 > 0, row_offsets, p0 + chunk == quads ? levels : nullptr, rb * kMr, n0);
    if (A.narrow) return Int8Tile<true>(a0, b, chunk, c, ldc_here, rows, cols, p0 > 0, row_offsets, A.shift);
    Int8Tile<false>(a0, b, chunk, c, ldc_here, rows, cols, p0 > 0, row_offsets, 0);
  };
  // The AVX2 tile leaves its sums in C: a finished block is requantized from there.
  auto finished = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    if (levels && !vnni) quant::RequantizeBlock(*levels, C, ldc, m0, m1, n0, n1);
  };
  if (M > 4 * N) {
    // Many more weights than data (deep layers: 512 x 4608 filters over 7x7 outputs): every panel
    // of B packed first (it stays in cache), then each block of weights read once, against
    // all of them. The sums are exact, so either order gives the same bits.
    const int64_t panel_bytes = quads * 4 * kNr;
    ScratchBuffer b_buffer((panels * panel_bytes + 3) / 4);
    int8_t* b_all = reinterpret_cast<int8_t*>(b_buffer.data());
    ParallelFor(panels, GrainFor(4 * kNr * quads), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q)
        source.Pack(q * kNr, std::min(kNr, N - q * kNr), 0, quads, flip, b_all + q * panel_bytes);
    });
    const int64_t steps = (row_blocks + step - 1) / step;
    ParallelFor(steps, GrainFor(step * kMr * K * N), [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) {
        for (int64_t p0 = 0; p0 < quads; p0 += kKc) {
          const int64_t chunk = std::min(kKc, quads - p0);
          for (int64_t q = 0; q < panels; q += width)
            tile(s * step, p0, chunk, b_all + q * panel_bytes + p0 * 4 * kNr, panel_bytes, q * kNr);
        }
        finished(s * step * kMr, std::min(M, (s + 1) * step * kMr), 0, N);
      }
    });
    return;
  }
  // Few panels also split the rows (RowParts); each part packs its panels itself.
  const int64_t groups = (panels + width - 1) / width, steps = (row_blocks + step - 1) / step;
  const int64_t row_parts = RowParts(steps, groups);
  const int64_t blocks_per_part = (steps + row_parts - 1) / row_parts * step;
  const int64_t chunk_bytes = kKc * 4 * kNr;
  // On one thread, all tasks in one chunk: its buffers are set up once, not once per chunk.
  const int64_t tasks = groups * row_parts;
  const int64_t grain = UsableThreads() == 1
                            ? tasks
                            : GrainFor(blocks_per_part * kMr * std::max<int64_t>(K, 1) * width * kNr / 4);
  ParallelFor(tasks, grain, [&](int64_t t0, int64_t t1) {
    ScratchBuffer b_buffer(width * chunk_bytes / 4);  // kKc quads x kNr columns x 4 bytes per panel
    int8_t* b_packed = reinterpret_cast<int8_t*>(b_buffer.data());
    // The AVX2 tile's sums of a task's block go to a buffer of the task's own, which stays in
    // cache until they become levels, instead of to C (written to memory and read back).
    const bool block_sums = levels && !vnni;
    const int64_t block_ld = width * kNr;
    ScratchBuffer block_buffer(block_sums ? blocks_per_part * kMr * block_ld : 1);
    int32_t* block = reinterpret_cast<int32_t*>(block_buffer.data());
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t group = t / row_parts, part = t % row_parts;
      const int64_t n0 = group * width * kNr;
      const int64_t rb0 = part * blocks_per_part, rb1 = std::min(row_blocks, rb0 + blocks_per_part);
      for (int64_t p0 = 0; p0 < quads; p0 += kKc) {
        const int64_t chunk = std::min(kKc, quads - p0);
        for (int64_t w = 0; w < width && n0 + w * kNr < N; ++w)
          source.Pack(n0 + w * kNr, std::min(kNr, N - n0 - w * kNr), p0, chunk, flip, b_packed + w * chunk_bytes);
        for (int64_t rb = rb0; rb < rb1; rb += step)
          tile(rb, p0, chunk, b_packed, chunk_bytes, n0, block_sums ? block + (rb - rb0) * kMr * block_ld : nullptr,
               block_ld);
      }
      if (!block_sums) continue;  // the VNNI tile made the levels (or none are wanted)
      const int64_t m0 = rb0 * kMr, m1 = std::min(M, rb1 * kMr), n1 = std::min(N, n0 + width * kNr);
      quant::Int8Levels at = *levels;  // the levels of row m0, column n0 on
      at.bias += m0;
      at.scale += m0;
      at.out = static_cast<uint8_t*>(at.out) + m0 * at.ld_out + n0;
      if (at.sum) at.sum = static_cast<const uint8_t*>(at.sum) + m0 * at.ld_sum + n0;
      quant::RequantizeBlock(at, block, block_ld, 0, m1 - m0, 0, n1 - n0);
    }
  });
}

// All of C requantized, in blocks of rows across threads (sums that were finished elsewhere).
void RequantizeAll(int64_t M, int64_t N, const int32_t* C, int64_t ldc, const quant::Int8Levels* levels) {
  if (levels)
    ParallelFor(M, GrainFor(N), [&](int64_t m0, int64_t m1) { quant::RequantizeBlock(*levels, C, ldc, m0, m1, 0, N); });
}

template <typename TB>
void GemmInt8Avx2(const PackedInt8A& A, int64_t N, const TB* B, int64_t ldb, int32_t* C, int64_t ldc,
                  const quant::Int8Levels* levels = nullptr) {
  const bool corrected = !A.minus128.empty();  // the sums are final only after ApplyMinus128
  GemmInt8Packed<std::is_same_v<TB, uint8_t>>(A, N, MatrixColumns<TB>{B, ldb, A.depth}, C, ldc,
                                              corrected ? nullptr : levels);
  if (!corrected) return;
  ApplyMinus128(A, N, B, ldb, C, ldc);
  RequantizeAll(A.rows, N, C, ldc, levels);
}

template <typename TB>
void GemmInt8Of(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const TB* B, int64_t ldb,
                int32_t* C, int64_t ldc) {
  if (ActiveIsa() != KernelIsa::kBase && M > 0 && N > 0) {
    if (K == 0) {
      for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + N, 0);
      return;
    }
    return GemmInt8Avx2(PackedInt8A::Pack(M, K, A, lda), N, B, ldb, C, ldc);
  }
  const int64_t row_blocks = (M + kRows - 1) / kRows, col_blocks = (N + kCols - 1) / kCols;
  ParallelFor(row_blocks * col_blocks, GrainFor(kRows * kCols * std::max<int64_t>(K, 1)), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = (b / col_blocks) * kRows, n0 = (b % col_blocks) * kCols;
      GemmBlock(m0, std::min(kRows, M - m0), n0, std::min(kCols, N - n0), K, A, lda, B, ldb, C, ldc);
    }
  });
}
// The sum of row[k] * b[k] over k < body (a multiple of 16): int8 weights widened 16 at a time,
// products of int16 pairs summed exactly (vpmaddwd); wraps as two's complement like the rest.
__attribute__((target("avx2"))) uint32_t DotInt16Int8Avx2(const int16_t* row, const int8_t* b, int64_t body) {
  __m256i acc = _mm256_setzero_si256();
  for (int64_t k = 0; k < body; k += 16) {
    const __m256i bw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k)));
    const __m256i aw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + k));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(aw, bw));
  }
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  uint32_t sum = 0;
  for (int32_t v : lanes) sum += static_cast<uint32_t>(v);
  return sum;
}

// C[m][n] = dot(A row m, B row n) on AVX2: the data row widened to int16 once per row.
template <typename TA>
void GemmInt8NTAvx2(int64_t M, int64_t N, int64_t K, const TA* A, const int8_t* B, int32_t* C) {
  const int64_t body = K / 16 * 16;
  ScratchBuffer row_buffer((body + 1) / 2 + 1);
  int16_t* row = reinterpret_cast<int16_t*>(row_buffer.data());
  for (int64_t m = 0; m < M; ++m) {
    const TA* a = A + m * K;
    for (int64_t k = 0; k < body; ++k) row[k] = a[k];
    ParallelFor(N, GrainFor(K), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        const int8_t* b = B + n * K;
        uint32_t sum = DotInt16Int8Avx2(row, b, body);
        for (int64_t k = body; k < K; ++k) sum += static_cast<uint32_t>(static_cast<int32_t>(a[k]) * b[k]);
        C[m * N + n] = static_cast<int32_t>(sum);
      }
    });
  }
}

SYMBIND_AVX512_INTRINSICS_BEGIN
// kRows weight rows from `b` (K bytes apart) dotted with `a` into c[0, kRows): a fixed number of
// accumulators, so that they stay in registers. `next` (or null): the rows of the next group,
// fetched meanwhile; each row alone is too short a stream for the hardware prefetcher.
template <int kRows, bool kFlipped>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) inline void DotRowGroupVnni(
    const uint8_t* a, const int8_t* b, int64_t K, int32_t* c, const int8_t* next) {
  const __m512i ones = _mm512_set1_epi8(1);
  const int64_t body = K / 64 * 64;
  const __mmask64 tail = K % 64 ? ~__mmask64{0} >> (64 - K % 64) : 0;
  __m512i acc[kRows], weight_sums[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = weight_sums[r] = _mm512_setzero_si512();
  for (int64_t k = 0; k < K; k += 64) {
    const __mmask64 mask = k < body ? ~__mmask64{0} : tail;  // masked lanes read nothing
    const __m512i x = _mm512_maskz_loadu_epi8(mask, a + k);
    if (next)
      for (int r = 0; r < kRows; ++r) _mm_prefetch(reinterpret_cast<const char*>(next + r * K + k), _MM_HINT_T0);
    for (int r = 0; r < kRows; ++r) {
      const __m512i w = _mm512_maskz_loadu_epi8(mask, b + r * K + k);
      acc[r] = DotBytes(acc[r], x, w);
      if constexpr (kFlipped) weight_sums[r] = DotBytes(weight_sums[r], ones, w);
    }
  }
  for (int r = 0; r < kRows; ++r)
    c[r] = _mm512_reduce_add_epi32(_mm512_sub_epi32(acc[r], _mm512_slli_epi32(weight_sums[r], 7)));
}

// Weight rows [n0, n1) dotted with one data row `a` of unsigned bytes (int8 data flipped to
// x + 128 by the caller, kFlipped): 64 products per vpdpbusd, four weight rows sharing each load
// of data. A flipped row's sums carry 128 times each weight row's sum, which a vpdpbusd of ones
// over the same weights takes back out. Sums wrap as two's complement like the rest.
template <bool kFlipped>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void DotRowsVnni(const uint8_t* a, const int8_t* B,
                                                                                int64_t K, int64_t n0, int64_t n1,
                                                                                int32_t* c) {
  constexpr int kRowsAtOnce = 4;
  int64_t n = n0;
  for (; n + kRowsAtOnce <= n1; n += kRowsAtOnce) {
    const int8_t* next = n + 2 * kRowsAtOnce <= n1 ? B + (n + kRowsAtOnce) * K : nullptr;
    DotRowGroupVnni<kRowsAtOnce, kFlipped>(a, B + n * K, K, c + n, next);
  }
  for (; n < n1; ++n) DotRowGroupVnni<1, kFlipped>(a, B + n * K, K, c + n, nullptr);
}
SYMBIND_AVX512_INTRINSICS_END

// GemmInt8NT on VNNI: each data row (flipped once when int8) against all weight rows.
template <typename TA>
void GemmInt8NTVnni(int64_t M, int64_t N, int64_t K, const TA* A, const int8_t* B, int32_t* C) {
  constexpr bool kFlipped = std::is_same_v<TA, int8_t>;
  // Pooled scratch, as GemmInt8NTAvx2's widened row: no allocation per call.
  ScratchBuffer row_buffer(kFlipped ? (K + 3) / 4 : 1);
  uint8_t* flipped = reinterpret_cast<uint8_t*>(row_buffer.data());
  for (int64_t m = 0; m < M; ++m) {
    const uint8_t* a = reinterpret_cast<const uint8_t*>(A + m * K);
    if constexpr (kFlipped) {
      for (int64_t k = 0; k < K; ++k) flipped[k] = a[k] ^ 0x80u;
      a = flipped;
    }
    ParallelFor(N, GrainFor(K), [&](int64_t n0, int64_t n1) { DotRowsVnni<kFlipped>(a, B, K, n0, n1, C + m * N); });
  }
}

template <typename TA>
void GemmInt8NTOf(int64_t M, int64_t N, int64_t K, const TA* A, const int8_t* B, int32_t* C) {
  if (ActiveVnni() && K > 0) return GemmInt8NTVnni(M, N, K, A, B, C);
  if (ActiveIsa() != KernelIsa::kBase) {
    GemmInt8NTAvx2(M, N, K, A, B, C);
    return;
  }
  ParallelFor(N, GrainFor(M * std::max<int64_t>(K, 1)), [&](int64_t n0, int64_t n1) {
    for (int64_t m = 0; m < M; ++m) {
      const TA* a = A + m * K;
      for (int64_t n = n0; n < n1; ++n) {
        const int8_t* b = B + n * K;
        uint32_t sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += static_cast<uint32_t>(static_cast<int32_t>(a[k]) * static_cast<int32_t>(b[k]));
        C[m * N + n] = static_cast<int32_t>(sum);
      }
    }
  });
}
}  // namespace

PackedInt8A PackedInt8A::Pack(int64_t M, int64_t K, const int8_t* A, int64_t lda) {
  PackedInt8A packed;
  if (!PackedKernelTakes(M, K)) return packed;
  const int64_t quads = (K + 3) / 4, row_blocks = (M + kMr - 1) / kMr;
  packed.rows = M;
  packed.depth = K;
  packed.vnni = ActiveVnni();
  if (!packed.vnni) {
    // Narrow weights (see the AVX2 tile): all even ones halved, then every aligned pair within 128.
    bool all_even = true;
    for (int64_t m = 0; m < M && all_even; ++m)
      for (int64_t k = 0; k < K && all_even; ++k) all_even = A[m * lda + k] % 2 == 0;
    packed.shift = all_even ? 1 : 0;
    packed.narrow = true;
    for (int64_t m = 0; m < M && packed.narrow; ++m)
      for (int64_t k = 0; k < K && packed.narrow; k += 2) {
        const int a0 = A[m * lda + k] >> packed.shift, a1 = k + 1 < K ? A[m * lda + k + 1] >> packed.shift : 0;
        packed.narrow = std::abs(a0) + std::abs(a1) <= 128;
      }
    if (!packed.narrow) packed.shift = 0;
  }
  const int8_t lowest = packed.vnni || packed.narrow ? -128 : -127;
  packed.quads.assign(static_cast<size_t>(row_blocks * quads * kMr), 0);
  packed.offsets.assign(static_cast<size_t>(row_blocks * kMr), 0);
  ParallelFor(M, GrainFor(K), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      int32_t* out = packed.quads.data() + (m / kMr) * quads * kMr + m % kMr;
      const int8_t* row = A + m * lda;
      uint32_t sum = 0;  // of the packed weights
      for (int64_t p = 0; p < quads; ++p) {
        int8_t quad[4] = {0, 0, 0, 0};
        for (int64_t k = 4 * p; k < std::min(K, 4 * p + 4); ++k) {
          quad[k - 4 * p] = static_cast<int8_t>(std::max<int8_t>(row[k], lowest) >> packed.shift);
          sum += static_cast<uint32_t>(static_cast<int32_t>(quad[k - 4 * p]));
        }
        std::memcpy(out + p * kMr, quad, 4);
      }
      packed.offsets[static_cast<size_t>(m)] = static_cast<int32_t>(sum * 128u);
    }
  });
  // Weights of -128 (oneDNN's rounding of a channel's most negative weight at 127.5 levels), held
  // as -127 above for the sign trick: the one level left is subtracted after the sums.
  if (packed.vnni || packed.narrow) return packed;
  packed.minus128_rows.assign(static_cast<size_t>(M) + 1, 0);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t k = 0; k < K; ++k)
      if (A[m * lda + k] == -128) packed.minus128.push_back(static_cast<int32_t>(k));
    packed.minus128_rows[static_cast<size_t>(m) + 1] = static_cast<int32_t>(packed.minus128.size());
  }
  if (packed.minus128.empty()) packed.minus128_rows.clear();
  return packed;
}

void GemmInt8(const PackedInt8A& A, int64_t N, const uint8_t* B, int64_t ldb, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels) {
  if (!A.usable()) throw Error("GemmInt8: weights packed for a kernel this CPU or these weights cannot use");
  if (N > 0 && A.rows > 0) GemmInt8Avx2(A, N, B, ldb, C, ldc, levels);
}
void GemmInt8(const PackedInt8A& A, int64_t N, const int8_t* B, int64_t ldb, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels) {
  if (!A.usable()) throw Error("GemmInt8: weights packed for a kernel this CPU or these weights cannot use");
  if (N > 0 && A.rows > 0) GemmInt8Avx2(A, N, B, ldb, C, ldc, levels);
}

PackedInt8A PackedInt8A::PackTapMajor(int64_t M, int64_t channels, int64_t taps, const int8_t* A) {
  const int64_t tap_channels = (channels + 3) / 4 * 4, K = taps * tap_channels;
  std::vector<int8_t> reordered(static_cast<size_t>(M * K), 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t t = 0; t < taps; ++t)
        reordered[size_t(m * K + t * tap_channels + c)] = A[(m * channels + c) * taps + t];
  PackedInt8A packed = Pack(M, K, reordered.data(), K);
  packed.image_channels = channels;
  return packed;
}

bool GemmInt8PrefersEvenWeights() { return ActiveIsa() != KernelIsa::kBase && !ActiveVnni(); }

bool GemmInt8ReadsImages(const PackedInt8A& A, const conv::ConvGeom& g) {
  if (!A.usable() || !A.vnni) return false;
  if (A.image_channels > 0) return PaddedImageTakes(g) && A.depth == g.k_size() * ((A.image_channels + 3) / 4 * 4);
  return A.minus128.empty() && ImageColumns::Takes(g) && A.depth % g.k_size() == 0;
}
bool GemmInt8CanReadImages(const conv::ConvGeom& g) {
  return ActiveIsa() != KernelIsa::kBase && ActiveVnni() && (ImageColumns::Takes(g) || PaddedImageTakes(g));
}
bool GemmInt8CanReadPaddedImages(const conv::ConvGeom& g) {
  return ActiveIsa() != KernelIsa::kBase && ActiveVnni() && PaddedImageTakes(g);
}
template <typename T>
void GemmInt8ImageOf(const PackedInt8A& A, const T* image, const conv::ConvGeom& g, int32_t* C, int64_t ldc,
                     const quant::Int8Levels* levels) {
  if (!GemmInt8ReadsImages(A, g)) throw Error("GemmInt8: these weights or this geometry cannot read columns from an image");
  if (g.out_size() <= 0 || A.rows <= 0) return;
  constexpr bool kUnsigned = std::is_same_v<T, uint8_t>;
  if (A.image_channels > 0)
    return GemmInt8PaddedImage<kUnsigned>(A, reinterpret_cast<const uint8_t*>(image), g, C, ldc, levels);
  GemmInt8Packed<kUnsigned>(A, g.out_size(), ImageColumns(image, g, A.depth), C, ldc, levels);
}
int64_t Int8QuadPlaneBytes(int64_t N) {
  const int64_t bytes = 4 * ((N + 2 * kNr - 1) / (2 * kNr) * 2 * kNr);
  // A stride of whole pages would put a tile's quads in the same few cache sets.
  return bytes % 4096 == 0 ? bytes + 128 : bytes;
}

void GemmInt8Quads(const PackedInt8A& A, int64_t N, const uint8_t* quads, int64_t plane_bytes, bool flipped,
                   int32_t* C, int64_t ldc, const quant::Int8Levels* levels) {
  if (!GemmInt8ReadsQuads(A)) throw Error("GemmInt8Quads: the weights are not packed for the VNNI kernel");
  if (plane_bytes < Int8QuadPlaneBytes(N)) throw Error("GemmInt8Quads: quad planes shorter than the tiles read");
  if (N <= 0 || A.rows <= 0) return;
  // Int8TileVnni reading the planes as they are: quad p of columns n.. at quads + p * plane_bytes
  // + 4 * n.
  const int64_t M = A.rows, depth_quads = (A.depth + 3) / 4;
  const int32_t* offsets = flipped ? A.offsets.data() : nullptr;
  const VnniTileTasks tasks(M, N, WeightsOutweigh(M, depth_quads, depth_quads * 4 * N));
  ParallelFor(tasks.count(), tasks.grain(depth_quads), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t s = tasks.first_step(t); s < tasks.end_step(t); ++s) {
        const int64_t m0 = 2 * s * kMr, rows = std::min(2 * kMr, M - m0);
        const int32_t* a0 = A.quads.data() + m0 * depth_quads;
        for (int64_t grp = tasks.first_group(t); grp < tasks.end_group(t); ++grp) {
          const int64_t n0 = grp * 2 * kNr, cols = std::min(2 * kNr, N - n0);
          const int8_t* b = reinterpret_cast<const int8_t*>(quads + 4 * n0);
          Int8TileVnni(a0, rows > kMr ? a0 + depth_quads * kMr : a0, b, b + 4 * kNr, depth_quads, C + m0 * ldc + n0,
                       ldc, rows, cols, false, offsets ? offsets + m0 : nullptr, levels, m0, n0, plane_bytes);
        }
      }
  });
}

void GemmInt8(const PackedInt8A& A, const uint8_t* image, const conv::ConvGeom& g, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels) {
  GemmInt8ImageOf(A, image, g, C, ldc, levels);
}
void GemmInt8(const PackedInt8A& A, const int8_t* image, const conv::ConvGeom& g, int32_t* C, int64_t ldc,
              const quant::Int8Levels* levels) {
  GemmInt8ImageOf(A, image, g, C, ldc, levels);
}

void GemmInt8NT(int64_t M, int64_t N, int64_t K, const uint8_t* A, const int8_t* B, int32_t* C) {
  GemmInt8NTOf(M, N, K, A, B, C);
}
void GemmInt8NT(int64_t M, int64_t N, int64_t K, const int8_t* A, const int8_t* B, int32_t* C) {
  GemmInt8NTOf(M, N, K, A, B, C);
}

void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const uint8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc) {
  GemmInt8Of(M, N, K, A, lda, B, ldb, C, ldc);
}
void GemmInt8(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const int8_t* B, int64_t ldb,
              int32_t* C, int64_t ldc) {
  GemmInt8Of(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace symbind
