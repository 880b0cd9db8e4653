// Hostile inputs, round 2 (issue 18): each case once crashed, hung, exhausted memory or was
// silently accepted. One test per mechanism: checked shape arithmetic, empty tensors and
// loop extents, bounds checked before allocating, regular files only, the JSON depth pre-scan,
// thread counts, CLI names, the bind memory accounting, concurrent use of one executor and
// parameter ranges.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include <symbind/core/graph.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/image.h>
#include <symbind/io/mnist.h>
#include <symbind/io/model_report.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>

#include "test_io_util.h"
#include "tool_test_util.h"

using namespace symbind;
using symbind_test::RunResult;
using symbind_test::RunTool;
using symbind_test::ToolBuilt;
using symbind_test::ToolPath;
using Catch::Contains;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Shape inference of one op applied to a variable "data" of `shape`.
ShapeInferResult InferOp(const std::string& op, const KwArgs& params, const TShape& shape) {
  Symbol s = Symbol::Create(op, "node", params, {{"data", Symbol::Variable("data")}});
  return InferShapePartial(s, {{"data", shape}});
}

// Restores the bind memory limit when a test ends, however it ends.
struct BindLimit {
  explicit BindLimit(uint64_t bytes) { SetMaxBindBytes(bytes); }
  ~BindLimit() { SetMaxBindBytes(0); }
};

// A test-only op counting its forward calls, with `n` outputs shaped like its input.
std::atomic<int> g_counted_calls{0};
struct CountParam : Parameter<CountParam> {
  int n;
  static void Declare(ParamDeclarer<CountParam>& d) { d.field("n", &CountParam::n).set_default(1); }
};
SYMBIND_REGISTER_OP(_test_counted)
    .set_params<CountParam>()
    .set_outputs([](const NodeAttrs& a) {
      std::vector<std::string> names;
      for (int i = 0; i < a.param<CountParam>().n; ++i) names.push_back("out" + std::to_string(i));
      return names;
    })
    .set_num_outputs([](const NodeAttrs& a) { return a.param<CountParam>().n; })
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      for (size_t i = 0; i < out->size(); ++i) ShapeAssignCheck(out, i, (*in)[0]);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>&,
                    const std::vector<OpReq>&, const std::vector<NDArray>&) { ++g_counted_calls; });

