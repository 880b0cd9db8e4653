// The symbind-faces app (apps/faces_main.cc) as a user runs it: RetinaFace and MTCNN
// detection on the shared photographs, embeddings, compare, search and attributes with
// synthetic InsightFace-shaped models saved as checkpoints, and bad input.
#include <symbind/io/checkpoint.h>
#include <symbind/io/image.h>
#include <symbind/io/ndarray_file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
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
// A RetinaFace-shaped export with constant heads at strides 32, 16 and 8 (InsightFace's
// layout: 2 anchors, landmarks): every stride-32 position proposes its 256-pixel anchor with
// score 0.9 and five landmarks inside it, so that detection, alignment and the models after it
// all run on any image. Each head is a strided 1x1 convolution with zero weights and a bias.
void SaveConstantRetinaFace(const std::string& prefix) {
  Symbol data = Symbol::Variable("data");
  std::vector<Symbol> heads;
  std::map<std::string, NDArray> args;
  const std::vector<float> landmarks = {-0.15f, -0.1f, 0.15f, -0.1f, 0.0f, 0.05f, -0.12f, 0.2f, 0.12f, 0.2f};
  for (int stride : {32, 16, 8}) {
    for (const auto& head : std::vector<std::pair<std::string, int>>{
             {"cls_prob_reshape", 4}, {"bbox_pred", 8}, {"landmark_pred", 20}}) {
      const std::string name = "face_rpn_" + head.first + "_stride" + std::to_string(stride);
      const int filters = head.second;
      heads.push_back(OpBuilder("Convolution")
                          .SetParam("kernel", "(1,1)")
                          .SetParam("stride", "(" + std::to_string(stride) + "," + std::to_string(stride) + ")")
                          .SetParam("num_filter", filters)
                          .SetInput("data", data)
                          .CreateSymbol(name));
      std::vector<float> bias(static_cast<size_t>(filters), 0.0f);
      if (stride == 32 && head.first == "cls_prob_reshape") bias[3] = 0.9f;  // anchor 1 (scale 16): a face
      if (head.first == "landmark_pred")
        for (int a = 0; a < 2; ++a) std::copy(landmarks.begin(), landmarks.end(), bias.begin() + a * 10);
      args[name + "_weight"] = NDArray(TShape({filters, 3, 1, 1}), std::vector<float>(static_cast<size_t>(filters) * 3, 0));
      args[name + "_bias"] = NDArray(TShape({filters}), bias);
    }
  }
  SaveCheckpoint(prefix, 0, Symbol::Group(heads), args, {});
}

// The lines of the ```sh block that follows `marker` in docs/faces.md.
std::vector<std::string> DocBlock(const std::string& marker) {
  std::ifstream in(std::string(SYMBIND_SOURCE_DIR) + "/docs/faces.md");
  std::string line;
  while (std::getline(in, line) && line.find(marker) == std::string::npos) {
  }
  REQUIRE(std::getline(in, line));
  REQUIRE(line == "```sh");
  std::vector<std::string> commands;
  while (std::getline(in, line) && line != "```") commands.push_back(line);
  return commands;
}
}  // namespace

