// _cvimresize and _cvcopyMakeBorder (mx.image's OpenCV operators) against OpenCV itself:
// goldens from tests/goldens/cv_image (scripts/make_cv_image_goldens.py, cv2.resize and
// cv2.copyMakeBorder), and the errors for what they do not take.
#include <fstream>

#include <nlohmann/json.hpp>

#include <symbind/executor/invoke.h>
#include <symbind/io/npy.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kDir = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/cv_image/";

nlohmann::json Manifest() {
  std::ifstream f(kDir + "manifest.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

// The largest difference between two arrays of one shape and dtype, as doubles.
double MaxDifference(const NDArray& got, const NDArray& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  std::vector<double> g(static_cast<size_t>(got.Size())), w(g.size());
  ConvertElements(got.raw_data(), got.dtype(), g.data(), DType::kFloat64, g.size());
  ConvertElements(want.raw_data(), want.dtype(), w.data(), DType::kFloat64, w.size());
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(g[i] - w[i]));
  return worst;
}
}  // namespace

TEST_CASE("_cvimresize and _cvcopyMakeBorder match OpenCV", "[ops][cv_image][goldens]") {
  const nlohmann::json m = Manifest();
  int resized = 0, padded = 0;
  for (const auto& c : m["cases"]) {
    const std::string stem = c["stem"], op = c["op"];
    INFO(stem);
    KwArgs params;
    for (auto& kv : c["params"].items()) params[kv.key()] = kv.value().get<std::string>();
    const NDArray src = LoadNpy(kDir + c["input"].get<std::string>());
    const NDArray want = LoadNpy(kDir + stem + ".npy");
    const NDArray got = Invoke(op, params, {src})[0];
    const bool u8 = src.dtype() == DType::kUint8;
    if (op == "_cvcopyMakeBorder") {
      CHECK(MaxDifference(got, want) == 0);  // copies and constants: exact
      ++padded;
      continue;
    }
    // uint8 in OpenCV's fixed point: within one unit (its vector and scalar code round
    // differently); float32 to float rounding.
    CHECK(MaxDifference(got, want) <= (u8 ? 1.0 : 2e-5));
    if (params["interp"] == "0") CHECK(MaxDifference(got, want) == 0);  // nearest copies
    ++resized;
  }
  CHECK(resized == 48);
  CHECK(padded == 14);
}

TEST_CASE("_cvimresize and _cvcopyMakeBorder refuse what OpenCV's calls would not take", "[ops][cv_image]") {
  const NDArray rgb = RandomArray(TShape({4, 5, 3}), 1);
  CHECK_THROWS_WITH(Invoke("_cvimresize", {{"w", "3"}, {"h", "2"}, {"interp", "4"}}, {rgb}),
                    Catch::Contains("interp 4 is not supported"));
  CHECK_THROWS_WITH(Invoke("_cvimresize", {{"w", "0"}, {"h", "2"}}, {rgb}), Catch::Contains("w"));
  CHECK_THROWS_AS(Invoke("_cvimresize", {{"w", "3"}, {"h", "2"}}, {RandomArray(TShape({4, 5}), 1)}), ShapeError);
  CHECK_THROWS_WITH(Invoke("_cvimresize", {{"w", "3"}, {"h", "2"}}, {NDArray(TShape({4, 5, 3}), DType::kInt32)}),
                    Catch::Contains("images of dtype int32 are not supported"));
  CHECK(Invoke("_cvimresize", {{"w", "3"}, {"h", "2"}, {"interp", "0"}}, {NDArray(TShape({4, 5, 3}), DType::kInt32)})[0]
            .shape() == TShape({2, 3, 3}));
  CHECK_THROWS_WITH(Invoke("_cvcopyMakeBorder", {{"top", "1"}, {"bot", "1"}, {"left", "1"}, {"right", "1"},
                                                 {"type", "5"}}, {rgb}),
                    Catch::Contains("type 5 is not supported"));
  CHECK_THROWS_AS(Invoke("_cvcopyMakeBorder", {{"top", "-1"}, {"bot", "1"}, {"left", "1"}, {"right", "1"}}, {rgb}),
                  ParamError);
  CHECK_THROWS_AS(Invoke("_cvcopyMakeBorder", {{"top", "1"}, {"bot", "1"}, {"left", "1"}, {"right", "1"}},
                         {RandomArray(TShape({4, 5, 6}), 1)}),
                  ShapeError);
}
