// The .symbind one-file model format (io/model_file.h): lossless round trips on every shared
// model, zero-copy loading from a read-only mapping, refusal to write into mapped weights,
// and hostile files.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <symbind/executor/executor.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

#include "model_file_test_util.h"
#include "test_io_util.h"

using namespace symbind;
using namespace symbind::test;
using symbind_test::SharedDir;
using symbind_test::TempPath;

namespace {

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  WriteStringToFile(path, bytes);
  return path;
}

bool SameBits(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}

void CheckSameArrays(const std::map<std::string, NDArray>& a, const std::map<std::string, NDArray>& b) {
  REQUIRE(a.size() == b.size());
  for (auto& kv : a) {
    INFO(kv.first);
    REQUIRE(b.count(kv.first) == 1);
    CHECK(SameBits(kv.second, b.at(kv.first)));
  }
}

// The mapping of `path` in /proc/self/maps holds `p` (read independently of the library).
bool InsideMappingOf(const void* p, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    if (line.size() < path.size() || line.compare(line.size() - path.size(), path.size(), path) != 0) continue;
    uintptr_t lo = 0, hi = 0;
    char dash;
    std::istringstream is(line);
    is >> std::hex >> lo >> dash >> hi;
    std::string perms;
    is >> perms;
    if (addr >= lo && addr < hi && perms.compare(0, 2, "r-") == 0) return true;
  }
  return false;
}

// Binds for inference (no gradients) and runs forward on `data`.
std::vector<NDArray> Infer(const Symbol& sym, const std::map<std::string, NDArray>& params,
                           const std::map<std::string, NDArray>& aux, const NDArray& data) {
  std::map<std::string, NDArray> args = params;
  args["data"] = data;
  std::map<std::string, OpReq> no_grads;
  for (auto& n : sym.ListArguments()) no_grads[n] = OpReq::kNull;
  auto exec = SimpleBind(sym, Context::CPU(), args, {}, no_grads, aux);
  exec->Forward(false);
  std::vector<NDArray> out;
  for (auto& o : exec->outputs()) out.push_back(o.Copy());
  return out;
}

NDArray GaussianInput(const TShape& shape) {
  NDArray x(shape);
  FillGaussian(x, 7, "data");
  return x;
}

// Saves `model`, maps it back and checks arrays, graph and outputs, then converts it back to
// a JSON + .params pair and checks that too.
void CheckRoundTrip(const std::string& tag, const Model& original, const TShape& data_shape) {
  const std::string path = TempPath(tag + ".symbind");
  SaveModel(path, original);
  {
    Model loaded = LoadModel(path);
    CheckSameArrays(original.args, loaded.args);
    CheckSameArrays(original.aux, loaded.aux);
    CHECK(SaveSymbolJSON(loaded.symbol) == SaveSymbolJSON(original.symbol));
    CHECK(loaded.input_shapes == original.input_shapes);
    for (auto& kv : loaded.args) {
      CHECK(kv.second.read_only());
      CHECK(InsideMappingOf(kv.second.raw_data(), path));
    }

    const NDArray x = GaussianInput(data_shape);
    const auto want = Infer(original.symbol, original.args, original.aux, x);
    const auto got = Infer(loaded.symbol, loaded.args, loaded.aux, x);
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(SameBits(want[i], got[i]));

    const std::string prefix = TempPath(tag + "-back");
    SaveCheckpoint(prefix, 0, loaded.symbol, loaded.args, loaded.aux);
    Model back = LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, 0));
    CheckSameArrays(original.args, back.args);
    CheckSameArrays(original.aux, back.aux);
    CHECK(SaveSymbolJSON(back.symbol) == SaveSymbolJSON(original.symbol));
    std::remove(CheckpointSymbolPath(prefix).c_str());
    std::remove(CheckpointParamsPath(prefix, 0).c_str());
  }
  std::remove(path.c_str());
}

// A symbols-only graph with parameters as SimpleBind initialises them (seeded N(0,1)).
Model SimpleBindInitialised(const std::string& file, const TShape& data_shape) {
  Model m;
  m.symbol = LoadSymbolFile(SharedDir() + "/models/symbols/" + file);
  std::map<std::string, OpReq> no_grads;
  for (auto& n : m.symbol.ListArguments()) no_grads[n] = OpReq::kNull;
  auto exec = SimpleBind(m.symbol, Context::CPU(), {}, {}, no_grads, {}, SimpleBindOptions{{{"data", data_shape}}});
  for (auto& kv : exec->arg_dict())
    if (kv.first != "data" && kv.first.find("label") == std::string::npos) m.args[kv.first] = kv.second;
  m.aux = exec->aux_dict();
  m.input_shapes["data"] = data_shape;
  return m;
}

}  // namespace

