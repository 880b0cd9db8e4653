#include <symbind/ops/kernels/gemm_int8.h>

#include <immintrin.h>

#include <algorithm>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
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

// AVX2: products of int16 pairs summed exactly into int32 (vpmaddwd; vpmaddubsw would saturate
// int16 sums of uint8 x int8 pairs). A is packed once per call as int16 pairs (a[k], a[k+1]) per
// row, kMr rows interleaved; B a panel of kNr columns at a time as (b[k][c], b[k+1][c]) pairs,
// zero past K and N, so every tile runs the full kernel and stores what is inside C.
constexpr int64_t kMr = 6, kNr = 16;  // 12 accumulators of 8 int32
constexpr int64_t kKc = 512;          // k pairs per pass: a B panel of 32 KB

inline int32_t PairOf(int8_t lo, int8_t hi) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(int16_t{lo})) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(int16_t{hi})) << 16));
}

// C[rows x cols] (+)= the sums of `pairs` k-pairs of a packed A block (pair-major, kMr rows each)
// and a packed B panel (pair-major, kNr columns of two int16 each).
__attribute__((target("avx2"))) void Int8Tile(const int32_t* a, const int16_t* b, int64_t pairs, int32_t* C,
                                              int64_t ldc, int64_t rows, int64_t cols, bool accumulate) {
  __m256i acc[kMr][2];
  for (int64_t r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < pairs; ++p, a += kMr, b += 2 * kNr) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kNr));
    #pragma GCC unroll 6
    for (int64_t r = 0; r < kMr; ++r) {
      const __m256i w = _mm256_set1_epi32(a[r]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b0, w));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b1, w));
    }
  }
  alignas(32) int32_t tile[kMr][kNr];
  for (int64_t r = 0; r < kMr; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r]), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r] + 8), acc[r][1]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* c = C + r * ldc;
    for (int64_t j = 0; j < cols; ++j)
      c[j] = accumulate ? static_cast<int32_t>(static_cast<uint32_t>(c[j]) + static_cast<uint32_t>(tile[r][j]))
                        : tile[r][j];
  }
}

template <typename TB>
void GemmInt8Avx2(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const TB* B, int64_t ldb,
                  int32_t* C, int64_t ldc) {
  const int64_t pairs = (K + 1) / 2, row_blocks = (M + kMr - 1) / kMr, panels = (N + kNr - 1) / kNr;
  ScratchBuffer a_buffer(row_blocks * pairs * kMr);
  int32_t* a_packed = reinterpret_cast<int32_t*>(a_buffer.data());  // [row block][pair][row]
  ParallelFor(row_blocks, GrainFor(pairs * kMr), [&](int64_t b0, int64_t b1) {
    for (int64_t rb = b0; rb < b1; ++rb)
      for (int64_t r = 0; r < kMr; ++r) {
        const int64_t m = rb * kMr + r;
        int32_t* out = a_packed + rb * pairs * kMr + r;
        for (int64_t p = 0; p < pairs; ++p) {
          const int64_t k = 2 * p;
          const int8_t lo = m < M ? A[m * lda + k] : int8_t{0};
          const int8_t hi = m < M && k + 1 < K ? A[m * lda + k + 1] : int8_t{0};
          out[p * kMr] = PairOf(lo, hi);
        }
      }
  });
  ParallelFor(panels, GrainFor(M * std::max<int64_t>(K, 1) * kNr / 4), [&](int64_t q0, int64_t q1) {
    ScratchBuffer b_buffer(kKc * kNr);  // kKc pairs x kNr columns x 2 int16
    int16_t* b_packed = reinterpret_cast<int16_t*>(b_buffer.data());
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n0 = q * kNr, cols = std::min(kNr, N - n0);
      for (int64_t p0 = 0; p0 < pairs; p0 += kKc) {
        const int64_t chunk = std::min(kKc, pairs - p0);
        for (int64_t p = 0; p < chunk; ++p) {
          const int64_t k = 2 * (p0 + p);
          const TB* lo = B + k * ldb + n0;
          const TB* hi = k + 1 < K ? lo + ldb : nullptr;
          int16_t* out = b_packed + p * 2 * kNr;
          for (int64_t j = 0; j < kNr; ++j) {
            out[2 * j] = j < cols ? int16_t{lo[j]} : int16_t{0};
            out[2 * j + 1] = j < cols && hi ? int16_t{hi[j]} : int16_t{0};
          }
        }
        for (int64_t rb = 0; rb < row_blocks; ++rb)
          Int8Tile(a_packed + (rb * pairs + p0) * kMr, b_packed, chunk, C + rb * kMr * ldc + n0, ldc,
                   std::min(kMr, M - rb * kMr), cols, p0 > 0);
      }
    }
  });
}

template <typename TB>
void GemmInt8Of(int64_t M, int64_t N, int64_t K, const int8_t* A, int64_t lda, const TB* B, int64_t ldb,
                int32_t* C, int64_t ldc) {
  if (ActiveIsa() != KernelIsa::kBase && M > 0 && N > 0) {
    if (K == 0) {
      for (int64_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + N, 0);
      return;
    }
    GemmInt8Avx2(M, N, K, A, lda, B, ldb, C, ldc);
    return;
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

template <typename TA>
void GemmInt8NTOf(int64_t M, int64_t N, int64_t K, const TA* A, const int8_t* B, int32_t* C) {
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
