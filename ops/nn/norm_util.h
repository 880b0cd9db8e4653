// Helpers shared by the normalization ops (BatchNorm, InstanceNorm, LayerNorm): group moments
// and the backward of a mean-and-variance normalisation.
#pragma once
#include <cmath>
#include <cstdint>

#include <symbind/ops/op_util.h>

namespace symbind {

// One channel of BatchNorm's output y = (x - mean) * scale + shift from its statistics (the
// batch's in training, the moving ones in inference: InferenceBatchNorm), computed as BatchNorm
// computes them, so every op that applies them gives BatchNorm's bits.
struct BatchNormAffine {
  float mean, scale, shift;
};
inline BatchNormAffine BatchNormAffineOf(double mean, double invstd, float gamma, float beta, bool fix_gamma) {
  return {static_cast<float>(mean), static_cast<float>(invstd) * (fix_gamma ? 1.0f : gamma), beta};
}
// 1 / sqrt(var + eps) of a moving variance, in double as BatchNorm takes it.
inline double MovingInvStd(float moving_var, double eps) { return 1.0 / std::sqrt(static_cast<double>(moving_var) + eps); }
inline BatchNormAffine InferenceBatchNorm(float moving_mean, float moving_var, float gamma, float beta, double eps,
                                          bool fix_gamma) {
  return BatchNormAffineOf(moving_mean, MovingInvStd(moving_var, eps), gamma, beta, fix_gamma);
}

// Mean and biased variance of `count` elements `stride` apart (two passes, double sums).
inline void GroupMoments(const float* x, int64_t count, int64_t stride, double* mean, double* var) {
  double s = 0;
  for (int64_t j = 0; j < count; ++j) s += x[j * stride];
  const double m = s / count;
  double v = 0;
  for (int64_t j = 0; j < count; ++j) {
    const double d = x[j * stride] - m;
    v += d * d;
  }
  *mean = m;
  *var = v / count;
}

// Mean-and-variance normalisation of `groups` independent groups, each of `count` elements
// that are `stride` apart, starting at `base(g)`. Used by InstanceNorm and LayerNorm.
//   forward: y = (x - mean) * rstd * gamma[ch(g, j)] + beta[ch(g, j)]
// The backward of such a normalisation, for one group with xhat = (x - mean) * rstd and
// dxhat = dy * gamma: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
template <typename GammaAt>
void NormalizeGroupBackward(const float* x, const float* dy, const GammaAt& gamma_at,
                            int64_t count, int64_t stride, float mean, float rstd, float* dx,
                            OpReq req) {
  double s1 = 0, s2 = 0;
  for (int64_t j = 0; j < count; ++j) {
    double xhat = (x[j * stride] - mean) * rstd;
    double g = static_cast<double>(dy[j * stride]) * gamma_at(j);
    s1 += g;
    s2 += g * xhat;
  }
  const double m1 = s1 / count, m2 = s2 / count;
  for (int64_t j = 0; j < count; ++j) {
    double xhat = (x[j * stride] - mean) * rstd;
    double g = static_cast<double>(dy[j * stride]) * gamma_at(j);
    Put(dx + j * stride, static_cast<float>(rstd * (g - m1 - xhat * m2)), req);
  }
}

}  // namespace symbind