TEST_CASE("symbind file: MTCNN nets round-trip bit for bit, outputs identical", "[model_file][shared]") {
  const std::pair<const char*, int64_t> nets[] = {{"det1", 12}, {"det2", 24}, {"det3", 48}};
  for (auto& [name, side] : nets) {
    INFO(name);
    const std::string prefix = SharedDir() + "/models/mtcnn/" + name;
    Model m = LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, 1));
    REQUIRE(!m.args.empty());
    CheckRoundTrip(name, m, TShape({2, 3, side, side}));
  }
}

// The symbols-only graphs of ../shared/models/symbols, one test each.
TEST_CASE("symbind file: resnet-18 with SimpleBind parameters round-trips", "[model_file][shared]") {
  CheckRoundTrip("resnet-18", SimpleBindInitialised("resnet-18-symbol.json", TShape({1, 3, 64, 64})), TShape({1, 3, 64, 64}));
}
TEST_CASE("symbind file: squeezenet_v1.1 with SimpleBind parameters round-trips", "[model_file][shared]") {
  CheckRoundTrip("squeezenet", SimpleBindInitialised("squeezenet_v1.1-symbol.json", TShape({1, 3, 64, 64})), TShape({1, 3, 64, 64}));
}
#ifndef SYMBIND_SANITIZER_BUILD
// The two largest graphs (61M and 134M parameters) run in Release builds only: under the
// sanitizers they took over a minute and go through the same writer and reader as the others.
TEST_CASE("symbind file: caffenet with SimpleBind parameters round-trips", "[model_file][shared]") {
  // fc6 fixes the input size at 224.
  CheckRoundTrip("caffenet", SimpleBindInitialised("caffenet-symbol.json", TShape({1, 3, 224, 224})), TShape({1, 3, 224, 224}));
}
TEST_CASE("symbind file: fcn32s with SimpleBind parameters round-trips", "[model_file][shared]") {
  // 134M parameters (537 MB); the first convolution pads by 100, so 64x64 passes every layer.
  CheckRoundTrip("fcn32s", SimpleBindInitialised("fcn32s-symbol.json", TShape({1, 3, 64, 64})), TShape({1, 3, 64, 64}));
}
#endif

TEST_CASE("symbind file: a .symbind file is within 1% of the JSON + .params pair", "[model_file][shared]") {
  const std::string prefix = SharedDir() + "/models/mtcnn/det3";
  Model m = LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, 1));
  const double pair = static_cast<double>(SaveSymbolJSON(m.symbol).size() +
                                          SaveNDArraysToString(MergeArgAux(m.args, m.aux)).size());
  const double one = static_cast<double>(SaveModelToString(m).size());
  CHECK(one <= pair * 1.01);
  CHECK(one >= pair * 0.99);
}

TEST_CASE("symbind file: parameters are views into the read-only mapping, bound without copying", "[model_file][shared]") {
  const std::string prefix = SharedDir() + "/models/mtcnn/det1";
  const std::string path = TempPath("zero-copy.symbind");
  SaveModel(path, LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, 1)));
  Model m = LoadModel(path);
  const NDArray w = m.args.at("conv1_weight");
  REQUIRE(InsideMappingOf(w.raw_data(), path));
  CHECK(reinterpret_cast<uintptr_t>(w.raw_data()) % 64 == 0);
  CHECK(w.storage()->bytes() == static_cast<size_t>(std::ifstream(path, std::ios::ate | std::ios::binary).tellg()));

  std::map<std::string, NDArray> args = m.args;
  args["data"] = GaussianInput(TShape({1, 3, 12, 12}));
  std::map<std::string, OpReq> no_grads;
  for (auto& n : m.symbol.ListArguments()) no_grads[n] = OpReq::kNull;
  auto exec = SimpleBind(m.symbol, Context::CPU(), args, {}, no_grads, m.aux);
  CHECK(exec->arg_dict().at("conv1_weight").raw_data() == w.raw_data());
  exec->Forward(false);

  // The mapping outlives the Model: the executor's arrays keep it alive.
  const void* p = w.raw_data();
  m = Model();
  args.clear();
  CHECK(InsideMappingOf(p, path));
  exec->Forward(false);
  exec.reset();
  std::remove(path.c_str());
}