// A test-only op whose forward waits until released, to hold an executor busy.
std::atomic<bool> g_gate_entered{false}, g_gate_open{false};
SYMBIND_REGISTER_OP(_test_gate)
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>&,
                    const std::vector<OpReq>&, const std::vector<NDArray>&) {
      g_gate_entered = true;
      while (!g_gate_open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path = symbind_test::TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A one-node symbol JSON: variable "data" into `op` named `name` with `attrs`.
std::string OneOpJSON(const std::string& op, const std::string& name, const std::string& attrs) {
  return R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": ")" + op + R"(", "name": ")" + name + R"(", "attrs": )" + attrs + R"(, "inputs": [[0,0,0]]}],
    "arg_nodes": [0], "heads": [[1,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";
}

}  // namespace

// 1. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: shape arithmetic that would overflow int64 is a ShapeError naming the parameter",
          "[hostile][overflow]") {
  // Convolution: (k - 1) * dilate wrapped, the kernel check passed and im2col read far outside.
  CHECK_THROWS_WITH(InferOp("Convolution", {{"kernel", "(1,3)"}, {"dilate", "(1,9223372036854775807)"},
                                            {"num_filter", "1"}}, TShape({1, 1, 1, 8})),
                    Contains("node (Convolution)") && Contains("dilate 9223372036854775807") &&
                        Contains("overflows int64"));
  CHECK_THROWS_AS(InferOp("Convolution", {{"kernel", "(5,5)"}, {"dilate", "(4611686018427387904,1)"},
                                          {"num_filter", "1"}}, TShape({1, 1, 4, 4})),
                  ShapeError);
  CHECK_THROWS_WITH(InferOp("Convolution", {{"kernel", "(1,3)"}, {"pad", "(0,4611686018427387904)"},
                                            {"num_filter", "1"}}, TShape({1, 1, 1, 8})),
                    Contains("pad 4611686018427387904"));
  // tile, Pad, Deconvolution, Flatten, repeat, Reshape: formerly plausible wrong shapes.
  CHECK_THROWS_WITH(InferOp("tile", {{"reps", "(6148914691236517206,)"}}, TShape({3})),
                    Contains("tile") && Contains("overflows int64"));
  CHECK_THROWS_WITH(InferOp("Pad", {{"mode", "edge"}, {"pad_width", "(0,0,0,0,0,0,9223372036854775807,9223372036854775807)"}},
                            TShape({1, 1, 1, 2})),
                    Contains("Pad: axis 3"));
  CHECK_THROWS_WITH(InferOp("Deconvolution", {{"kernel", "(1,1)"}, {"stride", "(1,4611686018427387904)"},
                                              {"num_filter", "1"}}, TShape({1, 1, 1, 3})),
                    Contains("Deconvolution: stride 4611686018427387904"));
  CHECK_THROWS_WITH(InferOp("Flatten", {}, TShape({1, int64_t{1} << 32, int64_t{1} << 32})),
                    Contains("overflows int64"));
  CHECK_THROWS_AS(InferOp("repeat", {{"repeats", "2147483647"}}, TShape({int64_t{1} << 40, int64_t{1} << 20})), ShapeError);
  CHECK_THROWS_AS(InferOp("Reshape", {{"shape", "(-3,)"}}, TShape({int64_t{1} << 40, int64_t{1} << 40})), ShapeError);
  CHECK_THROWS_AS(InferOp("slice", {{"begin", "(None,)"}, {"end", "(None,)"}, {"step", "(-9223372036854775808,)"}},
                          TShape({5})), ShapeError);
  // Pooling 'full' with a huge stride: ceil((4 - 2) / s) + 1 = 2 windows, not 0 from a wrapped
  // sum; the second would start at 2^63-1 and end past int64, so the shape is refused.
  CHECK_THROWS_WITH(InferOp("Pooling", {{"kernel", "(2,2)"}, {"stride", "(9223372036854775807,9223372036854775807)"},
                                        {"pool_type", "max"}, {"pooling_convention", "full"}},
                            TShape({1, 1, 4, 4})),
                    Contains("Pooling: end of window 1 in spatial dim 0: 9223372036854775807 + 2 overflows int64"));
  auto pooled = InferOp("Pooling", {{"kernel", "(2,2)"}, {"stride", "(4611686018427387904,4611686018427387904)"},
                                    {"pool_type", "max"}, {"pooling_convention", "full"}},
                        TShape({1, 1, 4, 4}));
  CHECK(pooled.out_shapes[0] == TShape({1, 1, 2, 2}));
  // NDArray views: Size() * dtype size wrapped and Fill wrote past the storage.
  auto storage = std::make_shared<Storage>(64);
  CHECK_THROWS_WITH(NDArray::View(storage, 0, TShape({int64_t{1} << 62})), Contains("overflows int64"));
  // TShape sizes themselves.
  CHECK_THROWS_AS(TShape({kInt64Max, 2}).Size(), ShapeError);
}

TEST_CASE("hostile: summary counts multiply-adds without wrapping", "[hostile][overflow]") {
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 4096).SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  std::ostringstream os;
  PrintSummary(fc, {{"data", TShape({1, 1024})}}, os);
  CHECK_THAT(os.str(), Contains("4194304"));  // 1 x 4096 outputs x 1024 inputs
  CHECK_THROWS_AS(PrintSummary(fc, {{"data", TShape({int64_t{1} << 52, 1024})}}, os), ShapeError);
}

// 2. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: empty tensors cost nothing and their axes are bounded at bind", "[hostile][empty]") {
  // Zero bytes, but a 2^40 axis: loops over it would take hours (softmax) or crash (xs[0]).
  for (auto shape : {TShape({0, int64_t{1} << 40}), TShape({int64_t{1} << 40, 0})}) {
    Symbol s = Symbol::Create("softmax", "sm", {{"axis", "0"}}, {{"data", Symbol::Variable("data")}});
    CHECK_THROWS_WITH(SimpleBind(s, Context::CPU(), {{"data", NDArray(shape)}}),
                      Contains("is empty but its other axes span"));
  }
  // Within the bound, a node whose outputs are all empty is not run at all.
  g_counted_calls = 0;
  Symbol c = Symbol::Create("_test_counted", "c", {}, {{"data", Symbol::Variable("data")}});
  auto empty = SimpleBind(c, Context::CPU(), {{"data", NDArray(TShape({1000, 0}))}});
  empty->Forward(false);
  CHECK(g_counted_calls == 0);
  auto full = SimpleBind(c, Context::CPU(), {{"data", NDArray(TShape({2, 3}))}});
  full->Forward(false);
  CHECK(g_counted_calls == 1);
  // Real kernels over empty data: nothing read, nothing written, no crash.
  for (const char* op : {"softmax", "log_softmax", "SoftmaxActivation"}) {
    Symbol s = Symbol::Create(op, "x", {}, {{"data", Symbol::Variable("data")}});
    auto e = SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({0, 7}))}});
    CHECK_NOTHROW(e->Forward(false));
    CHECK(e->outputs()[0].shape() == TShape({0, 7}));
  }
}

