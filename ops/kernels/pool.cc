// Pooling kernels: global avg pooling in fixed partial sums, and 2-D max/avg pooling for the
// windows CNNs use (2x2, 3x3; column stride 1 or 2): per output row, the columns whose window
// lies inside the image run branch-free over K row pointers (rows in the padding point at a
// fill row that cannot change the result), vectorised by the compiler across output columns;
// the few border columns clip their windows like the general path.
#include <cfloat>
#include <vector>

#include <symbind/ops/kernels/pool.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

bool Pool2dFastApplies(const ConvGeom& g) {
  return g.is_planar() && g.k[1] == g.k[2] && (g.k[2] == 2 || g.k[2] == 3) &&
         (g.s[2] == 1 || g.s[2] == 2);
}

namespace {

// `fill`: a row of W floats standing in for rows in the padding: -FLT_MAX for max (never wins
// over the accumulator's start), +0 for avg (adding +0 to a sum that started at +0 changes no
// bit).
template <int K, int S, bool kMax>
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
    if constexpr (kMax) {
      // Max over the window's rows once per input column, then over K of those per output:
      // K + K loads per output instead of K * K strided ones. The same bits: max ignores the
      // order (NaN never replaces the running -FLT_MAX-started maximum either way).
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

// Compiled for AVX-512, AVX2 and the baseline, chosen at load time (GCC function
// multiversioning), so the middle loops vectorise as wide as the CPU allows without -march.
#define SYMBIND_POOL_PLANE(K, S, kMax, Name)                                               \
  __attribute__((target_clones("avx512f", "avx2", "default"))) void Name##K##s##S(         \
      const float* x, float* y, const ConvGeom& g, bool include_pad, bool add,             \
      const float* fill, float* column_max) {                                              \
    PlaneImpl<K, S, kMax>(x, y, g, include_pad, add, fill, column_max);                    \
  }
SYMBIND_POOL_PLANE(2, 1, true, MaxPlane)
SYMBIND_POOL_PLANE(2, 2, true, MaxPlane)
SYMBIND_POOL_PLANE(3, 1, true, MaxPlane)
SYMBIND_POOL_PLANE(3, 2, true, MaxPlane)
SYMBIND_POOL_PLANE(2, 1, false, AvgPlane)
SYMBIND_POOL_PLANE(2, 2, false, AvgPlane)
SYMBIND_POOL_PLANE(3, 1, false, AvgPlane)
SYMBIND_POOL_PLANE(3, 2, false, AvgPlane)
#undef SYMBIND_POOL_PLANE

PlaneFn ChoosePlane(int64_t k, int64_t s, bool max) {
  if (max) {
    if (k == 2) return s == 1 ? MaxPlane2s1 : MaxPlane2s2;
    return s == 1 ? MaxPlane3s1 : MaxPlane3s2;
  }
  if (k == 2) return s == 1 ? AvgPlane2s1 : AvgPlane2s2;
  return s == 1 ? AvgPlane3s1 : AvgPlane3s2;
}

constexpr int kPartialSums = 16;

__attribute__((target_clones("avx512f", "avx2", "default"))) float GlobalAvgPlane(const float* x,
                                                                                  int64_t size) {
  const float div = static_cast<float>(size);
  float acc[kPartialSums] = {};
  int64_t i = 0;
  for (; i + kPartialSums <= size; i += kPartialSums)
    for (int l = 0; l < kPartialSums; ++l) acc[l] += x[i + l] / div;
  for (int l = 0; i + l < size; ++l) acc[l] += x[i + l] / div;
  for (int half = kPartialSums / 2; half > 0; half /= 2)
    for (int l = 0; l < half; ++l) acc[l] += acc[l + half];
  return acc[0];
}

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
