// Helpers shared by the loss heads (SoftmaxOutput, softmax_cross_entropy).
#pragma once
#include <algorithm>
#include <cmath>

#include "kernel_util.h"

namespace symbind {

// A softmax layout: `outer` independent groups, each softmaxed over `k` values that are
// `inner` apart.
struct SoftmaxLayout {
  int64_t outer, k, inner;
};

// y = softmax of x along the layout's k axis (max-subtracted, as mshadow's Softmax).
inline void SoftmaxGroups(const float* x, float* y, const SoftmaxLayout& l) {
  ParallelFor(l.outer * l.inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(l.k, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t g = b; g < e; ++g) {
                  int64_t o = g / l.inner, i = g % l.inner;
                  const float* xs = x + o * l.k * l.inner + i;
                  float* ys = y + o * l.k * l.inner + i;
                  float m = xs[0];
                  for (int64_t c = 1; c < l.k; ++c) m = std::max(m, xs[c * l.inner]);
                  float sum = 0;
                  for (int64_t c = 0; c < l.k; ++c) {
                    ys[c * l.inner] = std::exp(xs[c * l.inner] - m);
                    sum += ys[c * l.inner];
                  }
                  for (int64_t c = 0; c < l.k; ++c) ys[c * l.inner] /= sum;
                }
              });
}

}  // namespace symbind
