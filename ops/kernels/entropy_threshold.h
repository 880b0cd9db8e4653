// The entropy (Kullback-Leibler) threshold of MXNet's calibration, shared by the operator
// _contrib_calibrate_entropy (ops/quantization/calibrate_entropy.cc, which MXNet's Python
// quantize_model calls) and the calibration of `symbind quantize` (predict/calibration.h).
//
//   EntropyThreshold t = OptimalThreshold(hist, edges, 255);   // hist: 8001 bins over [-t, t]
#pragma once
#include <vector>

namespace symbind {

struct EntropyThreshold {
  float threshold = 0, divergence = 0;
};

// MXNet's calibrate_entropy: `hist` has an odd number of bins over [edges.front(),
// edges.back()] (edges.size() == hist.size() + 1, symmetric about 0). For each candidate
// window of 2i+1 central bins (i from num_quantized_bins / 2 to the last), the outliers are
// folded into the window's end bins (p), the window is merged into num_quantized_bins bins and
// spread back over its nonzero bins (q), both are smoothed (zeros become 1e-4), and the
// Kullback-Leibler divergence of p from q is taken; the threshold is the right edge of the
// first window of least divergence. Evaluated in float32, as MXNet does, except the outlier
// sums, which are exact (MXNet adds them in float, one bin at a time). Throws ParamError for
// an even or empty histogram, edges of the wrong count, or fewer bins than num_quantized_bins.
EntropyThreshold OptimalThreshold(const std::vector<float>& hist, const std::vector<float>& edges,
                                  int num_quantized_bins);

}  // namespace symbind
