// Bilinear sampling on a normalised grid and the affine target grid, shared by BilinearSampler,
// GridGenerator and SpatialTransformer (MXNet's CPU kernels define the semantics: grid values
// in [-1, 1] map to [0, size - 1], taps outside the input read zero).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind::sampling {

// The affine target grid of an (H, W) output: a (3, H*W) row-major matrix whose columns are
// (x, y, 1) with x = -1 + 2 * col / (W - 1), y = -1 + 2 * row / (H - 1).
inline void AffineTargetGrid(int64_t H, int64_t W, float* dst) {
  const int64_t n = H * W;
  for (int64_t k = 0; k < n; ++k) {
    dst[k] = static_cast<float>(-1.0 + static_cast<double>(k % W) * 2.0 / static_cast<double>(W - 1));
    dst[n + k] = static_cast<float>(-1.0 + static_cast<double>(k / W) * 2.0 / static_cast<double>(H - 1));
    dst[2 * n + k] = 1.0f;
  }
}

// One sampling point: the top-left tap and its weights along y and x.
struct Tap {
  int64_t y0, x0;
  float wy, wx;  // weight of the top row / left column
};
inline Tap TapAt(float gx, float gy, int64_t H, int64_t W) {
  float y = (gy + 1.0f) * static_cast<float>(H - 1) / 2.0f;
  float x = (gx + 1.0f) * static_cast<float>(W - 1) / 2.0f;
  // Far (or NaN) points read only zeros: pin them just outside so the index math stays finite.
  if (!(y > -2.0f)) y = -2.0f;
  if (!(y < static_cast<float>(H) + 1.0f)) y = static_cast<float>(H) + 1.0f;
  if (!(x > -2.0f)) x = -2.0f;
  if (!(x < static_cast<float>(W) + 1.0f)) x = static_cast<float>(W) + 1.0f;
  Tap t;
  t.y0 = static_cast<int64_t>(std::floor(y));
  t.x0 = static_cast<int64_t>(std::floor(x));
  t.wy = 1.0f - (y - static_cast<float>(t.y0));
  t.wx = 1.0f - (x - static_cast<float>(t.x0));
  return t;
}
inline bool Inside(int64_t y, int64_t x, int64_t H, int64_t W) {
  return y >= 0 && y < H && x >= 0 && x < W;
}

// out (N, C, OH, OW) = data (N, C, H, W) sampled at grid (N, 2, OH, OW) (x then y planes).
inline void BilinearSampleForward(const float* data, const float* grid, float* out, int64_t N,
                                  int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                                  OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t P = OH * OW;
  ParallelFor(N * C, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, P)),
              [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const int64_t n = plane / C;
      const float* src = data + plane * H * W;
      const float* g = grid + n * 2 * P;
      float* dst = out + plane * P;
      for (int64_t k = 0; k < P; ++k) {
        const Tap t = TapAt(g[k], g[P + k], H, W);
        auto v = [&](int64_t y, int64_t x) { return Inside(y, x, H, W) ? src[y * W + x] : 0.0f; };
        const float r = v(t.y0, t.x0) * t.wy * t.wx + v(t.y0, t.x0 + 1) * t.wy * (1.0f - t.wx) +
                        v(t.y0 + 1, t.x0) * (1.0f - t.wy) * t.wx +
                        v(t.y0 + 1, t.x0 + 1) * (1.0f - t.wy) * (1.0f - t.wx);
        dst[k] = req == OpReq::kAdd ? dst[k] + r : r;
      }
    }
  });
}

// Gradients of BilinearSampleForward: gdata (if not null) += the scattered head gradient;
// ggrid (if not null) += d loss / d grid. Callers zero them first under req=write. Parallel
// over the batch: samples of one image scatter into that image only.
inline void BilinearSampleBackward(const float* data, const float* grid, const float* gout,
                                   float* gdata, float* ggrid, int64_t N, int64_t C, int64_t H,
                                   int64_t W, int64_t OH, int64_t OW) {
  const int64_t P = OH * OW;
  ParallelFor(N, 1, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      const float* g = grid + n * 2 * P;
      for (int64_t k = 0; k < P; ++k) {
        const Tap t = TapAt(g[k], g[P + k], H, W);
        float d_wy = 0.0f, d_wx = 0.0f;  // d loss / d (top weight), d loss / d (left weight)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t plane = n * C + c;
          const float* src = data + plane * H * W;
          const float go = gout[plane * P + k];
          float v[2][2];
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
              const int64_t y = t.y0 + dy, x = t.x0 + dx;
              const bool in = Inside(y, x, H, W);
              v[dy][dx] = in ? src[y * W + x] : 0.0f;
              if (in && gdata) {
                const float w = (dy ? 1.0f - t.wy : t.wy) * (dx ? 1.0f - t.wx : t.wx);
                gdata[plane * H * W + y * W + x] += go * w;
              }
            }
          d_wy += go * ((v[0][0] - v[1][0]) * t.wx + (v[0][1] - v[1][1]) * (1.0f - t.wx));
          d_wx += go * ((v[0][0] - v[0][1]) * t.wy + (v[1][0] - v[1][1]) * (1.0f - t.wy));
        }
        if (ggrid) {
          // top weight = 1 - frac(y), y = (gy + 1) (H - 1) / 2
          ggrid[n * 2 * P + k] -= d_wx * static_cast<float>(W - 1) / 2.0f;
          ggrid[n * 2 * P + P + k] -= d_wy * static_cast<float>(H - 1) / 2.0f;
        }
      }
    }
  });
}

}  // namespace symbind::sampling
