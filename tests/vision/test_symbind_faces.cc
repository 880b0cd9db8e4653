// The symbind-faces app (apps/faces_main.cc) as a user runs it: RetinaFace and MTCNN
// detection on the shared photographs, embeddings, compare, search and attributes with
// synthetic InsightFace-shaped models saved as checkpoints, and bad input.
#include <symbind/io/checkpoint.h>
#include <symbind/io/image.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "op_test_util.h"
#include "shared_dir.h"
#include "tool_test_util.h"

using namespace symbind;
using nlohmann::json;

namespace {
const std::string kShared = symbind_test::SharedDir();
const std::string kRetina = " --detector " + kShared + "/models/retinaface/retina16,0 --anchors 16=8,4 --bgr";
const std::string kMtcnn = " --mtcnn " + kShared + "/models/mtcnn";

std::string App() { return symbind_test::BuiltProgramPath("apps/symbind-faces"); }

symbind_test::RunResult RunApp(const std::string& args) { return symbind_test::RunShell(App() + " " + args + " 2>&1"); }

std::vector<json> JsonLines(const std::string& output) {
  std::vector<json> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') lines.push_back(json::parse(line));
  return lines;
}

std::string TempDir() {
  char dir[] = "/tmp/symbind_faces_app_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return dir;
}

// data -> fc1 (FullyConnected over 3x112x112) saved as PREFIX-symbol.json / PREFIX-0000.params.
void SaveLinearModel(const std::string& prefix, int hidden, const std::vector<float>& bias, float weight_scale) {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = OpBuilder("FullyConnected").SetParam("num_hidden", hidden).SetInput("data", data).CreateSymbol("fc1");
  const int64_t pixels = 3 * 112 * 112;
  NDArray w(TShape({hidden, pixels}));
  for (int64_t i = 0; i < w.Size(); ++i) w.fdata()[i] = static_cast<float>(std::sin(0.37 * i) * weight_scale);
  SaveCheckpoint(prefix, 0, fc1, {{"fc1_weight", w}, {"fc1_bias", NDArray(TShape({hidden}), bias)}}, {});
}
}  // namespace

TEST_CASE("symbind-faces detect prints the faces as JSON lines and draws them", "[vision][faces_app][shared]") {
  if (!symbind_test::ProgramBuilt(App())) return;
  const std::string dir = TempDir();
  const std::string image = kShared + "/models/mtcnn/test.jpg";
  auto r = RunApp("detect " + image + kRetina + " --draw " + dir + "/faces.png --bench");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::vector<json> lines = JsonLines(r.output);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["width"] == 1000);
  std::ifstream golden_file(std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/retinaface/test_jpg.json");
  const json golden = json::parse(golden_file);
  CHECK(lines[0]["faces"].size() == golden["faces"].size());
  CHECK(r.output.find("bench detect: forward") != std::string::npos);
  CHECK(LoadImage(dir + "/faces.png").width == 1000);

  r = RunApp("detect " + image + " " + kShared + "/models/mtcnn/test2.jpg" + kMtcnn);
  REQUIRE(r.status == 0);
  lines = JsonLines(r.output);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["faces"].size() == 20);  // as mtcnn-detect
  CHECK(lines[1]["faces"][0]["landmarks"].size() == 5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("symbind-faces embed, compare, search and attributes", "[vision][faces_app][shared]") {
  if (!symbind_test::ProgramBuilt(App())) return;
  const std::string dir = TempDir();
  SaveLinearModel(dir + "/embedder", 16, std::vector<float>(16, 0.0f), 1e-3f);
  std::vector<float> genderage = {0.2f, 0.8f};
  for (int i = 0; i < 100; ++i) {
    genderage.push_back(i < 37 ? 0.1f : 0.9f);
    genderage.push_back(i < 37 ? 0.9f : 0.1f);
  }
  SaveLinearModel(dir + "/genderage", 202, genderage, 0.0f);
  const std::string a = kShared + "/models/mtcnn/test.jpg", b = kShared + "/models/mtcnn/test2.jpg";
  const std::string embedder = " --embedder " + dir + "/embedder,0";

  auto r = RunApp("embed " + a + " " + b + kMtcnn + embedder + " --flip");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::vector<json> lines = JsonLines(r.output);
  REQUIRE(lines.size() == 2);
  REQUIRE(lines[0]["embedding"].size() == 16);
  double norm = 0;
  for (double v : lines[0]["embedding"]) norm += v * v;
  CHECK(norm == Approx(1).epsilon(1e-5));

  r = RunApp("compare " + a + " " + a + kMtcnn + embedder);
  REQUIRE(r.status == 0);
  lines = JsonLines(r.output);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["cosine"].get<double>() == Approx(1).epsilon(1e-5));
  CHECK(lines[0]["same"] == true);

  std::filesystem::create_directory(dir + "/gallery");
  std::filesystem::copy_file(a, dir + "/gallery/a.jpg");
  std::filesystem::copy_file(b, dir + "/gallery/b.jpg");
  std::ofstream(dir + "/gallery/notes.txt") << "not an image";
  r = RunApp("search " + dir + "/gallery " + a + kMtcnn + embedder);
  REQUIRE(r.status == 0);
  lines = JsonLines(r.output);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["other"] == dir + "/gallery/a.jpg");
  CHECK(lines[0]["cosine"].get<double>() >= lines[1]["cosine"].get<double>());

  r = RunApp("attributes " + b + kMtcnn + " --genderage " + dir + "/genderage,0");
  REQUIRE(r.status == 0);
  lines = JsonLines(r.output);
  REQUIRE(lines.size() == 1);
  REQUIRE(lines[0]["faces"].size() == 4);
  CHECK(lines[0]["faces"][0]["age"] == 37);
  CHECK(lines[0]["faces"][0]["male"] == true);

  // RetinaFace without landmark heads cannot align: a clear error.
  r = RunApp("embed " + a + kRetina + embedder);
  CHECK(r.status == 1);
  CHECK(r.output.find("no landmarks") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("symbind-faces on bad input: a clear error, never a crash", "[vision][faces_app][shared]") {
  if (!symbind_test::ProgramBuilt(App())) return;
  const std::string dir = TempDir();
  std::ifstream in(kShared + "/models/mtcnn/test2.jpg", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.jpg", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto r = RunApp("detect " + dir + "/truncated.jpg" + kRetina);
  CHECK(r.status == 1);
  CHECK(r.output.find("truncated.jpg") != std::string::npos);
  r = RunApp("detect " + dir + "/truncated.jpg");
  CHECK(r.status == 1);
  r = RunApp("detect " + kShared + "/models/mtcnn/test2.jpg");
  CHECK(r.status == 1);
  CHECK(r.output.find("--detector") != std::string::npos);
  r = RunApp("detect " + kShared + "/models/mtcnn/test2.jpg --detector " + dir + "/missing,0");
  CHECK(r.status == 1);
  CHECK(r.output.find("missing") != std::string::npos);
  Image blank(20000, 8, 3);
  SavePNG(dir + "/wide.png", blank);
  r = RunApp("detect " + dir + "/wide.png" + kRetina);
  CHECK(r.status == 0);
  CHECK(JsonLines(r.output).at(0)["faces"].empty());
  r = RunApp("compare " + dir + "/wide.png " + dir + "/wide.png" + kMtcnn + " --embedder x,0");
  CHECK(r.status == 1);
  CHECK(r.output.find("no face found") != std::string::npos);
  std::filesystem::remove_all(dir);
}
