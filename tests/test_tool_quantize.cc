// `symbind quantize`: calibration from an .npy array or a directory of images, the files it
// writes, the report, and its errors.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <symbind/io/checkpoint.h>
#include <symbind/io/image.h>
#include <symbind/io/npy.h>
#include <symbind/predict/predictor.h>

#include <symbind/vision/retinaface.h>

#include "op_test_util.h"
#include "shared_dir.h"
#include "test_io_util.h"
#include "tool_test_util.h"

using namespace symbind;
using symbind_test::RunTool;

namespace {
const std::string kLeNet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet-symbol.json " +
                           SYMBIND_SOURCE_DIR + "/models/lenet-fashion-mnist/lenet-0008.params";
}  // namespace

TEST_CASE("tool: quantize LeNet from an npy array and from a directory of images", "[tool][quantize]") {
  if (!symbind_test::ToolBuilt()) return;
  NDArray calib = symbind::test::RandomArray(TShape({20, 1, 28, 28}), 4, 0.0f, 1.0f);
  const std::string npy = symbind_test::TempPath("quantize-calib.npy");
  SaveNpy(npy, calib);
  const std::string prefix = symbind_test::TempPath("lenet-int8");
  auto r = RunTool("quantize " + kLeNet + " --calib " + npy + " --batch 6 --exclude fc2 -o " + prefix);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("float32 fc2 (FullyConnected): excluded by name"));
  CHECK_THAT(r.output, Catch::Contains("float32 relu3 (Activation): not between quantized layers (smart mode)"));
  CHECK_THAT(r.output, Catch::Contains("float32 softmax (SoftmaxOutput): no int8 form"));
  CHECK_THAT(r.output, Catch::Contains("quantized 8 of 11 operators, 4 ranges calibrated (entropy) over 20 examples"));
  Symbol s;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(prefix, 0, &s, &args, &aux);
  // The oneDNN form (the default): conv1 in _sg_mkldnn_conv, its weight float32 in the file.
  CHECK(args.at("conv1_weight").dtype() == DType::kFloat32);
  CHECK(!args.count("conv1_weight_quantize"));
  CHECK(args.count("fc2_weight"));
  Predictor p(s, args, aux, {{"data", TShape({2, 1, 28, 28})}});
  p.Forward();
  CHECK(p.Output(0).shape() == TShape({2, 10}));

  // --form contrib: _contrib_quantized_conv with offline int8 weights.
  r = RunTool("quantize " + kLeNet + " --calib " + npy + " --form contrib -o " + prefix + "-contrib");
  INFO(r.output);
  REQUIRE(r.status == 0);
  LoadCheckpoint(prefix + "-contrib", 0, &s, &args, &aux);
  CHECK(args.at("conv1_weight_quantize").dtype() == DType::kInt8);

  // A directory of images, preprocessed as `run --image` does, at most 3 of them.
  const std::string dir = symbind_test::TempPath("quantize-images");
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 5; ++i) {
    Image img(32, 30, 3);
    for (size_t k = 0; k < img.pixels.size(); ++k) img.pixels[k] = uint8_t((k * 7 + size_t(i) * 31) % 256);
    SavePNG(dir + "/img" + std::to_string(i) + ".png", img);
  }
  std::ofstream(dir + "/notes.txt") << "not an image\n";
  r = RunTool("quantize " + kLeNet + " --calib " + dir + " --size 28,28 --scale 0.00392 --calib-mode naive " +
              "--num-calib-examples 3 --quantized-dtype auto -o " + prefix + "-dir");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("calibrated (naive) over 3 examples"));
}

TEST_CASE("tool: quantize refuses bad options with one clear line", "[tool][quantize]") {
  if (!symbind_test::ToolBuilt()) return;
  const std::string out = " -o " + symbind_test::TempPath("bad-int8");
  const std::string empty_dir = symbind_test::TempPath("quantize-empty");
  std::filesystem::create_directories(empty_dir);
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {kLeNet + out, "give --calib DIR or FILE.npy (or --calib-mode none)"},
      {kLeNet + " --calib /nonexistent.npy" + out, "/nonexistent.npy"},
      {kLeNet + " --calib-mode kl --calib x.npy" + out, "calibration mode 'kl' is none of: none, naive, entropy"},
      {kLeNet + " --calib-mode none --quantized-dtype int4" + out, "quantized dtype 'int4' is none of"},
      {kLeNet + " --calib-mode none --exclude conv7" + out, "excluded nodes not in the graph: conv7"},
      {kLeNet + " --calib " + empty_dir + " --size 28,28" + out, "no image files"},
      {kLeNet + " --calib-mode none --batch 0" + out, "--batch must be at least 1"},
      {kLeNet + " --calib-mode none --form mkl" + out, "quantized form 'mkl' is none of: contrib, onednn"},
  };
  for (const auto& c : cases) {
    const auto r = RunTool("quantize " + c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains(c.message));
  }
}

// A detector quantized as a user would: the shared RetinaFace export calibrated on the two shared
// photos at the detector's input size, then run by the library's RetinaFaceDetector. The default
// (oneDNN) form finds every float32 face; the contrib form, with one range per weight tensor,
// lost one or two of them here (docs/quantization.md).
TEST_CASE("tool: int8 RetinaFace (oneDNN form) finds the float32 faces", "[tool][quantize][shared]") {
  using namespace symbind::vision;
  if (!symbind_test::ToolBuilt()) return;
#ifdef SYMBIND_SANITIZER_BUILD
  // Four 640x480 forwards (15 s there); the sanitizers see the same CLI path in the LeNet test above.
  WARN("skipped in sanitizer builds");
  return;
#endif
  const std::string shared = symbind_test::SharedDir() + "/models";
  const std::string calib = symbind_test::TempPath("retina-calib");
  std::filesystem::create_directories(calib);
  for (const std::string photo : {"test.jpg", "test2.jpg"})
    std::filesystem::copy_file(shared + "/mtcnn/" + photo, calib + "/" + photo,
                               std::filesystem::copy_options::overwrite_existing);
  const std::string model = shared + "/retinaface/retina16", prefix = symbind_test::TempPath("retina16-int8");
  const auto r = RunTool("quantize " + model + "-symbol.json " + model + "-0000.params --calib " + calib +
                         " --size 480,640 --bgr -o " + prefix);
  INFO(r.output);
  REQUIRE(r.status == 0);

  RetinaFaceOptions o;
  o.anchor_scales = {{16, {8, 4}}};
  o.bgr = true;
  RetinaFaceDetector fp32(LoadModelSpec(model + ",0"), o), int8(LoadModelSpec(prefix + ",0"), o);
  const Image image = LoadImage(shared + "/mtcnn/test.jpg");
  const std::vector<Face> want = fp32.Detect(image), got = int8.Detect(image);
  REQUIRE(want.size() >= 3);
  for (const Face& w : want) {
    double best = 0;
    for (const Face& g : got) best = std::max(best, BoxIoU(g, w));
    INFO("float32 face " << w.x1 << "," << w.y1 << " - " << w.x2 << "," << w.y2 << " score " << w.score);
    CHECK(best >= 0.9);
  }
  CHECK(got.size() <= want.size() + 2);
}