TEST_CASE("symbind file: nothing writes into mapped weights", "[model_file]") {
  // fc -> BatchNorm: parameters and aux states.
  Symbol data = Symbol::Variable("data");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 3).SetInput("data", data).CreateSymbol("fc");
  Symbol bn = OpBuilder("BatchNorm").SetInput("data", fc).CreateSymbol("bn");
  Model original;
  original.symbol = bn;
  original.args = {{"fc_weight", NDArray(TShape({3, 4}), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})},
                   {"fc_bias", NDArray(TShape({3}), {0.1f, 0.2f, 0.3f})},
                   {"bn_gamma", NDArray(TShape({3}), {1, 1, 1})},
                   {"bn_beta", NDArray(TShape({3}), {0, 0, 0})}};
  original.aux = {{"bn_moving_mean", NDArray(TShape({3}), {0, 0, 0})},
                  {"bn_moving_var", NDArray(TShape({3}), {1, 1, 1})}};
  const std::string path = TempPath("read-only.symbind");
  SaveModel(path, original);
  const std::string file_before = ReadFileToString(path);
  Model m = LoadModel(path);
  NDArray w = m.args.at("fc_weight");

  SECTION("NDArray writes throw and name the array as mapped") {
    CHECK_THROWS_WITH(w.Fill(0), Catch::Contains("Fill: the array is read-only (weights mapped from"));
    CHECK_THROWS_WITH(w.SetFlat(0, 1), Catch::Contains("SetFlat: the array is read-only"));
    NDArray src(w.shape());
    CHECK_THROWS_WITH(src.CopyTo(&w), Catch::Contains("CopyTo: the array is read-only"));
    std::vector<float> v(12, 1.0f);
    CHECK_THROWS_WITH(w.SyncCopyFromCPU(v.data(), v.size()), Catch::Contains("SyncCopyFromCPU: the array is read-only"));
    NDArray copy = w.Copy();  // the way to get a writable array
    CHECK(!copy.read_only());
    copy.Fill(0);
    CHECK(w.GetFlat(0) == 1.0f);
  }
  SECTION("a training bind (grad_req write) copies the parameters and aux states it updates") {
    std::map<std::string, NDArray> args = m.args;
    args["data"] = GaussianInput(TShape({2, 4}));
    auto exec = SimpleBind(m.symbol, Context::CPU(), args, {}, {}, m.aux);  // grad_req write
    CHECK(exec->arg_dict().at("fc_weight").raw_data() != w.raw_data());
    CHECK(!exec->arg_dict().at("fc_weight").read_only());
    CHECK(!exec->aux_dict().at("bn_moving_mean").read_only());
    exec->Forward(true);
    exec->Backward(std::vector<NDArray>{NDArray(TShape({2, 3}), {1, 1, 1, 1, 1, 1})});
    exec->arg_dict().at("fc_weight").Fill(0.5f);  // an optimizer step writes the copy
    CHECK(w.GetFlat(0) == 1.0f);
  }
  SECTION("an inference bind refuses training-mode forward, which would update aux states") {
    std::map<std::string, NDArray> args = m.args;
    args["data"] = GaussianInput(TShape({2, 4}));
    std::map<std::string, OpReq> no_grads;
    for (auto& n : m.symbol.ListArguments()) no_grads[n] = OpReq::kNull;
    auto exec = SimpleBind(m.symbol, Context::CPU(), args, {}, no_grads, m.aux);
    CHECK_THROWS_WITH(exec->Forward(true), Catch::Contains("would update aux state 'bn_moving_mean', which is read-only"));
    exec->Forward(false);
  }
  SECTION("a raw write faults: the mapping is PROT_READ") {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::signal(SIGSEGV, SIG_DFL);  // not Catch's handler: the parent judges how the child ended
      ::signal(SIGBUS, SIG_DFL);
      static_cast<volatile float*>(w.raw_data())[0] = 42.0f;
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK((WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS));
  }
  m = Model();
  w = NDArray();
  CHECK(ReadFileToString(path) == file_before);
  std::remove(path.c_str());
}

