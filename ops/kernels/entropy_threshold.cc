#include <symbind/ops/kernels/entropy_threshold.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <string>

#include <symbind/core/error.h>

namespace symbind {

namespace {

// MXNet's SmoothDistribution, in place on v[0, n): zeros become eps, the nonzero entries give up
// as much in total. False (the divergence is then infinite) when every entry is zero or they
// cannot give it up.
bool Smooth(float* v, int64_t n, float eps = 0.0001f) {
  int64_t zeros = 0;
  for (int64_t k = 0; k < n; ++k) zeros += v[k] == 0.f;
  const int64_t nonzeros = n - zeros;
  if (nonzeros == 0) return false;
  const float eps1 = eps * static_cast<float>(zeros) / static_cast<float>(nonzeros);
  if (eps1 >= 1.0f) return false;
  for (int64_t k = 0; k < n; ++k) v[k] += v[k] == 0.f ? eps : -eps1;
  return true;
}

// Kullback-Leibler divergence of p from q after normalising both to sum 1 (in place).
float Divergence(float* p, float* q, int64_t n) {
  float p_sum = 0, q_sum = 0;
  for (int64_t k = 0; k < n; ++k) p_sum += p[k];
  for (int64_t k = 0; k < n; ++k) q_sum += q[k];
  float kl = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float pk = p[k] / p_sum, qk = q[k] / q_sum;
    if (pk > 0 && qk > 0) kl += pk * std::log(pk / qk);
  }
  return kl;
}

}  // namespace

EntropyThreshold OptimalThreshold(const std::vector<float>& hist, const std::vector<float>& edges, int num_quantized_bins) {
  const size_t bins = hist.size();
  if (bins == 0 || bins % 2 == 0)
    throw ParamError("OptimalThreshold needs an odd number of histogram bins, got " + std::to_string(bins));
  if (edges.size() != bins + 1)
    throw ParamError("OptimalThreshold: " + std::to_string(bins) + " bins need " + std::to_string(bins + 1) +
                     " edges, got " + std::to_string(edges.size()));
  if (num_quantized_bins < 1 || size_t(num_quantized_bins) > bins)
    throw ParamError("OptimalThreshold: " + std::to_string(num_quantized_bins) +
                     " quantized bins for a histogram of " + std::to_string(bins));
  const int64_t n = int64_t(bins), zero_bin = n / 2, half_quantized = num_quantized_bins / 2;
  const int64_t candidates = zero_bin - half_quantized + 1;
  // Sums of the counts left of each bin, for the outliers folded into a window's end bins.
  std::vector<double> before(bins + 1, 0.0);
  for (int64_t j = 0; j < n; ++j) before[size_t(j + 1)] = before[size_t(j)] + hist[size_t(j)];
  std::vector<float> thresholds(static_cast<size_t>(candidates)), divergence(static_cast<size_t>(candidates));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, candidates), [&](const tbb::blocked_range<int64_t>& r) {
    std::vector<float> p(bins), q(bins);
    std::vector<int64_t> sliced(bins);
    for (int64_t c = r.begin(); c < r.end(); ++c) {
      const int64_t i = c + half_quantized;
      const int64_t start = zero_bin - i, stop = zero_bin + i + 1, width = stop - start;
      thresholds[size_t(c)] = edges[size_t(stop)];
      // p: the window, outliers folded into its end bins (bin `start` counts as an outlier, and
      // the last bin keeps its own count); sliced: the window's counts without the outliers.
      sliced[0] = 0;
      for (int64_t k = 1; k < width; ++k) {
        p[size_t(k)] = hist[size_t(start + k)];
        sliced[size_t(k)] = static_cast<int64_t>(hist[size_t(start + k)]);
      }
      if (width == 1) {
        p[0] = static_cast<float>(before[bins]);  // one bin: every count
      } else {
        p[0] = static_cast<float>(before[size_t(start + 1)]);
        p[size_t(width - 1)] = static_cast<float>(before[bins] - before[size_t(stop - 1)]);
      }
      const int64_t merged = width / num_quantized_bins;
      std::fill(q.begin(), q.begin() + width, 0.f);
      for (int64_t j = 0; j < num_quantized_bins; ++j) {
        const int64_t lo = j * merged, hi = j == num_quantized_bins - 1 ? width : (j + 1) * merged;
        int64_t sum = 0, nonzero = 0;
        for (int64_t k = lo; k < hi; ++k) {
          sum += sliced[size_t(k)];
          nonzero += sliced[size_t(k)] != 0;
        }
        if (nonzero == 0) continue;
        const float level = float(sum) / float(nonzero);
        for (int64_t k = lo; k < hi; ++k)
          if (p[size_t(k)] != 0.f) q[size_t(k)] = level;
      }
      const bool smooth_p = Smooth(p.data(), width), smooth_q = Smooth(q.data(), width);
      divergence[size_t(c)] = smooth_p && smooth_q ? Divergence(p.data(), q.data(), width)
                                                   : std::numeric_limits<float>::infinity();
    }
  });
  size_t best = 0;
  float best_divergence = std::numeric_limits<float>::max();
  for (size_t c = 0; c < divergence.size(); ++c)
    if (divergence[c] < best_divergence) {
      best_divergence = divergence[c];
      best = c;
    }
  return {thresholds[best], best_divergence};
}

}  // namespace symbind