// 3. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: sizes are bounded before anything is allocated", "[hostile][alloc]") {
  // SliceChannel num_outputs=100000000 took 6.2 GB and 36 s to reach its ShapeError.
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(LoadSymbolJSON(OneOpJSON("SliceChannel", "split", R"({"num_outputs": "100000000"})")),
                    Contains("num_outputs") && Contains("65536"));
  // Variadic ops: an input count of two billion would build two billion input names.
  for (const char* op : {"Concat", "add_n", "stack", "_rnn_param_concat", "UpSampling"}) {
    INFO(op);
    CHECK_THROWS_WITH(LoadSymbolJSON(OneOpJSON(op, "v", R"({"num_args": "2000000000"})")),
                      Contains("num_args") && Contains("65536"));
  }
  // Any op with a parameter-sized output list: the graph refuses before per-entry tables exist.
  Symbol many = Symbol::Create("_test_counted", "many", {{"n", "100000"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(Graph{many}, Contains("has 100000 outputs; at most 65536"));
  // Entry ids are uint32: a graph past Graph::kMaxEntries outputs in total is refused.
  Symbol chain = Symbol::Variable("data");
  for (int i = 0; i <= 256; ++i)
    chain = Symbol::Create("_test_counted", "c" + std::to_string(i), {{"n", "65536"}}, {{"data", chain[0]}});
  CHECK_THROWS_WITH(Graph{chain}, Contains("more than 16777216 node outputs"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));  // not a benchmark: a hang guard

  // Images: the resize target is checked before its buffer exists.
  Image small(4, 4, 3);
  CHECK_THROWS_WITH(ResizeBilinear(small, 20000, 20000), Contains("exceeds 67108864 pixels"));
  CHECK_THROWS_AS(ResizeBilinear(small, 2147483520, 1), Error);

  // Sparse .params: the total all arrays expand to is bounded, not each array on its own.
  symbind_test::Bytes b;
  b.list_header(2);
  for (int k = 0; k < 2; ++k) {  // two row_sparse (100, 2) float32 arrays with no stored rows
    b.u32(0xF993FAC9).i32(1).shape64({0, 2}).shape64({100, 2}).i32(1).i32(0).i32(0);
    b.i32(6).shape64({0});  // int64 indices, none
  }
  b.names({});
  NDArrayLoadOptions budget;
  budget.max_dense_bytes_from_sparse = 1200;  // one array (800 bytes) fits, two do not
  CHECK_NOTHROW(LoadNDArrayBuffer(b.str().data(), b.str().size()));
  CHECK_THROWS_WITH(LoadNDArrayBuffer(b.str().data(), b.str().size(), budget),
                    Contains("expand to 1600 bytes as dense arrays, more than the 1200 bytes allowed"));
  // Listing needs no dense copy at all: a 16 GiB sparse array is described from its header.
  symbind_test::Bytes huge;
  huge.list_header(1);
  huge.u32(0xF993FAC9).i32(1).shape64({0, 4}).shape64({int64_t{1} << 30, 4}).i32(1).i32(0).i32(0);
  huge.i32(6).shape64({0});
  huge.names({"arg:emb"});
  NDArrayLoadOptions listing;
  listing.densify_sparse = false;
  NDArrayFile f = LoadNDArrayBuffer(huge.str().data(), huge.str().size(), listing);
  CHECK(f.arrays[0].is_none());
  std::ostringstream os;
  PrintParamsListing(f, os);
  CHECK(os.str() == "arg:emb float32 (1073741824,4)\n1 arrays, 4294967296 values, format v2\n");
  CHECK_THROWS_AS(LoadNDArrayBuffer(huge.str().data(), huge.str().size()), IOError);
}

TEST_CASE("hostile: the sparse expansion budget comes from the file size and is checked over the whole file",
          "[hostile][alloc][sparse]") {
  // Two row_sparse (2^22, 4) float32 arrays with no stored rows: 64 MiB each as dense arrays,
  // from a file of about 200 bytes (the budget was 4 GiB whatever the file, spent array by array).
  symbind_test::Bytes b;
  b.list_header(2);
  for (int k = 0; k < 2; ++k) {
    b.u32(0xF993FAC9).i32(1).shape64({0, 4}).shape64({int64_t{1} << 22, 4}).i32(1).i32(0).i32(0);
    b.i32(6).shape64({0});
  }
  b.names({"arg:a", "arg:b"});
  const std::string file = b.str();
  REQUIRE(SparseExpansionBudget(file.size()) == kMinSparseExpansionBytes);
  CHECK(SparseExpansionBudget(uint64_t{1} << 30) == kSparseExpansionFactor << 30);
  CHECK_THROWS_WITH(LoadNDArrayBuffer(file.data(), file.size()),
                    Contains("sparse arrays expand to 134217728 bytes as dense arrays, more than the 67108864 bytes "
                             "allowed for a file of " + std::to_string(file.size()) + " bytes"));
  // A budget given explicitly is used as it is.
  NDArrayLoadOptions roomy;
  roomy.max_dense_bytes_from_sparse = uint64_t{256} << 20;
  NDArrayFile loaded = LoadNDArrayBuffer(file.data(), file.size(), roomy);
  REQUIRE(loaded.arrays.size() == 2);
  CHECK(loaded.arrays[1].shape() == TShape({int64_t{1} << 22, 4}));
}

// 4. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: loaders read regular files only and images must be JPEG or PNG", "[hostile][files]") {
  const std::string fifo = symbind_test::TempPath("hostile.fifo");
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Each of these blocked forever in open() or read().
  CHECK_THROWS_WITH(LoadNDArrayFile(fifo), Contains("not a regular file (a FIFO)"));
  CHECK_THROWS_AS(LoadSymbolFile(fifo), IOError);
  CHECK_THROWS_AS(LoadNpy(fifo), IOError);
  CHECK_THROWS_AS(LoadImage(fifo), IOError);
  CHECK_THROWS_AS(LoadMNISTImages(fifo), IOError);
  ::unlink(fifo.c_str());
  // Size bounds: a symbol file past 1 GiB is refused from its size (a sparse file: no disk used).
  const std::string huge_json = symbind_test::TempPath("huge-symbol.json");
  {
    std::ofstream f(huge_json, std::ios::binary);
    f.seekp((std::streamoff{1} << 30) + 1);
    f.put('}');
  }
  CHECK_THROWS_WITH(LoadSymbolFile(huge_json), Contains("is larger than the 1073741824 bytes supported"));
  ::unlink(huge_json.c_str());
  // A device never ends; a directory threw std::ios_base::failure.
  CHECK_THROWS_WITH(LoadImage("/dev/zero"), Contains("not a regular file (a device)"));
  CHECK_THROWS_WITH(LoadImage(std::filesystem::temp_directory_path().string()),
                    Contains("not a regular file (a directory)"));

  // An 18-byte TGA header was a black 16384x16384 image.
  std::string tga(18, '\0');
  tga[2] = 2;                                   // uncompressed true colour
  tga[12] = 0; tga[13] = 0x40; tga[14] = 0; tga[15] = 0x40;  // 16384 x 16384
  tga[16] = 24;
  CHECK_THROWS_WITH(LoadImageFromMemory(tga.data(), tga.size()), Contains("not a JPEG or PNG"));
  // A PNG claiming 16384 x 16384 is refused from its header, before decoding.
  Image one(1, 1, 3);
  const std::string png_path = symbind_test::TempPath("one.png");
  SavePNG(png_path, one);
  std::ifstream in(png_path, std::ios::binary);
  std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(png.compare(12, 4, "IHDR") == 0);
  std::string big = png;
  big[16] = 0; big[17] = 0; big[18] = 0x40; big[19] = 0;  // width 16384
  big[20] = 0; big[21] = 0; big[22] = 0x40; big[23] = 0;  // height 16384
  CHECK_THROWS_WITH(LoadImageFromMemory(big.data(), big.size()), Contains("16384x16384 outside"));
  // Truncated PNG: the IEND chunk is missing.
  CHECK_NOTHROW(LoadImageFromMemory(png.data(), png.size()));
  CHECK_THROWS_WITH(LoadImageFromMemory(png.data(), png.size() - 12), Contains("truncated PNG"));
}

// 5. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: the JSON depth bound is a pre-scan that ignores brackets inside strings",
          "[hostile][json]") {
  std::string deep = "{\"nodes\": ";
  for (int i = 0; i < 65; ++i) deep += "[";
  CHECK_THROWS_WITH(LoadSymbolJSON(deep), Contains("nesting deeper than 64 levels"));
  // 200 brackets inside a name are text, not nesting.
  const std::string name = std::string(200, '[') + "\\\"" + std::string(200, '{');
  Symbol s = LoadSymbolJSON(OneOpJSON("Flatten", name, "{}"));
  CHECK(s.ListOutputs()[0] == std::string(200, '[') + "\"" + std::string(200, '{') + "_output");
  // Many sibling objects under an unused key parse (the callback parser rescanned each parent).
  std::string wide = R"({"unused": [)";
  for (int i = 0; i < 20000; ++i) wide += i ? ",{}" : "{}";
  wide += "], " + OneOpJSON("Flatten", "f", "{}").substr(1);
  CHECK(LoadSymbolJSON(wide).ListOutputs().size() == 1);
}

