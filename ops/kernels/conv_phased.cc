// Convolution through the packed GEMM over the image split into phase planes, with no columns
// built: the zero-padded image of each channel is split by row and column phase (padded
// coordinate mod the stride), so that tap (ky, kx) of output position (oy, ox) reads phase
// (ky * dy mod sh, kx * dx mod sw) at (oy + ky * dy / sh, ox + kx * dx / sw). With output rows
// laid Wph (a phase row's length) apart, 32 consecutive positions of one tap and one channel are
// 32 consecutive floats of its plane, which the wide tile loads where they lie
// (GemmPackedTaps). Positions past an output row's end are computed and dropped when the rows
// are copied to y (1 of 29 at 56x56 and stride 2). im2col writes each input value k*k / (sh*sw)
// times (2.25x at 3x3 stride 2); the split writes it once.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
// Floats past a channel's phases: the last tile (up to 32 positions) reads past the last one.
constexpr int64_t kPlaneSlack = 64;

// A band's phase planes (StridePhases for its output rows), one channel's after another's.
struct PhaseBand : StridePhases {
  using StridePhases::StridePhases;
  // A channel's phases, then room for the last tile's reads past them.
  int64_t PlaneFloats() const { return (sh * sw * PhasePositions() + kPlaneSlack + 15) / 16 * 16; }
};

// One image row (W floats) into its two column phases at stride 2, padded by pw on the left:
// image column 2t + e lands in phase (e + pw) % 2 at (e + pw) / 2 + t; the rest of each phase
// row is zero. One pass: 32 floats at a time split into their even and odd ones.
SYMBIND_AVX512_INTRINSICS_BEGIN
__attribute__((target("avx512f"))) void SplitRowStride2Avx512(const float* src, int64_t W, int64_t pw, int64_t Wph,
                                                              float* const (&phase)[2]) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  float* to[2];
  int64_t count[2];
  for (int64_t e = 0; e < 2; ++e) {
    float* row = phase[(e + pw) % 2];
    const int64_t shift = (e + pw) / 2;
    count[e] = std::max<int64_t>(0, std::min((W - e + 1) / 2, Wph - shift));
    std::fill(row, row + shift, 0.0f);
    std::fill(row + shift + count[e], row + Wph, 0.0f);
    to[e] = row + shift;
  }
  for (int64_t t = 0; 2 * t < W; t += 16) {
    const int64_t readable = std::min<int64_t>(32, W - 2 * t);
    const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << std::min<int64_t>(16, readable)) - 1), src + 2 * t);
    const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << std::max<int64_t>(0, readable - 16)) - 1),
                                            src + 2 * t + 16);
    for (int64_t e = 0; e < 2; ++e) {
      const int64_t n = std::clamp<int64_t>(count[e] - t, 0, 16);
      _mm512_mask_storeu_ps(to[e] + t, static_cast<__mmask16>((1u << n) - 1),
                            _mm512_permutex2var_ps(lo, e ? odd : even, hi));
    }
  }
}
SYMBIND_AVX512_INTRINSICS_END

void SplitRowStride2(const float* src, int64_t W, int64_t pw, int64_t Wph, float* const (&phase)[2]) {
  for (int64_t e = 0; e < 2; ++e) {
    float* row = phase[(e + pw) % 2];
    const int64_t shift = (e + pw) / 2, count = std::max<int64_t>(0, std::min((W - e + 1) / 2, Wph - shift));
    std::fill(row, row + shift, 0.0f);
    for (int64_t t = 0; t < count; ++t) row[shift + t] = src[2 * t + e];
    std::fill(row + shift + count, row + Wph, 0.0f);
  }
}

// Channel image (H x W) into the band's phase planes at `plane`, zeros on the padding: each image
// row read once, into its row phase's column phases.
void SplitChannel(const float* image, const ConvGeom& g, const PhaseBand& p, bool avx512, float* plane) {
  const int64_t H = g.in[1], W = g.in[2], pw = g.p[2], phase_floats = p.PhasePositions();
  for (int64_t a = 0; a < p.sh; ++a)
    for (int64_t i = 0; i < p.rows; ++i) {
      float* const rows[2] = {plane + a * p.sw * phase_floats + i * p.Wph,
                              plane + (a * p.sw + p.sw - 1) * phase_floats + i * p.Wph};
      const int64_t iy = p.sh * (p.first + i) + a - g.p[1];
      if (iy < 0 || iy >= H) {
        for (int64_t b = 0; b < p.sw; ++b) std::fill(rows[b], rows[b] + p.Wph, 0.0f);
        continue;
      }
      const float* src = image + iy * W;
      if (p.sw == 1) {
        std::fill(rows[0], rows[0] + pw, 0.0f);
        std::copy(src, src + W, rows[0] + pw);
        std::fill(rows[0] + pw + W, rows[0] + p.Wph, 0.0f);
      } else if (avx512) {
        SplitRowStride2Avx512(src, W, pw, p.Wph, rows);
      } else {
        SplitRowStride2(src, W, pw, p.Wph, rows);
      }
    }
  std::fill(plane + p.sh * p.sw * phase_floats, plane + p.PlaneFloats(), 0.0f);
}
}  // namespace