TEST_CASE("symbind file: LoadModelFiles reads either form and refuses a .symbind with a .params", "[model_file][shared]") {
  const std::string prefix = SharedDir() + "/models/mtcnn/det2";
  Model pair = LoadModelFiles(CheckpointSymbolPath(prefix), CheckpointParamsPath(prefix, 1));
  const std::string path = TempPath("either.symbind");
  SaveModel(path, pair);
  CHECK(IsModelFile(path));
  CHECK(!IsModelFile(CheckpointSymbolPath(prefix)));
  CHECK_THROWS_WITH(IsModelFile(TempPath("does-not-exist")), Catch::Contains("cannot open"));
  Model one = LoadModelFiles(path);
  CheckSameArrays(pair.args, one.args);
  CHECK_THROWS_AS(LoadModelFiles(path, CheckpointParamsPath(prefix, 1)), IOError);
  Model symbol_only = LoadModelFiles(CheckpointSymbolPath(prefix));
  CHECK(symbol_only.args.empty());
  std::remove(path.c_str());
}

namespace {

// Where the last byte of content lies; after it the writer only pads to the alignment.
size_t ContentEnd(const std::string& file) {
  size_t end = 0;
  for (const fb::Param* p : *fb::GetModel(file.data())->params())
    end = std::max(end, PosOf(file, p->data()->data()) + p->data()->size());
  return end;
}

struct Hostile {
  std::string name, bytes, message;  // message: a part of the IOError's text
};

std::vector<Hostile> HostileFiles() {
  std::vector<Hostile> h;
  const std::string valid = BuildRaw(ValidRawModel());
  const fb::Model& vm = *fb::GetModel(valid.data());
  auto corrupt = [&](const std::string& name, auto&& edit, const std::string& message) {
    std::string s = valid;
    edit(&s);
    h.push_back({name, s, message});
  };
  auto raw = [&](const std::string& name, auto&& edit, const std::string& message) {
    RawModel m = ValidRawModel();
    edit(&m);
    h.push_back({name, BuildRaw(m), message});
  };
  h.push_back({"empty file", "", "the file is 0 bytes"});
  h.push_back({"4 bytes", valid.substr(0, 4), "the file is 4 bytes"});
  h.push_back({"truncated to 64 bytes", valid.substr(0, 64), "FlatBuffers verification failed"});
  h.push_back({"truncated to half", valid.substr(0, valid.size() / 2), "FlatBuffers verification failed"});
  h.push_back({"last byte of the last array cut", valid.substr(0, ContentEnd(valid) - 1), "FlatBuffers verification failed"});
  h.push_back({"a JSON file", "{\"nodes\": [], \"heads\": []}", "this is MXNet symbol JSON, not a .symbind model"});
  corrupt("wrong identifier", [](std::string* s) { (*s)[4] = 'X'; }, "identifier 'XBMD' at byte 4, expected 'SBMD'");
  corrupt("root offset past the end", [](std::string* s) { PutU32(s, 0, 0x7ffffff0u); }, "root table offset 2147483632 lies outside");
  corrupt("root offset not aligned", [](std::string* s) { PutU32(s, 0, 13); }, "root table offset 13 lies outside");
  const size_t root = PosOf(valid, &vm);
  corrupt("root vtable outside the buffer", [&](std::string* s) { PutI32(s, root, -0x100000); }, "the root table's vtable at byte");
  corrupt("root vtable before the buffer", [&](std::string* s) { PutI32(s, root, 0x7ffffff0); }, "the root table's vtable at byte");
  const int64_t vt = static_cast<int64_t>(root) - [&] { int32_t v; std::memcpy(&v, valid.data() + root, 4); return v; }();
  corrupt("root vtable claims 65534 bytes", [&](std::string* s) { uint16_t big = 65534; std::memcpy(&(*s)[static_cast<size_t>(vt)], &big, 2); }, "claims 65534 bytes");
  const size_t node0 = PosOf(valid, vm.nodes()->Get(0));
  corrupt("a node's vtable points outside the buffer", [&](std::string* s) { PutI32(s, node0, -0x1000000); }, "FlatBuffers verification failed");
  corrupt("nodes vector length 2^28", [&](std::string* s) { PutU32(s, PosOf(valid, vm.nodes()) , 1u << 28); }, "FlatBuffers verification failed");
  corrupt("node name length 2^30", [&](std::string* s) { PutU32(s, PosOf(valid, vm.nodes()->Get(0)->name()), 1u << 30); }, "FlatBuffers verification failed");
  corrupt("params offset flipped", [&](std::string* s) { PutU32(s, PosOf(valid, vm.params()) - 0, 0xfffffff0u); }, "FlatBuffers verification failed");
  const fb::Param* w = vm.params()->Get(0);
  corrupt("weight data 4 bytes shorter than its shape (in place)", [&](std::string* s) { PutU32(s, PosOf(valid, w->data()), w->data()->size() - 4); }, "needs 24 bytes but its data holds 20");
  corrupt("weight data length past the end", [&](std::string* s) { PutU32(s, PosOf(valid, w->data()), 0x40000000u); }, "FlatBuffers verification failed");
  raw("format version 0", [](RawModel* m) { m->format_version = 0; }, "format version 0 is not supported");
  raw("format version 99", [](RawModel* m) { m->format_version = 99; }, "format version 99 is not supported");
  raw("unknown operator", [](RawModel* m) { m->nodes[3].op = "NoSuchOp"; }, "node 3 'fc': unknown operator 'NoSuchOp'");
  raw("input names a later node (a cycle)", [](RawModel* m) { m->nodes[3].inputs[0] = {3, 0}; }, "node 3 'fc' input 0 references node 3, which is missing or not defined before it");
  raw("input names node 1000", [](RawModel* m) { m->nodes[3].inputs[1] = {1000, 0}; }, "references node 1000");
  raw("input uses output 5 of a variable", [](RawModel* m) { m->nodes[3].inputs[0] = {0, 5}; }, "uses output 5 of node 0 'data', which has 1 output");
  raw("head out of range", [](RawModel* m) { m->heads = {{9, 0}}; }, "head 0 references node 9");
  raw("no heads", [](RawModel* m) { m->heads.clear(); }, "\"heads\" is empty");
  raw("variable with an input", [](RawModel* m) { m->nodes[2].inputs = {{0, 0}}; }, "a variable (op \"null\") has 1 inputs");
  raw("two variables named data", [](RawModel* m) { m->nodes[1].name = "data"; }, "variable name 'data' is already used by node 0");
  raw("op with too few inputs", [](RawModel* m) { m->nodes[3].inputs.pop_back(); }, "has 2 inputs but the operator takes 3");
  raw("attribute given twice", [](RawModel* m) { m->nodes[3].attrs.push_back({"num_hidden", "3"}); }, "has attribute 'num_hidden' twice");
  raw("shape larger than its data", [](RawModel* m) { m->params[0].dims = {4, 3}; }, "of shape (4,3) and dtype float32 needs 48 bytes but its data holds 24");
  raw("shape smaller than its data", [](RawModel* m) { m->params[0].dims = {2, 2}; }, "needs 16 bytes but its data holds 24");
  raw("negative dim", [](RawModel* m) { m->params[0].dims = {-2, -3}; }, "has dim 0 = -2; dims must be >= 0");
  raw("dims overflowing 64 bits", [](RawModel* m) { m->params[0].dims = {int64_t{1} << 40, int64_t{1} << 40}; }, "overflows 64-bit byte counts");
  raw("40 dims", [](RawModel* m) { m->params[0].dims.assign(40, 1); }, "has 40 dims; at most 32");
  raw("dtype code 9", [](RawModel* m) { m->params[0].dtype = 9; }, "has dtype code 9, which is not an MXNet type flag");
  raw("dtype code -1", [](RawModel* m) { m->params[0].dtype = -1; }, "has dtype code -1");
  raw("float64 dtype for float32-sized data", [](RawModel* m) { m->params[0].dtype = 1; }, "needs 48 bytes but its data holds 24");
  raw("a parameter name twice", [](RawModel* m) { m->params[1].name = m->params[0].name; m->params[1].dims = {2, 3}; m->params[1].data = m->params[0].data; }, "the name is used twice");
  raw("a parameter without arg:/aux: prefix", [](RawModel* m) { m->params[0].name = "fc_weight"; }, "parameter name 'fc_weight' has neither an 'arg:' nor an 'aux:' prefix");
  raw("arg_nodes lists node 77", [](RawModel* m) { m->arg_nodes.push_back(77); }, "arg_nodes lists node 77 but the graph has 4 nodes");
  raw("aux_nodes lists an op node", [](RawModel* m) { m->aux_nodes = {3}; }, "aux_nodes lists node 3 'fc', which is not a variable");
  raw("aux_nodes lists a non-aux variable", [](RawModel* m) { m->aux_nodes = {1}; }, "aux_nodes lists 1 aux states but the graph has 0");
  raw("input shape with a negative dim", [](RawModel* m) { m->input_shapes[0].dims = {2, -3}; }, "input shape 'data' has dim 1 = -3");
  raw("input shape given twice", [](RawModel* m) { m->input_shapes.push_back(m->input_shapes[0]); }, "input shape 'data' is given twice");
  h.push_back({"data not on a 64-byte boundary", MisalignedDataFile(), "not on a 64-byte boundary"});
  return h;
}

}  // namespace