// 6. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: thread counts are range-checked and clamped", "[hostile][threads]") {
  CHECK(ParseNumThreads("8", "--threads") == 8);
  CHECK(ParseNumThreads("99999999999999", "SYMBIND_NUM_THREADS") == 99999999999999);
  CHECK_THROWS_WITH(ParseNumThreads("999999999999999999999", "SYMBIND_NUM_THREADS"),
                    Contains("SYMBIND_NUM_THREADS must be a non-negative integer"));
  CHECK_THROWS_AS(ParseNumThreads("-3", "--threads"), ParamError);
  CHECK_THROWS_AS(ParseNumThreads("4x", "--threads"), ParamError);
  // The bind limit's variable had the same problem: "-1" read as 2^64 - 1, overflow saturated.
  for (const char* bad : {"-1", "18446744073709551616", " 5", "5k"})
    CHECK_THROWS_WITH(ParseMaxBindBytes(bad), Contains("SYMBIND_MAX_BIND_BYTES must be a positive byte count"));
  CHECK(ParseMaxBindBytes("12345") == 12345);
  CHECK(ThreadClampNote(MaxNumThreads(), "--threads").empty());
  CHECK_THAT(ThreadClampNote(2000000000, "--threads"), Contains("more than the maximum"));
  // 2e9 threads aborted inside TBB; 1e8 used 13 GB.
  CHECK(SetNumThreads(2000000000) <= MaxNumThreads());
  CHECK(GetNumThreads() <= MaxNumThreads());
  SetNumThreads(0);
  // The environment variable: a bad value is reported and ignored, never abort().
  if (ToolBuilt()) {
    auto [status, out] = RunTool("shapes /nonexistent.json", "SYMBIND_NUM_THREADS=99999999999999999999");
    CHECK(status == 1);
    CHECK_THAT(out, Contains("warning: ignoring SYMBIND_NUM_THREADS must be a non-negative integer"));
  }
}

