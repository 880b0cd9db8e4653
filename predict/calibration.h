// Activation ranges for post-training quantization, computed as MXNet 1.9.1's quantize_model
// computes them (calib_mode "naive" and "entropy"; docs/quantization.md):
//
//   TensorCalibrator c(CalibMode::kEntropy);
//   for (const NDArray& batch_output : outputs_of_one_tensor) c.Collect(batch_output.fdata(), n);
//   CalibRange r = c.Range(/*unsigned_allowed=*/false);   // (-th, th) at the KL-optimal th
//
// naive: the smallest and largest value seen over every batch.
// entropy: a histogram of 8001 bins over [-t, t] (t: the largest magnitude seen, the range
// widened batch by batch as MXNet's combine_histogram does), then the threshold whose
// quantized distribution diverges least from it (OptimalThreshold, ops/kernels/entropy_threshold.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace symbind {

enum class CalibMode { kNone, kNaive, kEntropy };
// "none", "naive", "entropy"; anything else is a ParamError listing them.
CalibMode ParseCalibMode(const std::string& text);
const char* CalibModeName(CalibMode mode);

struct CalibRange {
  float min = 0, max = 0;
};

// One tensor's values over the calibration batches.
class TensorCalibrator {
 public:
  static constexpr int kHistogramBins = 8001;
  static constexpr int kQuantizedBins = 255;

  explicit TensorCalibrator(CalibMode mode);
  // Adds `n` values (NaN and infinities are an Error naming neither: the caller names the tensor).
  void Collect(const float* values, size_t n);
  bool empty() const { return !seen_; }
  // naive: (min, max). entropy: (-th, th), or (0, th) when no value was negative and
  // `unsigned_allowed` (quantized_dtype uint8 or auto), the threshold then taken over 511
  // quantized bins. Throws Error when nothing was collected or the mode is kNone.
  CalibRange Range(bool unsigned_allowed) const;

  // The entropy histogram as collected (for tests): bin counts and the half-width t.
  const std::vector<int64_t>& histogram() const { return hist_; }
  float histogram_threshold() const { return hist_threshold_; }

 private:
  CalibMode mode_;
  bool seen_ = false;
  float min_ = 0, max_ = 0;
  std::vector<int64_t> hist_;
  float hist_threshold_ = 0;
};

// np.histogram's bin counts of `values` over [-t, t] in `bins` equal bins (values outside
// dropped, t itself in the last bin), added to `counts`.
void AddToHistogram(const float* values, size_t n, float t, std::vector<int64_t>* counts);
// The edges of `bins` equal bins over [-t, t], as np.histogram returns them.
std::vector<float> HistogramEdges(float t, size_t bins);

}  // namespace symbind
