// MTCNN face detection (vision/mtcnn.h) on the shared photographs, against the goldens of the
// independent NumPy + OpenCV DNN (Caffe models) pipeline in scripts/mtcnn_reference.py.
#include <symbind/io/checkpoint.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include <symbind/vision/mtcnn.h>
#include <symbind/vision/nms.h>
#include "op_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::vision;

namespace {
const std::string kModels = symbind_test::SharedDir() + "/models/mtcnn";
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/mtcnn_detect/";

MtcnnDetector& SharedDetector() {
  static MtcnnDetector detector(kModels);
  return detector;
}

struct Agreement {
  double box = 0, score = 0, landmark = 0;
};

// Matches every golden face to the detected face with the nearest box and checks the
// tolerances; returns the largest differences seen.
Agreement CompareWithGolden(const std::vector<Face>& faces, const nlohmann::json& golden) {
  Agreement worst;
  const auto& want = golden["faces"];
  REQUIRE(faces.size() == want.size());
  std::vector<bool> used(faces.size(), false);
  for (const auto& g : want) {
    size_t best = 0;
    double best_d = 1e30;
    for (size_t i = 0; i < faces.size(); ++i) {
      const Face& f = faces[i];
      double d = std::max({std::fabs(f.x1 - g["box"][0].get<double>()),
                           std::fabs(f.y1 - g["box"][1].get<double>()),
                           std::fabs(f.x2 - g["box"][2].get<double>()),
                           std::fabs(f.y2 - g["box"][3].get<double>())});
      if (d < best_d) best_d = d, best = i;
    }
    INFO("golden face at " << g["box"].dump());
    CHECK_FALSE(used[best]);
    used[best] = true;
    const Face& f = faces[best];
    double ds = std::fabs(f.score - g["score"].get<double>());
    double dl = 0;
    for (int k = 0; k < 5; ++k) {
      dl = std::max(dl, std::fabs(f.px[k] - g["landmarks"][k][0].get<double>()));
      dl = std::max(dl, std::fabs(f.py[k] - g["landmarks"][k][1].get<double>()));
    }
    CHECK(best_d <= 2.0);
    CHECK(ds <= 1e-3);
    CHECK(dl <= 2.0);
    worst.box = std::max(worst.box, best_d);
    worst.score = std::max(worst.score, ds);
    worst.landmark = std::max(worst.landmark, dl);
  }
  return worst;
}
}  // namespace

TEST_CASE("MTCNN finds the faces the NumPy/OpenCV-DNN reference finds", "[vision][mtcnn][shared]") {
  MtcnnDetector& detector = SharedDetector();
  CHECK_FALSE(detector.has_landmark_net());  // no det4 among the shared models
  for (const char* name : {"test", "test2"}) {
    INFO(name);
    std::ifstream f(kGoldens + name + ".json");
    REQUIRE(f.good());
    nlohmann::json golden = nlohmann::json::parse(f);
    Image image = LoadImage(kModels + "/" + name + ".jpg");
    REQUIRE(image.width == golden["width"].get<int>());
    REQUIRE(image.height == golden["height"].get<int>());
    MtcnnOptions opt;
    opt.min_size = golden["settings"]["min_size"].get<double>();
    opt.factor = golden["settings"]["factor"].get<double>();
    for (int i = 0; i < 3; ++i)
      opt.thresholds[i] = golden["settings"]["thresholds"][i].get<double>();
    std::vector<Face> faces = detector.Detect(image, opt);
    Agreement a = CompareWithGolden(faces, golden);
    WARN(name << ": " << faces.size() << " faces; max |box| " << a.box << " px, |score| " << a.score
              << ", |landmark| " << a.landmark << " px");
    for (const auto& face : faces) {
      CHECK(face.score > 0.8);
      CHECK(face.x1 < face.x2);
      CHECK(face.y1 < face.y2);
      for (int k = 0; k < 5; ++k) {  // landmarks lie in (or very near) their box
        CHECK(face.px[k] > face.x1 - 5);
        CHECK(face.px[k] < face.x2 + 5);
        CHECK(face.py[k] > face.y1 - 5);
        CHECK(face.py[k] < face.y2 + 5);
      }
    }
  }
  SECTION("executors are reused for shapes seen before") {
    Image image = LoadImage(kModels + "/test2.jpg");
    detector.Detect(image);
    auto before = detector.num_executors();
    std::vector<Face> again = detector.Detect(image);
    CHECK(detector.num_executors() == before);
    CHECK(again.size() == 4);
  }
}

