// Calibration ranges (predict/calibration.h) against goldens that scripts/gen_calibration_goldens.py
// computes with NumPy from MXNet's published algorithm (np.histogram, combine_histogram, the KL
// threshold search), and against direct definitions for naive ranges.
#include <cmath>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <symbind/core/error.h>
#include <symbind/io/npy.h>
#include <symbind/ops/kernels/entropy_threshold.h>
#include <symbind/predict/calibration.h>

using namespace symbind;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/calibration/";

nlohmann::json Manifest() {
  std::ifstream f(kGoldens + "manifest.json");
  REQUIRE(f);
  return nlohmann::json::parse(f);
}
}  // namespace

TEST_CASE("calibration: entropy histograms and thresholds equal NumPy's (MXNet's algorithm)", "[quantize][calibration]") {
  const nlohmann::json manifest = Manifest();
  REQUIRE(manifest.size() == 3);
  for (const auto& [name, c] : manifest.items()) {
    INFO(name);
    TensorCalibrator cal(CalibMode::kEntropy);
    for (int k = 0; k < c["batches"].get<int>(); ++k) {
      const NDArray batch = LoadNpy(kGoldens + name + "_batch" + std::to_string(k) + ".npy");
      cal.Collect(batch.fdata(), batch.Size());
    }
    const NDArray hist = LoadNpy(kGoldens + name + "_hist.npy");
    REQUIRE(cal.histogram().size() == size_t(hist.Size()));
    const int64_t* expected = hist.data<int64_t>();
    size_t differing = 0;
    for (size_t b = 0; b < cal.histogram().size(); ++b) differing += cal.histogram()[b] != expected[b];
    CHECK(differing == 0);
    CHECK(cal.histogram_threshold() == Approx(c["threshold_of_histogram"].get<double>()).epsilon(1e-6));

    // The same histogram gives the same threshold as NumPy's search: the same candidate edge, so
    // equal up to float rounding of the edge (a near tie of divergences may pick the next bin).
    const std::vector<float> counts(expected, expected + hist.Size());
    const std::vector<float> edges = HistogramEdges(cal.histogram_threshold(), counts.size());
    const float bin = 2 * cal.histogram_threshold() / float(counts.size());
    CHECK(std::fabs(OptimalThreshold(counts, edges, 255).threshold - c["threshold_255"].get<float>()) <= 1.01f * bin);
    CHECK(std::fabs(OptimalThreshold(counts, edges, 511).threshold - c["threshold_511"].get<float>()) <= 1.01f * bin);

    // Range: symmetric for int8; (0, th) over 511 bins when unsigned is allowed and nothing was negative.
    const CalibRange r = cal.Range(false);
    CHECK(r.min == -r.max);
    CHECK(std::fabs(r.max - c["threshold_255"].get<float>()) <= 1.01f * bin);
    const CalibRange u = cal.Range(true);
    if (c["min"].get<double>() >= 0) {
      CHECK(u.min == 0.0f);
      CHECK(std::fabs(u.max - c["threshold_511"].get<float>()) <= 1.01f * bin);
    } else {
      CHECK(u.min == r.min);
      CHECK(u.max == r.max);
    }
  }
}

TEST_CASE("calibration: the entropy threshold cuts far outliers and keeps a uniform range", "[quantize][calibration]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> values(20000);
  for (float& v : values) v = normal(rng);
  values.push_back(50.f);  // one outlier sets the histogram's range
  TensorCalibrator bell(CalibMode::kEntropy);
  bell.Collect(values.data(), values.size());
  const CalibRange r = bell.Range(false);
  CHECK(r.max < 10.f);  // far below the outlier,
  CHECK(r.max > 2.f);   // yet covering the bulk of a unit normal

  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> flat(50000);
  for (float& v : flat) v = uniform(rng);
  TensorCalibrator box(CalibMode::kEntropy);
  box.Collect(flat.data(), flat.size());
  CHECK(box.Range(false).max > 0.9f);  // nothing to cut: the threshold stays near the edge
}

TEST_CASE("calibration: naive ranges are the min and max over every batch", "[quantize][calibration]") {
  TensorCalibrator c(CalibMode::kNaive);
  const std::vector<float> a = {0.5f, -2.0f, 3.0f}, b = {7.0f, 1.0f}, d = {-4.0f};
  c.Collect(a.data(), a.size());
  c.Collect(b.data(), b.size());
  c.Collect(d.data(), d.size());
  const CalibRange r = c.Range(true);
  CHECK(r.min == -4.0f);
  CHECK(r.max == 7.0f);
}

TEST_CASE("calibration: zeros, empty input and bad values", "[quantize][calibration]") {
  TensorCalibrator zeros(CalibMode::kEntropy);
  const std::vector<float> z(100, 0.f), later = {0.f, 2.f, -1.f};
  zeros.Collect(z.data(), z.size());
  CHECK(zeros.Range(false).max == 0.f);
  zeros.Collect(later.data(), later.size());  // a range after all-zero batches starts the histogram
  CHECK(zeros.histogram()[zeros.histogram().size() / 2] >= 100);
  CHECK(zeros.Range(false).max > 0.f);

  TensorCalibrator none(CalibMode::kEntropy);
  CHECK_THROWS_WITH(none.Range(false), Catch::Contains("no calibration values"));
  const std::vector<float> bad = {1.f, std::nanf("")};
  CHECK_THROWS_WITH(none.Collect(bad.data(), bad.size()), Catch::Contains("not finite"));
  CHECK_THROWS_AS(ParseCalibMode("kl"), ParamError);
  CHECK(ParseCalibMode("naive") == CalibMode::kNaive);
  CHECK_THROWS_WITH(OptimalThreshold({1, 2}, {0, 1, 2}, 1), Catch::Contains("odd number"));
  CHECK_THROWS_WITH(OptimalThreshold({1, 2, 3}, {0, 1}, 1), Catch::Contains("edges"));
  CHECK_THROWS_WITH(OptimalThreshold({1, 2, 3}, {0, 1, 2, 3}, 5), Catch::Contains("quantized bins"));
}