TEST_CASE("symbind file: a FIFO given as a model is refused, not waited on", "[model_file][hostile]") {
  const std::string fifo = TempPath("model.fifo");
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // IsModelFile read the magic with std::ifstream, whose open() waited for a writer.
  CHECK_THROWS_WITH(IsModelFile(fifo), Catch::Contains("not a regular file (a FIFO)"));
  CHECK_THROWS_WITH(LoadModelFiles(fifo), Catch::Contains("not a regular file (a FIFO)"));
  const std::string json = TempPath("fifo-pair-symbol.json");
  WriteStringToFile(json, R"({"nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]})");
  CHECK_THROWS_WITH(LoadModelFiles(json, fifo), Catch::Contains("not a regular file (a FIFO)"));
  ::unlink(fifo.c_str());
  std::remove(json.c_str());
}

TEST_CASE("symbind file: trailing bytes and input shapes past int64 are refused", "[model_file][hostile]") {
  Model model;
  model.symbol = Symbol::Create("Flatten", "f", {}, {{"data", Symbol::Variable("data")}});
  model.input_shapes["data"] = TShape({2, 3});
  const std::string image = SaveModelToString(model);
  REQUIRE_NOTHROW(LoadModelBuffer(image.data(), image.size(), "m.symbind"));
  // Bytes appended to a .symbind file were ignored, as .params files refuse them.
  for (const std::string& tail : {std::string("extra"), std::string(64, '\0')}) {
    const std::string longer = image + tail;
    CHECK_THROWS_WITH(LoadModelBuffer(longer.data(), longer.size(), "m.symbind"),
                      Catch::StartsWith("m.symbind: ") &&
                          Catch::Contains(" trailing bytes after the model's last structure (the file should end at byte "));
  }
  // An element count past int64: `symbind shapes` printed it and exited 0.
  model.input_shapes["data"] = TShape({int64_t{1} << 40, int64_t{1} << 40});
  const std::string huge = SaveModelToString(model);
  CHECK_THROWS_WITH(LoadModelBuffer(huge.data(), huge.size(), "m.symbind"),
                    Catch::StartsWith("m.symbind: shape (1099511627776,1099511627776) has more elements than int64 can count"));
}