// 7, 8. ---------------------------------------------------------------------------------------
TEST_CASE("hostile: run sanitises output file names and rejects unknown or repeated inputs",
          "[hostile][tool]") {
  if (!ToolBuilt()) return;
  namespace fs = std::filesystem;
  const fs::path root = symbind_test::TempPath("outputs");
  fs::remove_all(root);
  fs::create_directories(root / "a" / "b" / "dir");
  const std::string dir = (root / "a" / "b" / "dir").string();
  // Two heads: Flatten "../../escape" and Flatten "ok".
  const std::string json = R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "Flatten", "name": "../../escape", "inputs": [[0,0,0]]},
    {"op": "Flatten", "name": "ok", "inputs": [[0,0,0]]}],
    "arg_nodes": [0], "heads": [[1,0,0],[2,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";
  const std::string sym = WriteFile("escape-symbol.json", json);
  const std::string params = symbind_test::TempPath("empty.params");
  SaveNDArrays(params, std::map<std::string, NDArray>{});
  RunResult r = RunTool("run " + sym + " " + params + " --shape data=2,3 --all-outputs " + dir);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_FALSE(fs::exists(root / "a" / "escape_output.npy"));
  CHECK(fs::exists(fs::path(dir) / "_._.._escape_output.npy"));
  CHECK(fs::exists(fs::path(dir) / "ok_output.npy"));
  // Names that sanitise alike are an error, not an overwrite.
  const std::string clash = R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "Flatten", "name": "a/b", "inputs": [[0,0,0]]},
    {"op": "Flatten", "name": "a_b", "inputs": [[0,0,0]]}],
    "arg_nodes": [0], "heads": [[1,0,0],[2,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";
  r = RunTool("run " + WriteFile("clash-symbol.json", clash) + " " + params +
                                  " --shape data=2,3 --all-outputs " + dir);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Contains("outputs 'a/b_output' and 'a_b_output' would both be written to"));

  // Each run: its arguments after the model, its exit status and what its output says.
  const std::string npy = symbind_test::TempPath("x.npy");
  SaveNpy(npy, NDArray(TShape({2, 3})));
  const std::string png = symbind_test::TempPath("in.png");
  SavePNG(png, Image(4, 4, 3));
  struct Run {
    std::string args;
    int status;
    std::string says;
  };
  const std::vector<Run> runs = {
      // A misspelt --input ran `data` as zeros; a second --shape was ignored.
      {"--input dta=" + npy + " --shape data=2,3", 1,
       "--input dta: the model has no argument 'dta'; its inputs are: data"},
      {"--shape data=2,3 --shape data=4,5", 1, "'data' is already given by --shape"},
      // A --shape may restate an --input's shape; one that differs names both.
      {"--input data=" + npy + " --shape data=2,3", 0, "ok_output (2,3)"},
      {"--input data=" + npy + " --shape data=4,5", 1, "--shape data=(4,5) disagrees with --input data=" + npy + " of shape (2,3)"},
      // --threads beyond the maximum: clamped with a warning.
      {"--shape data=2,3 --threads 100000000", 0, "warning: --threads 100000000 is more than the maximum"},
      {"--shape data=2,3 --threads lots", 1, "--threads must be a non-negative integer thread count"},
      // --size is checked before the image is read; it ended in std::bad_alloc.
      {"--image data=" + png + " --size 2147483520,1", 1, "--size expects H,W with 1 <= H*W <= 67108864"},
      {"--image data=/dev/zero --size 4,4", 1, "not a regular file (a device)"},
  };
  for (const Run& run : runs) {
    r = RunTool("run " + sym + " " + params + " " + run.args);
    INFO(run.args << "\n" << r.output);
    CHECK(r.status == run.status);
    CHECK_THAT(r.output, Contains(run.says));
  }
  fs::remove_all(root);
}

