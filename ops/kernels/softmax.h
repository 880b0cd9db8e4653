// Softmax and log-softmax along one axis, forward and backward: the one softmax kernel used by
// softmax, log_softmax, SoftmaxActivation, SoftmaxOutput and softmax_cross_entropy.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <symbind/ops/op_util.h>

namespace symbind {

// Softmax (or log-softmax) over `l.n` values `l.inner` apart, for every (outer, inner) pair,
// of x / temperature, in T (float or double). Deterministic: each group is computed sequentially.
template <typename T>
inline void SoftmaxAlong(const T* x, T* y, const AxisLayout& l, double temperature, bool log) {
  if (l.n == 0 || l.outer == 0 || l.inner == 0) return;  // empty: no xs[0] to read
  ParallelFor(l.outer * l.inner, GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t o = g / l.inner, i = g % l.inner;
      const T* xs = x + l.Index(o, 0, i);
      T* ys = y + l.Index(o, 0, i);
      const T inv_t = static_cast<T>(1.0 / temperature);
      T m = xs[0] * inv_t;
      for (int64_t k = 1; k < l.n; ++k) m = std::max(m, xs[k * l.inner] * inv_t);
      if (log) {
        double sum = 0;
        for (int64_t k = 0; k < l.n; ++k) sum += std::exp(xs[k * l.inner] * inv_t - m);
        const T lse = static_cast<T>(std::log(sum));
        for (int64_t k = 0; k < l.n; ++k) ys[k * l.inner] = xs[k * l.inner] * inv_t - m - lse;
      } else {
        // Sum and division in T: float as mshadow's Softmax (the loss heads' numerics since v0.1).
        T sum = 0;
        for (int64_t k = 0; k < l.n; ++k) {
          ys[k * l.inner] = std::exp(xs[k * l.inner] * inv_t - m);
          sum += ys[k * l.inner];
        }
        for (int64_t k = 0; k < l.n; ++k) ys[k * l.inner] /= sum;
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

}  // namespace symbind
