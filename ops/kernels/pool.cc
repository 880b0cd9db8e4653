// Pooling kernels: global avg pooling in fixed partial sums, and 2-D max/avg pooling for the
// windows CNNs use (2x2, 3x3; column stride 1 or 2): per output row, the columns whose window
// lies inside the image run branch-free over K row pointers (rows in the padding point at a
// fill row that cannot change the result), vectorised by the compiler across output columns;
// the few border columns clip their windows like the general path.
#include <immintrin.h>

#include <cfloat>
#include <cstring>
#include <vector>

#include <symbind/ops/kernels/avx2_lanes.h>
#include <symbind/ops/kernels/avx512_lanes.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/kernels/isa_variants.h>
#include <symbind/ops/kernels/pool.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

bool Pool2dFastApplies(const ConvGeom& g) {
  return g.is_planar() && g.k[1] == g.k[2] && (g.k[2] == 2 || g.k[2] == 3) &&
         (g.s[2] == 1 || g.s[2] == 2);
}

namespace {

// AVX-512 middle of a stride-2 max-pooling row: o[j] (+= when add) = the max of rows[kh][c0 +
// 2j + kw] over the K x K window, for j in [0, n), every column read inside the row. Per 16
// outputs: the column maxima of 32 (K = 3: 48) columns, their even and odd lanes picked by two
// permutations (and the even lanes shifted by one for the third tap), where the plane loops
// gather strided columns one by one. The same bits as the plane loops: each maximum starts from
// -FLT_MAX and takes the rows, then the columns, in order, the running value as the second
// operand of vmaxps (which returns it when either is NaN or both are zeros, as
// std::max(running, x) does).
// (GCC 12 warns inside its own avx512fintrin.h, as for the depthwise and GEMM kernels.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The maximum over K rows of 16 columns from c (columns from `end` on read as -FLT_MAX).
template <int K>
__attribute__((target("avx512f"), always_inline)) inline __m512 ColumnMaxAvx512(const float* const* rows, int64_t c,
                                                                              int64_t end) {
  const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
  const __mmask16 m = LaneRange(0, end - c);
  __m512 v = lowest;
  for (int kh = 0; kh < K; ++kh) v = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, m, rows[kh] + c), v);
  return v;
}

