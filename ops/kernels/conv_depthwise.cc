// Direct depthwise 2-D convolution: every channel convolved with its own KxK filter, one plane
// at a time. As im2col + GEMM it is C products of one row each, dominated by the im2col copy.
#include <algorithm>
#include <vector>

#include <symbind/ops/kernel_util.h>
#include <symbind/ops/kernels/conv.h>

namespace symbind {
namespace conv {

bool DepthwiseApplies(const ConvDims& n, const ConvGeom& g) {
  // Strides 1 and 2 only: FillPadded splits rows into at most two phases.
  const bool square = g.k[1] == g.k[2] && (g.k[1] == 3 || g.k[1] == 5);
  const bool stride = g.s[1] == g.s[2] && (g.s[1] == 1 || g.s[1] == 2);
  return n.groups == n.in_c && n.out_c == n.in_c && g.in[0] == 1 && g.k[0] == 1 && square &&
         stride && g.d[1] == 1 && g.d[2] == 1;
}

namespace {

// The padded input plane, each row split into S phases (columns c with c % S == phase, at
// c / S) so that every tap of a strided output row reads contiguous floats.
struct PaddedPlane {
  int64_t rows, phase_len, row_len;
  std::vector<float> data;
};

__attribute__((target_clones("avx512f", "avx2", "default"))) void FillPadded(
    const float* in, const ConvGeom& g, int64_t stride, PaddedPlane* pp) {
  const int64_t H = g.in[1], W = g.in[2], ph = g.p[1], pw = g.p[2];
  const int64_t cols = (g.out[2] - 1) * stride + g.k[2];
  // Padded column c = j * stride + phase reads input column c - pw: inside the image for j in
  // [lo[phase], hi[phase]), zero elsewhere. The same for every row.
  int64_t lo[2], hi[2];
  for (int64_t phase = 0; phase < stride; ++phase) {
    const int64_t first = phase - pw;
    lo[phase] = std::min(pp->phase_len, first >= 0 ? 0 : (-first + stride - 1) / stride);
    hi[phase] = std::max(lo[phase], std::min({pp->phase_len, (W - first + stride - 1) / stride,
                                              (cols - phase + stride - 1) / stride}));
  }
  float* d = pp->data.data();
  for (int64_t r = 0; r < pp->rows; ++r, d += pp->row_len) {
    const int64_t ih = r - ph;
    if (ih < 0 || ih >= H) {
      std::fill(d, d + pp->row_len, 0.0f);
      continue;
    }
    const float* src = in + ih * W - pw;  // src[c]: padded column c
    for (int64_t phase = 0; phase < stride; ++phase) {
      float* dst = d + phase * pp->phase_len;
      std::fill(dst, dst + lo[phase], 0.0f);
      std::fill(dst + hi[phase], dst + pp->phase_len, 0.0f);
    }
    if (stride == 1) {
      std::copy(src + lo[0], src + hi[0], d + lo[0]);
      continue;
    }
    // Stride 2: even and odd columns split in one pass where both phases are inside (this
    // loop vectorises; a strided copy per phase did not and cost more than the convolution).
    float* even = d;
    float* odd = d + pp->phase_len;
    const int64_t both_lo = std::max(lo[0], lo[1]), both_hi = std::max(both_lo, std::min(hi[0], hi[1]));
    for (int64_t j = both_lo; j < both_hi; ++j) {
      even[j] = src[2 * j];
      odd[j] = src[2 * j + 1];
    }
    for (int64_t phase = 0; phase < 2; ++phase)
      for (int64_t j = lo[phase]; j < hi[phase]; ++j)
        if (j < both_lo || j >= both_hi) d[phase * pp->phase_len + j] = src[2 * j + phase];
  }
}

// One output plane. Each output is the bias plus the K*K taps in (kh, kw) order, so the sums
// do not depend on how planes are spread over threads.
template <int K, int S>
inline __attribute__((always_inline)) void PlaneImpl(const PaddedPlane& pp, const float* w,
                                                     float bias, float* out, int64_t OH,
                                                     int64_t OW, bool add) {
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* rows[K];
    for (int kh = 0; kh < K; ++kh) rows[kh] = pp.data.data() + (oh * S + kh) * pp.row_len;
    float* __restrict o = out + oh * OW;
    for (int64_t ow = 0; ow < OW; ++ow) {
      float s = bias;
      for (int kh = 0; kh < K; ++kh)
        for (int kw = 0; kw < K; ++kw)
          s += w[kh * K + kw] * rows[kh][(kw % S) * pp.phase_len + kw / S + ow];
      o[ow] = add ? o[ow] + s : s;
    }
  }
}

// Compiled for AVX-512, AVX2 and the baseline, chosen at load time (GCC function multiversioning),
// so the loops above vectorise as wide as the CPU allows without -march.
#define SYMBIND_DEPTHWISE_PLANE(K, S)                                                          \
  __attribute__((target_clones("avx512f", "avx2", "default"))) void Plane##K##x##K##s##S(     \
      const PaddedPlane& pp, const float* w, float bias, float* out, int64_t OH, int64_t OW,  \
      bool add) {                                                                              \
    PlaneImpl<K, S>(pp, w, bias, out, OH, OW, add);                                            \
  }
SYMBIND_DEPTHWISE_PLANE(3, 1)
SYMBIND_DEPTHWISE_PLANE(3, 2)
SYMBIND_DEPTHWISE_PLANE(5, 1)
SYMBIND_DEPTHWISE_PLANE(5, 2)
#undef SYMBIND_DEPTHWISE_PLANE

using PlaneFn = void (*)(const PaddedPlane&, const float*, float, float*, int64_t, int64_t, bool);
PlaneFn ChoosePlane(int64_t k, int64_t s) {
  if (k == 3) return s == 1 ? Plane3x3s1 : Plane3x3s2;
  return s == 1 ? Plane5x5s1 : Plane5x5s2;
}

}  // namespace

void DepthwiseConvForward(const float* x, const float* w, const float* bias, float* y,
                          const ConvDims& n, const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t K = g.k[2], S = g.s[2], C = n.in_c, OH = g.out[1], OW = g.out[2];
  const int64_t isize = g.in_size(), osize = g.out_size();
  const PlaneFn plane = ChoosePlane(K, S);
  const int64_t cols = (OW - 1) * S + K, phase_len = (cols + S - 1) / S;
  const int64_t rows = (OH - 1) * S + K;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, osize * K * K));
  ParallelFor(n.batch * C, grain, [&](int64_t p0, int64_t p1) {
    PaddedPlane pp{rows, phase_len, phase_len * S, {}};
    pp.data.resize(static_cast<size_t>(rows * pp.row_len));
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % C;
      FillPadded(x + p * isize, g, S, &pp);
      plane(pp, w + c * K * K, bias ? bias[c] : 0.0f, y + p * osize, OH, OW, req == OpReq::kAdd);
    }
  });
}

}  // namespace conv
}  // namespace symbind
