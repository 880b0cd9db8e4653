// RetinaFace detection (vision/retinaface.h): decoding against the NumPy goldens of
// tests/vision/make_retinaface_goldens.py, the family's layouts, the real export in
// ../shared/models/retinaface against tests/vision/make_retinaface_e2e_goldens.py, and hostile
// inputs.
#include <symbind/io/image.h>
#include <symbind/io/model_file.h>
#include <symbind/io/symbol_json.h>
#include <symbind/vision/retinaface.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "model_test_util.h"
#include "op_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using namespace symbind::vision;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/retinaface/";

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

NDArray ArrayFromJson(const nlohmann::json& j) {
  std::vector<int64_t> dims = j["shape"].get<std::vector<int64_t>>();
  return NDArray(TShape(dims), j["values"].get<std::vector<float>>());
}

Model RetinaFaceExport() {
  return LoadModelSpec(symbind_test::SharedDir() + "/models/retinaface/retina16,0");
}

// The shared export's settings (../shared/README.md): stride 16, scales 8 and 4, BGR 0-255.
RetinaFaceOptions Retina16Options() {
  RetinaFaceOptions o;
  o.anchor_scales = {{16, {8, 4}}};
  o.bgr = true;
  return o;
}
}  // namespace

TEST_CASE("RetinaFace anchors are py-faster-rcnn's", "[vision][retinaface]") {
  RetinaFaceOptions o;
  auto a16 = RetinaFaceAnchors(16, o);
  REQUIRE(a16.size() == 2);
  CHECK(a16[0] == std::array<double, 4>{-56, -56, 71, 71});  // 128 px around (7.5, 7.5)
  CHECK(a16[1] == std::array<double, 4>{-24, -24, 39, 39});
  auto a32 = RetinaFaceAnchors(32, o);
  CHECK(a32[0] == std::array<double, 4>{-248, -248, 263, 263});
  o.anchor_ratios = {0.5, 1.0, 2.0};
  o.anchor_scales = {{8, {1}}};
  auto r = RetinaFaceAnchors(8, o);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == std::array<double, 4>{-3.5, 2, 18.5, 13});  // w round(sqrt(512)) = 23, h 12
  CHECK(r[2] == std::array<double, 4>{2.5, -3, 12.5, 18});  // w 11, h 22
  CHECK_THROWS_AS(RetinaFaceAnchors(4, o), Error);
}

TEST_CASE("RetinaFace decoding matches the NumPy reference", "[vision][retinaface]") {
  const nlohmann::json golden = ReadJson(kGoldens + "decode.json");
  for (const auto& c : golden["cases"]) {
    INFO(c["name"].get<std::string>());
    RetinaFaceOptions o;
    o.anchor_scales.clear();
    for (auto it = c["scales"].begin(); it != c["scales"].end(); ++it)
      o.anchor_scales[std::stoi(it.key())] = it.value().get<std::vector<double>>();
    o.anchor_ratios = c["ratios"].get<std::vector<double>>();
    o.anchor_base_size = c["base_size"].get<double>();
    o.threshold = c["threshold"].get<double>();
    o.nms_iou = c["nms_iou"].get<double>();
    std::vector<RetinaFaceHeads> heads;
    for (const auto& h : c["heads"]) {
      RetinaFaceHeads head;
      head.stride = h["stride"].get<int>();
      head.scores = ArrayFromJson(h["scores"]);
      head.boxes = ArrayFromJson(h["boxes"]);
      if (h.contains("landmarks")) head.landmarks = ArrayFromJson(h["landmarks"]);
      heads.push_back(head);
    }
    const std::vector<Face> faces = DecodeRetinaFace(heads, o, c["input_width"].get<int>(),
                                                     c["input_height"].get<int>(), c["image_scale"].get<double>());
    const auto& want = c["faces"];
    REQUIRE(faces.size() == want.size());
    REQUIRE(!faces.empty());
    for (size_t i = 0; i < faces.size(); ++i) {
      const Face& f = faces[i];
      const auto& g = want[i];
      CHECK(f.x1 == Approx(g["box"][0].get<double>()).margin(1e-9));
      CHECK(f.y1 == Approx(g["box"][1].get<double>()).margin(1e-9));
      CHECK(f.x2 == Approx(g["box"][2].get<double>()).margin(1e-9));
      CHECK(f.y2 == Approx(g["box"][3].get<double>()).margin(1e-9));
      CHECK(f.score == g["score"].get<double>());
      CHECK(f.has_landmarks == g.contains("landmarks"));
      if (f.has_landmarks)
        for (int k = 0; k < 5; ++k) {
          CHECK(f.px[k] == Approx(g["landmarks"][k][0].get<double>()).margin(1e-9));
          CHECK(f.py[k] == Approx(g["landmarks"][k][1].get<double>()).margin(1e-9));
        }
    }
  }
}