template <int K>
__attribute__((target("avx512f"))) void MaxRowStride2Avx512(const float* const* rows, float* o, int64_t c0,
                                                            int64_t n, bool add) {
  constexpr int kLanes = 16;
  const int64_t end = c0 + 2 * n - 2 + K;  // one past the last column read
  const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
  const __m512i even_lanes = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_lanes = _mm512_add_epi32(even_lanes, _mm512_set1_epi32(1));
  __m512 a = ColumnMaxAvx512<K>(rows, c0, end);
  for (int64_t j = 0; j < n; j += kLanes) {
    const int64_t c = c0 + 2 * j;
    const __m512 b = ColumnMaxAvx512<K>(rows, c + kLanes, end);
    const __m512 even = _mm512_permutex2var_ps(a, even_lanes, b);
    __m512 v = _mm512_max_ps(_mm512_permutex2var_ps(a, odd_lanes, b), even);
    const __m512 next = K == 3 || j + kLanes < n ? ColumnMaxAvx512<K>(rows, c + 2 * kLanes, end) : lowest;
    if constexpr (K == 3) {  // columns 2j + 2: the even lanes moved down one, the next block's first
      const __m512i shifted = _mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(even), 1);
      v = _mm512_max_ps(_mm512_castsi512_ps(shifted), v);
    }
    const __mmask16 out = LaneRange(0, n - j);
    if (add) v = _mm512_add_ps(_mm512_maskz_loadu_ps(out, o + j), v);
    _mm512_mask_storeu_ps(o + j, out, v);
    a = next;
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// AVX2 middle of a stride-2 max-pooling row: MaxRowStride2Avx512 on 8 lanes, the same maxima in
// the same operand order. The even and odd columns of 16 by an in-lane shuffle and a 64-bit
// permute; the third tap (K = 3) the even lanes rotated down one with the next block's first
// column. The plane loops gather the strided columns one by one, which left stride-2 layers
// (SqueezeNet's three 3x3 ones) far behind other runtimes.
template <int K>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 ColumnMaxAvx2(const float* const* rows, int64_t c,
                                                                            int64_t end) {
  const __m256 lowest = _mm256_set1_ps(-FLT_MAX);
  const bool full = c + 8 <= end;
  const __m256i m = LaneMask8(0, end - c);
  __m256 v = lowest;
  for (int kh = 0; kh < K; ++kh) {
    const __m256 x = full ? _mm256_loadu_ps(rows[kh] + c)
                          : _mm256_blendv_ps(lowest, _mm256_maskload_ps(rows[kh] + c, m), _mm256_castsi256_ps(m));
    v = _mm256_max_ps(x, v);
  }
  return v;
}

template <int K>
__attribute__((target("avx2,fma"))) void MaxRowStride2Avx2(const float* const* rows, float* o, int64_t c0, int64_t n,
                                                           bool add) {
  constexpr int kLanes = 8;
  const int64_t end = c0 + 2 * n - 2 + K;  // one past the last column read
  const __m256 lowest = _mm256_set1_ps(-FLT_MAX);
  const __m256i rotate_down = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
  __m256 a = ColumnMaxAvx2<K>(rows, c0, end);
  for (int64_t j = 0; j < n; j += kLanes) {
    const int64_t c = c0 + 2 * j;
    const __m256 b = ColumnMaxAvx2<K>(rows, c + kLanes, end);
    const __m256 even = UnmixLanes(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    __m256 v = _mm256_max_ps(UnmixLanes(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), even);
    const __m256 next = K == 3 || j + kLanes < n ? ColumnMaxAvx2<K>(rows, c + 2 * kLanes, end) : lowest;
    if constexpr (K == 3) {  // columns 2j + 2: the even lanes moved down one, the next block's first
      const __m256 shifted = _mm256_blend_ps(_mm256_permutevar8x32_ps(even, rotate_down),
                                             _mm256_permutevar8x32_ps(next, _mm256_setzero_si256()), 0x80);
      v = _mm256_max_ps(shifted, v);
    }
    StoreActivatedAvx2(o + j, LaneMask8(0, n - j), j + kLanes <= n, v, FusedActivation{}, add);
    a = next;
  }
}

// `fill`: a row of W floats standing in for rows in the padding: -FLT_MAX for max (never wins
// over the accumulator's start), +0 for avg (adding +0 to a sum that started at +0 changes no
// bit).
// kVectorMiddle: max pooling at stride 2 takes MaxRowStride2Avx512 (kAvx512) or
// MaxRowStride2Avx2 (kAvx2) for its middle columns.
enum class PoolMiddle { kLoops, kAvx512, kAvx2 };
template <int K, int S, bool kMax, PoolMiddle kVectorMiddle = PoolMiddle::kLoops>
inline __attribute__((always_inline)) void PlaneImpl(const float* x, float* y, const ConvGeom& g,
                                                     bool include_pad, bool add,
                                                     const float* fill, float* __restrict column_max) {
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], pw = g.p[2];
  const int64_t mid_lo = std::min(OW, (pw + S - 1) / S);
  const int64_t last = W - K + pw;  // the largest ow * S whose window lies inside the row
  const int64_t mid_hi = last < 0 ? mid_lo : std::max(mid_lo, std::min(OW, last / S + 1));
  for (int64_t oh = 0; oh < g.out[1]; ++oh) {
    const Window wh = AxisWindow(g, 1, oh, true);
    const float* rows[K];
    for (int kh = 0; kh < K; ++kh) {
      const int64_t ih = oh * g.s[1] - g.p[1] + kh;
      rows[kh] = (ih >= 0 && ih < H) ? x + ih * W : fill;
    }
    const int64_t rows_counted = include_pad ? wh.padded_extent : wh.end - wh.start;
    float* __restrict o = y + oh * OW;
    auto edge = [&](int64_t ow) {
      const Window ww = AxisWindow(g, 2, ow, true);
      float v;
      if constexpr (kMax) {
        v = -FLT_MAX;
        for (int64_t h = wh.start; h < wh.end; ++h)
          for (int64_t w = ww.start; w < ww.end; ++w) v = std::max(v, x[h * W + w]);
      } else {
        const float div = static_cast<float>(
            rows_counted * (include_pad ? ww.padded_extent : ww.end - ww.start));
        v = 0.0f;
        for (int64_t h = wh.start; h < wh.end; ++h)
          for (int64_t w = ww.start; w < ww.end; ++w) v += x[h * W + w] / div;
      }
      o[ow] = add ? o[ow] + v : v;
    };
    // Rows wholly in the padding (possible with the full convention) leave no middle: 0 / 0.
    const int64_t hi = wh.end > wh.start ? mid_hi : mid_lo;
    for (int64_t ow = 0; ow < mid_lo; ++ow) edge(ow);
    if constexpr (kVectorMiddle != PoolMiddle::kLoops) {
      static_assert(kMax && S == 2, "the vector middle is max pooling at stride 2");
      if (hi > mid_lo) {
        if constexpr (kVectorMiddle == PoolMiddle::kAvx512)
          MaxRowStride2Avx512<K>(rows, o + mid_lo, mid_lo * S - pw, hi - mid_lo, add);
        else
          MaxRowStride2Avx2<K>(rows, o + mid_lo, mid_lo * S - pw, hi - mid_lo, add);
      }
    } else if constexpr (kMax) {
      // Max over the window's rows once per input column, then over K of those per output:
      // K + K loads per output instead of K * K strided ones. The same values: NaN never
      // replaces the running -FLT_MAX-started maximum either way; only a zero's sign can
      // depend on the order (pool.h).
      const int64_t c0 = mid_lo * S - pw, c1 = (hi - 1) * S - pw + K;
      for (int64_t w = c0; w < c1; ++w) {
        float v = -FLT_MAX;
        for (int kh = 0; kh < K; ++kh) v = std::max(v, rows[kh][w]);
        column_max[w] = v;
      }
      for (int64_t ow = mid_lo; ow < hi; ++ow) {
        float v = -FLT_MAX;
        for (int kw = 0; kw < K; ++kw) v = std::max(v, column_max[ow * S - pw + kw]);
        o[ow] = add ? o[ow] + v : v;
      }
    } else {
      const float div = static_cast<float>(rows_counted * K);
      for (int64_t ow = mid_lo; ow < hi; ++ow) {
        float v = 0.0f;
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw) v += rows[kh][ow * S - pw + kw] / div;
        o[ow] = add ? o[ow] + v : v;
      }
    }
    for (int64_t ow = hi; ow < OW; ++ow) edge(ow);
  }
}