TEST_CASE("symbind-faces: the embed, compare, search and attributes commands of docs/faces.md run as written",
          "[vision][faces_app][shared]") {
  if (!symbind_test::ProgramBuilt(App())) return;
  // The models the commands name, made here (InsightFace's exports are not in the repository or
  // ../shared), and the photographs under the names they use.
  const std::string dir = TempDir();
  namespace fs = std::filesystem;
  for (const char* d : {"mnet.25", "R50", "model-y1-test2", "model-r100-ii", "gamodel-r50", "gallery"})
    fs::create_directory(dir + "/" + d);
  SaveConstantRetinaFace(dir + "/mnet.25/mnet.25");
  SaveConstantRetinaFace(dir + "/R50/R50");
  SaveLinearModel(dir + "/model-y1-test2/model", 128, std::vector<float>(128, 0.0f), 1e-3f);
  SaveLinearModel(dir + "/model-r100-ii/model", 512, std::vector<float>(512, 0.0f), 1e-3f);
  std::vector<float> genderage;
  for (int i = 0; i < 101; ++i) genderage.insert(genderage.end(), {0.3f, 0.7f});
  SaveLinearModel(dir + "/gamodel-r50/model", 202, genderage, 0.0f);
  fs::create_directory_symlink(kShared + "/models/mtcnn", dir + "/mtcnn-model");
  const std::string a = kShared + "/models/mtcnn/test.jpg", b = kShared + "/models/mtcnn/test2.jpg";
  for (const auto& copy : std::vector<std::pair<std::string, std::string>>{
           {a, "a.jpg"}, {b, "b.jpg"}, {a, "query.jpg"}, {b, "group.jpg"}, {a, "gallery/1.jpg"}, {b, "gallery/2.jpg"}})
    fs::copy_file(copy.first, dir + "/" + copy.second);

  const std::vector<std::string> commands = DocBlock("docs-test: skip needs InsightFace recognition");
  REQUIRE(commands.size() == 4);
  const std::string path = fs::path(App()).parent_path().string();
  for (const std::string& command : commands) {
    INFO(command);
    REQUIRE(command.rfind("symbind-faces ", 0) == 0);
    auto r = symbind_test::RunShell("cd " + dir + " && PATH=" + path + ":$PATH " + command + " 2>&1");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(!JsonLines(r.output).empty());
    // Every image had a face: no null embedding or cosine, no empty face list.
    CHECK(r.output.find("null") == std::string::npos);
    CHECK(r.output.find("\"faces\":[]") == std::string::npos);
  }
  fs::remove_all(dir);
}

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

  // An unreadable gallery image gets its error in its line; the others are still ranked.
  std::ofstream(dir + "/gallery/cut.jpg", std::ios::binary) << ReadFileToString(b).substr(0, 600);
  r = RunApp("search " + dir + "/gallery " + a + kMtcnn + embedder);
  INFO(r.output);
  CHECK(r.status == 1);
  lines = JsonLines(r.output);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["other"] == dir + "/gallery/a.jpg");
  CHECK(lines[2]["other"] == dir + "/gallery/cut.jpg");
  CHECK(lines[2]["cosine"].is_null());
  CHECK(lines[2]["error"].get<std::string>().find("truncated JPEG") != std::string::npos);
  std::filesystem::create_directory(dir + "/empty");
  r = RunApp("search " + dir + "/empty " + a + kMtcnn + embedder);
  CHECK(r.status == 1);
  CHECK(r.output.find("holds no .jpg") != std::string::npos);

  // --bench repeats compare's stages and prints each one's time.
  r = RunApp("compare " + a + " " + b + kMtcnn + embedder + " --bench");
  CHECK(r.status == 0);
  CHECK(JsonLines(r.output).size() == 1);
  CHECK(r.output.find("bench embed") != std::string::npos);
  CHECK(r.output.find("bench detect (mtcnn)") != std::string::npos);

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
  const std::string bytes = ReadFileToString(kShared + "/models/mtcnn/test2.jpg");
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
  // Options that make no sense are refused before anything runs.
  const std::string image = kShared + "/models/mtcnn/test2.jpg";
  for (const auto& bad : std::vector<std::pair<std::string, std::string>>{
           {kRetina + kMtcnn, "not both"},
           {kRetina + " --draw " + dir + "/faces.jpg", "ending in .png"},
           {kRetina + " --anchors 16.5=8,4", "positive whole number"},
           {kRetina + " --anchors 16=8,4 16=2", "given twice"},
           {" --detector " + kShared + "/models/retinaface/retina16,0 --anchors 16=-8,4", "anchor scale -8 of stride 16"},
           {kRetina + " --mean 1,2", "one value or three"},
           {kRetina + " --scale nan", "scale finite"},
           {kRetina + " --ratios 0", "anchor ratio 0"}}) {
    r = RunApp("detect " + image + bad.first);
    INFO(bad.first << "\n" << r.output);
    CHECK(r.status != 0);
    CHECK(r.output.find(bad.second) != std::string::npos);
    CHECK(JsonLines(r.output).empty());
  }
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