TEST_CASE("MTCNN's P-Net in bands of rows finds exactly the faces of whole images", "[vision][mtcnn][shared]") {
  MtcnnDetector& detector = SharedDetector();
  for (const char* name : {"test", "test2"}) {
    const Image image = LoadImage(kModels + "/" + name + ".jpg");
    MtcnnOptions whole;
    whole.pnet_band_pixels = 0;
    const std::vector<Face> want = detector.Detect(image, whole);
    REQUIRE(!want.empty());
    // The default bands; bands of the smallest height (8 output rows); and bands of 73 output
    // rows, which at test.jpg's first scale (600x450 in, 220 rows out) leave a last band of 1 row.
    for (int64_t band_pixels : {MtcnnOptions().pnet_band_pixels, int64_t{1}, int64_t{(73 + 5) * 2 * 600}}) {
      MtcnnOptions banded;
      banded.pnet_band_pixels = band_pixels;
      INFO(name << ", bands of " << banded.pnet_band_pixels << " pixels");
      const std::vector<Face> got = detector.Detect(image, banded);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].x1 == want[i].x1);
        CHECK(got[i].y1 == want[i].y1);
        CHECK(got[i].x2 == want[i].x2);
        CHECK(got[i].y2 == want[i].y2);
        CHECK(got[i].score == want[i].score);
        for (int k = 0; k < 5; ++k) {
          CHECK(got[i].px[k] == want[i].px[k]);
          CHECK(got[i].py[k] == want[i].py[k]);
        }
      }
    }
  }
}

TEST_CASE("MTCNN on images without faces, tiny images and bad input", "[vision][mtcnn][shared]") {
  MtcnnDetector& detector = SharedDetector();
  Image grey(200, 150, 3);
  std::fill(grey.pixels.begin(), grey.pixels.end(), 128);
  CHECK(detector.Detect(grey).empty());
  Image tiny(10, 30, 3);  // shorter side below min_size: no pyramid level at all
  CHECK(detector.Detect(tiny).empty());
  Image rgba(64, 48, 4);
  CHECK(detector.Detect(rgba).empty());
  Image one_channel(64, 48, 1);
  CHECK_THROWS_AS(detector.Detect(one_channel), Error);
  MtcnnOptions bad;
  bad.factor = 1.0;
  CHECK_THROWS_AS(detector.Detect(grey, bad), Error);
  CHECK_THROWS_AS(MtcnnDetector("/nonexistent/mtcnn"), Error);
}