TEST_CASE("hostile: the 0.8 upgrade path cannot create a second argument of one name", "[hostile][json]") {
  // BatchNorm 'bn' without its gamma/beta/moving inputs (0.8 lists only data): the upgrade adds
  // 'bn_gamma', which a variable of the file already is.
  const std::string json = R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "bn_gamma", "inputs": []},
    {"op": "BatchNorm", "name": "bn", "param": {}, "inputs": [[0,0]]},
    {"op": "elemwise_add", "name": "add", "param": {}, "inputs": [[2,0],[1,0]]}],
    "arg_nodes": [0, 1], "heads": [[3,0]]})";
  CHECK_THROWS_WITH(LoadSymbolJSON(json), Contains("'bn_gamma' is already used by node 1"));
}

// 9. ------------------------------------------------------------------------------------------
TEST_CASE("hostile: Reshape and Backward allocate within the bind memory limit", "[hostile][memory]") {
  // Reshape: a 256 MiB input array was allocated before any check (the outputs are tiny).
  Symbol sum = Symbol::Create("sum", "s", {}, {{"data", Symbol::Variable("data")}});
  auto exec = SimpleBind(sum, Context::CPU(), {{"data", NDArray(TShape({1, 16}))}});
  {
    BindLimit limit(uint64_t{16} << 20);
    CHECK_THROWS_WITH(exec->Reshape({{"data", TShape({int64_t{1} << 26, 1})}}, false, true),
                      Contains("Reshape: array 'data'") && Contains("bind memory limit"));
  }
  CHECK_NOTHROW(exec->Reshape({{"data", TShape({8, 16})}}, false, true));
  // Backward's gradient buffers count with what the executor already holds.
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 1000).SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  Symbol net = Symbol::Create("Activation", "relu", {{"act_type", "relu"}}, {{"data", fc}});
  BindLimit limit(uint64_t{24} << 20);  // bind needs ~16 MB, backward ~8 MB more
  auto train = SimpleBind(net, Context::CPU(), {{"data", NDArray(TShape({1000, 1000}))}});
  train->Forward(true);
  CHECK_THROWS_WITH(train->Backward(), Contains("Backward:") && Contains("the executor holds"));
}

