#include <symbind/predict/calibration.h>

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <symbind/core/error.h>

namespace symbind {

CalibMode ParseCalibMode(const std::string& text) {
  if (text == "none") return CalibMode::kNone;
  if (text == "naive") return CalibMode::kNaive;
  if (text == "entropy") return CalibMode::kEntropy;
  throw ParamError("calibration mode '" + text + "' is none of: none, naive, entropy");
}

const char* CalibModeName(CalibMode mode) {
  switch (mode) {
    case CalibMode::kNone: return "none";
    case CalibMode::kNaive: return "naive";
    case CalibMode::kEntropy: return "entropy";
  }
  return "?";
}

std::vector<float> HistogramEdges(float t, size_t bins) {
  std::vector<float> edges(bins + 1);
  const double lo = -double(t), step = 2.0 * double(t) / double(bins);
  for (size_t i = 0; i <= bins; ++i) edges[i] = float(lo + step * double(i));
  edges[bins] = t;
  return edges;
}

void AddToHistogram(const float* values, size_t n, float t, std::vector<int64_t>* counts) {
  const int64_t bins = static_cast<int64_t>(counts->size());
  const std::vector<float> edges = HistogramEdges(t, counts->size());
  const double per_unit = double(bins) / (2.0 * double(t));
  for (size_t i = 0; i < n; ++i) {
    const float x = values[i];
    if (!(x >= -t && x <= t)) continue;  // outside the range (np.histogram drops it)
    int64_t b = std::min<int64_t>(static_cast<int64_t>((double(x) + double(t)) * per_unit), bins - 1);
    // The edges decide, as np.histogram's corrections make them: edges[b] <= x < edges[b + 1],
    // the last bin closed.
    while (b > 0 && x < edges[b]) --b;
    while (b < bins - 1 && x >= edges[b + 1]) ++b;
    ++(*counts)[b];
  }
}

namespace {

// MXNet's SmoothDistribution: zeros become eps, the nonzero entries give up as much in total;
// empty when every entry is zero or they cannot give it up.
std::vector<float> Smooth(const std::vector<float>& p, float eps = 0.0001f) {
  size_t zeros = 0;
  for (float v : p) zeros += v == 0.f;
  const size_t nonzeros = p.size() - zeros;
  if (nonzeros == 0) return {};
  const float eps1 = eps * static_cast<float>(zeros) / static_cast<float>(nonzeros);
  if (eps1 >= 1.0f) return {};
  std::vector<float> out = p;
  for (float& v : out) v += v == 0.f ? eps : -eps1;
  return out;
}

float Divergence(std::vector<float> p, std::vector<float> q) {
  float p_sum = 0, q_sum = 0;
  for (float v : p) p_sum += v;
  for (float v : q) q_sum += v;
  for (float& v : p) v /= p_sum;
  for (float& v : q) v /= q_sum;
  float kl = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0 && q[i] > 0) kl += p[i] * std::log(p[i] / q[i]);
  return kl;
}

}  // namespace

