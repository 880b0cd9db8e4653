// Shared helpers for the normalization / activation family (BatchNorm, InstanceNorm,
// LayerNorm, L2Normalization, LRN, LeakyReLU, softmax, Dropout, unary activations).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_util.h"

namespace symbind {
namespace norm_util {

// A tensor viewed as (outer, n, inner) around one axis: element (o, k, i) sits at
// (o * n + k) * inner + i.
struct AxisLayout {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t Index(int64_t o, int64_t k, int64_t i) const { return (o * n + k) * inner + i; }
};

inline AxisLayout LayoutAround(const TShape& s, int axis) {
  return {s.ProdDims(0, axis), s[axis], s.ProdDims(axis + 1, s.ndim())};
}

// Resolves a possibly negative axis against `ndim`; throws ShapeError naming the op.
inline int ResolveAxis(const char* op, int axis, const TShape& shape) {
  int ndim = shape.ndim();
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw ShapeError(StrCat(op, ": axis ", axis, " is out of range for data of shape ", shape,
                            " (expected an axis in [", -ndim, ", ", ndim, "))"));
  return a;
}

// dst = v or dst += v as `req` says.
inline void Put(float* dst, float v, OpReq req) {
  if (req == OpReq::kAdd) *dst += v;
  else if (req != OpReq::kNull) *dst = v;
}

// Output 0 has the data's shape, and the data takes the output's shape when unknown.
inline void SameShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
}

// Grain so that one chunk does roughly `work` element operations.
inline int64_t GrainFor(int64_t per_item, int64_t work = 1 << 15) {
  return std::max<int64_t>(1, work / std::max<int64_t>(per_item, 1));
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

// Softmax (or log-softmax) over `l.n` values `l.inner` apart, for every (outer, inner) pair,
// of x / temperature. Deterministic: each group is computed sequentially.
inline void SoftmaxAlong(const float* x, float* y, const AxisLayout& l, double temperature,
                         bool log) {
  if (l.n == 0 || l.outer == 0 || l.inner == 0) return;  // empty: no xs[0] to read
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t o = g / l.inner, i = g % l.inner;
      const float* xs = x + l.Index(o, 0, i);
      float* ys = y + l.Index(o, 0, i);
      const float inv_t = static_cast<float>(1.0 / temperature);
      float m = xs[0] * inv_t;
      for (int64_t k = 1; k < l.n; ++k) m = std::max(m, xs[k * l.inner] * inv_t);
      double sum = 0;
      if (log) {
        for (int64_t k = 0; k < l.n; ++k) sum += std::exp(xs[k * l.inner] * inv_t - m);
        const float lse = static_cast<float>(std::log(sum));
        for (int64_t k = 0; k < l.n; ++k) ys[k * l.inner] = xs[k * l.inner] * inv_t - m - lse;
      } else {
        for (int64_t k = 0; k < l.n; ++k) {
          ys[k * l.inner] = std::exp(xs[k * l.inner] * inv_t - m);
          sum += ys[k * l.inner];
        }
        const float inv_sum = static_cast<float>(1.0 / sum);
        for (int64_t k = 0; k < l.n; ++k) ys[k * l.inner] *= inv_sum;
      }
    }
  });
}

// Gradient of SoftmaxAlong from its output y and head gradient dy:
//   softmax:     dx = y * (dy - sum(dy * y)) / T
//   log_softmax: dx = (dy - exp(y) * sum(dy)) / T
inline void SoftmaxAlongBackward(const float* y, const float* dy, float* dx, const AxisLayout& l,
                                 double temperature, bool log, OpReq req) {
  if (req == OpReq::kNull || l.n == 0 || l.outer == 0 || l.inner == 0) return;
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t o = g / l.inner, i = g % l.inner;
      const int64_t base = l.Index(o, 0, i);
      double s = 0;
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        s += log ? static_cast<double>(dy[at]) : static_cast<double>(dy[at]) * y[at];
      }
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        double v = log ? dy[at] - std::exp(static_cast<double>(y[at])) * s : y[at] * (dy[at] - s);
        Put(dx + at, static_cast<float>(v / temperature), req);
      }
    }
  });
}

}  // namespace norm_util
}  // namespace symbind
