// _contrib_calibrate_entropy: the KL-optimal threshold of a histogram (MXNet's entropy
// calibration), and the search it runs (calibrate_entropy.h).
#include <symbind/ops/quantization/calibrate_entropy.h>

#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>

#include <symbind/ops/op_util.h>

namespace symbind {

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
  const int64_t zero_bin = int64_t(bins / 2), half_quantized = num_quantized_bins / 2;
  const int64_t candidates = zero_bin - half_quantized + 1;
  std::vector<float> thresholds(static_cast<size_t>(candidates)), divergence(static_cast<size_t>(candidates));
  const std::vector<float>& counts = hist;
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
  return {thresholds[best], best_divergence};
}


namespace {

struct CalibrateEntropyParam : Parameter<CalibrateEntropyParam> {
  int num_quantized_bins;
  static void Declare(ParamDeclarer<CalibrateEntropyParam>& d) {
    d.field("num_quantized_bins", &CalibrateEntropyParam::num_quantized_bins).set_default(255).lower_bound(1)
        .describe("The number of quantized bins.");
  }
};

void Forward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<OpReq>&,
             const std::vector<NDArray>& out) {
  const std::vector<float> hist(in[0].fdata(), in[0].fdata() + in[0].Size());
  const std::vector<float> edges(in[1].fdata(), in[1].fdata() + in[1].Size());
  const EntropyThreshold t = OptimalThreshold(hist, edges, attrs.param<CalibrateEntropyParam>().num_quantized_bins);
  out[0].fdata()[0] = t.threshold;
  out[1].fdata()[0] = t.divergence;
}

}  // namespace

SYMBIND_REGISTER_OP(_contrib_calibrate_entropy)
    .describe(R"(The threshold of MXNet's entropy calibration for a histogram of an odd number of bins
over [-t, t]: the right edge of the central window whose quantization into num_quantized_bins bins
diverges least (Kullback-Leibler, after smoothing) from the histogram with its outliers folded in;
outputs the threshold and that divergence, each of shape (1,). Forward only.)")
    .set_params<CalibrateEntropyParam>()
    .set_arguments({"hist", "hist_edges"})
    .add_argument_doc("hist", "Bin counts (float32), an odd number of bins.")
    .add_argument_doc("hist_edges", "The bins' edges (float32), one more than the bins.")
    .set_outputs({"threshold", "divergence"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({1}));
      ShapeAssignCheck(out, 1, TShape({1}));
    })
    .set_forward(Forward);

}  // namespace symbind
