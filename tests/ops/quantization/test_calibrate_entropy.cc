// _contrib_calibrate_entropy (MXNet's Python quantize_model calls it in entropy mode) against the
// NumPy goldens of scripts/gen_calibration_goldens.py.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <symbind/io/npy.h>
#include <symbind/predict/calibration.h>

#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_contrib_calibrate_entropy: the KL threshold of a histogram and its divergence", "[ops][quantize]") {
  const std::string dir = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/calibration/";
  std::ifstream f(dir + "manifest.json");
  REQUIRE(f);
  const nlohmann::json manifest = nlohmann::json::parse(f);
  const auto& c = manifest.at("gaussian_outliers");
  const NDArray counts = LoadNpy(dir + "gaussian_outliers_hist.npy");
  NDArray hist(counts.shape());
  for (int64_t i = 0; i < counts.Size(); ++i) hist.fdata()[i] = float(counts.data<int64_t>()[i]);
  const float t = c["threshold_of_histogram"].get<float>();
  const std::vector<float> edges = HistogramEdges(t, size_t(hist.Size()));
  const NDArray edge_array(TShape({int64_t(edges.size())}), edges);
  for (int bins : {255, 511}) {
    INFO(bins << " quantized bins");
    const auto outs = RunAll("_contrib_calibrate_entropy", {{"num_quantized_bins", std::to_string(bins)}},
                             {{"hist", hist}, {"hist_edges", edge_array}});
    REQUIRE(outs.size() == 2);
    CHECK(outs[0].shape() == TShape({1}));
    const float want = c[bins == 255 ? "threshold_255" : "threshold_511"].get<float>();
    CHECK(std::fabs(outs[0].fdata()[0] - want) <= 1.01f * 2 * t / float(hist.Size()));
    CHECK(outs[1].fdata()[0] >= 0.0f);
    CHECK(std::isfinite(outs[1].fdata()[0]));
  }
  const NDArray even(TShape({4}), std::vector<float>{1, 2, 3, 4});
  CHECK_THROWS_WITH(RunAll("_contrib_calibrate_entropy", {}, {{"hist", even}, {"hist_edges", RandomArray(TShape({5}), 1)}}),
                    Catch::Contains("odd number of histogram bins"));
}