TEST_CASE("symbind file: hostile files throw IOError naming what is wrong", "[model_file][hostile]") {
  REQUIRE_NOTHROW(LoadModelBuffer(BuildRaw(ValidRawModel()).data(), BuildRaw(ValidRawModel()).size()));
  const auto cases = HostileFiles();
  CHECK(cases.size() >= 46);
  for (auto& c : cases) {
    INFO(c.name);
    REQUIRE(!c.name.empty());
    const std::string path = WriteTemp("hostile.symbind", c.bytes);
    try {
      LoadModel(path);
      FAIL("no exception");
    } catch (const IOError& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains(c.message));
      CHECK(msg.compare(0, path.size(), path) == 0);  // names the file
    }
    std::remove(path.c_str());
  }
}

TEST_CASE("symbind file: every truncation and every overwritten word is refused or read safely", "[model_file][hostile]") {
  const std::string valid = BuildRaw(ValidRawModel());
  const Model whole = LoadModelBuffer(valid.data(), valid.size());
  for (size_t n = 0; n < valid.size(); ++n) {
    INFO("truncated to " << n);
    if (n < ContentEnd(valid)) {
      CHECK_THROWS_AS(LoadModelBuffer(valid.data(), n), IOError);
    } else {  // only alignment padding after the last array is cut
      CheckSameArrays(whole.args, LoadModelBuffer(valid.data(), n).args);
    }
  }
  // Each aligned word replaced by values that make offsets point far away, backwards or at 0.
  size_t refused = 0;
  for (size_t pos = 0; pos + 4 <= valid.size(); pos += 4)
    for (uint32_t v : {0xffffffffu, 0x7ffffff0u, 0u, 0x80000000u}) {
      std::string s = valid;
      PutU32(&s, pos, v);
      INFO("word at " << pos << " = " << v);
      try {
        Model m = LoadModelBuffer(s.data(), s.size());
        for (auto& kv : m.args) (void)kv.second.ToVector();  // what loads must be readable
      } catch (const Error&) {
        ++refused;
      }
    }
  CHECK(refused > 0);
}