// column_max: W floats of scratch (max pooling).
using PlaneFn = void (*)(const float*, float*, const ConvGeom&, bool, bool, const float*, float*);

// Compiled for AVX-512, AVX2 and the baseline (isa_variants.h), so the middle loops vectorise as
// wide as the CPU allows without -march.
#define SYMBIND_POOL_PLANE(K, S, kMax, Name)                                                                 \
  SYMBIND_ISA_VARIANTS(, void, Name##K##s##S,                                                                \
                       (const float* x, float* y, const ConvGeom& g, bool include_pad, bool add,             \
                        const float* fill, float* column_max),                                               \
                       (x, y, g, include_pad, add, fill, column_max),                                        \
                       { PlaneImpl<K, S, kMax>(x, y, g, include_pad, add, fill, column_max); })
SYMBIND_POOL_PLANE(2, 1, true, MaxPlane)
SYMBIND_POOL_PLANE(2, 2, true, MaxPlane)
SYMBIND_POOL_PLANE(3, 1, true, MaxPlane)
SYMBIND_POOL_PLANE(3, 2, true, MaxPlane)
SYMBIND_POOL_PLANE(2, 1, false, AvgPlane)
SYMBIND_POOL_PLANE(2, 2, false, AvgPlane)
SYMBIND_POOL_PLANE(3, 1, false, AvgPlane)
SYMBIND_POOL_PLANE(3, 2, false, AvgPlane)
#undef SYMBIND_POOL_PLANE
template <int K>
__attribute__((target("avx512f"))) void MaxPlaneStride2Avx512(const float* x, float* y, const ConvGeom& g,
                                                              bool include_pad, bool add, const float* fill,
                                                              float* column_max) {
  PlaneImpl<K, 2, true, PoolMiddle::kAvx512>(x, y, g, include_pad, add, fill, column_max);
}
template <int K>
__attribute__((target("avx2,fma"))) void MaxPlaneStride2Avx2(const float* x, float* y, const ConvGeom& g,
                                                             bool include_pad, bool add, const float* fill,
                                                             float* column_max) {
  PlaneImpl<K, 2, true, PoolMiddle::kAvx2>(x, y, g, include_pad, add, fill, column_max);
}