TEST_CASE("RetinaFace decoding names the head whose shape does not fit", "[vision][retinaface]") {
  RetinaFaceOptions o;
  RetinaFaceHeads h;
  h.stride = 16;
  h.scores = NDArray(TShape({1, 6, 2, 2}));  // 3 anchors, but stride 16 has 2 scales
  h.boxes = NDArray(TShape({1, 8, 2, 2}));
  CHECK_THROWS_WITH(DecodeRetinaFace({h}, o, 32, 32, 1.0), Catch::Contains("face_rpn_cls_prob_reshape_stride16"));
  h.scores = NDArray(TShape({1, 4, 2, 2}));
  h.landmarks = NDArray(TShape({1, 10, 2, 2}));
  CHECK_THROWS_WITH(DecodeRetinaFace({h}, o, 32, 32, 1.0), Catch::Contains("face_rpn_landmark_pred_stride16"));
}

TEST_CASE("RetinaFace refuses anchor settings that are not positive numbers", "[vision][retinaface]") {
  RetinaFaceHeads h;
  h.stride = 16;
  h.scores = NDArray(TShape({1, 4, 2, 2}));
  h.boxes = NDArray(TShape({1, 8, 2, 2}));
  const auto decode_with = [&](const std::function<void(RetinaFaceOptions&)>& change) {
    RetinaFaceOptions o;
    change(o);
    DecodeRetinaFace({h}, o, 32, 32, 1.0);
  };
  CHECK_NOTHROW(decode_with([](RetinaFaceOptions&) {}));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_scales[32] = {-32, 16}; }),
                    Catch::Contains("anchor scale -32 of stride 32"));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_scales[16] = {std::nan(""), 4}; }),
                    Catch::Contains("anchor scale nan of stride 16"));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_scales[0] = {1}; }),
                    Catch::Contains("anchor stride 0"));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_ratios = {1, 0}; }),
                    Catch::Contains("anchor ratio 0"));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_base_size = INFINITY; }),
                    Catch::Contains("anchor base size inf"));
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions& o) { o.anchor_scales.erase(16); }),
                    Catch::Contains("no anchor scales for stride 16"));
  h.boxes = NDArray(TShape({1, 12, 2, 2}));  // 6 values per anchor
  CHECK_THROWS_WITH(decode_with([](RetinaFaceOptions&) {}), Catch::Contains("face_rpn_bbox_pred_stride16"));
}

TEST_CASE("RetinaFace finds InsightFace's three-stride heads with landmarks", "[vision][retinaface]") {
  // InsightFace's MobileNet-0.25 deploy graph (bench/models), Gaussian weights: the heads are
  // found, every stride decodes, and faces carry landmarks.
  const Symbol symbol = LoadSymbolFile(std::string(SYMBIND_SOURCE_DIR) + "/bench/models/retinaface-mnet25-symbol.json");
  test::SharedModel m = test::GaussianModel(symbol, TShape({1, 3, 96, 128}));
  Model model{symbol, m.params, m.aux, {}};
  RetinaFaceOptions o;
  o.threshold = 0.0;  // every anchor is a candidate
  o.max_side = 128;
  RetinaFaceDetector detector(model, o);
  CHECK(detector.strides() == std::vector<int>{32, 16, 8});
  CHECK(detector.has_landmarks());
  Image image(128, 96, 3);
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>(i * 7);
  const std::vector<Face> faces = detector.Detect(image);
  REQUIRE(!faces.empty());
  for (const Face& f : faces) {
    CHECK(f.has_landmarks);
    CHECK(f.x1 >= 0);
    CHECK(f.x2 <= 127);
    CHECK(f.y2 <= 95);
  }
  REQUIRE(detector.last_heads().size() == 3);
  CHECK(detector.last_heads()[2].scores.shape() == TShape({1, 4, 12, 16}));
  CHECK(detector.last_heads()[2].landmarks.shape() == TShape({1, 20, 12, 16}));
  // Every candidate before NMS: 2 anchors at each of 3x4 + 6x8 + 12x16 positions.
  o.nms_iou = 1.0;
  detector.options() = o;
  CHECK(detector.Detect(image).size() == 2 * (12 + 48 + 192));
  CHECK(detector.num_predictors() == 1);

  Model no_heads{Symbol::Variable("data"), {}, {}, {}};
  CHECK_THROWS_WITH(RetinaFaceDetector(no_heads), Catch::Contains("face_rpn_cls_prob_reshape_stride"));
  RetinaFaceOptions missing;
  missing.anchor_scales = {{16, {8, 4}}};
  CHECK_THROWS_WITH(RetinaFaceDetector(model, missing), Catch::Contains("stride 32"));
}

