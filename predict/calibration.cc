#include <symbind/predict/calibration.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <symbind/core/error.h>
#include <symbind/ops/kernels/entropy_threshold.h>

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
  const float th = OptimalThreshold(std::vector<float>(hist_.begin(), hist_.end()),
                                    HistogramEdges(hist_threshold_, hist_.size()),
                                    as_unsigned ? kQuantizedBins * 2 + 1 : kQuantizedBins)
                       .threshold;
  return {as_unsigned ? 0.f : -th, th};
}

}  // namespace symbind
