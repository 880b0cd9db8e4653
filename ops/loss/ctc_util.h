// Connectionist Temporal Classification (Graves et al. 2006) for one sequence: the loss
// -log p(label | activations) with a softmax over classes inside, and its gradient with respect
// to the unnormalised activations, by the forward-backward recursion in log space (double).
// Shared by CTCLoss and the WarpCTC plugin op.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>
#include <symbind/ops/op_util.h>


namespace symbind::ctc_detail {

inline double LogAdd(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// Activations of time step t are act[t * stride + c] for c < classes, t < steps. `label` holds
// class indices (one equal to `blank` is kept, as warp-ctc does: no path skips into it). Writes d loss / d act into grad (same strides) when grad
// is not null. As MXNet's CPU CTC (warp-ctc), a label that no alignment of `steps` frames can
// produce (too long once repeats need a blank between them) gives loss 0 and gradient 0.
inline double CTCLossAndGrad(const float* act, int64_t stride, int64_t steps, int64_t classes,
                             const std::vector<int64_t>& label, int64_t blank, float* grad) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  if (grad)
    for (int64_t t = 0; t < steps; ++t) std::fill(grad + t * stride, grad + t * stride + classes, 0.0f);
  const int64_t L = static_cast<int64_t>(label.size()), S = 2 * L + 1;
  int64_t repeats = 0;
  for (int64_t i = 1; i < L; ++i) repeats += label[i] == label[i - 1];
  if (steps == 0 || L + repeats > steps) return 0.0;
  // log softmax per step.
  std::vector<double> lp(static_cast<size_t>(steps * classes));
  for (int64_t t = 0; t < steps; ++t) {
    const float* a = act + t * stride;
    const double m = *std::max_element(a, a + classes);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(a[c] - m);
    const double log_z = m + std::log(sum);
    for (int64_t c = 0; c < classes; ++c) lp[t * classes + c] = a[c] - log_z;
  }
  // The label with blanks around and between its symbols.
  std::vector<int64_t> ext(static_cast<size_t>(S), blank);
  for (int64_t i = 0; i < L; ++i) ext[2 * i + 1] = label[i];
  auto skip_allowed = [&](int64_t s, int64_t other) {  // may a path jump from `other` to s?
    return ext[s] != blank && ext[s] != ext[other];
  };
  std::vector<double> alpha(static_cast<size_t>(steps * S), kNegInf), beta(alpha.size(), kNegInf);
  alpha[0] = lp[blank];
  if (S > 1) alpha[1] = lp[ext[1]];
  for (int64_t t = 1; t < steps; ++t)
    for (int64_t s = 0; s < S; ++s) {
      double v = alpha[(t - 1) * S + s];
      if (s >= 1) v = LogAdd(v, alpha[(t - 1) * S + s - 1]);
      if (s >= 2 && skip_allowed(s, s - 2)) v = LogAdd(v, alpha[(t - 1) * S + s - 2]);
      alpha[t * S + s] = v + lp[t * classes + ext[s]];
    }
  const int64_t last = (steps - 1) * S;
  beta[last + S - 1] = lp[(steps - 1) * classes + ext[S - 1]];
  if (S > 1) beta[last + S - 2] = lp[(steps - 1) * classes + ext[S - 2]];
  for (int64_t t = steps - 2; t >= 0; --t)
    for (int64_t s = 0; s < S; ++s) {
      double v = beta[(t + 1) * S + s];
      if (s + 1 < S) v = LogAdd(v, beta[(t + 1) * S + s + 1]);
      if (s + 2 < S && skip_allowed(s, s + 2)) v = LogAdd(v, beta[(t + 1) * S + s + 2]);
      beta[t * S + s] = v + lp[t * classes + ext[s]];
    }
  double log_p = alpha[last + S - 1];
  if (S > 1) log_p = LogAdd(log_p, alpha[last + S - 2]);
  if (grad) {
    // d(-log p)/d act[t][c] = softmax[t][c] - sum over s with ext[s] = c of alpha*beta/(y p).
    std::vector<double> occupancy(static_cast<size_t>(classes));
    for (int64_t t = 0; t < steps; ++t) {
      std::fill(occupancy.begin(), occupancy.end(), kNegInf);
      for (int64_t s = 0; s < S; ++s)
        occupancy[ext[s]] = LogAdd(occupancy[ext[s]], alpha[t * S + s] + beta[t * S + s]);
      for (int64_t c = 0; c < classes; ++c) {
        const double y = lp[t * classes + c];
        grad[t * stride + c] = static_cast<float>(std::exp(y) - std::exp(occupancy[c] - y - log_p));
      }
    }
  }
  return -log_p;
}

// Runs `compute` (the per-sequence loop); the recursion's tables hold 2 * steps * (2 * max_label
// + 1) doubles per sequence, so a long sequence with a long label that exhausts memory is an
// OutOfMemoryError naming the node rather than std::bad_alloc.
template <typename F>
void WithCTCTables(const NodeAttrs& attrs, int64_t steps, int64_t max_label, const F& compute) {
  try {
    compute();
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(StrCat(InOperator(attrs), ": the CTC tables for ", steps, " steps and labels of up to ",
                                  max_label, " symbols do not fit in memory"));
  }
}

}  // namespace symbind::ctc_detail