TEST_CASE("MTCNN NMS and pyramid scales", "[vision][mtcnn]") {
  auto box = [](double x1, double y1, double x2, double y2, double s) {
    MtcnnBox b;
    b.x1 = x1, b.y1 = y1, b.x2 = x2, b.y2 = y2, b.score = s;
    return b;
  };
  // a and b overlap with IoU 81/119 = 0.68; c lies inside a (Min overlap 1, IoU 0.25) and
  // meets b in 16 of its 25 pixels.
  std::vector<MtcnnBox> boxes = {box(0, 0, 9, 9, 0.9), box(1, 1, 10, 10, 0.95),
                                   box(0, 0, 4, 4, 0.5), box(50, 50, 60, 60, 0.7)};
  CHECK(Nms(boxes, 0.7, false) == std::vector<size_t>{1, 0, 3, 2});
  CHECK(Nms(boxes, 0.5, false) == std::vector<size_t>{1, 3, 2});
  CHECK(Nms(boxes, 0.7, true) == std::vector<size_t>{1, 3, 2});  // a: 81/100; c: 16/25
  CHECK(Nms(std::vector<MtcnnBox>{}, 0.5, false).empty());
  // Equal scores: the later box wins.
  CHECK(Nms(std::vector<MtcnnBox>{box(0, 0, 9, 9, 0.5), box(0, 0, 9, 9, 0.5)}, 0.5, false) ==
        std::vector<size_t>{1});

  std::vector<double> s = MtcnnPyramidScales(345, 20, 0.709);
  REQUIRE(!s.empty());
  CHECK(s[0] == Approx(0.6));
  for (size_t i = 1; i < s.size(); ++i) CHECK(s[i] == Approx(s[i - 1] * 0.709));
  CHECK(345 * s.back() >= 12);
  CHECK(345 * s.back() * 0.709 < 12);
  CHECK(MtcnnPyramidScales(19, 20, 0.709).empty());
  CHECK(MtcnnPyramidScales(20, 20, 0.709).size() == 1);
}

TEST_CASE("MTCNN uses a det4 landmark net when the model directory holds one", "[vision][mtcnn][shared]") {
  // A stand-in det4 with the real interface: data (N,15,24,24) -> five (N,2) outputs. Zero
  // weights and biases (0.5, 0.5) put each point at the centre of its patch; the last output's
  // 0.9 is a move of more than 0.35 and must be ignored (also replaced by the centre).
  char dir_template[] = "/tmp/symbind_mtcnn_det4_XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  for (const char* n : {"det1", "det2", "det3"})
    for (const std::string suffix : {"-symbol.json", "-0001.params"})
      REQUIRE(symlink((kModels + "/" + n + suffix).c_str(), (dir + "/" + n + suffix).c_str()) == 0);
  Symbol data = Symbol::Variable("data");
  std::vector<Symbol> heads;
  std::map<std::string, NDArray> params;
  for (int k = 0; k < 5; ++k) {
    std::string name = "fc" + std::to_string(k);
    heads.push_back(OpBuilder("FullyConnected")
                        .SetParam("num_hidden", 2)
                        .SetInput("data", data)
                        .CreateSymbol(name));
    params[name + "_weight"] = NDArray(TShape({2, 15 * 24 * 24}));
    params[name + "_bias"] = NDArray(TShape({2}), {k == 4 ? 0.9f : 0.5f, 0.5f});
  }
  SaveCheckpoint(dir + "/det4", 1, Symbol::Group(heads), params, {});

  MtcnnDetector detector(dir);
  REQUIRE(detector.has_landmark_net());
  Image image = LoadImage(kModels + "/test2.jpg");
  MtcnnOptions plain;
  plain.refine_landmarks = false;
  std::vector<Face> base = detector.Detect(image, plain);
  std::vector<Face> refined = detector.Detect(image);
  REQUIRE(base.size() == refined.size());
  REQUIRE(!base.empty());
  CHECK(detector.num_executors()[3] == 1);
  for (size_t i = 0; i < base.size(); ++i) {
    const Face& b = base[i];
    CHECK(refined[i].x1 == b.x1);
    CHECK(refined[i].score == b.score);
    double side = std::nearbyint(std::max(b.x2 - b.x1 + 1, b.y2 - b.y1 + 1) * 0.25);
    if (std::fmod(side, 2.0) == 1.0) side += 1;
    for (int k = 0; k < 5; ++k) {
      CHECK(refined[i].px[k] == std::trunc(std::nearbyint(b.px[k] - 0.5 * side) + 0.5 * side));
      CHECK(refined[i].py[k] == std::trunc(std::nearbyint(b.py[k] - 0.5 * side) + 0.5 * side));
    }
  }
  for (const char* n : {"det1", "det2", "det3", "det4"})
    for (const std::string suffix : {"-symbol.json", "-0001.params"})
      std::remove((dir + "/" + n + suffix).c_str());
  rmdir(dir.c_str());
}
