#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include <symbind/io/model_file.h>
#include <symbind/io/npy.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/predict/predictor.h>

#include "model_test_util.h"
#include "test_io_util.h"
#include "tool_test_util.h"
#include "shared_dir.h"

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

// The LeNet checkpoint bundled with the sources (every clone has it).
const std::string kLenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";

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
}

TEST_CASE("tool: params listing of a real MXNet file", "[io][tool][shared]") {
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
  // An element count past int64: `shapes` printed it, `summary` rejected it.
  CHECK_THROWS_WITH(ParseShapeSpec("data=4294967296,4294967296"),
                    Catch::StartsWith("bad shape 'data=4294967296,4294967296': shape (4294967296,4294967296) has more "
                                      "elements than int64 can count"));
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
  const std::string params = kLenet + "-0008.params";
  RunResult ok = RunTool("params " + params);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("8 arrays, ") != std::string::npos);

  for (const std::string& bad :
       {std::string("params /nonexistent/file.params"), std::string(""),
        std::string("nosuchcommand"), std::string("params"),
        "shapes " + params, "summary " + params + " --shape data=1,x",
        "params " + kLenet + "-symbol.json"}) {
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

TEST_CASE("tool: run --precision bf16 runs where the CPU has AVX512_BF16 and refuses elsewhere", "[io][tool][run][bf16]") {
  if (!ToolBuilt() || !MlpOpsRegistered()) return;
  const std::string path = symbind_test::TempPath("mlp-bf16-symbol.json");
  { std::ofstream(path) << kMlpJSON; }
  const std::string run = "run " + path + " --shape data=4,5 --allow-missing";
  RunResult r = RunTool(run + " --precision bf16");
  INFO(r.output);
  if (Bf16Available()) {
    CHECK(r.status == 0);
    CHECK(r.output.find("softmax_output (4,3)") != std::string::npos);
  } else {
    CHECK(r.status == 1);
    CHECK(r.output.find("precision bf16 needs") != std::string::npos);
  }
  RunResult bad = RunTool(run + " --precision fp8");
  CHECK(bad.status == 1);
  CHECK(bad.output.rfind("symbind: error: ", 0) == 0);
  RunResult compact = RunTool(run + " --compact-weights");
  CHECK(compact.status == 0);
  CHECK(compact.output.find("softmax_output (4,3)") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("tool: run round-trips .npy files against the MTCNN goldens and reports latency", "[io][tool][run][shared]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = symbind_test::SharedDir() + "/models/mtcnn/";
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

TEST_CASE("tool: run names missing arguments, or fills them with --allow-missing", "[io][tool][run][shared]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = symbind_test::SharedDir() + "/models/mtcnn/";
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

TEST_CASE("tool: every subcommand refuses a FIFO given as a file instead of waiting on it", "[io][tool][hostile]") {
  if (!ToolBuilt()) return;
  const std::string fifo = symbind_test::TempPath("tool-model.fifo");
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string sym = kLenet + "-symbol.json";
  for (const std::string& args :
       {"params " + fifo, "shapes " + fifo, "summary " + fifo, "dot " + fifo,
        "convert " + fifo + " -o " + symbind_test::TempPath("fifo-out.symbind"), "run " + fifo,
        "run " + sym + " " + fifo, "convert " + sym + " " + fifo + " -o " + symbind_test::TempPath("fifo-out.symbind")}) {
    INFO(args);
    // `timeout`: a subcommand that opens the FIFO blocks until a writer comes, which none does.
    RunResult r = symbind_test::RunShell("timeout 20 " + ToolPath() + " " + args + " 2>&1");
    CHECK(r.status == 1);
    CHECK(r.output.find("not a regular file (a FIFO)") != std::string::npos);
  }
  ::unlink(fifo.c_str());
}

TEST_CASE("tool: run --image decodes, resizes and normalises as the library does", "[io][tool][run][shared]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = symbind_test::SharedDir() + "/models/mtcnn/";
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

TEST_CASE("tool: convert to .symbind and back, every subcommand takes the .symbind file", "[io][tool][run][model_file][shared]") {
  if (!ToolBuilt()) return;
  const std::string mtcnn = symbind_test::SharedDir() + "/models/mtcnn/";
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

namespace {

// One LeNet input (1,1,28,28) of zeros as a .npy file.
std::string LenetInputNpy() {
  const std::string path = symbind_test::TempPath("lenet-input.npy");
  SaveNpy(path, NDArray(TShape({1, 1, 28, 28})));
  return path;
}

}  // namespace

TEST_CASE("tool: run takes a --shape that agrees with --input and refuses one that does not", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string model = "run " + kLenet + "-symbol.json " + kLenet + "-0008.params --input data=" + LenetInputNpy();
  RunResult agree = RunTool(model + " --shape data=1,1,28,28");
  INFO(agree.output);
  CHECK(agree.status == 0);
  CHECK(agree.output.find("softmax_output (1,10)") != std::string::npos);
  RunResult disagree = RunTool(model + " --shape data=2,1,28,28");
  INFO(disagree.output);
  CHECK(disagree.status == 1);
  CHECK(disagree.output.find("--shape data=(2,1,28,28) disagrees with --input data=") != std::string::npos);
  CHECK(disagree.output.find("of shape (1,1,28,28)") != std::string::npos);
}

TEST_CASE("tool: run --all-outputs creates its directory before the forward pass", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string dir = symbind_test::TempPath("all-outputs/nested");
  REQUIRE_FALSE(std::filesystem::exists(dir));
  const std::string model = "run " + kLenet + "-symbol.json " + kLenet + "-0008.params --input data=" + LenetInputNpy();
  RunResult r = RunTool(model + " --all-outputs " + dir);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(LoadNpy(dir + "/softmax_output.npy").shape() == TShape({1, 10}));
  // A file where the directory should be: refused, naming it.
  const std::string file = symbind_test::TempPath("all-outputs-file");
  { std::ofstream(file) << "x"; }
  RunResult blocked = RunTool(model + " --all-outputs " + file);
  CHECK(blocked.status == 1);
  CHECK(blocked.output.find("--all-outputs: cannot create the directory " + file) != std::string::npos);
}

TEST_CASE("tool: errors name the model's inputs and labels, not its weights", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  const std::string pair = kLenet + "-symbol.json " + kLenet + "-0008.params";
  for (const std::string& args : {"run " + pair + " --input image=" + LenetInputNpy(), "run " + pair + " --shape x=1,2",
                                  "shapes " + kLenet + "-symbol.json --shape x=1,2"}) {
    RunResult r = RunTool(args);
    INFO(args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("its inputs are: data; labels: softmax_label") != std::string::npos);
    CHECK(r.output.find("conv1_weight") == std::string::npos);
  }
  RunResult no_shape = RunTool("shapes " + kLenet + "-symbol.json");
  CHECK(no_shape.status == 1);
  CHECK(no_shape.output.find("give --shape NAME=D0,D1,... for data (its inputs are: data; labels: softmax_label)") !=
        std::string::npos);
}

TEST_CASE("tool: run on a .symbind file uses its stored input shapes", "[io][tool][run][model_file]") {
  if (!ToolBuilt()) return;
  const std::string model = symbind_test::TempPath("lenet-shapes.symbind");
  REQUIRE(RunTool("convert " + kLenet + "-symbol.json " + kLenet + "-0008.params -o " + model +
                  " --shape data=2,1,28,28").status == 0);
  RunResult r = RunTool("run " + model);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("softmax_output (2,10)") != std::string::npos);
  RunResult given = RunTool("run " + model + " --shape data=3,1,28,28");  // --shape wins
  CHECK(given.status == 0);
  CHECK(given.output.find("softmax_output (3,10)") != std::string::npos);
}

TEST_CASE("tool: convert --fold-batch-norm writes the graph as predictors fold it", "[io][tool][model_file]") {
  if (!ToolBuilt()) return;
  Symbol x = Symbol::Variable("data");
  x = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("num_filter", 8).SetParam("no_bias", "True")
          .SetInput("data", x).CreateSymbol("conv");
  x = OpBuilder("BatchNorm").SetInput("data", x).CreateSymbol("bn");
  x = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", x).CreateSymbol("relu");
  x = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", x).CreateSymbol("fc");
  const TShape shape({2, 3, 10, 10});
  const symbind::test::SharedModel m = symbind::test::GaussianModel(x, shape);
  const std::string prefix = symbind_test::TempPath("fold-bn"), model = prefix + ".symbind";
  SaveCheckpoint(prefix, 0, m.symbol, m.params, m.aux);
  RunResult r = RunTool("convert " + prefix + "-symbol.json " + prefix + "-0000.params -o " + model +
                        " --fold-batch-norm");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("folded 1 BatchNorm node(s)") != std::string::npos);
  const Model folded = LoadModel(model);
  for (const std::string& name : folded.symbol.ListArguments()) CHECK(name.find("bn_") == std::string::npos);
  CHECK(folded.aux.empty());
  CHECK(folded.args.count("conv_folded_weight") == 1);
  // Its predictor binds the file's arrays as they are, and gives the original's outputs: the
  // original's predictor folds the same way at bind.
  NDArray input(shape);
  FillGaussian(input, 7, "x");
  Predictor original(m.symbol, m.params, m.aux, {{"data", shape}});
  Predictor from_file(folded.symbol, folded.args, folded.aux, {{"data", shape}});
  CHECK(from_file.folded().empty());
  original.SetInput("data", input);
  from_file.SetInput("data", input);
  original.Forward();
  from_file.Forward();
  CHECK(std::memcmp(original.Output(0).raw_data(), from_file.Output(0).raw_data(), original.Output(0).bytes()) == 0);
  // From a .symbind to a checkpoint, and a graph with nothing to fold.
  RunResult again = RunTool("convert " + model + " -o " + prefix + "-again --fold-batch-norm");
  CHECK(again.status == 0);
  CHECK(again.output.find("folded 0 BatchNorm node(s)") != std::string::npos);
}

TEST_CASE("tool: a reader that closes the pipe early ends the tool quietly with status 0", "[io][tool]") {
  if (!ToolBuilt()) return;
  // A listing far larger than a pipe's buffer, so writes go on after `head` has exited.
  std::map<std::string, NDArray> arrays;
  for (int i = 0; i < 20000; ++i) arrays["arg:array_with_a_long_name_" + std::to_string(i)] = NDArray(TShape({1}));
  const std::string params = symbind_test::TempPath("many.params");
  SaveNDArrays(params, arrays);
  const std::string status = symbind_test::TempPath("pipe-status"), errors = symbind_test::TempPath("pipe-errors");
  RunResult r = symbind_test::RunShell("(" + ToolPath() + " params " + params + " 2>" + errors + "; echo $? >" +
                                       status + ") | head -1");
  CHECK(r.output == "arg:array_with_a_long_name_0 float32 (1)\n");
  std::ifstream status_file(status), errors_file(errors);
  std::string code, error_text;
  std::getline(status_file, code);
  std::getline(errors_file, error_text);
  CHECK(code == "0");
  CHECK(error_text.empty());
}

TEST_CASE("tool: loaders name the format of a file given in the wrong place", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  // The first bytes of an ONNX model: ir_version 7, producer_name "pytorch".
  const std::string onnx = symbind_test::TempPath("model.onnx");
  { std::ofstream(onnx, std::ios::binary) << std::string("\x08\x07\x12\x07pytorch\x1a\x03" "1.9", 16); }
  const std::string json = kLenet + "-symbol.json", params = kLenet + "-0008.params";
  const std::string model = symbind_test::TempPath("lenet-kinds.symbind");
  REQUIRE(RunTool("convert " + json + " " + params + " -o " + model).status == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      // An ONNX model holds its parameters; this one (a header only) has no graph.
      {"run " + onnx + " " + params, "is an ONNX model, which holds its parameters; got also " + params},
#ifdef SYMBIND_HAVE_ONNX
      {"shapes " + onnx, "model.onnx: the ONNX model has no graph"},
#else
      {"shapes " + onnx, "model.onnx is an ONNX model: this program was built without ONNX support"},
#endif
      {"run " + params + " " + json, "the arguments are swapped: " + params + " is a .params file and " + json},
      {"run " + json + " " + onnx, "this is an ONNX model, not an MXNet .params file"},
      {"run " + json + " " + model, "this is a .symbind model, not an MXNet .params file"},
      {"params " + json, "this is MXNet symbol JSON, not an MXNet .params file"},
      {"params " + onnx, "this is an ONNX model, not an MXNet .params file"},
  };
  for (auto& [args, message] : cases) {
    RunResult r = RunTool(args);
    INFO(args << "\n" << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(message) != std::string::npos);
  }
  // The library's loaders directly.
  CHECK_THROWS_WITH(LoadSymbolFile(model), Catch::Contains("this is a .symbind model, not MXNet symbol JSON") &&
                                               Catch::Contains("give it alone, or load it with LoadModel"));
  CHECK_THROWS_WITH(LoadSymbolFile(params), Catch::Contains("give the symbol JSON first, then the .params file"));
  CHECK_THROWS_WITH(LoadModel(json), Catch::Contains("this is MXNet symbol JSON, not a .symbind model"));
}

TEST_CASE("tool: run --image stacks several images into one batch", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  // data (N,3,4,6) -> Flatten: the output is the input tensor, one row per image.
  const std::string net = symbind_test::TempPath("image-batch-symbol.json");
  {
    std::ofstream(net) << R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
 {"op": "Flatten", "name": "flat", "inputs": [[0,0,0]]}],
 "arg_nodes": [0], "heads": [[1,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";
  }
  std::vector<std::string> images;
  for (int k = 0; k < 3; ++k) {
    Image img;
    img.width = 12;
    img.height = 8;
    img.channels = 3;
    img.pixels.resize(12 * 8 * 3);
    for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * (k + 3)) % 256);
    images.push_back(symbind_test::TempPath("batch" + std::to_string(k) + ".png"));
    SavePNG(images.back(), img);
  }
  const std::string run = "run " + net + " --size 4,6 --mean 1,2,3 --scale 0.5";
  const std::string batch_out = symbind_test::TempPath("image-batch.npy");
  RunResult batch = RunTool(run + " --image data=" + images[0] + "," + images[1] + " --image data=" + images[2] +
                            " --output " + batch_out);
  INFO(batch.output);
  REQUIRE(batch.status == 0);
  const NDArray got = LoadNpy(batch_out);
  REQUIRE(got.shape() == TShape({3, 72}));
  // Each row is what the image gives alone, in the order given.
  for (int k = 0; k < 3; ++k) {
    const std::string one_out = symbind_test::TempPath("image-one.npy");
    REQUIRE(RunTool(run + " --image data=" + images[k] + " --output " + one_out).status == 0);
    const NDArray one = LoadNpy(one_out);
    REQUIRE(one.shape() == TShape({1, 72}));
    CHECK(std::memcmp(got.fdata() + 72 * k, one.fdata(), 72 * sizeof(float)) == 0);
  }
  CHECK(RunTool(run + " --image data=" + images[0] + ",").output.find("an empty file name") != std::string::npos);
}

TEST_CASE("tool: mtcnn-detect --help names the image formats it reads", "[io][tool]") {
  const std::string app = symbind_test::BuiltProgramPath("apps/mtcnn-detect");
  if (!symbind_test::ProgramBuilt(app)) return;
  RunResult r = symbind_test::RunShell(app + " --help 2>&1");
  CHECK(r.status == 0);
  CHECK(r.output.find("JPEG or PNG") != std::string::npos);
  CHECK(r.output.find("BMP") == std::string::npos);
}

TEST_CASE("tool: run --image feeds a grey model one channel, as its weights read", "[io][tool][run]") {
  if (!ToolBuilt()) return;
  // A 28x28 grey picture for the bundled LeNet, whose first convolution reads one channel.
  Image img(28, 28, 1);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) img.at(x, y)[0] = static_cast<uint8_t>((x * 9 + y * 5) % 256);
  const std::string png = symbind_test::TempPath("grey-digit.png");
  SavePNG(png, img);
  const std::string out = symbind_test::TempPath("grey-digit-out.npy");
  RunResult r = RunTool("run " + kLenet + "-symbol.json " + kLenet + "-0008.params --image data=" + png +
                        " --size 28,28 --mean 0 --scale 0.00392 --output " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  // The same input through the library: grey decode, (pixel - 0) * scale.
  const float mean[3] = {0, 0, 0};
  NDArray x = ImageToTensor(LoadImage(png, 1), mean, 0.00392f, false, 1);
  REQUIRE(x.shape() == TShape({1, 1, 28, 28}));
  Model lenet = LoadModelFiles(kLenet + "-symbol.json", kLenet + "-0008.params");
  Predictor p(lenet.symbol, lenet.args, lenet.aux, {{"data", x.shape()}});
  p.SetInput("data", x);
  p.Forward();
  CHECK(LoadNpy(out).ToVector() == p.Output(0).ToVector());
  // A mean of two values fits neither form.
  CHECK(RunTool("run " + kLenet + "-symbol.json " + kLenet + "-0008.params --image data=" + png +
                " --size 28,28 --mean 1,2").output.find("--mean expects 1 or 3 comma-separated numbers") !=
        std::string::npos);
  // NaN or infinity made every input value NaN, and the run reported NaN outputs as a success.
  const std::string image_run = "run " + kLenet + "-symbol.json " + kLenet + "-0008.params --image data=" + png +
                                " --size 28,28 ";
  RunResult bad_mean = RunTool(image_run + "--mean nan");
  CHECK(bad_mean.status == 1);
  CHECK_THAT(bad_mean.output, Catch::Contains("--mean expects finite numbers, got 'nan'"));
  RunResult bad_scale = RunTool(image_run + "--scale inf");
  CHECK(bad_scale.status == 1);
  CHECK_THAT(bad_scale.output, Catch::Contains("--scale expects a finite number, got inf"));
}