// Issue 37 item 2: roles from what was given. -----------------------------------------------
TEST_CASE("hostile: run refuses absent parameters unless --allow-missing, and a second input is data by its shape",
          "[hostile][tool][params]") {
  if (!ToolBuilt()) return;
  // fc(data) + extra: `extra` feeds no op's first input, so the graph-position guess called it
  // a parameter when no parameters were known.
  const std::string json = R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc_weight", "inputs": []}, {"op": "null", "name": "fc_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"}, "inputs": [[0,0,0],[1,0,0],[2,0,0]]},
    {"op": "null", "name": "extra", "inputs": []},
    {"op": "elemwise_add", "name": "add", "inputs": [[3,0,0],[4,0,0]]}],
    "arg_nodes": [0, 1, 2, 4], "heads": [[5,0,0]], "attrs": {"mxnet_version": ["int", 10600]}})";
  const std::string sym = WriteFile("two-inputs-symbol.json", json);
  const std::string empty = symbind_test::TempPath("none.params");
  SaveNDArrays(empty, std::map<std::string, NDArray>{});
  const std::string npy = symbind_test::TempPath("extra.npy");
  SaveNpy(npy, NDArray(TShape({1, 2})));
  struct Run {
    std::string args;
    int status;
    std::string says;
  };
  const std::vector<Run> runs = {
      // It ran on N(0,1) weights without a word, with or without an empty .params file.
      {sym + " --shape data=1,3 --shape extra=1,2", 1,
       "not given as inputs: fc_weight, fc_bias (no parameters were given)"},
      {sym + " " + empty + " --shape data=1,3 --shape extra=1,2", 1, "(no parameters were given)"},
      {sym + " --shape data=1,3", 1, "not given as inputs: fc_weight, fc_bias, extra"},
      // Allowed: the weights are filled, and `extra` is an input because its shape was given.
      {sym + " --shape data=1,3 --shape extra=1,2 --allow-missing", 0, "warning: filling from N(0,1): fc_weight, fc_bias\n"},
      {sym + " --shape data=1,3 --input extra=" + npy + " --allow-missing", 0, "add_output (1,2)"},
  };
  for (const Run& run : runs) {
    const RunResult r = RunTool("run " + run.args);
    INFO(run.args << "\n" << r.output);
    CHECK(r.status == run.status);
    CHECK_THAT(r.output, Contains(run.says));
  }
}

// Issue 37 item 3: one memory accounting, before anything is allocated, process-wide. -------
TEST_CASE("hostile: a predictor's inputs count in the bind memory check", "[hostile][memory]") {
  // The input (32 MiB) was allocated, and zeroed, before the check, which saw only the output.
  Symbol sum = Symbol::Create("sum", "s", {}, {{"data", Symbol::Variable("data")}});
  BindLimit limit(uint64_t{16} << 20);
  CHECK_THROWS_WITH(Predictor(sum, {}, {}, {{"data", TShape({int64_t{1} << 23})}}),
                    Contains("SimpleBind: array 'data' of shape (8388608,) (float32) needs 33554432 bytes") &&
                        Contains("bind memory limit"));
  Predictor small(sum, {}, {}, {{"data", TShape({16})}});
  CHECK_THROWS_WITH(small.Reshape({{"data", TShape({int64_t{1} << 23})}}), Contains("SimpleBind: array 'data'"));
}

TEST_CASE("hostile: the bind budget bounds all live executors of the process together", "[hostile][memory]") {
  Symbol neg = Symbol::Create("negative", "n", {}, {{"data", Symbol::Variable("data")}});
  const std::map<std::string, TShape> shapes{{"data", TShape({int64_t{5} << 20})}};  // 20 MiB in, 20 out
  BindLimit limit(uint64_t{64} << 20);
  auto first = std::make_unique<Predictor>(neg, std::map<std::string, NDArray>{}, std::map<std::string, NDArray>{}, shapes);
  // Each bind alone fits; two together do not.
  CHECK_THROWS_WITH(Predictor(neg, {}, {}, shapes),
                    Contains("the executors alive in this process hold") && Contains("bind memory limit"));
  CHECK_THROWS_AS(first->Reshape(shapes), OutOfMemoryError);
  auto exec = SimpleBind(neg, Context::CPU(), {{"data", NDArray(TShape({int64_t{5} << 20}))}});  // its output: 20 MiB
  CHECK_THROWS_AS(SimpleBind(neg, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions(shapes)), OutOfMemoryError);
  // What an executor reserved is returned when it goes.
  first.reset();
  CHECK_NOTHROW(Predictor(neg, {}, {}, shapes));
}