bool PhasedColumnsApply(const ConvDims& n, const ConvGeom& g, GemmTiling tiling) {
  const int64_t panel_rows = PackedGemmA::PanelFloats(1, 1, GemmTiling::kWide);
  return ActiveIsa() == KernelIsa::kAvx512 && n.groups == 1 && tiling == GemmTiling::kWide &&
         !(g.k[1] == 1 && g.k[2] == 1) && n.out_c % panel_rows == 0 && StridePhases::Fit(g);
}

void PhasedGemmConvForward(const float* x, const PackedGemmA& A, float* y, const ConvDims& n, const ConvGeom& g,
                           const GemmEpilogue& epilogue) {
  if (n.groups != 1 || A.rows() != n.out_c || A.depth() != n.in_c * g.k_size() || !g.is_planar())
    throw Error("PhasedGemmConvForward: needs one group of 2-D filters packed as out_c x in_c * taps");
  const int64_t OH = g.out[1], OW = g.out[2], kw = g.k[2], taps = g.k[1] * kw;
  const bool avx512 = ActiveIsa() == KernelIsa::kAvx512;
  // Tasks of whole output planes: whole images where there are as many as threads, else one
  // image's filters in blocks, two per thread (a thread busy with a node running beside this one
  // leaves the other blocks to the rest). A thread then writes planes of y no other thread
  // writes: on hosts whose cores share no cache, threads writing alternate bands of rows of every
  // plane spent up to a quarter of a layer's time on the lines at and past their bands' ends
  // (docs/benchmarks-history.md). Each task splits the rows it reads into planes of its own (no
  // task reads what another wrote), band by band, so that the planes and the sums stay in cache.
  const int64_t threads = UsableThreads(), panels = n.out_c / A.mr();
  const int64_t blocks = n.batch >= threads ? 1 : std::min<int64_t>(panels, 2 * threads);
  const int64_t tile_columns = GemmPackedTapsColumns();
  // Output rows per band: planes and sums of about kBandFloats (in L2 with the weights).
  constexpr int64_t kBandFloats = int64_t{1} << 17;
  const int64_t block_filters = (panels + blocks - 1) / blocks * A.mr();
  const int64_t row_floats = (n.in_c * g.s[1] * g.s[2] + block_filters) * (g.in[2] + 2 * g.p[2]) / g.s[2];
  const int64_t band_rows = std::min(OH, std::max<int64_t>(4, kBandFloats / std::max<int64_t>(row_floats, 1)));
  ParallelFor(n.batch * blocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / blocks, block = t % blocks;
      const int64_t f0 = block * panels / blocks * A.mr(), f1 = (block + 1) * panels / blocks * A.mr();
      const float* image = x + i * n.in_c * g.in_size();
      float* yi = y + i * n.YImageStride(g);
      for (int64_t oy0 = 0; oy0 < OH; oy0 += band_rows) {
        const int64_t oy1 = std::min(OH, oy0 + band_rows);
        const PhaseBand p(g, oy0, oy1);
        std::vector<int64_t> tap_offsets(static_cast<size_t>(taps));
        for (int64_t k = 0; k < taps; ++k) tap_offsets[size_t(k)] = p.TapOffset(g, k / kw, k % kw);
        const int64_t positions = (oy1 - oy0 - 1) * p.Wph + OW;
        const int64_t columns = (positions + tile_columns - 1) / tile_columns * tile_columns;
        const ScratchBuffer planes(n.in_c * p.PlaneFloats()), sums((f1 - f0) * columns);
        for (int64_t c = 0; c < n.in_c; ++c)
          SplitChannel(image + c * g.in_size(), g, p, avx512, planes.data() + c * p.PlaneFloats());
        GemmPackedTaps(A, columns, planes.data(), p.PlaneFloats(), tap_offsets.data(), taps, sums.data(), columns,
                       epilogue, f0, f1);
        for (int64_t f = f0; f < f1; ++f)
          for (int64_t oy = oy0; oy < oy1; ++oy) {
            const float* src = sums.data() + (f - f0) * columns + (oy - oy0) * p.Wph;
            std::copy(src, src + OW, yi + (f * OH + oy) * OW);
          }
      }
    }
  });
}

}  // namespace conv
}  // namespace symbind
