// Face alignment (vision/face_aligner.h) against tests/vision/make_face_align_goldens.py:
// NumPy's least-squares solution and OpenCV's warpAffine crop.
#include <symbind/vision/face_aligner.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "op_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::vision;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/face_align/";

nlohmann::json AlignGoldens() {
  std::ifstream f(kGoldens + "align.json");
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

Face FaceWithLandmarks(const nlohmann::json& landmarks) {
  Face f;
  f.has_landmarks = true;
  for (int k = 0; k < 5; ++k) {
    f.px[k] = landmarks[k][0].get<double>();
    f.py[k] = landmarks[k][1].get<double>();
  }
  return f;
}
}  // namespace

TEST_CASE("Face alignment's similarity is NumPy's least-squares solution", "[vision][align]") {
  const nlohmann::json golden = AlignGoldens();
  FaceAligner aligner;
  for (const auto& c : golden["cases"]) {
    const SimilarityTransform t = aligner.Transform(FaceWithLandmarks(c["landmarks"]));
    INFO(c["landmarks"].dump());
    CHECK(t.a == Approx(c["transform"][0].get<double>()).epsilon(1e-9).margin(1e-9));
    CHECK(t.b == Approx(c["transform"][1].get<double>()).epsilon(1e-9).margin(1e-9));
    CHECK(t.tx == Approx(c["transform"][2].get<double>()).epsilon(1e-9).margin(1e-7));
    CHECK(t.ty == Approx(c["transform"][3].get<double>()).epsilon(1e-9).margin(1e-7));
  }
  // The template maps onto itself; the inverse undoes the transform.
  Face on_template;
  on_template.has_landmarks = true;
  on_template.px = kArcFaceTemplateX;
  on_template.py = kArcFaceTemplateY;
  const SimilarityTransform id = aligner.Transform(on_template);
  CHECK(id.a == Approx(1));
  CHECK(id.b == Approx(0).margin(1e-12));
  CHECK(id.tx == Approx(0).margin(1e-9));
  const SimilarityTransform t = aligner.Transform(FaceWithLandmarks(golden["cases"][0]["landmarks"]));
  double x, y, bx, by;
  t.Apply(100, 50, &x, &y);
  t.Inverse().Apply(x, y, &bx, &by);
  CHECK(bx == Approx(100));
  CHECK(by == Approx(50));
  // A 224 crop uses the template scaled by 2.
  CHECK(FaceAligner(224).Transform(on_template).a == Approx(2));
}

TEST_CASE("Face alignment warps as OpenCV's warpAffine does", "[vision][align][shared]") {
  const nlohmann::json golden = AlignGoldens();
  const Image image = LoadImage(symbind_test::SharedDir() + "/models/mtcnn/test.jpg");
  const Image want = LoadImage(kGoldens + golden["crop"]["png"].get<std::string>());
  FaceAligner aligner;
  const Image crop = aligner.Align(image, FaceWithLandmarks(golden["cases"][0]["landmarks"]));
  REQUIRE(crop.width == 112);
  REQUIRE(crop.height == 112);
  REQUIRE(crop.channels == 3);
  REQUIRE(want.pixels.size() == crop.pixels.size());
  double sum = 0;
  int worst = 0;
  for (size_t i = 0; i < crop.pixels.size(); ++i) {
    const int d = std::abs(int(crop.pixels[i]) - int(want.pixels[i]));
    sum += d;
    worst = std::max(worst, d);
  }
  const double mean = sum / crop.pixels.size();
  // OpenCV decodes the JPEG with libjpeg (stb here) and interpolates in fixed point.
  WARN("aligned crop vs OpenCV: mean |diff| " << mean << ", max " << worst);
  CHECK(mean < 1.5);
  CHECK(worst <= 24);
}

TEST_CASE("Face alignment refuses faces it cannot align", "[vision][align]") {
  FaceAligner aligner;
  Image image(64, 64, 3);
  Face no_landmarks;
  CHECK_THROWS_WITH(aligner.Align(image, no_landmarks), Catch::Contains("no landmarks"));
  Face collapsed;
  collapsed.has_landmarks = true;
  CHECK_THROWS_WITH(aligner.Align(image, collapsed), Catch::Contains("coincide"));
  Face far = collapsed;
  far.px = {1e6, 2e6, 1.5e6, 1e6, 2e6};
  far.py = {1e6, 1e6, 1.5e6, 2e6, 2e6};
  const Image out = aligner.Align(image, far);  // entirely outside the image: black
  CHECK(std::all_of(out.pixels.begin(), out.pixels.end(), [](uint8_t v) { return v == 0; }));
  CHECK_THROWS_AS(aligner.Align(Image(), far), Error);
  CHECK_THROWS_AS(FaceAligner(0), Error);
  // A one-pixel image is sampled, not overrun.
  Image one(1, 1, 1);
  one.pixels[0] = 200;
  Face dot = collapsed;
  dot.px = {0, 1, 0.5, 0, 1};
  dot.py = {0, 0, 0.5, 1, 1};
  CHECK(aligner.Align(one, dot).channels == 1);
}