TEST_CASE("hostile: graphs of a few hundred bytes asking for gigabytes fail at bind under the default budget",
          "[hostile][memory]") {
  SetMaxBindBytes(0);
  REQUIRE(MaxBindBytes() <= kDefaultMaxBindBytes);
  const auto start = std::chrono::steady_clock::now();
  auto graph = [](const std::string& nodes, const std::string& arg_nodes) {
    return LoadSymbolJSON("{\"nodes\": [" + nodes + "], \"arg_nodes\": [" + arg_nodes +
                          "], \"heads\": [[" + (arg_nodes.empty() ? "0" : "1") + ", 0, 0]]}");
  };
  const std::string data = R"j({"op": "null", "name": "data", "inputs": []}, )j";
  const auto huge = Contains("bind memory limit");
  CHECK_THROWS_WITH(Predictor(graph(R"j({"op": "_zeros", "name": "z", "attrs": {"shape": "(1000000000,)"}, "inputs": []})j", ""),
                              {}, {}, {}),
                    huge);
  CHECK_THROWS_WITH(Predictor(graph(data + R"j({"op": "tile", "name": "t", "attrs": {"reps": "(1,2147483648)"}, "inputs": [[0,0,0]]})j", "0"),
                              {}, {}, {{"data", TShape({1, 1})}}),
                    huge);
  CHECK_THROWS_WITH(Predictor(graph(data + R"j({"op": "_contrib_BilinearResize2D", "name": "r", "attrs": {"scale_height": "30000", "scale_width": "1"}, "inputs": [[0,0,0]]})j", "0"),
                              {}, {}, {{"data", TShape({1, 3, 100, 100})}}),
                    huge);
  std::string sizes = "(";
  for (int i = 1; i <= 1000; ++i) sizes += (i > 1 ? "," : "") + std::to_string(i / 1000.0);
  CHECK_THROWS_WITH(Predictor(graph(data + R"j({"op": "_contrib_MultiBoxPrior", "name": "p", "attrs": {"sizes": ")j" + sizes +
                                        R"j()"}, "inputs": [[0,0,0]]})j", "0"),
                              {}, {}, {{"data", TShape({1, 1, 512, 512})}}),
                    huge);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));  // a hang guard
}

// 10. -----------------------------------------------------------------------------------------
TEST_CASE("hostile: concurrent Forward or Backward on one executor throws", "[hostile][concurrency]") {
  Symbol g = Symbol::Create("_test_gate", "g", {}, {{"data", Symbol::Variable("data")}});
  auto exec = SimpleBind(g, Context::CPU(), {{"data", NDArray(TShape({2}))}});
  g_gate_entered = false;
  g_gate_open = false;
  std::thread busy([&] { exec->Forward(false); });
  while (!g_gate_entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK_THROWS_WITH(exec->Forward(false), Contains("already running Forward or Backward in another thread"));
  CHECK_THROWS_WITH(exec->Backward(), Contains("Executor::Backward: this executor is already running"));
  g_gate_open = true;
  busy.join();
  CHECK_NOTHROW(exec->Forward(false));  // free again once the first call returned
}

TEST_CASE("hostile: float parameters outside MXNet's ranges are rejected at parse", "[hostile][params]") {
  auto parse = [](const std::string& op, const KwArgs& kw) {
    NodeAttrs a;
    a.op = &OpRegistry::Global().Get(op);
    a.name = "n";
    a.dict = kw;
    a.op->ParseAttrs(&a);
  };
  CHECK_THROWS_WITH(parse("softmax", {{"temperature", "0"}}), Contains("should be a finite, non-zero number"));
  CHECK_THROWS_AS(parse("softmax", {{"temperature", "nan"}}), ParamError);
  CHECK_NOTHROW(parse("softmax", {{"temperature", "0.5"}}));
  CHECK_THROWS_WITH(parse("BatchNorm", {{"eps", "-1e-5"}}), Contains("should be greater equal to 0"));
  CHECK_THROWS_WITH(parse("clip", {{"a_min", "2"}, {"a_max", "1"}}),
                    Contains("a_min must not exceed a_max (got a_min=2, a_max=1)"));
  CHECK_THROWS_AS(parse("clip", {{"a_min", "nan"}, {"a_max", "1"}}), ParamError);
  CHECK_NOTHROW(parse("clip", {{"a_min", "1"}, {"a_max", "1"}}));
  CHECK_THROWS_WITH(parse("Pooling", {{"kernel", "(2,2)"}, {"pad", "(2,0)"}}),
                    Contains("Pooling: every pad must be smaller than the kernel (got kernel=(2, 2), pad=(2, 0))"));
  CHECK_NOTHROW(parse("Pooling", {{"kernel", "(3,3)"}, {"pad", "(1,1)"}}));
  CHECK_THROWS_WITH(parse("LeakyReLU", {{"act_type", "rrelu"}, {"lower_bound", "0.5"}, {"upper_bound", "0.1"}}),
                    Contains("lower_bound <= upper_bound"));
  CHECK_NOTHROW(parse("LeakyReLU", {{"act_type", "leaky"}, {"lower_bound", "0.5"}, {"upper_bound", "0.1"}}));
}
