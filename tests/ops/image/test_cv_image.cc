// _cvimresize and _cvcopyMakeBorder (mx.image's OpenCV operators) against OpenCV itself:
// goldens from tests/goldens/cv_image (scripts/make_cv_image_goldens.py, cv2.resize and
// cv2.copyMakeBorder), and the errors for what they do not take.
#include <fstream>

#include <nlohmann/json.hpp>

#include <symbind/core/graph.h>
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

namespace {
NDArray FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  NDArray buf(TShape({static_cast<int64_t>(bytes.size())}), DType::kUint8);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(buf.raw_data()));
  return buf;
}

// The mean absolute difference of two uint8 arrays of one shape.
double MeanDifference(const NDArray& got, const NDArray& want) {
  REQUIRE(got.shape() == want.shape());
  double sum = 0;
  for (int64_t i = 0; i < got.Size(); ++i)
    sum += std::abs(int{got.data<uint8_t>()[i]} - int{want.data<uint8_t>()[i]});
  return sum / static_cast<double>(got.Size());
}
}  // namespace

TEST_CASE("_cvimdecode and _cvimread decode PNG exactly and JPEG as OpenCV does, to a few units",
          "[ops][cv_image][goldens]") {
  const NDArray rgb = LoadNpy(kDir + "input_u8.npy");
  const NDArray png = FileBytes(kDir + "input_u8.png");
  CHECK(MaxDifference(Invoke("_cvimdecode", {}, {png})[0], rgb) == 0);
  CHECK(MaxDifference(Invoke("_cvimread", {{"filename", kDir + "input_u8.png"}}, std::vector<NDArray>{})[0], rgb) == 0);
  // to_rgb=False gives OpenCV's BGR order.
  const NDArray bgr = Invoke("_cvimdecode", {{"to_rgb", "False"}}, {png})[0];
  for (int64_t i = 0; i < rgb.Size(); i += 3) {
    CHECK(bgr.data<uint8_t>()[i] == rgb.data<uint8_t>()[i + 2]);
    CHECK(bgr.data<uint8_t>()[i + 1] == rgb.data<uint8_t>()[i + 1]);
  }
  const std::string jpeg = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/images/gradient-96x64.jpg";
  const NDArray colour = Invoke("_cvimread", {{"filename", jpeg}}, std::vector<NDArray>{})[0];
  const NDArray grey = Invoke("_cvimdecode", {{"flag", "0"}}, {FileBytes(jpeg)})[0];
  // stb_image's IDCT and chroma upsampling round differently from libjpeg's.
  CHECK(MaxDifference(colour, LoadNpy(kDir + "gradient_rgb.npy")) <= 8);
  CHECK(MeanDifference(colour, LoadNpy(kDir + "gradient_rgb.npy")) < 1.0);
  CHECK(MaxDifference(grey, LoadNpy(kDir + "gradient_grey.npy")) <= 8);
  // Written into an output of the decoded shape, as mx.image.imdecode(buf, out=...) does.
  NDArray out(rgb.shape(), DType::kUint8);
  Invoke("_cvimdecode", {}, {png}, {out});
  CHECK(MaxDifference(out, rgb) == 0);
}

TEST_CASE("_cvimdecode and _cvimread refuse bad input with a clear error", "[ops][cv_image]") {
  NDArray junk(TShape({16}), DType::kUint8);
  CHECK_THROWS_AS(Invoke("_cvimdecode", {}, {junk}), IOError);
  CHECK_THROWS_WITH(Invoke("_cvimdecode", {}, {RandomArray(TShape({16}), 1)}),
                    Catch::Contains("the buffer must be uint8"));
  CHECK_THROWS_WITH(Invoke("_cvimread", {{"filename", "/no/such/image.jpg"}}, std::vector<NDArray>{}),
                    Catch::Contains("/no/such/image.jpg"));
  NDArray wrong(TShape({2, 2, 3}), DType::kUint8);
  CHECK_THROWS_AS(Invoke("_cvimdecode", {}, {FileBytes(kDir + "input_u8.png")}, {wrong}), ShapeError);
  // The decoded size is known only from the bytes: no bound graph can hold the op.
  Symbol decode = Symbol::Create("_cvimdecode", "decode", {}, {{"buf", Symbol::Variable("buf")}}, {});
  CHECK_THROWS_WITH(InferShape(decode, {{"buf", TShape({16})}}), Catch::Contains("a dynamic shape"));
}