PlaneFn ChoosePlane(int64_t k, int64_t s, bool max) {
  // SYMBIND_GEMM_ISA=avx2 / base select the AVX2 middle / the plane loops (for tests).
  if (max && s == 2 && ActiveIsa() == KernelIsa::kAvx512)
    return k == 2 ? MaxPlaneStride2Avx512<2> : MaxPlaneStride2Avx512<3>;
  if (max && s == 2 && ActiveIsa() == KernelIsa::kAvx2)
    return k == 2 ? MaxPlaneStride2Avx2<2> : MaxPlaneStride2Avx2<3>;
  if (max) {
    if (k == 2) return s == 1 ? MaxPlane2s1 : MaxPlane2s2;
    return s == 1 ? MaxPlane3s1 : MaxPlane3s2;
  }
  if (k == 2) return s == 1 ? AvgPlane2s1 : AvgPlane2s2;
  return s == 1 ? AvgPlane3s1 : AvgPlane3s2;
}

constexpr int kPartialSums = 16;

SYMBIND_ISA_VARIANTS(, float, GlobalAvgPlane, (const float* x, int64_t size), (x, size), {
  const float div = static_cast<float>(size);
  float acc[kPartialSums] = {};
  int64_t i = 0;
  for (; i + kPartialSums <= size; i += kPartialSums)
    for (int l = 0; l < kPartialSums; ++l) acc[l] += x[i + l] / div;
  for (int l = 0; i + l < size; ++l) acc[l] += x[i + l] / div;
  for (int half = kPartialSums / 2; half > 0; half /= 2)
    for (int l = 0; l < half; ++l) acc[l] += acc[l + half];
  return acc[0];
})

}  // namespace

void GlobalAvgPoolForward(const float* x, float* y, int64_t planes, int64_t size, bool add) {
  ParallelFor(planes, GrainFor(size), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float v = GlobalAvgPlane(x + p * size, size);
      y[p] = add ? y[p] + v : v;
    }
  });
}

void Pool2dForward(const float* x, float* y, int64_t planes, const ConvGeom& g, bool max,
                   bool include_pad, bool add) {
  const PlaneFn plane = ChoosePlane(g.k[2], g.s[2], max);
  const std::vector<float> fill(static_cast<size_t>(g.in[2]), max ? -FLT_MAX : 0.0f);
  const int64_t isize = g.in_size(), osize = g.out_size();
  const int64_t work = std::max(isize, osize * g.k_size());
  ParallelFor(planes, GrainFor(work), [&](int64_t p0, int64_t p1) {
    std::vector<float> column_max(static_cast<size_t>(g.in[2]));
    for (int64_t p = p0; p < p1; ++p)
      plane(x + p * isize, y + p * osize, g, include_pad, add, fill.data(), column_max.data());
  });
}

}  // namespace conv
}  // namespace symbind