float OptimalThreshold(const std::vector<int64_t>& hist, const std::vector<float>& edges, int num_quantized_bins) {
  const size_t bins = hist.size();
  if (bins == 0 || bins % 2 == 0)
    throw ParamError("OptimalThreshold needs an odd number of histogram bins, got " + std::to_string(bins));
  if (edges.size() != bins + 1)
    throw ParamError("OptimalThreshold: " + std::to_string(bins) + " bins need " + std::to_string(bins + 1) +
                     " edges, got " + std::to_string(edges.size()));
  if (num_quantized_bins < 1 || size_t(num_quantized_bins) > bins)
    throw ParamError("OptimalThreshold: " + std::to_string(num_quantized_bins) +
                     " quantized bins for a histogram of " + std::to_string(bins));
  const int64_t zero_bin = int64_t(bins / 2), half_quantized = num_quantized_bins / 2;
  const int64_t candidates = zero_bin - half_quantized + 1;
  std::vector<float> thresholds(static_cast<size_t>(candidates)), divergence(static_cast<size_t>(candidates));
  const std::vector<float> counts(hist.begin(), hist.end());  // MXNet reads the histogram as float32
  tbb::parallel_for(int64_t(0), candidates, [&](int64_t c) {
    const int64_t i = c + half_quantized;
    const int64_t start = zero_bin - i, stop = zero_bin + i + 1, width = stop - start;
    thresholds[size_t(c)] = edges[size_t(stop)];
    // p: the window, outliers folded into its end bins (bin `start` counts as an outlier);
    // sliced: the window without them.
    std::vector<float> p(size_t(width), 0.f);
    std::vector<int64_t> sliced(size_t(width), 0);
    for (int64_t j = 0; j < int64_t(bins); ++j) {
      if (j <= start) {
        p[0] += counts[size_t(j)];
      } else if (j >= stop) {
        p.back() += counts[size_t(j)];
      } else {
        sliced[size_t(j - start)] = static_cast<int64_t>(counts[size_t(j)]);
        p[size_t(j - start)] = counts[size_t(j)];
      }
    }
    const int64_t merged = width / num_quantized_bins;
    std::vector<float> q(size_t(width), 0.f);
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
    const std::vector<float> ps = Smooth(p), qs = Smooth(q);
    divergence[size_t(c)] =
        ps.empty() || qs.empty() ? std::numeric_limits<float>::infinity() : Divergence(ps, qs);
  });
  size_t best = 0;
  float best_divergence = std::numeric_limits<float>::max();
  for (size_t c = 0; c < divergence.size(); ++c)
    if (divergence[c] < best_divergence) {
      best_divergence = divergence[c];
      best = c;
    }
  return thresholds[best];
}

TensorCalibrator::TensorCalibrator(CalibMode mode) : mode_(mode) {}

void TensorCalibrator::Collect(const float* values, size_t n) {
  if (n == 0) return;
  float lo = values[0], hi = values[0];
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) throw Error("a value that is not finite (" + std::to_string(values[i]) + ")");
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  const bool first = !seen_;
  min_ = first ? lo : std::min(min_, lo);
  max_ = first ? hi : std::max(max_, hi);
  seen_ = true;
  if (mode_ != CalibMode::kEntropy) return;

  const float t = std::max(std::fabs(lo), std::fabs(hi));
  if (first || hist_threshold_ == 0.f) {
    // Every value so far was 0 (a zero range has no bins to widen): start over at t, the
    // earlier zeros in the middle bin.
    const int64_t zeros = first ? 0 : hist_[hist_.size() / 2];
    if (t == 0.f) {
      hist_.assign(kHistogramBins, 0);
      hist_[hist_.size() / 2] = zeros + int64_t(n);
      hist_threshold_ = 0.f;
      return;
    }
    hist_.assign(kHistogramBins, 0);
    hist_[hist_.size() / 2] += zeros;
    hist_threshold_ = t;
    AddToHistogram(values, n, t, &hist_);
    return;
  }
  if (t <= hist_threshold_) {
    AddToHistogram(values, n, hist_threshold_, &hist_);
    return;
  }
  // MXNet's combine_histogram: widen by whole bins of the old width on both sides.
  const size_t old_bins = hist_.size();
  const float step = 2.0f * hist_threshold_ / float(old_bins);
  const int64_t added = static_cast<int64_t>(std::floor((t - hist_threshold_) / step) + 1);
  const float new_threshold = float(added) * step + hist_threshold_;
  std::vector<int64_t> widened(old_bins + 2 * size_t(added), 0);
  AddToHistogram(values, n, new_threshold, &widened);
  for (size_t b = 0; b < old_bins; ++b) widened[size_t(added) + b] += hist_[b];
  hist_ = std::move(widened);
  hist_threshold_ = new_threshold;
}

CalibRange TensorCalibrator::Range(bool unsigned_allowed) const {
  if (mode_ == CalibMode::kNone) throw Error("calibration mode none computes no range");
  if (!seen_) throw Error("no calibration values were collected");
  if (mode_ == CalibMode::kNaive) return {min_, max_};
  if (hist_threshold_ == 0.f) return {0.f, 0.f};
  const bool as_unsigned = unsigned_allowed && min_ >= 0;
  const float th = OptimalThreshold(hist_, HistogramEdges(hist_threshold_, hist_.size()),
                                    as_unsigned ? kQuantizedBins * 2 + 1 : kQuantizedBins);
  return {as_unsigned ? 0.f : -th, th};
}

}  // namespace symbind