TEST_CASE("RetinaFace on the real export finds the faces of the NumPy reference", "[vision][retinaface][shared]") {
  const nlohmann::json golden = ReadJson(kGoldens + "test_jpg.json");
  RetinaFaceOptions o = Retina16Options();
  o.threshold = golden["threshold"].get<double>();
  o.nms_iou = golden["nms_iou"].get<double>();
  RetinaFaceDetector detector(RetinaFaceExport(), o);
  CHECK(detector.strides() == std::vector<int>{16});
  CHECK_FALSE(detector.has_landmarks());
  const Image image = LoadImage(symbind_test::SharedDir() + "/models/mtcnn/test.jpg");
  const std::vector<Face> faces = detector.Detect(image);
  const auto& want = golden["faces"];
  REQUIRE(faces.size() == want.size());
  REQUIRE(faces.size() >= 3);
  double worst = 1;
  for (const auto& g : want) {
    Face ref;
    ref.x1 = g["box"][0], ref.y1 = g["box"][1], ref.x2 = g["box"][2], ref.y2 = g["box"][3];
    double best = 0;
    for (const Face& f : faces) best = std::max(best, BoxIoU(f, ref));
    INFO("reference face " << g["box"].dump());
    CHECK(best >= 0.9);
    worst = std::min(worst, best);
  }
  WARN(faces.size() << " faces; worst IoU with the reference " << worst << "; preprocess "
                    << detector.last_times().preprocess << " ms, forward " << detector.last_times().forward
                    << " ms, decode " << detector.last_times().decode << " ms");
  // Buffers are reused: a second run binds nothing new and finds the same faces.
  const std::vector<Face> again = detector.Detect(image);
  CHECK(detector.num_predictors() == 1);
  REQUIRE(again.size() == faces.size());
  for (size_t i = 0; i < faces.size(); ++i) CHECK(again[i].score == faces[i].score);
}

TEST_CASE("RetinaFace on hostile images: no faces, one pixel, 20000 px wide, bad files", "[vision][retinaface][shared]") {
  RetinaFaceDetector detector(RetinaFaceExport(), Retina16Options());
  Image grey(640, 480, 3);
  std::fill(grey.pixels.begin(), grey.pixels.end(), 128);
  CHECK(detector.Detect(grey).empty());
  CHECK(detector.Detect(Image(1, 1, 3)).empty());
  CHECK(detector.Detect(Image(1, 1, 1)).empty());
  Image wide(20000, 16, 3);
  CHECK_NOTHROW(detector.Detect(wide));
  Image tall(4, 20000, 4);
  CHECK_NOTHROW(detector.Detect(tall));
  CHECK_THROWS_AS(detector.Detect(Image()), Error);

  std::ifstream f(symbind_test::SharedDir() + "/models/mtcnn/test2.jpg", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 1000);
  CHECK_THROWS_AS(LoadImageFromMemory(bytes.data(), bytes.size() / 2, 3, "truncated.jpg"), IOError);
  CHECK_THROWS_AS(LoadModelSpec("/nonexistent/retina,0"), IOError);
  CHECK_THROWS_AS(LoadModelSpec("/nonexistent/model.symbind"), IOError);
}

TEST_CASE("RetinaFace loads from a checkpoint, a symbol and params, or a .symbind file alike", "[vision][retinaface][shared]") {
  const std::string prefix = symbind_test::SharedDir() + "/models/retinaface/retina16";
  const std::string path = "/tmp/symbind_retina16_" + std::to_string(::getpid()) + ".symbind";
  SaveModel(path, RetinaFaceExport());
  const Image image = LoadImage(symbind_test::SharedDir() + "/models/mtcnn/test2.jpg");
  const std::vector<Face> want = RetinaFaceDetector(RetinaFaceExport(), Retina16Options()).Detect(image);
  REQUIRE(!want.empty());
  for (const std::string& spec : {path, prefix + "-symbol.json," + prefix + "-0000.params"}) {
    INFO(spec);
    const std::vector<Face> got = RetinaFaceDetector(LoadModelSpec(spec), Retina16Options()).Detect(image);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].score == want[i].score);
  }
  std::remove(path.c_str());
  CHECK_THROWS_AS(LoadModelSpec(prefix), IOError);  // neither an epoch nor a .symbind file
  CHECK_THROWS_AS(LoadModelSpec(""), Error);
}
