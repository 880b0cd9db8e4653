#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <cmath>
#include <filesystem>

#include <symbind/io/model_report.h>
#include <symbind/executor/executor.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/image.h>
#include <symbind/io/npy.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

#include "test_io_util.h"
#include "tool_test_util.h"

using namespace symbind;

using symbind_test::RunResult;
using symbind_test::RunTool;
using symbind_test::ToolBuilt;
using symbind_test::ToolPath;

namespace {

const char* kMlpJSON = R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
 {"op": "null", "name": "fc1_weight", "inputs": []},
 {"op": "null", "name": "fc1_bias", "inputs": []},
 {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "8"},
  "inputs": [[0,0,0],[1,0,0],[2,0,0]]},
 {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[3,0,0]]},
 {"op": "null", "name": "fc2_weight", "inputs": []},
 {"op": "null", "name": "fc2_bias", "inputs": []},
 {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "3"},
  "inputs": [[4,0,0],[5,0,0],[6,0,0]]},
 {"op": "null", "name": "softmax_label", "inputs": []},
 {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[7,0,0],[8,0,0]]}],
 "arg_nodes": [0,1,2,5,6,8], "heads": [[9,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";

bool MlpOpsRegistered() {
  for (auto op : {"FullyConnected", "Activation", "SoftmaxOutput"})
    if (!OpRegistry::Global().Find(op)) {
      WARN("operator " << op << " not registered yet; skipping");
      return false;
    }
  return true;
}


}  // namespace

TEST_CASE("tool: params listing names, dtypes, shapes, none arrays and formats", "[io][tool]") {
  symbind_test::Bytes b;
  b.list_header(3);
  b.u32(2).u32(2).u32(3).i32(1).i32(0).i32(0);
  for (int i = 0; i < 6; ++i) b.f32(0);
  b.u32(0xF993FACA).i32(0).i32(0).i32(1).i32(0).i32(6).i64(5);
  b.u32(0xF993FAC9).i32(0).i32(0);
  b.names({});
  NDArrayFile f = LoadNDArrayBuffer(b.str().data(), b.str().size());
  std::ostringstream os;
  PrintParamsListing(f, os);
  CHECK(os.str() ==
        "[0] float32 (2,3)\n[1] int64 ()\n[2] none\n3 arrays, 7 values, format v0,v2,v3\n");

  std::ostringstream real;
  PrintParamsListing(LoadNDArrayFile(symbind_test::SharedDir() + "/models/mtcnn/det1-0001.params"),
                     real);
  CHECK(real.str().find("arg:conv1_weight float32 (10,3,3,3)\n") != std::string::npos);
  CHECK(real.str().find("13 arrays, 6632 values, format v0\n") != std::string::npos);
}

TEST_CASE("tool: shape specs parse", "[io][tool]") {
  auto kv = ParseShapeSpec("data=1,3,224,224");
  CHECK(kv.first == "data");
  CHECK(kv.second == TShape{1, 3, 224, 224});
  CHECK(ParseShapeSpec("x=(2,)").second == TShape{2});
  CHECK_THROWS_AS(ParseShapeSpec("data"), ParamError);
  CHECK_THROWS_AS(ParseShapeSpec("=1,2"), ParamError);
  CHECK_THROWS_AS(ParseShapeSpec("data=1,x"), ParamError);
  CHECK(ShapeText(TShape(std::vector<int64_t>{})) == "()");
  CHECK(ShapeText(TShape::UnknownRank()) == "?");
}

TEST_CASE("tool: shapes, summary and dot of a small network", "[io][tool]") {
  if (!MlpOpsRegistered()) return;
  Symbol s = LoadSymbolJSON(kMlpJSON);
  std::map<std::string, TShape> known = {{"data", TShape{2, 5}}};
  std::ostringstream shapes;
  PrintShapes(s, known, shapes);
  CHECK(shapes.str() ==
        "arg data (2,5)\narg fc1_weight (8,5)\narg fc1_bias (8)\narg fc2_weight (3,8)\n"
        "arg fc2_bias (3)\narg softmax_label (2)\nout softmax_output (2,3)\n");
  CHECK_THROWS_AS(PrintShapes(s, {}, shapes), ShapeError);

  std::ostringstream summary;
  PrintSummary(s, known, summary);
  const std::string t = summary.str();
  INFO(t);
  CHECK(t.find("fc1 (FullyConnected)") != std::string::npos);
  CHECK(t.find("Total params: 75\n") != std::string::npos);  // 8*5+8 + 3*8+3
  CHECK(t.find("Total multiply-adds: 128 (FullyConnected)\n") !=
        std::string::npos);  // 2*8*5 + 2*3*8
  CHECK(t.find("fc1_weight") == std::string::npos);

  std::ostringstream dot;
  WriteDot(s, known, dot);
  const std::string d = dot.str();
  INFO(d);
  CHECK(d.rfind("digraph G {", 0) == 0);
  CHECK(d.find("label=\"fc1\\nFullyConnected\"") != std::string::npos);
  CHECK(d.find("0->1 [label=\"(2,5)\"]") != std::string::npos);
  CHECK(d.find("fc1_weight") == std::string::npos);
}

TEST_CASE("tool: the symbind binary exits 0 or 1 with one error line", "[io][tool]") {
  if (!ToolBuilt()) return;
  const std::string params = symbind_test::SharedDir() + "/models/mtcnn/det2-0001.params";
  RunResult ok = RunTool("params " + params);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("16 arrays, ") != std::string::npos);

  for (const std::string& bad :
       {std::string("params /nonexistent/file.params"), std::string(""),
        std::string("nosuchcommand"), std::string("params"),
        "shapes " + params, "summary " + params + " --shape data=1,x",
        "params " + symbind_test::SharedDir() + "/models/mtcnn/det1-symbol.json"}) {
    INFO(bad);
    RunResult r = RunTool(bad);
    CHECK(r.status == 1);
    CHECK(r.output.rfind("symbind: error: ", 0) == 0);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  CHECK(RunTool("--help").status == 0);

  if (!MlpOpsRegistered()) return;
  const std::string path = symbind_test::TempPath("mlp-symbol.json");
  { std::ofstream(path) << kMlpJSON; }
  RunResult shapes = RunTool("shapes " + path + " --shape data=4,5");
  CHECK(shapes.status == 0);
  CHECK(shapes.output.find("out softmax_output (4,3)\n") != std::string::npos);
  RunResult dot = RunTool("dot " + path + " --shape data=4,5");
  CHECK(dot.status == 0);
  CHECK(dot.output.find("digraph") != std::string::npos);
  RunResult dup = RunTool("shapes " + path + " --shape data=4,5 --shape data=2,5");
  CHECK(dup.status == 1);
  std::remove(path.c_str());
}

TEST_CASE("tool: run round-trips .npy files against the MTCNN goldens and reports latency", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = std::string(SYMBIND_SHARED_DIR) + "/models/mtcnn/";
  const std::string goldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/mtcnn/";
  const std::string out = symbind_test::TempPath("run_out");
  std::filesystem::create_directories(out);
  RunResult r = RunTool("run " + mtcnn + "det3-symbol.json " + mtcnn + "det3-0001.params --input data=" +
                        goldens + "det3_48x48_data.npy --all-outputs " + out + " --output " + out +
                        "/first.npy --bench 3 --threads 1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("prob1_output (4,2) min ") != std::string::npos);
  CHECK(r.output.find("latency_ms median=") != std::string::npos);
  CHECK(r.output.find("runs=3 threads=1") != std::string::npos);
  for (std::string name : {"conv6_3_output", "conv6_2_output", "prob1_output"}) {
    NDArray got = LoadNpy(out + "/" + name + ".npy"), want = LoadNpy(goldens + "det3_48x48_" + name + ".npy");
    REQUIRE(got.shape() == want.shape());
    for (int64_t i = 0; i < got.Size(); ++i) CHECK(std::fabs(got.GetFlat(i) - want.GetFlat(i)) < 1e-4);
  }
  CHECK(LoadNpy(out + "/first.npy").shape() == TShape({4, 10}));  // the first head, conv6_3
}

TEST_CASE("tool: run names missing arguments, or fills them with --allow-missing", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = std::string(SYMBIND_SHARED_DIR) + "/models/mtcnn/";
  // det2's parameters without two of its arrays.
  auto params = LoadNDArrayMap(mtcnn + "det2-0001.params");
  REQUIRE(params.erase("arg:conv4_weight") == 1);
  REQUIRE(params.erase("arg:prelu4_gamma") == 1);
  const std::string partial = symbind_test::TempPath("det2-partial.params");
  SaveNDArrays(partial, params);
  const std::string cmd = "run " + mtcnn + "det2-symbol.json " + partial + " --shape data=1,3,24,24";
  RunResult r = RunTool(cmd);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("symbind: error: arguments not in") != std::string::npos);
  CHECK(r.output.find("conv4_weight, prelu4_gamma") != std::string::npos);
  CHECK(r.output.find("prob1_label") == std::string::npos);  // labels are never required
  r = RunTool(cmd + " --allow-missing");
  CHECK(r.status == 0);
  CHECK(r.output.find("warning: filling from N(0,1): conv4_weight, prelu4_gamma") != std::string::npos);
  CHECK(r.output.find("prob1_output (1,2)") != std::string::npos);
  CHECK(RunTool("run " + mtcnn + "det2-symbol.json " + mtcnn + "det2-0001.params --input data=/nonexistent.npy").status == 1);
}

TEST_CASE("tool: run --image decodes, resizes and normalises as the library does", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = std::string(SYMBIND_SHARED_DIR) + "/models/mtcnn/";
  const std::string out = symbind_test::TempPath("run_image.npy");
  RunResult r = RunTool("run " + mtcnn + "det1-symbol.json " + mtcnn + "det1-0001.params --image data=" + mtcnn +
                        "test2.jpg --size 48,64 --mean 127.5,127.5,127.5 --scale 0.0078125 --bgr --output " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  // The same input built by hand: decode, resize to 64x48 (W,H), BGR, (x - 127.5) / 128.
  Image img = ResizeBilinear(LoadImage(mtcnn + "test2.jpg", 3), 64, 48);
  const float mean[3] = {127.5f, 127.5f, 127.5f};
  NDArray data = ImageToTensor(img, mean, 0.0078125f, true);
  REQUIRE(data.shape() == TShape({1, 3, 48, 64}));
  CHECK(data.At({0, 0, 5, 7}) == Approx((img.at(7, 5)[2] - 127.5f) * 0.0078125f));  // channel 0 is blue
  Symbol sym;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(mtcnn + "det1", 1, &sym, &args, &aux);
  args["data"] = data;
  auto exec = SimpleBind(sym, Context::CPU(), args, {}, {}, aux);
  exec->Forward(false);
  NDArray got = LoadNpy(out);
  REQUIRE(got.shape() == exec->outputs()[0].shape());
  for (int64_t i = 0; i < got.Size(); ++i) CHECK(got.GetFlat(i) == exec->outputs()[0].GetFlat(i));
}

TEST_CASE("tool: convert to .symbind and back, every subcommand takes the .symbind file", "[io][tool][run][model_file]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = std::string(SYMBIND_SHARED_DIR) + "/models/mtcnn/";
  const std::string goldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/mtcnn/";
  const std::string model = symbind_test::TempPath("det3.symbind");
  const std::string back = symbind_test::TempPath("det3-back");
  RunResult c = RunTool("convert " + mtcnn + "det3-symbol.json " + mtcnn + "det3-0001.params -o " + model +
                        " --shape data=1,3,48,48");
  INFO(c.output);
  REQUIRE(c.status == 0);

  // run: the same outputs from the pair and from the one file, and load/bind times.
  const std::string input = " --input data=" + goldens + "det3_48x48_data.npy --bench 1 --threads 1";
  RunResult pair = RunTool("run " + mtcnn + "det3-symbol.json " + mtcnn + "det3-0001.params" + input);
  RunResult one = RunTool("run " + model + input);
  REQUIRE(pair.status == 0);
  REQUIRE(one.status == 0);
  auto outputs = [](const std::string& s) { return s.substr(0, s.find("latency_ms")); };
  CHECK(outputs(one.output) == outputs(pair.output));
  CHECK(one.output.find(" load_ms=") != std::string::npos);
  CHECK(one.output.find(" bind_ms=") != std::string::npos);

  // params, shapes (with the stored input shape), summary, dot.
  RunResult params = RunTool("params " + model);
  CHECK(params.status == 0);
  CHECK(params.output.find("arg:conv1_weight float32 (32,3,3,3)\n") != std::string::npos);
  CHECK(params.output.find("format symbind\n") != std::string::npos);
  RunResult shapes = RunTool("shapes " + model);
  CHECK(shapes.status == 0);
  CHECK(shapes.output.find("out prob1_output (1,2)") != std::string::npos);
  CHECK(RunTool("summary " + model).status == 0);
  CHECK(RunTool("dot " + model).output.find("digraph") != std::string::npos);

  // Back to the pair: the same arrays bit for bit.
  RunResult rev = RunTool("convert " + model + " -o " + back);
  REQUIRE(rev.status == 0);
  auto original = LoadNDArrayMap(mtcnn + "det3-0001.params"), again = LoadNDArrayMap(back + "-0000.params");
  REQUIRE(original.size() == again.size());
  for (auto& kv : original) {
    INFO(kv.first);
    REQUIRE(again.count(kv.first));
    CHECK(kv.second.shape() == again.at(kv.first).shape());
    CHECK(std::memcmp(kv.second.raw_data(), again.at(kv.first).raw_data(), kv.second.bytes()) == 0);
  }
  RunResult both = RunTool("run " + model + " " + mtcnn + "det3-0001.params" + input);
  CHECK(both.status == 1);
  CHECK(both.output.find("is a .symbind model, which holds its parameters") != std::string::npos);
  for (auto p : {model, back + "-symbol.json", back + "-0000.params"}) std::remove(p.c_str());
}
