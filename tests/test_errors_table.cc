// docs/errors.md is generated from the cases below: each one feeds the library a bad input for
// real and records the exception type and the first line of its message. The test checks that
// every case still throws exactly that, and that the committed table equals the rendered one.
//   regenerate: SYMBIND_UPDATE_DOCS=1 ./build/tests/symbind_tests "[errors]"
//   print what each case throws today: SYMBIND_ERRORS_DUMP=1 ./build/tests/symbind_tests "[errors]"
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/invoke.h>
#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/data_iter.h>
#include <symbind/io/image.h>
#include <symbind/io/mnist.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>
#include <symbind/train/kvstore.h>
#include <symbind/train/optimizer.h>

#include "model_file_test_util.h"
#include <mxnet/c_api.h>
#include <mxnet/c_predict_api.h>
#include <nnvm/c_api.h>

#include "test_io_util.h"

#include "doc_test_util.h"
#include "shared_dir.h"

using namespace symbind;
using symbind_test::Bytes;

namespace {

// Files the cases write live here; messages show it as "<tmp>".
std::string TmpDir() {
  static const std::string dir = [] {
    auto p = std::filesystem::temp_directory_path() / "symbind-errors-table";
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return dir;
}

std::string TmpFile(const std::string& name, const std::string& bytes) {
  const std::string path = TmpDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A FIFO in the temp dir: opening it for reading would wait for a writer.
std::string TmpFifo(const std::string& name) {
  const std::string path = TmpDir() + "/" + name;
  ::unlink(path.c_str());
  if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  return path;
}

struct ErrorCase {
  std::string what;              // what was tried
  std::function<void()> run;     // must throw
  std::string type;              // most derived symbind exception type
  std::string first_line;        // first line of what(), temp dir shown as <tmp>
};

// One V2 dense array header up to (not including) the raw data.
Bytes& V2Array(Bytes& b, const std::vector<int64_t>& dims, int32_t type_flag = 0,
               int32_t stype = 0) {
  b.u32(0xF993FAC9).i32(stype).shape64(dims).i32(1).i32(0).i32(type_flag);
  return b;
}

void LoadParamsBytes(const std::string& bytes) { LoadNDArrayBuffer(bytes.data(), bytes.size()); }

Symbol Var(const std::string& n) { return Symbol::Variable(n); }

Symbol FC(const Symbol& x, int hidden, const std::string& name) {
  return OpBuilder("FullyConnected").SetParam("num_hidden", hidden).SetInput("data", x)
      .CreateSymbol(name);
}

// Binds `op` on a variable "data" of `shape` and runs it forward.
void RunOp(const std::string& op, const KwArgs& params, const TShape& shape) {
  Symbol s = Symbol::Create(op, "op", params, {{"data", Var("data")}});
  SimpleBind(s, Context::CPU(), {{"data", NDArray(shape)}})->Forward(false);
}

// A one-node JSON graph around `op_node` (a node object referring to node 0 as its input).
std::string JsonWithOp(const std::string& op_node) {
  return R"({"nodes": [{"op": "null", "name": "data", "inputs": []}, )" + op_node +
         R"(], "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10600]}})";
}

std::string NpyBytes(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY";
  s += '\x01';
  s += '\x00';
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  return s + header + data;
}

// Loads a well-formed .npy framing of `header_dict` followed by `data_bytes` zero bytes.
void LoadNpyAs(const std::string& what, const std::string& header_dict, size_t data_bytes) {
  const std::string s = NpyBytes(header_dict, std::string(data_bytes, '\0'));
  LoadNpyBuffer(s.data(), s.size(), what);
}

// Sets the bind memory limit for one case and restores the default afterwards.
struct BindLimitForTest {
  explicit BindLimitForTest(uint64_t bytes) { SetMaxBindBytes(bytes); }
  ~BindLimitForTest() { SetMaxBindBytes(0); }
};

std::string BigEndian32(std::initializer_list<uint32_t> vals) {
  std::string s;
  for (uint32_t v : vals) {
    s += static_cast<char>(v >> 24);
    s += static_cast<char>(v >> 16);
    s += static_cast<char>(v >> 8);
    s += static_cast<char>(v);
  }
  return s;
}

// A C API call: -1 becomes an Error carrying MXGetLastError().
void CApi(int rc) {
  if (rc != 0) throw Error(MXGetLastError());
}

std::vector<ErrorCase> Cases() {
  std::vector<ErrorCase> c;
  auto add = [&c](std::string what, std::function<void()> run, std::string type,
                  std::string first_line) {
    c.push_back({std::move(what), std::move(run), std::move(type), std::move(first_line)});
  };

  // ---- .params (NDArray list) files ----
  add(".params: bad list magic (0x113)", [] {
    Bytes b;
    b.u64(0x113).u64(0).u64(0).u64(0);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: file header at byte offset 0: not an NDArray file: bad magic 275 (expected 274)");
  add(".params: truncated header (5 bytes)", [] { LoadParamsBytes(std::string("\x12\x01\0\0\0", 5)); }, "IOError", "NDArray file: file header at byte offset 0: truncated reading list magic (expected 8 bytes, got 5)");
  add(".params: V2 array with ndim 1000", [] {
    Bytes b;
    b.list_header(1).u32(0xF993FAC9).i32(0).i32(1000);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 32: bad ndim in shape (expected 0..32, got 1000)");
  add(".params: dims (2^40, 2^40) overflow the element count", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {int64_t{1} << 40, int64_t{1} << 40});
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 24: shape (1099511627776,1099511627776): the product of the dims overflows");
  add(".params: negative dim (-3)", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {-3, 2});
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 36: negative dim 0 in shape (got -3)");
  add(".params: shape (1000) but 4 bytes of data", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1000}).f32(1.0f);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 56: array data of shape (1000,) needs 1000 x 4 bytes but only 4 bytes are left");
  add(".params: name length 2^40, beyond the file", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}).f32(1.0f);
    b.u64(1).u64(uint64_t{1} << 40).raw("w");
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: names section at byte offset 68: name 0 has length 1099511627776 but only 1 bytes are left");
  add(".params: unknown dtype flag 99", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}, 99).f32(1.0f);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 52: unknown type flag 99 (expected 0..7 or 12: float32, float64, float16, uint8, int32, int8, int64, bool, bfloat16)");
  add(".params: unknown storage type 7", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}, 0, 7).f32(1.0f);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 28: unknown storage type 7 (expected 0 dense, 1 row_sparse or 2 csr)");
  add(".params: unknown per-array magic 0xDEADBEEF", [] {
    Bytes b;
    b.list_header(1).u32(0xDEADBEEF).i32(0).i32(0);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 24: bad array header (expected a legacy ndim 0..32 or magic 0xF993FAC8, 0xF993FAC9, 0xF993FACA; got 3735928559 = 0xDEADBEEF)");
  add(".params: array count 2^40 in a 24-byte file", [] {
    Bytes b;
    b.list_header(uint64_t{1} << 40);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: file header at byte offset 16: array count 1099511627776 exceeds what the 0 remaining bytes can hold");
  add(".params: 1 array but 2 names", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}).f32(1.0f);
    b.names({"a", "b"});
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: names section at byte offset 60: name count 2 does not match the array count (expected 0 or 1)");
  add(".params: legacy layout with ndim 33", [] {
    Bytes b;
    b.list_header(1).u32(33);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 24: bad array header (expected a legacy ndim 0..32 or magic 0xF993FAC8, 0xF993FAC9, 0xF993FACA; got 33 = 0x21)");
  add(".params: V1 array cut inside its dims", [] {
    Bytes b;
    b.list_header(1).u32(0xF993FAC8).i32(2).i64(3);
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: array 0 at byte offset 40: truncated reading shape (expected 8 bytes, got 0)");
  add(".params: 5 bytes after the names section", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}).f32(1.0f);
    b.names({"w"}).raw("extra");
    LoadParamsBytes(b.str());
  }, "IOError", "NDArray file: names section at byte offset 77: 5 trailing bytes after the names section (the file should end at byte offset 77)");
  add("LoadNDArrayFile on a missing file", [] { LoadNDArrayFile(TmpDir() + "/missing.params"); }, "IOError", "cannot open <tmp>/missing.params: No such file or directory");
  add("LoadNDArrayMap on a list without names", [] {
    Bytes b;
    b.list_header(1);
    V2Array(b, {1}).f32(1.0f);
    b.u64(0);
    LoadNDArrayMap(TmpFile("unnamed.params", b.str()));
  }, "IOError", "<tmp>/unnamed.params: the NDArray file has no names (a positional list)");
  add("LoadNDArrayMap with the name \"w\" twice", [] {
    Bytes b;
    b.list_header(2);
    V2Array(b, {1}).f32(1.0f);
    V2Array(b, {1}).f32(2.0f);
    b.names({"w", "w"});
    LoadNDArrayMap(TmpFile("twice.params", b.str()));
  }, "IOError", "<tmp>/twice.params: name 'w' appears twice (array 1)");
  add("SplitArgAux on a key without arg:/aux: prefix", [] {
    std::map<std::string, NDArray> args, aux;
    SplitArgAux({{"weight", NDArray(TShape({1}))}}, &args, &aux);
  }, "IOError", "parameter name 'weight' has neither an 'arg:' nor an 'aux:' prefix");

  // ---- symbol JSON ----
  add("JSON: syntax error (missing value)", [] { LoadSymbolJSON(R"({"nodes": [, "heads": []})"); }, "IOError", "symbol JSON: malformed JSON at byte 12: [json.exception.parse_error.101] parse error at line 1, column 12: syntax error while parsing value - unexpected ','; expected '[', '{', or a literal");
  add("JSON: empty text", [] { LoadSymbolJSON(""); }, "IOError", "symbol JSON: malformed JSON at byte 1: [json.exception.parse_error.101] parse error at line 1, column 1: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
  add("JSON: top level is an array", [] { LoadSymbolJSON("[1, 2]"); }, "IOError", "symbol JSON: the top level is not an object");
  add("JSON: no \"nodes\"", [] { LoadSymbolJSON(R"({"heads": [[0, 0, 0]]})"); }, "IOError", "symbol JSON: no \"nodes\" array");
  add("JSON: input refers to node 5 of 2", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[5, 0, 0]]})"));
  }, "IOError", "symbol JSON: node 1 'a' input 0 references node 5, which is missing or not defined before it");
  add("JSON: head refers to node 9", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": [[9, 0, 0]]})");
  }, "IOError", "symbol JSON: head 0 references node 9, which is missing or not defined before it");
  add("JSON: unknown op \"Frobnicate\"", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Frobnicate", "name": "f", "inputs": [[0, 0, 0]]})"));
  }, "IOError", "symbol JSON: node 1 'f': unknown operator 'Frobnicate'");
  add("JSON: unknown parameter \"num_hiden\"", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "FullyConnected", "name": "fc", "attrs": {"num_hiden": "10"}, "inputs": [[0, 0, 0]]})"));
  }, "ParamError", "node 1 'fc': Cannot find argument 'num_hiden', Possible Arguments:");
  add("JSON: bad parameter value num_hidden=\"ten\"", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "ten"}, "inputs": [[0, 0, 0]]})"));
  }, "ParamError", "node 1 'fc': Invalid Parameter format for num_hidden expect int but value='ten'");
  add("JSON: out-of-range parameter num_hidden=\"-1\"", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "-1"}, "inputs": [[0, 0, 0]]})"));
  }, "ParamError", "node 1 'fc': value -1 for Parameter num_hidden should be greater equal to 1");
  add("JSON: wrong enum value act_type=\"relux\"", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relux"}, "inputs": [[0, 0, 0]]})"));
  }, "ParamError", "node 1 'a': Invalid Input: 'relux', valid values are: {'relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'} for Parameter act_type");
  add("JSON: required parameter num_hidden missing", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "FullyConnected", "name": "fc", "inputs": [[0, 0, 0]]})"));
  }, "ParamError", "node 1 'fc': Required parameter num_hidden of int, >= 1 is not presented");
  add("JSON: cycle (node 1 takes node 2, node 2 takes node 1)", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
      {"op": "elemwise_add", "name": "a", "inputs": [[0, 0, 0], [2, 0, 0]]},
      {"op": "Activation", "name": "b", "attrs": {"act_type": "relu"}, "inputs": [[1, 0, 0]]}],
      "arg_nodes": [0], "heads": [[2, 0, 0]]})");
  }, "IOError", "symbol JSON: node 1 'a' input 1 references node 2, which is missing or not defined before it");
  add("JSON: input refers to output 7 of a variable", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[0, 7, 0]]})"));
  }, "IOError", "symbol JSON: node 1 'a' input 0 uses output 7 of node 0 'data', which has 1 output");
  add("JSON: input refers to node -1", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[-1, 0, 0]]})"));
  }, "IOError", "symbol JSON: node 1 'a' input 0: entry [-1,0,0] must hold non-negative integers");
  add("JSON: \"inputs\" is a string", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": "data"})"));
  }, "IOError", "symbol JSON: node 1 'a': \"inputs\" must be an array");
  add("JSON: Activation with no inputs", [] {
    LoadSymbolJSON(JsonWithOp(R"({"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": []})"));
  }, "IOError", "symbol JSON: node 1 'a' (Activation) has 0 inputs but the operator takes 1 (data)");
  add("JSON: Reshape shape=\"(2,a)\"", [] {
    LoadSymbolJSON(JsonWithOp(R"J({"op": "Reshape", "name": "r", "attrs": {"shape": "(2,a)"}, "inputs": [[0, 0, 0]]})J"));
  }, "ParamError", "node 1 'r': Invalid Parameter format for shape expect Shape(tuple) but value='(2,a)'");
  add("JSON: a variable (op \"null\") with an input", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[0, 0, 0]]})");
  }, "IOError", "symbol JSON: node 0 'data': a variable (op \"null\") has 1 inputs");
  add("JSON: \"heads\" empty", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []}], "arg_nodes": [0], "heads": []})");
  }, "IOError", "symbol JSON: \"heads\" is empty: the symbol has no outputs");
  add("JSON: two variables named \"data\" (nodes 0 and 1)", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "null", "name": "data", "inputs": []},
      {"op": "elemwise_add", "name": "s", "inputs": [[0, 0, 0], [1, 0, 0]]}], "arg_nodes": [0, 1], "heads": [[2, 0, 0]]})");
  }, "IOError", "symbol JSON: node 1 'data': variable name 'data' is already used by node 0 (variable names must be unique)");
  add("JSON: number 2E2222... (found by fuzzing)", [] { LoadSymbolJSON("2E2222222222222222222222"); }, "IOError", "symbol JSON: malformed JSON: [json.exception.out_of_range.406] number overflow parsing '2E2222222222222222222222'");
  add("SaveSymbolJSON of a variable named \"\\xff\" (not UTF-8)", [] { SaveSymbolJSON(Var("\xff")); }, "Error", "SaveSymbolJSON: names and attribute values must be valid UTF-8: [json.exception.type_error.316] invalid UTF-8 byte at index 0: 0xFF");
  add("LoadSymbolFile on a missing file", [] { LoadSymbolFile(TmpDir() + "/missing-symbol.json"); }, "IOError", "cannot open <tmp>/missing-symbol.json: No such file or directory");

  // ---- .symbind model files ----
  using symbind::test::BuildRaw;
  using symbind::test::RawModel;
  using symbind::test::ValidRawModel;
  auto raw_model = [](std::function<void(RawModel*)> edit) {
    RawModel m = ValidRawModel();
    edit(&m);
    return BuildRaw(m);
  };
  add(".symbind: empty file", [] { LoadModel(TmpFile("empty.symbind", "")); }, "IOError", "<tmp>/empty.symbind: the file is 0 bytes; a .symbind file has at least 8 (root offset and the identifier \"SBMD\")");
  add(".symbind: a JSON file given as a model", [] { LoadModel(TmpFile("json.symbind", "{\"nodes\": []}")); }, "IOError", "<tmp>/json.symbind: this is MXNet symbol JSON, not a .symbind model: symbind reads MXNet symbol JSON, .params and .symbind models");
  add(".symbind: truncated to half", [] {
    const std::string v = BuildRaw(ValidRawModel());
    LoadModel(TmpFile("half.symbind", v.substr(0, v.size() / 2)));
  }, "IOError", "<tmp>/half.symbind: FlatBuffers verification failed: an offset, vector length, string or vtable points outside the file, or a required field (nodes, heads, node op/name, param name/data) is missing");
  add(".symbind: root table's vtable outside the file", [] {
    std::string v = BuildRaw(ValidRawModel());
    uint32_t root;
    std::memcpy(&root, v.data(), 4);
    symbind::test::PutI32(&v, root, -0x100000);
    LoadModel(TmpFile("vtable.symbind", v));
  }, "IOError", "<tmp>/vtable.symbind: the root table's vtable at byte 1048620 lies outside the 768-byte file");
  add(".symbind: format version 99", [&] { LoadModel(TmpFile("v99.symbind", raw_model([](RawModel* m) { m->format_version = 99; }))); }, "IOError", "<tmp>/v99.symbind: format version 99 is not supported (this build reads versions 1 to 1)");
  add(".symbind: weight shape (4,3) with data for (2,3)", [&] { LoadModel(TmpFile("short.symbind", raw_model([](RawModel* m) { m->params[0].dims = {4, 3}; }))); }, "IOError", "<tmp>/short.symbind: param 0 'arg:fc_weight' of shape (4,3) and dtype float32 needs 48 bytes but its data holds 24");
  add(".symbind: weight dims 2^40 x 2^40", [&] { LoadModel(TmpFile("overflow.symbind", raw_model([](RawModel* m) { m->params[0].dims = {int64_t{1} << 40, int64_t{1} << 40}; }))); }, "IOError", "<tmp>/overflow.symbind: param 0 'arg:fc_weight' of shape (1099511627776,1099511627776) overflows 64-bit byte counts");
  add(".symbind: dtype code 9", [&] { LoadModel(TmpFile("dtype.symbind", raw_model([](RawModel* m) { m->params[0].dtype = 9; }))); }, "IOError", "<tmp>/dtype.symbind: param 0 'arg:fc_weight' has dtype code 9, which is not an MXNet type flag");
  add(".symbind: an input naming its own node", [&] { LoadModel(TmpFile("cycle.symbind", raw_model([](RawModel* m) { m->nodes[3].inputs[0] = {3, 0}; }))); }, "IOError", "<tmp>/cycle.symbind: node 3 'fc' input 0 references node 3, which is missing or not defined before it");
  add(".symbind: parameter data not 64-byte aligned", [] { LoadModel(TmpFile("misaligned.symbind", symbind::test::MisalignedDataFile())); }, "IOError", "<tmp>/misaligned.symbind: param 0 'arg:fc_weight': data starts at byte 680, not on a 64-byte boundary");
  add(".symbind: a .params file given with a .symbind model", [] {
    LoadModelFiles(TmpFile("pair.symbind", BuildRaw(ValidRawModel())), "model-0000.params");
  }, "IOError", "<tmp>/pair.symbind is a .symbind model, which holds its parameters; got also model-0000.params");
  add("Fill on a weight mapped from a .symbind file", [] {
    Model m = LoadModel(TmpFile("fill.symbind", BuildRaw(ValidRawModel())));
    m.args.at("fc_weight").Fill(0);
  }, "Error", "Fill: the array is read-only (weights mapped from <tmp>/fill.symbind); write into a Copy() of it instead");
  add("Forward(is_train=true) with BatchNorm statistics mapped from a .symbind file", [] {
    Symbol bn = OpBuilder("BatchNorm").SetInput("data", Var("data")).CreateSymbol("bn");
    Model m;
    m.symbol = bn;
    m.args = {{"bn_gamma", NDArray(TShape({2}))}, {"bn_beta", NDArray(TShape({2}))}};
    m.aux = {{"bn_moving_mean", NDArray(TShape({2}))}, {"bn_moving_var", NDArray(TShape({2}))}};
    const std::string path = TmpDir() + "/bn.symbind";
    SaveModel(path, m);
    Model mapped = LoadModel(path);
    mapped.args["data"] = NDArray(TShape({4, 2}));
    std::map<std::string, OpReq> no_grads{{"data", OpReq::kNull}, {"bn_gamma", OpReq::kNull}, {"bn_beta", OpReq::kNull}};
    SimpleBind(mapped.symbol, Context::CPU(), mapped.args, {}, no_grads, mapped.aux)->Forward(true);
  }, "Error", "Forward(is_train=true) would update aux state 'bn_moving_mean', which is read-only (memory-mapped weights); bind a Copy() of it or bind with a grad_req to train");

  // ---- a file of another format where a loader expects its own (named by its first bytes) ----
  // The first bytes of an ONNX model: ir_version 7, producer_name "pytorch".
  static const std::string onnx("\x08\x07\x12\x07pytorch\x1a\x03" "1.9", 16);
  static const std::string symbol_json = R"({"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]})";
  static const std::string params_bytes = SaveNDArraysToString(std::map<std::string, NDArray>{{"arg:w", NDArray(TShape({2}))}});
  add("LoadSymbolFile on an ONNX model", [] { LoadSymbolFile(TmpFile("model.onnx", onnx)); }, "IOError", "<tmp>/model.onnx: this is an ONNX model, not MXNet symbol JSON: symbind reads MXNet symbol JSON, .params and .symbind models");
  add("LoadSymbolFile on a .params file", [] { LoadSymbolFile(TmpFile("w.params", params_bytes)); }, "IOError", "<tmp>/w.params: this is an MXNet .params file, not MXNet symbol JSON: symbind reads MXNet symbol JSON, .params and .symbind models (give the symbol JSON first, then the .params file)");
  add("LoadSymbolFile on a .symbind model", [] {
    Model m;
    m.symbol = LoadSymbolJSON(symbol_json);
    SaveModel(TmpDir() + "/x.symbind", m);
    LoadSymbolFile(TmpDir() + "/x.symbind");
  }, "IOError", "<tmp>/x.symbind: this is a .symbind model, not MXNet symbol JSON: symbind reads MXNet symbol JSON, .params and .symbind models (a .symbind model holds the symbol and its parameters: give it alone, or load it with LoadModel)");
  add("LoadNDArrayFile on symbol JSON", [] { LoadNDArrayFile(TmpFile("x-symbol.json", symbol_json)); }, "IOError", "<tmp>/x-symbol.json: this is MXNet symbol JSON, not an MXNet .params file: symbind reads MXNet symbol JSON, .params and .symbind models (give the symbol JSON first, then the .params file)");
  add("LoadNDArrayFile on an ONNX model", [] { LoadNDArrayFile(TmpFile("model.onnx", onnx)); }, "IOError", "<tmp>/model.onnx: this is an ONNX model, not an MXNet .params file: symbind reads MXNet symbol JSON, .params and .symbind models");
  add("LoadModelFiles with the .params file first and the symbol JSON second", [] {
    LoadModelFiles(TmpFile("w.params", params_bytes), TmpFile("x-symbol.json", symbol_json));
  }, "IOError", "the arguments are swapped: <tmp>/w.params is a .params file and <tmp>/x-symbol.json is symbol JSON; give the symbol JSON first, then the .params file");

  // ---- composition ----
  add("Symbol::Create with unknown op \"Frobnicate\"", [] {
    Symbol::Create("Frobnicate", "f", {}, {{"data", Var("x")}});
  }, "Error", "Cannot find operator Frobnicate");
  add("Symbol::Create FullyConnected with unknown parameter", [] {
    Symbol::Create("FullyConnected", "fc", {{"num_hidden", "4"}, {"no_such", "1"}}, {{"data", Var("x")}});
  }, "ParamError", "Cannot find argument 'no_such', Possible Arguments:");
  add("Compose: input \"data\" given twice (named)", [] {
    Symbol::Create("Activation", "a", {{"act_type", "relu"}}, {{"data", Var("x")}, {"data", Var("y")}});
  }, "Error", "operator a (Activation): input 'data' given twice");
  add("Compose: \"data\" given positionally and by name", [] {
    Symbol::Create("Activation", "a", {{"act_type", "relu"}}, {{"data", Var("x")}}, {Var("y")});
  }, "Error", "operator a (Activation): input 'data' given twice");
  add("Compose: 3 positional inputs to elemwise_add", [] {
    Symbol::Create("elemwise_add", "s", {}, {}, {Var("a"), Var("b"), Var("c")});
  }, "Error", "operator s (elemwise_add) takes 2 inputs (lhs, rhs) but 3 were given");
  add("Compose: unknown input name \"weights\" for Activation", [] {
    Symbol::Create("Activation", "a", {{"act_type", "relu"}}, {{"weights", Var("x")}});
  }, "Error", "operator a (Activation) has no input 'weights'; its inputs are: data");
  add("Symbol[3] on a one-output symbol", [] { (void)Var("x")[3]; }, "Error", "output index 3 out of range: the symbol has 1 outputs");
  add("Symbol[\"nope\"] (no such output)", [] { (void)FC(Var("x"), 4, "fc")["nope"]; }, "Error", "the symbol has no output named 'nope'");
  add("GetName on a grouped symbol", [] { (void)Symbol::Group({Var("a"), Var("b")}).GetName(); }, "Error", "GetName: the symbol has 2 outputs (a group); select one with operator[] first");
  add("GetName on an empty Symbol()", [] { (void)Symbol().GetName(); }, "Error", "GetName: the symbol is empty (default-constructed, no outputs)");
  add("Graph of a cycle made by editing node inputs", [] {
    Symbol x = Var("x");
    Symbol a = Symbol::Create("Activation", "a", {{"act_type", "relu"}}, {{"data", x}});
    Symbol b = Symbol::Create("Activation", "b", {{"act_type", "relu"}}, {{"data", a}});
    auto node_a = a.outputs()[0].node;
    node_a->inputs[0] = b.outputs()[0];
    struct Unlink {
      std::shared_ptr<Node> n;
      NodeEntry old;
      ~Unlink() { n->inputs[0] = old; }  // break the shared_ptr cycle again
    } unlink{node_a, x.outputs()[0]};
    Graph g(b);
  }, "Error", "the graph has a cycle through node 'b'");

  // ---- shape inference ----
  add("InferShape: elemwise_add of (2,3) and (3,2)", [] {
    Symbol s = Symbol::Create("elemwise_add", "s", {}, {{"lhs", Var("a")}, {"rhs", Var("b")}});
    InferShape(s, {{"a", TShape({2, 3})}, {"b", TShape({3, 2})}});
  }, "ShapeError", "Error in operator s (elemwise_add): Shape inconsistent for output 'output': provided (2,3), inferred (3,2)");
  add("InferShape: no shape for data", [] { InferShape(FC(Var("data"), 4, "fc"), {}); }, "ShapeError", "InferShape: cannot infer the shapes of: data, fc_weight, fc_output; provide the shape of one or more of the inputs data, fc_weight");
  add("InferShape: shape given for \"dta\", not an input", [] {
    InferShape(FC(Var("data"), 4, "fc"), {{"dta", TShape({2, 3})}});
  }, "ShapeError", "InferShape: 'dta' is not an input of the symbol; inputs are: data, fc_weight, fc_bias");
  add("InferShape: Reshape (2,3) to (4,4)", [] {
    Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(4,4)"}}, {{"data", Var("data")}});
    InferShape(r, {{"data", TShape({2, 3})}});
  }, "ShapeError", "Error in operator r (Reshape): Reshape: target shape (4,4) has 16 elements but the input (2,3) has 6");
  add("InferShape: Reshape (2,3) to (-1,-1)", [] {
    Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(-1,-1)"}}, {{"data", Var("data")}});
    InferShape(r, {{"data", TShape({2, 3})}});
  }, "ShapeError", "Error in operator r (Reshape): Reshape: cannot reshape (2,3) with shape=(-1,-1): one and only one dim can be inferred (-1)");
  add("InferShape: Reshape (2,3) to (4,-1)", [] {
    Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(4,-1)"}}, {{"data", Var("data")}});
    InferShape(r, {{"data", TShape({2, 3})}});
  }, "ShapeError", "Error in operator r (Reshape): Reshape: cannot reshape (2,3) with shape=(4,-1): the inferred dim does not divide the input size 6");
  add("InferShape: Concat (2,3) and (4,5) on dim 1", [] {
    Symbol s = Symbol::Create("Concat", "cat", {{"num_args", "2"}, {"dim", "1"}}, {}, {Var("a"), Var("b")});
    InferShape(s, {{"a", TShape({2, 3})}, {"b", TShape({4, 5})}});
  }, "ShapeError", "Error in operator cat (Concat): Concat: incompatible shape for arg1: expected (2,?) (any size on axis 1), got (4,5)");
  add("InferShape: Convolution kernel 5x5 on a 3x3 input", [] {
    Symbol s = Symbol::Create("Convolution", "conv", {{"kernel", "(5,5)"}, {"num_filter", "2"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({1, 1, 3, 3})}});
  }, "ShapeError", "Error in operator conv (Convolution): Convolution: kernel size exceeds input: dilated kernel 5 (kernel (5,5), dilate (1,1)) is larger than the padded input 3 (pad (0,0)) in spatial dim 0; data shape (1,1,3,3)");
  add("InferShape: Pooling kernel 4x4 on a 2x2 input", [] {
    Symbol s = Symbol::Create("Pooling", "pool", {{"kernel", "(4,4)"}, {"pool_type", "max"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({1, 1, 2, 2})}});
  }, "ShapeError", "Error in operator pool (Pooling): Pooling: kernel size (4) exceeds input (2 padded to 2) in spatial dim 0; kernel (4,4), pad (0,0), data shape (1,1,2,2)");

  add("InferShape: Concat num_args=3 with 2 inputs", [] {
    Symbol s = Symbol::Create("Concat", "cat", {{"num_args", "3"}, {"dim", "1"}}, {}, {Var("a"), Var("b")});
    InferShape(s, {{"a", TShape({2, 3})}, {"b", TShape({2, 5})}});
  }, "ShapeError", "InferShape: cannot infer the shapes of: cat_arg2, cat_output; provide the shape of one or more of the inputs cat_arg2");
  add("InferShape: Reshape (2,3) with shape (0,0,0)", [] {
    Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(0,0,0)"}}, {{"data", Var("data")}});
    InferShape(r, {{"data", TShape({2, 3})}});
  }, "ShapeError", "Error in operator r (Reshape): Reshape: cannot reshape (2,3) with shape=(0,0,0): 0 refers past the last input dim");
  add("InferShape: Convolution on a 2-d input", [] {
    Symbol s = Symbol::Create("Convolution", "conv", {{"kernel", "(3,3)"}, {"num_filter", "2"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({4, 4})}});
  }, "ShapeError", "Error in operator conv (Convolution): Convolution: input data should be 4D in batch-num_filter-y-x for a 2-D kernel (3,3), got data shape (4,4)");
  // ---- binding and running ----
  add("SimpleBind: fc_weight given as (3,3), needs (4,3)", [] {
    SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(),
               {{"data", NDArray(TShape({2, 3}))}, {"fc_weight", NDArray(TShape({3, 3}))}});
  }, "ShapeError", "Error in operator fc (FullyConnected): Shape inconsistent for input 'weight' (fc_weight): provided (3,3), inferred (4,3)");
  add("SimpleBind: unknown argument \"dta\"", [] {
    SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(),
               {{"data", NDArray(TShape({2, 3}))}, {"dta", NDArray(TShape({2, 3}))}});
  }, "Error", "SimpleBind: 'dta' given in args_map is not one of the arguments: data, fc_weight, fc_bias");
  add("SimpleBind: no shape for data", [] { SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(), {}); }, "ShapeError", "InferShape: cannot infer the shapes of: data, fc_weight, fc_output; provide the shape of one or more of the inputs data, fc_weight");
  add("Bind: 1 argument array for 3 arguments", [] {
    Bind(FC(Var("data"), 4, "fc"), Context::CPU(), {NDArray(TShape({2, 3}))}, {}, {}, {});
  }, "Error", "Bind: 1 argument arrays for 3 arguments");
  add("Backward: head gradient (3,3) for output (2,4)", [] {
    auto e = SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(), {{"data", NDArray(TShape({2, 3}))}});
    e->Forward(true);
    e->Backward({NDArray(TShape({3, 3}))});
  }, "Error", "Backward: head gradient 0 has shape (3,3) but output 0 has shape (2,4)");
  add("Backward: 2 head gradients for 1 output", [] {
    auto e = SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(), {{"data", NDArray(TShape({2, 3}))}});
    e->Forward(true);
    e->Backward({NDArray(TShape({2, 4})), NDArray(TShape({2, 4}))});
  }, "Error", "Backward: 2 head gradients for 1 outputs");

  add("Pooling with stride (0,0)", [] {
    RunOp("Pooling", {{"kernel", "(2,2)"}, {"stride", "(0,0)"}, {"pool_type", "max"}}, TShape({1, 1, 4, 4}));
  }, "ParamError", "Invalid stride (0,0): every entry must be >= 1");
  add("Pooling with stride (-1,2)", [] {
    RunOp("Pooling", {{"kernel", "(2,2)"}, {"stride", "(-1,2)"}, {"pool_type", "max"}}, TShape({1, 1, 4, 4}));
  }, "ParamError", "Invalid stride (-1,2): every entry must be >= 1");
  add("Convolution num_group 3 on 4 channels", [] {
    RunOp("Convolution", {{"kernel", "(1,1)"}, {"num_filter", "3"}, {"num_group", "3"}}, TShape({1, 4, 4, 4}));
  }, "ShapeError", "Error in operator op (Convolution): Convolution: input channels (4) must be divisible by num_group (3); data shape (1,4,4,4)");
  add("Convolution kernel (1,1,1,1)", [] {
    RunOp("Convolution", {{"kernel", "(1,1,1,1)"}, {"num_filter", "1"}}, TShape({1, 1, 4, 4, 4, 4}));
  }, "ParamError", "Convolution: kernel must have 1, 2 or 3 dims, got (1,1,1,1)");
  add("_arange start=3 stop=1 (empty range)", [] {
    Symbol::Create("_arange", "r", {{"start", "3"}, {"stop", "1"}}, {});
  }, "ParamError", "_arange: the range (start, stop, step) is empty: step > 0 needs start < stop, step < 0 needs start > stop (a start alone is the stop, from 0) (got start=3, stop=1, step=1)");
  add("_full without value", [] { Symbol::Create("_full", "f", {{"shape", "(2,)"}}, {}); }, "ParamError", "Required parameter value of double is not presented");
  add("Convolution_v1 kernel (3,)", [] {
    RunOp("Convolution_v1", {{"kernel", "(3,)"}, {"num_filter", "1"}}, TShape({1, 1, 4}));
  }, "ParamError", "Convolution_v1: the kernel must be 2-D (h, w) or 3-D (d, h, w) (got kernel=(3,))");
  add("Pooling_v1 kernel (2,2,2)", [] {
    RunOp("Pooling_v1", {{"kernel", "(2,2,2)"}}, TShape({1, 1, 4, 4, 4}));
  }, "ParamError", "Pooling_v1: only 2-D kernels (y, x) are implemented (as in MXNet's v1), got kernel (2,2,2)");
  add("Pooling_v1 on a 3-d input", [] { RunOp("Pooling_v1", {{"kernel", "(2,2)"}}, TShape({1, 4, 4})); }, "ShapeError", "Error in operator op (Pooling_v1): Pooling_v1: input data should be 4D in (batch, channel, y, x), got (1,4,4)");
  add("_contrib_div_sqrt_dim on a 0-d input", [] {
    RunOp("_contrib_div_sqrt_dim", {}, TShape(std::vector<int64_t>{}));
  }, "ShapeError", "Error in operator op (_contrib_div_sqrt_dim): _contrib_div_sqrt_dim: the input needs at least 1 dimension, got shape ()");
  add("_contrib_interleaved_matmul_selfatt_qk heads=2 on a (4,2,10) projection", [] {
    Symbol s = Symbol::Create("_contrib_interleaved_matmul_selfatt_qk", "att", {{"heads", "2"}}, {{"queries_keys_values", Var("qkv")}});
    InferShape(s, {{"qkv", TShape({4, 2, 10})}});
  }, "ShapeError", "Error in operator att (_contrib_interleaved_matmul_selfatt_qk): _contrib_interleaved_matmul_selfatt_qk: queries_keys_values must be (seq_length, batch_size, heads * 3 * head_dim), so its dim 2 must be a multiple of 3 * heads = 6; got shape (4,2,10)");
  add("SimpleBind: a graph holding _contrib_boolean_mask (a dynamic shape)", [] {
    Symbol s = Symbol::Create("_contrib_boolean_mask", "mask", {}, {{"data", Var("data")}, {"index", Var("index")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({3, 2}))}, {"index", NDArray(TShape({3}))}});
  }, "ShapeError", "Error in operator mask (_contrib_boolean_mask): its output shape depends on the values of its inputs (a dynamic shape), so it runs only in imperative calls (mx.nd, autograd, a hybridized block), not in a bound graph (bind, simple_bind, a Predictor)");
  add("LRN with even nsize 4", [] { RunOp("LRN", {{"nsize", "4"}}, TShape({1, 3, 2, 2})); }, "ShapeError", "Error in operator op (LRN): LRN only supports odd values for local_size (nsize); got nsize=4");
  add("transpose axes (0,0)", [] { RunOp("transpose", {{"axes", "(0,0)"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (transpose): transpose: axes (0,0) is not a permutation");
  add("slice_axis axis 5 of a 2-d input", [] {
    RunOp("slice_axis", {{"axis", "5"}, {"begin", "0"}, {"end", "1"}}, TShape({2, 3}));
  }, "ShapeError", "Error in operator op (slice_axis): slice_axis: axis 5 is out of range for an input of 2 dimensions (expected -2 <= axis < 2)");
  add("softmax axis 9 of a 2-d input", [] { RunOp("softmax", {{"axis", "9"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (softmax): softmax: axis 9 is out of range for an input of 2 dimensions (expected -2 <= axis < 2)");
  add("Reshape (2,3) with shape (-4,5,-1,-2)", [] { RunOp("Reshape", {{"shape", "(-4,5,-1,-2)"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (Reshape): Reshape: cannot reshape (2,3) with shape=(-4,5,-1,-2): split dims 5, 0 do not divide original dim 2");
  add("Dropout p=1.5", [] { RunOp("Dropout", {{"p", "1.5"}}, TShape({2, 3})); }, "ParamError", "value 1.5 for Parameter p should be in range [0, 1]");
  add("Dropout p=nan", [] { RunOp("Dropout", {{"p", "nan"}}, TShape({2, 3})); }, "ParamError", "value nan for Parameter p should be a finite number");
  add("InferShape: RNN lstm with projection_size", [] {
    Symbol s = Symbol::Create("RNN", "rnn", {{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}, {"projection_size", "2"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({5, 2, 3})}});
  }, "ShapeError", "Error in operator rnn (RNN): RNN: projection_size is supported by MXNet with cuDNN only, not by symbind");
  add("SimpleBind: RNN gru parameters (5,)", [] {
    Symbol s = Symbol::Create("RNN", "rnn", {{"mode", "gru"}, {"state_size", "4"}, {"num_layers", "1"}}, {{"data", Var("data")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({5, 2, 3}))}, {"rnn_parameters", NDArray(TShape({5}))}});
  }, "ShapeError", "Error in operator rnn (RNN): Shape inconsistent for input 'parameters' (rnn_parameters): provided (5,), inferred (108,)");
  add("Forward: CTCLoss label 3 with alphabet size 3", [] {
    Symbol s = Symbol::Create("CTCLoss", "ctc", {}, {{"data", Var("data")}, {"label", Var("label")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({4, 1, 3}))},
                                   {"label", NDArray(TShape({1, 2}), std::vector<float>{1, 3})}})->Forward(false);
  }, "Error", "Error in operator ctc (CTCLoss): label[0, 1] = 3 is not a class (alphabet size 3, blank 0, blank_label first)");
  add("Forward: SequenceLast sequence_length 0", [] {
    Symbol s = Symbol::Create("SequenceLast", "last", {{"use_sequence_length", "True"}}, {{"data", Var("data")}, {"sequence_length", Var("len")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({4, 2, 3}))},
                                   {"len", NDArray(TShape({2}), std::vector<float>{2, 0})}})->Forward(false);
  }, "Error", "Error in operator last (SequenceLast): sequence_length[1] = 0 is out of range (expected 1 to 4, the length of the time axis)");
  add("InferShape: SequenceReverse axis 1", [] {
    Symbol s = Symbol::Create("SequenceReverse", "rev", {{"axis", "1"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({4, 2, 3})}});
  }, "ShapeError", "Error in operator rev (SequenceReverse): SequenceReverse: only axis 0 is supported (as in MXNet), got 1");
  add("FullyConnected num_hidden=99999999999", [] { RunOp("FullyConnected", {{"num_hidden", "99999999999"}}, TShape({2, 3})); }, "ParamError", "Invalid Parameter format for num_hidden expect int but value='99999999999'");
  // Ordering, indexing, broadcast and resize ops (issue 15).
  auto run_inputs = [](const std::string& op, const KwArgs& params, const std::map<std::string, NDArray>& in) {
    std::map<std::string, NDArray> args;
    for (auto& kv : in) args["op_" + kv.first] = kv.second;
    SimpleBind(Symbol::Create(op, "op", params, {}), Context::CPU(), args)->Forward(false);
  };
  add("topk k=5 over an axis of 4", [] { RunOp("topk", {{"k", "5"}}, TShape({2, 4})); }, "ShapeError", "Error in operator op (topk): topk: k must be smaller than or equal to the 4 elements along the axis, got k = 5");
  add("argsort dtype uint8 over an axis of 300", [] { RunOp("argsort", {{"dtype", "uint8"}}, TShape({300})); }, "Error", "argsort: the index dtype uint8 cannot represent the indices of an axis of 300 elements");
  add("topk on bool data", [] {
    SimpleBind(Symbol::Create("topk", "op", {}, {{"data", Var("data")}}), Context::CPU(), {{"data", NDArray(TShape({2, 3}), DType::kBool)}})->Forward(false);
  }, "TypeError", "topk: unsupported dtype bool (supported: float16, bfloat16, float32, float64, uint8, int8, int32, int64)");
  add("gather_nd index 3 into an axis of 3", [run_inputs] {
    run_inputs("gather_nd", {}, {{"data", NDArray(TShape({3, 4}))}, {"indices", NDArray(TShape({2, 1}), {3, 0})}});
  }, "Error", "gather_nd: index 3 at indices[0, 0] is out of bounds for axis 0 of size 3 (expected -size <= index < size)");
  add("scatter_nd index -1", [run_inputs] {
    run_inputs("scatter_nd", {{"shape", "(3,4)"}}, {{"data", NDArray(TShape({1}))}, {"indices", NDArray(TShape({2, 1}), {-1, 0})}});
  }, "Error", "scatter_nd: index -1 at indices[0, 0] is out of bounds for axis 0 of size 3 (expected 0 <= index < size)");
  add("pick axis=None", [] { RunOp("pick", {{"axis", "None"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (pick): pick: axis=None is not supported by pick yet. Must specify an axis.");
  add("broadcast_to (2,3) to (4,3)", [] { RunOp("broadcast_to", {{"shape", "(4,3)"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (broadcast_to): broadcast_to: cannot broadcast axis 0 of size 2 of input (2,3) to size 4 (only axes of size 1 broadcast)");
  add("broadcast_axis axis 1 of size 3", [] { RunOp("broadcast_axis", {{"axis", "1"}, {"size", "4"}}, TShape({2, 3})); }, "ShapeError", "Error in operator op (broadcast_axis): broadcast_axis: broadcasting axis 1 of input (2,3) must have size 1");
  add("stack of (2,3) and (2,4)", [run_inputs] {
    run_inputs("stack", {{"num_args", "2"}}, {{"arg0", NDArray(TShape({2, 3}))}, {"arg1", NDArray(TShape({2, 4}))}});
  }, "ShapeError", "Error in operator op (stack): stack: all inputs must have the same shape; input arg1 is (2,4) but an earlier input is (2,3)");
  add("reshape_like (6,) like (4,2)", [run_inputs] {
    run_inputs("reshape_like", {}, {{"lhs", NDArray(TShape({6}))}, {"rhs", NDArray(TShape({4, 2}))}});
  }, "ShapeError", "Error in operator op (reshape_like): reshape_like: cannot reshape lhs with shape (6,) to new shape (4,2) because they have different size");
  add("BilinearResize2D mode odd_scale without scales", [] {
    RunOp("_contrib_BilinearResize2D", {{"mode", "odd_scale"}}, TShape({1, 1, 4, 4}));
  }, "ShapeError", "Error in operator op (_contrib_BilinearResize2D): _contrib_BilinearResize2D: mode 'odd_scale' needs scale_height");
  add("AdaptiveAvgPooling2D on a 3-d input", [] { RunOp("_contrib_AdaptiveAvgPooling2D", {}, TShape({1, 4, 4})); }, "ShapeError", "Error in operator op (_contrib_AdaptiveAvgPooling2D): _contrib_AdaptiveAvgPooling2D: input must be 4-D (NCHW), got (1,4,4)");
  add("SimpleBind: FullyConnected on int8 data", [] {
    SimpleBind(FC(Var("data"), 2, "fc"), Context::CPU(), {{"data", NDArray(TShape({2, 3}), DType::kInt8)}});
  }, "TypeError", "Error in operator fc (FullyConnected): unsupported dtype for input 'data' (data): expected a floating type, got int8 (the operator computes in float32; Cast the input to float32)");
  add("Bind: Activation on the int32 output of a Cast", [] {
    Symbol c = Symbol::Create("Cast", "c", {{"dtype", "int32"}}, {{"data", Var("data")}});
    Symbol a = Symbol::Create("Activation", "relu", {{"act_type", "relu"}}, {{"data", c}});
    Bind(a, Context::CPU(), {NDArray(TShape({2}))}, {}, {}, {});
  }, "TypeError", "Error in operator relu (Activation): unsupported dtype for input 'data' (c): expected a floating type, got int32 (the operator computes in float32; Cast the input to float32)");
  add("SimpleBind: elemwise_add of float32 and int32", [] {
    Symbol s = Symbol::Create("elemwise_add", "s", {}, {{"lhs", Var("a")}, {"rhs", Var("b")}});
    SimpleBind(s, Context::CPU(), {{"a", NDArray(TShape({2}))}, {"b", NDArray(TShape({2}), DType::kInt32)}});
  }, "TypeError", "Error in operator s (elemwise_add): Type inconsistent for input 'rhs' (b): provided int32, inferred float32");
  add("Bind: gradient (3,) for argument (2,)", [] {
    Symbol s = Symbol::Create("Activation", "a", {{"act_type", "relu"}}, {{"data", Var("data")}});
    Bind(s, Context::CPU(), {NDArray(TShape({2}))}, {NDArray(TShape({3}))}, {OpReq::kWrite}, {});
  }, "Error", "Bind: gradient of 'data' has shape (3,) but the argument has shape (2,)");
  add("Forward(train): SoftmaxOutput label 12 with 10 classes", [] {
    Symbol s = Symbol::Create("SoftmaxOutput", "softmax", {}, {{"data", Var("data")}, {"label", Var("label")}});
    auto e = SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({4, 10}))},
                                            {"label", NDArray(TShape({4}), std::vector<float>{1, 0, 9, 12})}});
    e->Forward(true);
  }, "Error", "Error in operator softmax (SoftmaxOutput): label 12 at index 3 is out of range for 10 classes (expected 0..9 or ignore_label -1)");
  add("SimpleBind: data (1000000,1000000) under a 16 GiB limit", [] {
    BindLimitForTest limit(uint64_t{16} << 30);
    SimpleBindOptions o;
    o.shapes["data"] = TShape({1000000, 1000000});
    SimpleBind(FC(Var("data"), 4, "fc"), Context::CPU(), {}, {}, {}, {}, o);
  }, "OutOfMemoryError", "SimpleBind: array 'data' of shape (1000000,1000000) (float32) needs 4000000000000 bytes, more than the bind memory limit of 17179869184 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("Bind: tile (2,) by 10^11 under a 16 GiB limit", [] {
    BindLimitForTest limit(uint64_t{16} << 30);
    Symbol t = Symbol::Create("tile", "t", {{"reps", "(100000000000,)"}}, {{"data", Var("data")}});
    Bind(t, Context::CPU(), {NDArray(TShape({2}))}, {}, {}, {});
  }, "OutOfMemoryError", "Bind: array 't_output' of shape (200000000000,) (float32) needs 800000000000 bytes, more than the bind memory limit of 17179869184 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("SimpleBind: 3 arrays of 6 GiB each under a 16 GiB limit", [] {
    BindLimitForTest limit(uint64_t{16} << 30);
    SimpleBindOptions o;
    o.shapes["data"] = TShape({int64_t{3} << 29});  // 6 GiB of float32: data, its gradient, relu's output
    Symbol r = Symbol::Create("Activation", "relu", {{"act_type", "relu"}}, {{"data", Var("data")}});
    SimpleBind(r, Context::CPU(), {}, {}, {{"data", OpReq::kWrite}}, {}, o);
  }, "OutOfMemoryError", "SimpleBind: the 3 arrays to allocate need 19327352832 bytes together, more than the bind memory limit of 17179869184 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("Symbol::Variable(\"\")", [] { Symbol::Variable(""); }, "Error", "Symbol::Variable needs a non-empty name");

  // ---- NDArray ----
  add("float32 NDArray read as double", [] { (void)NDArray(TShape({2})).data<double>(); }, "Error", "NDArray of dtype float32 accessed as float64");
  add("NDArray of 1e15 float32 elements", [] { NDArray(TShape({1000000, 1000000000})); }, "OutOfMemoryError", "cannot allocate an NDArray of shape (1000000,1000000000) (1000000000000000 elements of float32)");
  add("NDArray of shape (2,-3)", [] { NDArray(TShape({2, -3})); }, "Error", "cannot allocate an NDArray of shape (2,-3): every dim must be known and non-negative");
  add("NDArray(shape (2,2), 3 values)", [] { NDArray(TShape({2, 2}), std::vector<float>{1, 2, 3}); }, "Error", "SyncCopyFromCPU: got 3 elements for an array of shape (2,2) (4 elements)");

  // ---- .npy ----
  add(".npy: bad magic", [] { LoadNpyBuffer("NOTNUMPY0123456789", 18, "x.npy"); }, "IOError", "x.npy: not a .npy file (no \\x93NUMPY magic)");
  add(".npy: shape (10,) with 8 bytes of data", [] { LoadNpyAs("x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 8); }, "IOError", "x.npy: truncated .npy data: shape (10,) of <f4 needs more than the 8 bytes present");
  add(".npy: big-endian '>f4'", [] { LoadNpyAs("x.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4); }, "IOError", "x.npy: big-endian data ('>f4') is not supported");
  add(".npy: fortran_order True, shape (2, 3)", [] { LoadNpyAs("x.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24); }, "IOError", "x.npy: Fortran-order (column-major) arrays are not supported; save a C-order copy (numpy.ascontiguousarray)");
  add(".npy: shape tuple without its ')'", [] { LoadNpyAs("x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", 24); }, "IOError", "x.npy: bad .npy header at character 57: the 'shape' tuple is not closed: missing ')'");
  add(".npy: header without 'shape'", [] { LoadNpyAs("x.npy", "{'descr': '<f4', 'fortran_order': False, }", 4); }, "IOError", "x.npy: bad .npy header at character 54: missing key 'shape'");
  add(".npy: header length beyond the file", [] {
    std::string s = NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
    s[8] = '\xff';
    s[9] = '\x7f';
    LoadNpyBuffer(s.data(), s.size(), "x.npy");
  }, "IOError", "x.npy: truncated .npy header (32767 bytes declared, 122 present)");
  add(".npy: dtype '<c8' (complex)", [] { LoadNpyAs("x.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8); }, "IOError", "x.npy: unsupported dtype '<c8' (supported: <f4 <f8 <f2 <i4 <i8 |u1 |i1 |b1)");
  add("MNIST images: gzip magic then garbage", [] {
    LoadMNISTImages(TmpFile("corrupt-idx3-ubyte.gz", std::string("\x1f\x8b\x08\x00garbagegarbage", 18)));
  }, "IOError", "<tmp>/corrupt-idx3-ubyte.gz: corrupt gzip data (invalid code lengths set)");
  add("SaveNpyToString of a none array", [] { SaveNpyToString(NDArray()); }, "Error", "SaveNpy: cannot save a none array");
  add(".npy: format version 9.0", [] {
    std::string s = NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
    s[6] = 9;
    LoadNpyBuffer(s.data(), s.size(), "x.npy");
  }, "IOError", "x.npy: unsupported .npy format version 9.0");
  add("LoadNpy on a missing file", [] { LoadNpy(TmpDir() + "/missing.npy"); }, "IOError", "cannot open <tmp>/missing.npy: No such file or directory");

  // ---- images ----
  add("JPEG truncated after 200 bytes", [] {
    const std::string jpg = ReadFileToString(std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/images/gradient-96x64.jpg");
    LoadImageFromMemory(jpg.data(), 200, 3, "gradient-96x64.jpg[0:200]");
  }, "IOError", "LoadImage gradient-96x64.jpg[0:200]: truncated JPEG (no end-of-image marker)");
  add("JPEG cut inside its Exif segment, before the frame header", [] {
    std::string jpg("\xFF\xD8\xFF\xE1\x10\x00", 6);  // APP1 of 4096 bytes, of which 100 are there
    jpg += std::string(100, 'x');
    LoadImageFromMemory(jpg.data(), jpg.size(), 3, "exif-cut.jpg");
  }, "IOError", "LoadImage exif-cut.jpg: truncated JPEG (no end-of-image marker)");
  add("PNG whose header states 20000x20000 RGB", [] {
    // stb_image refuses it as too large and names it an unknown type; the header's size is the message.
    std::string png("\x89PNG\r\n\x1A\n\0\0\0\x0DIHDR\0\0\x4E\x20\0\0\x4E\x20\x08\x02\0\0\0", 29);
    png += std::string(4, '\0');  // CRC
    LoadImageFromMemory(png.data(), png.size(), 3, "big.png");
  }, "IOError", "LoadImage big.png: image size 20000x20000 outside 1..67108864 pixels");
  add("PNG whose header states 4294967295x4294967295", [] {
    std::string png("\x89PNG\r\n\x1A\n\0\0\0\x0DIHDR\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x08\x02\0\0\0", 29);
    png += std::string(4, '\0');
    LoadImageFromMemory(png.data(), png.size(), 3, "huge.png");
  }, "IOError", "LoadImage huge.png: image size 4294967295x4294967295 outside 1..67108864 pixels");
  add("image: 16 bytes of text", [] { LoadImageFromMemory("this is no image", 16, 3, "text"); }, "IOError", "LoadImage text: not a JPEG or PNG file (the only image formats supported)");
  add("LoadImage on a missing file", [] { LoadImage(TmpDir() + "/missing.jpg"); }, "IOError", "cannot open <tmp>/missing.jpg: No such file or directory");
  add("Image(0, 10, 3)", [] { Image(0, 10, 3); }, "Error", "Image: image size must be positive, got 0x10");

  add("Image(100000, 100000, 3)", [] { Image(100000, 100000, 3); }, "Error", "Image: image size 100000x100000 exceeds 67108864 pixels");

  // ---- checkpoints, MNIST ----
  add("LoadCheckpoint with a missing symbol file", [] {
    Symbol s;
    std::map<std::string, NDArray> args, aux;
    LoadCheckpoint(TmpDir() + "/nomodel", 3, &s, &args, &aux);
  }, "IOError", "cannot open <tmp>/nomodel-symbol.json: No such file or directory");
  add("LoadCheckpoint with the .params missing", [] {
    SaveSymbolFile(TmpDir() + "/halfmodel-symbol.json", FC(Var("data"), 4, "fc"));
    Symbol s;
    std::map<std::string, NDArray> args, aux;
    LoadCheckpoint(TmpDir() + "/halfmodel", 1, &s, &args, &aux);
  }, "IOError", "cannot open <tmp>/halfmodel-0001.params: No such file or directory");
  add("MNIST images: bad magic 0x0801", [] {
    LoadMNISTImages(TmpFile("badmagic-idx3-ubyte", BigEndian32({0x801, 1, 28, 28})));
  }, "IOError", "<tmp>/badmagic-idx3-ubyte: bad magic 0x00000801 (that of a label file), expected 0x00000803 for an image file");
  add("MNIST labels: count 10, 3 labels", [] {
    LoadMNISTLabels(TmpFile("short-idx1-ubyte", BigEndian32({0x801, 10}) + std::string(3, '\1')));
  }, "IOError", "<tmp>/short-idx1-ubyte: truncated label file: the header declares 10 bytes of data but the file holds only 3");
  add("MNIST images: rows 0", [] {
    LoadMNISTImages(TmpFile("zerorows-idx3-ubyte", BigEndian32({0x803, 1, 0, 28})));
  }, "IOError", "<tmp>/zerorows-idx3-ubyte: dimension 1 of the idx header is 0");
  add("MNISTIter with batch_size 0", [] {
    MNISTIter it(MNISTData{NDArray(TShape({4, 2, 2})), NDArray(TShape({4}))}, 0);
  }, "Error", "MNISTIter: batch_size must be > 0, got 0");
  add("MNISTIter with 4 images and 3 labels", [] {
    MNISTIter it(MNISTData{NDArray(TShape({4, 2, 2})), NDArray(TShape({3}))}, 2);
  }, "Error", "MNISTIter: 4 images but 3 labels");
  add("MNISTIter::data() before Next()", [] {
    MNISTData d{NDArray(TShape({4, 2, 2})), NDArray(TShape({4}))};
    MNISTIter it(d, 2);
    (void)it.data();
  }, "Error", "MNISTIter::data() called with no current batch (call Next() first)");

  // ---- hostile inputs, round 2 (tests/test_hostile_inputs.cc) ----
  auto infer_op = [](const std::string& op, const KwArgs& params, const TShape& shape) {
    InferShape(Symbol::Create(op, "node", params, {{"data", Var("data")}}), {{"data", shape}});
  };
  add("Convolution kernel (1,3), dilate (1,2^63-1)", [=] {
    infer_op("Convolution", {{"kernel", "(1,3)"}, {"dilate", "(1,9223372036854775807)"}, {"num_filter", "1"}}, TShape({1, 1, 1, 8}));
  }, "ShapeError", "Error in operator node (Convolution): Convolution: dilated kernel in spatial dim 1 (kernel 3, dilate 9223372036854775807): 2 * 9223372036854775807 overflows int64");
  add("tile of (3,) by reps 6148914691236517206", [=] {
    infer_op("tile", {{"reps", "(6148914691236517206,)"}}, TShape({3}));
  }, "ShapeError", "Error in operator node (tile): tile: dim 0 of input (3,) by reps (6148914691236517206,): 3 * 6148914691236517206 overflows int64");
  add("Pad edge widths 2^63-1 on (1,1,1,2)", [=] {
    infer_op("Pad", {{"mode", "edge"}, {"pad_width", "(0,0,0,0,0,0,9223372036854775807,9223372036854775807)"}}, TShape({1, 1, 1, 2}));
  }, "ShapeError", "Error in operator node (Pad): Pad: axis 3 of (1,1,1,2) with pad_width (0,0,0,0,0,0,9223372036854775807,9223372036854775807): 2 + 9223372036854775807 overflows int64");
  add("Deconvolution stride 2^62 on width 3", [=] {
    infer_op("Deconvolution", {{"kernel", "(1,1)"}, {"stride", "(1,4611686018427387904)"}, {"num_filter", "1"}}, TShape({1, 1, 1, 3}));
  }, "ShapeError", "Error in operator node (Deconvolution): Deconvolution: stride 4611686018427387904 in spatial dim 1 times input size 3 - 1: 4611686018427387904 * 2 overflows int64");
  add("Flatten of (1,2^32,2^32)", [=] { infer_op("Flatten", {}, TShape({1, int64_t{1} << 32, int64_t{1} << 32})); }, "ShapeError", "Error in operator node (Flatten): product of dims 1 to 2 of (1,4294967296,4294967296): 4294967296 * 4294967296 overflows int64");
  add("NDArray::View of 2^62 float32 over 64 bytes", [] {
    NDArray::View(std::make_shared<Storage>(64), 0, TShape({int64_t{1} << 62}));
  }, "ShapeError", "NDArray::View of shape (4611686018427387904,): 4611686018427387904 * 4 overflows int64");
  add("softmax bound on data (2^40,0) under a 1 GiB bind limit", [] {
    SetMaxBindBytes(uint64_t{1} << 30);
    try {
      SimpleBind(Symbol::Create("softmax", "sm", {}, {{"data", Var("data")}}), Context::CPU(),
                 {{"data", NDArray(TShape({int64_t{1} << 40, 0}))}});
    } catch (...) {
      SetMaxBindBytes(0);
      throw;
    }
    SetMaxBindBytes(0);
  }, "OutOfMemoryError", "SimpleBind: array 'sm_output' of shape (1099511627776,0) is empty but its other axes span 4398046511104 bytes, more than the bind memory limit of 1073741824 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it); kernels loop over them");
  add("SliceChannel num_outputs=100000000", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
      {"op": "SliceChannel", "name": "split", "attrs": {"num_outputs": "100000000"}, "inputs": [[0,0,0]]}],
      "arg_nodes": [0], "heads": [[1,0,0]]})");
  }, "ParamError", "node 1 'split': value 100000000 for Parameter num_outputs should be in range [1, 65536]");
  add("ResizeBilinear of an image to 20000x20000", [] { ResizeBilinear(Image(4, 4, 3), 20000, 20000); }, "Error", "ResizeBilinear destination: image size 20000x20000 exceeds 67108864 pixels");
  add("two sparse arrays expanding past max_dense_bytes_from_sparse together", [] {
    Bytes b;
    b.list_header(2);
    for (int k = 0; k < 2; ++k)
      b.u32(0xF993FAC9).i32(1).shape64({0, 2}).shape64({100, 2}).i32(1).i32(0).i32(0).i32(6).shape64({0});
    b.names({});
    NDArrayLoadOptions o;
    o.max_dense_bytes_from_sparse = 1200;
    LoadNDArrayBuffer(b.str().data(), b.str().size(), o);
  }, "IOError", "the file's sparse arrays expand to 1600 bytes as dense arrays, more than the 1200 bytes allowed for a file of 184 bytes (NDArrayLoadOptions::max_dense_bytes_from_sparse; default 256 bytes per file byte, at least 67108864)");
  add("LoadNDArrayFile on a FIFO", [] { LoadNDArrayFile(TmpFifo("params.fifo")); }, "IOError", "cannot read <tmp>/params.fifo: not a regular file (a FIFO); models, parameters and inputs are read from regular files only");
  add("LoadImage on /dev/zero", [] { LoadImage("/dev/zero"); }, "IOError", "cannot read /dev/zero: not a regular file (a device); models, parameters and inputs are read from regular files only");
  add("LoadImage on a directory", [] { LoadImage(TmpDir()); }, "IOError", "cannot read <tmp>: not a regular file (a directory); models, parameters and inputs are read from regular files only");
  add("image: an 18-byte TGA header claiming 16384x16384", [] {
    std::string tga(18, '\0');
    tga[2] = 2; tga[13] = 0x40; tga[15] = 0x40; tga[16] = 24;
    LoadImageFromMemory(tga.data(), tga.size(), 3, "bomb.tga");
  }, "IOError", "LoadImage bomb.tga: not a JPEG or PNG file (the only image formats supported)");
  add("symbol JSON nested 65 deep", [] { LoadSymbolJSON("{\"nodes\": " + std::string(65, '[')); }, "IOError", "symbol JSON: nesting deeper than 64 levels (at byte 73)");
  add("MXNet 0.8 JSON whose upgrade adds a second bn_gamma", [] {
    LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "bn_gamma", "inputs": []},
      {"op": "BatchNorm", "name": "bn", "param": {}, "inputs": [[0,0]]},
      {"op": "elemwise_add", "name": "add", "param": {}, "inputs": [[2,0],[1,0]]}],
      "arg_nodes": [0, 1], "heads": [[3,0]]})");
  }, "IOError", "symbol JSON: node 2 'bn': the variable the 0.8 upgrade adds for a missing input, 'bn_gamma' is already used by node 1 (variable names must be unique)");
  add("SYMBIND_NUM_THREADS=99999999999999999999", [] {
    ParseNumThreads("99999999999999999999", "SYMBIND_NUM_THREADS");
  }, "ParamError", "SYMBIND_NUM_THREADS must be a non-negative integer thread count (0: all cores), got '99999999999999999999'");
  add("Reshape growing data to (2^26,1) under a 16 MiB bind limit", [] {
    auto exec = SimpleBind(Symbol::Create("sum", "s", {}, {{"data", Var("data")}}), Context::CPU(),
                           {{"data", NDArray(TShape({1, 16}))}});
    SetMaxBindBytes(uint64_t{16} << 20);
    try {
      exec->Reshape({{"data", TShape({int64_t{1} << 26, 1})}}, false, true);
    } catch (...) {
      SetMaxBindBytes(0);
      throw;
    }
    SetMaxBindBytes(0);
  }, "OutOfMemoryError", "Reshape: array 'data' of shape (67108864,1) (float32) needs 268435456 bytes, more than the bind memory limit of 16777216 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("softmax temperature=0", [] { Symbol::Create("softmax", "sm", {{"temperature", "0"}}, {{"data", Var("data")}}); }, "ParamError", "value 0 for Parameter temperature should be a finite, non-zero number (softmax divides by it)");
  add("BatchNorm eps=-1e-5", [] { Symbol::Create("BatchNorm", "bn", {{"eps", "-1e-5"}}, {{"data", Var("data")}}); }, "ParamError", "value -1e-5 for Parameter eps should be greater equal to 0");
  add("clip a_min=2 a_max=1", [] { Symbol::Create("clip", "c", {{"a_min", "2"}, {"a_max", "1"}}, {{"data", Var("data")}}); }, "ParamError", "clip: a_min must not exceed a_max (got a_min=2, a_max=1)");
  add("_fused_conv_act a_min=2 a_max=1", [] {
    Symbol::Create("_fused_conv_act", "c", {{"kernel", "(1,1)"}, {"num_filter", "2"}, {"act_type", "clip"}, {"a_min", "2"}, {"a_max", "1"}},
                   {{"data", Var("data")}});
  }, "ParamError", "_fused_conv_act: a_min must not exceed a_max (got a_min=2, a_max=1)");
  add("_fused_inverted_residual residual block from 8 to 12 channels", [] {
    InferShape(Symbol::Create("_fused_inverted_residual", "b",
                              {{"num_hidden", "24"}, {"num_filter", "12"}, {"kernel", "3"}, {"pad", "1"}, {"residual", "True"}},
                              {{"data", Var("data")}}),
               {{"data", TShape({1, 8, 6, 6})}});
  }, "ShapeError", "Error in operator b (_fused_inverted_residual): _fused_inverted_residual: a residual block's output (1,12,6,6) must have its input's shape (1,8,6,6)");
  add("_fused_inverted_residual on 3-D data", [] {
    InferShape(Symbol::Create("_fused_inverted_residual", "b", {{"num_hidden", "24"}, {"num_filter", "8"}, {"kernel", "3"}},
                              {{"data", Var("data")}}),
               {{"data", TShape({1, 8, 6})}});
  }, "ShapeError", "Error in operator b (_fused_inverted_residual): _fused_inverted_residual: input data should be 4D in batch-channel-y-x, got data shape (1,8,6)");
  add("Pooling kernel (2,2) pad (2,0)", [] {
    Symbol::Create("Pooling", "p", {{"kernel", "(2,2)"}, {"pad", "(2,0)"}}, {{"data", Var("data")}});
  }, "ParamError", "Pooling: every pad must be smaller than the kernel (got kernel=(2, 2), pad=(2, 0))");
  add("LeakyReLU rrelu lower_bound 0.5 > upper_bound 0.1", [] {
    Symbol::Create("LeakyReLU", "r", {{"act_type", "rrelu"}, {"lower_bound", "0.5"}, {"upper_bound", "0.1"}}, {{"data", Var("data")}});
  }, "ParamError", "LeakyReLU: rrelu needs lower_bound <= upper_bound (got lower_bound=0.5, upper_bound=0.1)");
  add("MNISTPart: part_index 2 of num_parts 2", [] {
    MNISTPart(MNISTData{NDArray(TShape({4, 2, 2})), NDArray(TShape({4}))}, 2, 2);
  }, "Error", "data part: part_index must be in [0, num_parts), got part_index 2 and num_parts 2");
  add("KVStore type dist_async", [] { KVStore::Create("dist_async"); }, "Error",
      "KVStore type 'dist_async' is not supported: symbind trains across processes synchronously only; use 'dist_sync' (aliases 'dist_sync_device', 'horovod')");
  add("KVStore Push of a key never initialised", [] {
    KVStore::Create("local")->Push({"w"}, {NDArray(TShape({2}))});
  }, "Error", "KVStore::Push: key 'w' was not initialised");
  add("KVStore Push of another shape than Init's", [] {
    auto kv = KVStore::Create("local");
    kv->Init({"w"}, {NDArray(TShape({2, 3}))});
    kv->Push({"w"}, {NDArray(TShape({3, 2}))});
  }, "ShapeError", "KVStore::Push: key 'w' holds (2,3) but the pushed value is (3,2)");
  // ---- the C APIs of libmxnet.so: -1 and MXGetLastError() (rethrown here as Error) ----
  // The LeNet checkpoint bundled with the sources, so that every row runs on any clone.
  const std::string lenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";
  static const char* keys[] = {"data"};
  static const uint32_t indptr[] = {0, 4};
  static const uint32_t shape[] = {1, 1, 28, 28};
  auto predictor = [lenet] {
    static std::string json, params;
    json = ReadFileToString(lenet + "-symbol.json");
    params = ReadFileToString(lenet + "-0008.params");
    PredictorHandle p = nullptr;
    CApi(MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys,
                      indptr, shape, &p));
    return p;
  };
  add("C API: MXPredCreate with a null out-pointer", [] {
    CApi(MXPredCreate("{}", nullptr, 0, 1, 0, 1, keys, indptr, shape, nullptr));
  }, "Error", "MXPredCreate: argument 'out' is null");
  add("C API: MXPredCreate with JSON cut before its object closes", [] {
    PredictorHandle p;
    CApi(MXPredCreate("{\"nodes\": [", nullptr, 0, 1, 0, 1, keys, indptr, shape, &p));
  }, "Error", "MXPredCreate: symbol JSON ends at byte 11 before its top-level object closes");
  add("C API: MXPredCreate with an input name the symbol lacks", [lenet] {
    static const char* image[] = {"image"};
    std::string json = ReadFileToString(lenet + "-symbol.json");
    PredictorHandle p;
    CApi(MXPredCreate(json.c_str(), nullptr, 0, 1, 0, 1, image, indptr, shape, &p));
  }, "Error", "MXPredCreate: 'image' is given an input shape but is not an input of the graph; inputs: data");
  add("C API: MXPredCreate with device type 7", [] {
    PredictorHandle p;
    CApi(MXPredCreate("{}", nullptr, 0, 7, 0, 1, keys, indptr, shape, &p));
  }, "Error", "MXPredCreate: unknown device type 7 (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)");
  add("C API: MXPredSetInput with 4 values for a (1,1,28,28) input", [predictor] {
    PredictorHandle p = predictor();
    float x[4] = {};
    int rc = MXPredSetInput(p, "data", x, 4);
    MXPredFree(p);
    CApi(rc);
  }, "Error", "MXPredSetInput: input 'data' of shape (1,1,28,28) takes 784 values, got size 4");
  add("C API: MXPredGetOutput with output index 7 of 1", [predictor] {
    PredictorHandle p = predictor();
    float y[4] = {};
    int rc = MXPredGetOutput(p, 7, y, 4);
    MXPredFree(p);
    CApi(rc);
  }, "Error", "MXPredGetOutput: output index 7 out of range: the predictor has 1 output(s)");
  add("C API: MXPredForward on a freed predictor", [predictor] {
    PredictorHandle p = predictor();
    MXPredFree(p);
    CApi(MXPredForward(p));
  }, "Error", "MXPredForward: argument 'handle' is not a live PredictorHandle (already freed, or never created by this library)");
  add("C API: MXPredCreate given a .symbind model and a symbol JSON", [lenet] {
    Model model;
    model.symbol = LoadSymbolFile(lenet + "-symbol.json");
    const std::string image = SaveModelToString(model);
    PredictorHandle p;
    CApi(MXPredCreate("{}", image.data(), static_cast<int>(image.size()), 1, 0, 1, keys, indptr, shape, &p));
  }, "Error", "MXPredCreate: param_bytes is a .symbind model, which holds its graph: pass symbol_json_str as null, \"\" or the same buffer, not a symbol JSON as well");
  add("C API: MXPredPartialForward skipping a step", [predictor] {
    PredictorHandle p = predictor();
    int left = 0;
    MXPredPartialForward(p, 0, &left);
    int rc = MXPredPartialForward(p, 3, &left);
    MXPredFree(p);
    CApi(rc);
  }, "Error", "MXPredPartialForward: Executor::PartialForward: step 3 requested, but the next step is 1 (steps run in order, from 0, one op each; 9 in all)");
  add("C API: MXNDListFree given a PredictorHandle", [predictor] {
    PredictorHandle p = predictor();
    int rc = MXNDListFree(p);
    MXPredFree(p);
    CApi(rc);
  }, "Error", "MXNDListFree: argument 'handle' is a PredictorHandle, expected a NDListHandle");
  add("C API: MXNDArrayReshape with two -1 dims", [] {
    const uint32_t dims[] = {2, 3};
    NDArrayHandle a = nullptr, r = nullptr;
    CApi(MXNDArrayCreateEx(dims, 2, 1, 0, 0, 0, &a));
    int spec[] = {-1, -1};
    int rc = MXNDArrayReshape(a, 2, spec, &r);
    MXNDArrayFree(a);
    CApi(rc);
  }, "Error", "ValueError: MXNDArrayReshape: Error in operator reshape (Reshape): Reshape: cannot reshape (2,3) with shape=(-1,-1): one and only one dim can be inferred (-1)");
  add("C API: MXKVStoreCreate(\"dist_async\")", [] {
    KVStoreHandle kv;
    CApi(MXKVStoreCreate("dist_async", &kv));
  }, "Error", "MXKVStoreCreate: KVStore type 'dist_async' is not supported: symbind trains across processes synchronously only; use 'dist_sync' (aliases 'dist_sync_device', 'horovod')");
  add("C API: MXSymbolListArguments before MXSymbolCompose", [] {
    OpHandle op = nullptr;
    CApi(NNGetOpHandle("FullyConnected", &op));
    SymbolHandle s = nullptr;
    const char* keys[] = {"num_hidden"};
    const char* vals[] = {"4"};
    CApi(MXSymbolCreateAtomicSymbol(op, 1, keys, vals, &s));
    uint32_t n;
    const char** names;
    int rc = MXSymbolListArguments(s, &n, &names);
    MXSymbolFree(s);
    CApi(rc);
  }, "Error", "MXSymbolListArguments: symbol of operator 'FullyConnected' has no inputs yet: call MXSymbolCompose first");
  add("C API: NNGetOpHandle of an unknown operator", [] {
    OpHandle op;
    CApi(NNGetOpHandle("NoSuchOp", &op));
  }, "Error", "NNGetOpHandle: Cannot find operator NoSuchOp");
  // MXDataIterCreateIter("CSVIter") with string parameters; the iterator is freed again.
  auto csv_iter = [](const std::map<std::string, std::string>& params, const std::function<int(DataIterHandle)>& then) {
    uint32_t n = 0;
    DataIterCreator* creators = nullptr;
    CApi(MXListDataIters(&n, &creators));
    DataIterCreator csv = nullptr;
    for (uint32_t i = 0; i < n; ++i) {
      const char *name, *desc, **names, **types, **docs;
      uint32_t num_args;
      CApi(MXDataIterGetIterInfo(creators[i], &name, &desc, &num_args, &names, &types, &docs));
      if (std::string(name) == "CSVIter") csv = creators[i];
    }
    std::vector<const char*> keys, vals;
    for (auto& kv : params) {
      keys.push_back(kv.first.c_str());
      vals.push_back(kv.second.c_str());
    }
    DataIterHandle it = nullptr;
    CApi(MXDataIterCreateIter(csv, static_cast<uint32_t>(keys.size()), keys.data(), vals.data(), &it));
    int rc = then(it);
    MXDataIterFree(it);
    CApi(rc);
  };
  auto no_call = [](DataIterHandle) { return 0; };
  add("C API: CSVIter with a row of 2 values for data_shape (3,)", [=] {
    csv_iter({{"data_csv", TmpFile("short_row.csv", "1,2,3\n4,5\n")}, {"data_shape", "(3,)"}, {"batch_size", "1"}}, no_call);
  }, "Error", "MXDataIterCreateIter: <tmp>/short_row.csv line 2: 2 values, expected 3 (the size of the sample shape)");
  add("C API: CSVIter with a value that is not a number", [=] {
    csv_iter({{"data_csv", TmpFile("word.csv", "1,x,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "1"}}, no_call);
  }, "Error", "MXDataIterCreateIter: <tmp>/word.csv line 1: value 2 'x' is not a number");
  add("C API: CSVIter with batch_size 'two'", [=] {
    csv_iter({{"data_csv", TmpFile("ok.csv", "1,2,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "two"}}, no_call);
  }, "Error", "MXDataIterCreateIter: CSVIter: Invalid Parameter format for batch_size expect int but value='two'");
  add("C API: CSVIter without data_csv", [=] {
    csv_iter({{"data_shape", "(3,)"}, {"batch_size", "1"}}, no_call);
  }, "Error", "MXDataIterCreateIter: CSVIter: Required parameter data_csv of string is not presented");
  add("C API: CSVIter with dtype float64", [=] {
    csv_iter({{"data_csv", TmpFile("ok.csv", "1,2,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "1"}, {"dtype", "float64"}}, no_call);
  }, "Error", "MXDataIterCreateIter: CSVIter: value float64 for Parameter dtype should be one of float32, int32, int64");
  add("C API: CSVIter with dtype int32 and a fraction", [=] {
    csv_iter({{"data_csv", TmpFile("fraction.csv", "1,2.5,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "1"}, {"dtype", "int32"}}, no_call);
  }, "Error", "MXDataIterCreateIter: <tmp>/fraction.csv line 1: value 2 '2.5' is not an int32 integer");
  add("C API: CSVIter label_csv with fewer rows than data_csv", [=] {
    csv_iter({{"data_csv", TmpFile("two_rows.csv", "1\n2\n")}, {"label_csv", TmpFile("one_label.csv", "0\n")},
              {"data_shape", "(1,)"}, {"batch_size", "1"}}, no_call);
  }, "Error", "MXDataIterCreateIter: CSVIter: label_csv <tmp>/one_label.csv has 1 rows, data_csv <tmp>/two_rows.csv has 2");
  add("C API: CSVIter round_batch with 1 row for a batch of 3", [=] {
    csv_iter({{"data_csv", TmpFile("ok.csv", "1,2,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "3"}}, [](DataIterHandle it) {
      int more = 0;
      return MXDataIterNext(it, &more);
    });
  }, "Error", "MXDataIterNext: CSVIter: round_batch cannot complete the last batch: batch_size 3 needs 2 more rows, the data has 1 (use a smaller batch_size or round_batch=0)");
  add("C API: MXDataIterGetData before MXDataIterNext", [=] {
    csv_iter({{"data_csv", TmpFile("ok.csv", "1,2,3\n")}, {"data_shape", "(3,)"}, {"batch_size", "1"}}, [](DataIterHandle it) {
      NDArrayHandle data = nullptr;
      return MXDataIterGetData(it, &data);
    });
  }, "Error", "MXDataIterGetData: CSVIter::data: no current batch (call Next first)");
  add("C API: MXDataIterCreateIter with a null creator", [] {
    DataIterHandle it = nullptr;
    CApi(MXDataIterCreateIter(nullptr, 0, nullptr, nullptr, &it));
  }, "Error", "MXDataIterCreateIter: argument 'creator' is null");
  add("data iterator of an unknown name", [] {
    CreateDataIter("ImageRecordIter", {});
  }, "Error", "unknown data iterator 'ImageRecordIter'; symbind has MNISTIter, CSVIter");
  // ---- detection and spatial sampling ops (tests/ops/contrib, tests/ops/nn) ----
  auto infer_args = [](const std::string& op, const KwArgs& params,
                       const std::map<std::string, TShape>& shapes) {
    std::vector<std::pair<std::string, Symbol>> inputs;
    for (auto& kv : shapes) inputs.emplace_back(kv.first, Var(kv.first));
    InferShape(Symbol::Create(op, "node", params, inputs), shapes);
  };
  add("box_nms with score_index inside the coordinates", [=] {
    infer_args("_contrib_box_nms", {{"score_index", "3"}}, {{"data", TShape({4, 6})}});
  }, "ShapeError", "Error in operator node (_contrib_box_nms): box_nms: score_index 3 conflicts with coordinates [2, 5]");
  add("box_nms on rows of 4 values", [=] {
    infer_args("_contrib_box_nms", {}, {{"data", TShape({4, 4})}});
  }, "ShapeError", "Error in operator node (_contrib_box_nms): box_nms: the last dimension must have at least 5 elements (score, 4 coordinates), got 4");
  add("ROIPooling with rois of 4 columns", [=] {
    infer_args("ROIPooling", {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}},
               {{"data", TShape({1, 3, 8, 8})}, {"rois", TShape({2, 4})}});
  }, "ShapeError", "Error in operator node (ROIPooling): ROIPooling: rois should be a 2D tensor of shape (num_rois, 5), got (2,4)");
  add("ROIAlign roi with batch index 1 on a batch of 1", [] {
    Symbol s = Symbol::Create("_contrib_ROIAlign", "node", {{"pooled_size", "(1,1)"}, {"spatial_scale", "1"}},
                              {{"data", Var("data")}, {"rois", Var("rois")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({1, 1, 4, 4}))},
                                   {"rois", NDArray(TShape({1, 5}), {1, 0, 0, 2, 2})}})->Forward(false);
  }, "Error", "ROIAlign: roi 0 has batch index 1, but the data holds 1 images");
  add("ROIAlign aligned=True with an empty roi", [] {
    Symbol s = Symbol::Create("_contrib_ROIAlign", "node",
                              {{"pooled_size", "(1,1)"}, {"spatial_scale", "1"}, {"aligned", "True"}},
                              {{"data", Var("data")}, {"rois", Var("rois")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({1, 1, 4, 4}))},
                                   {"rois", NDArray(TShape({1, 5}), {0, 2, 2, 2, 3})}})->Forward(false);
  }, "Error", "ROIAlign: with aligned=True, roi 0 must have positive width and height after scaling, got 0 x 1");
  add("PSROIPooling on 17 channels for output_dim 2 and pooled_size 3", [=] {
    infer_args("_contrib_PSROIPooling", {{"output_dim", "2"}, {"pooled_size", "3"}, {"spatial_scale", "0.0625"}},
               {{"data", TShape({1, 17, 14, 14})}, {"rois", TShape({2, 5})}});
  }, "ShapeError", "Error in operator node (_contrib_PSROIPooling): PSROIPooling: data has 17 channels, but output_dim * group_size^2 = 2 * 3^2 = 18 are read");
  add("PSROIPooling roi with a NaN corner", [] {
    Symbol s = Symbol::Create("_contrib_PSROIPooling", "node",
                              {{"output_dim", "1"}, {"pooled_size", "1"}, {"spatial_scale", "1"}},
                              {{"data", Var("data")}, {"rois", Var("rois")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({1, 1, 4, 4}))},
                                   {"rois", NDArray(TShape({1, 5}), {0, 0, NAN, 2, 2})}})->Forward(false);
  }, "Error", "PSROIPooling: roi 0 has a non-finite coordinate nan");
  add("DeformablePSROIPooling with offsets for 3 classes and output_dim 2", [=] {
    infer_args("_contrib_DeformablePSROIPooling",
               {{"output_dim", "2"}, {"group_size", "3"}, {"pooled_size", "3"}, {"spatial_scale", "0.0625"}},
               {{"data", TShape({1, 18, 14, 14})}, {"rois", TShape({2, 5})}, {"trans", TShape({2, 6, 3, 3})}});
  }, "ShapeError", "Error in operator node (_contrib_DeformablePSROIPooling): DeformablePSROIPooling: trans should be (num_rois, 2 * num_classes, part_size, part_size) = (2, 2 * num_classes, 3, 3), got (2,6,3,3): 2 * num_classes channels with num_classes dividing output_dim = 2");
  add("MultiBoxDetection with 5 anchors in cls_prob, 4 in anchor", [=] {
    infer_args("_contrib_MultiBoxDetection", {},
               {{"cls_prob", TShape({1, 3, 5})}, {"loc_pred", TShape({1, 20})}, {"anchor", TShape({1, 4, 4})}});
  }, "ShapeError", "Error in operator node (_contrib_MultiBoxDetection): MultiBoxDetection: cls_prob and anchor disagree on the number of anchors (cls_prob (1,3,5), loc_pred (1,20), anchor (1,4,4))");
  add("MultiBoxTarget with 2 anchors in cls_pred, 3 in anchor", [=] {
    infer_args("_contrib_MultiBoxTarget", {},
               {{"anchor", TShape({1, 3, 4})}, {"label", TShape({1, 2, 5})}, {"cls_pred", TShape({1, 4, 2})}});
  }, "ShapeError", "Error in operator node (_contrib_MultiBoxTarget): MultiBoxTarget: cls_pred and anchor disagree on the number of anchors (anchor (1,3,4), label (1,2,5), cls_pred (1,4,2))");
  add("MultiBoxTarget mining more negatives than anchors below negative_mining_thresh", [] {
    Symbol s = Symbol::Create("_contrib_MultiBoxTarget", "node",
                              {{"negative_mining_ratio", "3"}, {"negative_mining_thresh", "0.1"}},
                              {{"anchor", Var("anchor")}, {"label", Var("label")}, {"cls_pred", Var("cls_pred")}});
    SimpleBind(s, Context::CPU(), {{"anchor", NDArray(TShape({1, 2, 4}), {0, 0, 1, 1, 0, 0, 0.5f, 0.5f})},
                                   {"label", NDArray(TShape({1, 1, 5}), {0, 0, 0, 1, 1})},
                                   {"cls_pred", NDArray(TShape({1, 2, 2}))}})->Forward(false);
  }, "Error", "MultiBoxTarget: image 0: negative mining (negative_mining_ratio 3) wants more negatives than there are unmatched anchors overlapping less than negative_mining_thresh 0.1");
  add("RROIAlign roi with batch index 1 on a batch of 1", [] {
    Symbol s = Symbol::Create("_contrib_RROIAlign", "node", {{"pooled_size", "(1,1)"}, {"spatial_scale", "1"}},
                              {{"data", Var("data")}, {"rois", Var("rois")}});
    SimpleBind(s, Context::CPU(), {{"data", NDArray(TShape({1, 1, 4, 4}))},
                                   {"rois", NDArray(TShape({1, 6}), {1, 2, 2, 2, 2, 30})}})->Forward(false);
  }, "Error", "RROIAlign: roi 0 has batch index 1, but the data holds 1 images");
  add("MultiBoxPrior with offsets (0.5, 1.5)", [] {
    Symbol::Create("_contrib_MultiBoxPrior", "node", {{"offsets", "(0.5, 1.5)"}}, {{"data", Var("data")}});
  }, "ParamError", "value (0.5, 1.5) for Parameter offsets should be (offset_y, offset_x), each in [0, 1]");
  add("Proposal on a batch of 2", [=] {
    infer_args("_contrib_Proposal", {}, {{"cls_prob", TShape({2, 24, 4, 4})}});
  }, "ShapeError", "Error in operator node (_contrib_Proposal): Proposal: only one image per call is supported (use MultiProposal), got batch 2");
  add("DeformableConvolution with a 3-D kernel", [] {
    Symbol::Create("_contrib_DeformableConvolution", "node", {{"kernel", "(3,3,3)"}, {"num_filter", "2"}},
                   {{"data", Var("data")}});
  }, "ParamError", "DeformableConvolution: only 2-D kernels (h, w) are supported, got kernel (3,3,3)");
  add("GridGenerator affine without target_shape", [=] {
    infer_args("GridGenerator", {{"transform_type", "affine"}}, {{"data", TShape({1, 6})}});
  }, "ShapeError", "Error in operator node (GridGenerator): GridGenerator: transform_type=affine needs target_shape (H, W) with H, W > 0, got (0,0)");
  add("BilinearSampler grid with 3 channels", [=] {
    infer_args("BilinearSampler", {}, {{"data", TShape({1, 3, 4, 4})}, {"grid", TShape({1, 3, 4, 4})}});
  }, "ShapeError", "Error in operator node (BilinearSampler): BilinearSampler: grid should be 4D in batch-2-y-x, got (1,3,4,4)");
  // ---- hostile inputs, round 3 (issue 37) ----
  add("IsModelFile (every CLI subcommand sniffs the format) on a FIFO", [] { IsModelFile(TmpFifo("model.fifo")); }, "IOError", "cannot read <tmp>/model.fifo: not a regular file (a FIFO); models, parameters and inputs are read from regular files only");
  add("SGD update of a weight mapped from a .symbind file", [] {
    Model model;
    model.symbol = FC(Var("data"), 2, "fc");
    model.args["fc_weight"] = NDArray(TShape({2, 3}));
    model.args["fc_bias"] = NDArray(TShape({2}));
    SaveModel(TmpDir() + "/sgd.symbind", model);
    Model mapped = LoadModel(TmpDir() + "/sgd.symbind");
    SGD().Update("fc_weight", mapped.args.at("fc_weight"), NDArray(TShape({2, 3})));
  }, "Error", "operator sgd (sgd_update) output 0: the array is read-only (weights mapped from <tmp>/sgd.symbind); write into a Copy() of it instead");
  add("SGD with lr=nan", [] {
    SGDOptions o;
    o.lr = std::nanf("");
    SGD(o).Update("w", NDArray(TShape({2})), NDArray(TShape({2})));
  }, "ParamError", "value nan for Parameter lr should be a finite number");
  add("LeakyReLU slope=inf", [] { RunOp("LeakyReLU", {{"slope", "inf"}}, TShape({2})); }, "ParamError", "value inf for Parameter slope should be a finite number");
  add("MultiBoxPrior sizes (0.5, 0)", [] {
    Symbol::Create("_contrib_MultiBoxPrior", "node", {{"sizes", "(0.5, 0)"}}, {{"data", Var("data")}});
  }, "ParamError", "value (0.5, 0) for Parameter sizes should be a non-empty tuple of numbers > 0");
  add("box_nms overlap_thresh 1.5", [] {
    Symbol::Create("_contrib_box_nms", "node", {{"overlap_thresh", "1.5"}}, {{"data", Var("data")}});
  }, "ParamError", "value 1.5 for Parameter overlap_thresh should be in range [0, 1]");
  add("L2Normalization eps 0", [] {
    Symbol::Create("L2Normalization", "node", {{"eps", "0"}}, {{"data", Var("data")}});
  }, "ParamError", "value 0 for Parameter eps should be > 0 (the norm is divided by sqrt(sum + eps))");
  add("KVStore Pull into a null pointer", [] {
    auto kv = KVStore::Create("local");
    kv->Init({"w"}, {NDArray(TShape({2}))});
    kv->Pull({"w"}, {nullptr});
  }, "Error", "KVStore::Pull: output 0 for key 'w' is a null pointer");
  add("Predictor::Forward on a moved-from predictor", [] {
    Predictor p(FC(Var("data"), 2, "fc"), {{"fc_weight", NDArray(TShape({2, 3}))}, {"fc_bias", NDArray(TShape({2}))}},
                {}, {{"data", TShape({1, 3})}});
    Predictor moved = std::move(p);
    p.Forward();
  }, "Error", "Predictor::Forward: this predictor was moved from and holds no model (use the predictor it was moved into)");
  add(".symbind: 5 bytes appended", [] {
    Model model;
    model.symbol = FC(Var("data"), 2, "fc");
    const std::string image = SaveModelToString(model) + "extra";
    LoadModelBuffer(image.data(), image.size(), "tail.symbind");
  }, "IOError", "tail.symbind: 5 trailing bytes after the model's last structure (the file should end at byte 440)");
  add(".symbind: input shape (2^40,2^40)", [] {
    Model model;
    model.symbol = FC(Var("data"), 2, "fc");
    model.input_shapes["data"] = TShape({int64_t{1} << 40, int64_t{1} << 40});
    const std::string image = SaveModelToString(model);
    LoadModelBuffer(image.data(), image.size(), "huge.symbind");
  }, "IOError", "huge.symbind: shape (1099511627776,1099511627776) has more elements than int64 can count: 1099511627776 * 1099511627776 overflows int64");
  add("--shape data=2^32,2^32", [] { ParseShapeSpec("data=4294967296,4294967296"); }, "ParamError", "bad shape 'data=4294967296,4294967296': shape (4294967296,4294967296) has more elements than int64 can count: 4294967296 * 4294967296 overflows int64");
  add("Pooling: a second window starting at 2^63-1", [] {
    Symbol s = Symbol::Create("Pooling", "pool", {{"kernel", "(1,2)"}, {"stride", "(1,9223372036854775807)"},
                                                  {"pooling_convention", "full"}}, {{"data", Var("data")}});
    InferShape(s, {{"data", TShape({1, 1, 1, 3})}});
  }, "ShapeError", "Error in operator pool (Pooling): Pooling: end of window 1 in spatial dim 1: 9223372036854775807 + 2 overflows int64");
  // MXSymbolInferShapeEx on FullyConnected(num_hidden=4) of a variable "data", with `keys`.
  auto infer_fc_keys = [](std::vector<const char*> keys, std::vector<uint32_t> ind, std::vector<int> dims) {
    OpHandle op = nullptr;
    CApi(NNGetOpHandle("FullyConnected", &op));
    const char* pkeys[] = {"num_hidden"};
    const char* pvals[] = {"4"};
    SymbolHandle data = nullptr, fc = nullptr;
    CApi(MXSymbolCreateVariable("data", &data));
    CApi(MXSymbolCreateAtomicSymbol(op, 1, pkeys, pvals, &fc));
    CApi(MXSymbolCompose(fc, "fc", 1, nullptr, &data));
    uint32_t in_n, out_n, aux_n;
    const int *in_nd, *out_nd, *aux_nd;
    const int **in_d, **out_d, **aux_d;
    int complete;
    const int rc = MXSymbolInferShapeEx(fc, static_cast<uint32_t>(keys.size()), keys.data(), ind.data(), dims.data(),
                                        &in_n, &in_nd, &in_d, &out_n, &out_nd, &out_d, &aux_n, &aux_nd, &aux_d,
                                        &complete);
    const std::string error = MXGetLastError();
    MXSymbolFree(fc);
    MXSymbolFree(data);
    if (rc != 0) throw Error(error);
  };
  add("C API: MXSymbolInferShapeEx with the key \"dta\"", [=] { infer_fc_keys({"dta"}, {0, 2}, {2, 3}); },
      "Error", "MXSymbolInferShapeEx: keys: 'dta' is not an input of the symbol; inputs: data, fc_weight, fc_bias");
  add("C API: MXSymbolInferShapeEx with the key \"data\" twice", [=] {
    infer_fc_keys({"data", "data"}, {0, 2, 4}, {2, 3, 5, 3});
  }, "Error", "MXSymbolInferShapeEx: keys: 'data' is given twice");
  add("C API: MXSymbolInferShapeEx with arg_ind_ptr {0, 10^6}", [=] { infer_fc_keys({"data"}, {0, 1000000}, {2, 3}); },
      "Error", "MXSymbolInferShapeEx: the shape of 'data' has 1000000 dims (arg_ind_ptr[1] - arg_ind_ptr[0]); at most 32 are supported");
  add("C API: MXSymbolCreateAtomicSymbol FullyConnected num_hidden='ten'", [] {
    OpHandle op = nullptr;
    CApi(NNGetOpHandle("FullyConnected", &op));
    const char* keys[] = {"num_hidden"};
    const char* vals[] = {"ten"};
    SymbolHandle s = nullptr;
    CApi(MXSymbolCreateAtomicSymbol(op, 1, keys, vals, &s));
  }, "Error", "MXSymbolCreateAtomicSymbol: Invalid Parameter format for num_hidden expect int but value='ten'");
  add("C API: MXPredFree from a monitor callback of the running MXPredForward", [predictor] {
    static PredictorHandle running;
    static std::string free_error;
    running = predictor();
    free_error.clear();
    CApi(MXPredSetMonitorCallback(running, [](const char*, NDArrayHandle, void*) {
      if (free_error.empty() && MXPredFree(running) != 0) free_error = MXGetLastError();
    }, nullptr, false));
    CApi(MXPredForward(running));
    CApi(MXPredFree(running));
    throw Error(free_error);
  }, "Error", "MXPredFree: argument 'handle' is in use by a running call (in another thread, or the one whose callback this is); free it after that call returns");
  add("Invoke relu into a read-only output", [] {
    NDArray shared = ReadOnlyView(NDArray(TShape({2})), "a shared weight");
    Invoke("relu", {}, {NDArray(TShape({2}))}, {shared});
  }, "Error", "operator imperative (relu) output 0: the array is read-only (a shared weight); write into a Copy() of it instead");
  add("Predictor of FullyConnected with no parameters", [] {
    Predictor(FC(Var("data"), 2, "fc"), {}, {}, {{"data", TShape({1, 3})}});
  }, "Error", "arguments not in the parameters and not given as inputs: fc_weight, fc_bias (no parameters were given); give the parameters and the inputs' shapes, or allow missing arguments (--allow-missing, PredictorOptions::allow_missing) to fill them from N(0,1)");
  add("C API: MXPredCreate with param_size 0 for LeNet", [lenet] {
    static std::string json;
    json = ReadFileToString(lenet + "-symbol.json");
    PredictorHandle p = nullptr;
    CApi(MXPredCreate(json.c_str(), nullptr, 0, 1, 0, 1, keys, indptr, shape, &p));
  }, "Error", "MXPredCreate: arguments not in the parameters and not given as inputs: conv1_weight, conv1_bias, conv2_weight, conv2_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias (no parameters were given); give the parameters and the inputs' shapes, or allow missing arguments (--allow-missing, PredictorOptions::allow_missing) to fill them from N(0,1)");
  add("Predictor input of 32 MiB under a 16 MiB bind limit", [] {
    BindLimitForTest limit(uint64_t{16} << 20);
    Predictor(Symbol::Create("sum", "s", {}, {{"data", Var("data")}}), {}, {}, {{"data", TShape({int64_t{1} << 23})}});
  }, "OutOfMemoryError", "SimpleBind: array 'data' of shape (8388608,) (float32) needs 33554432 bytes, more than the bind memory limit of 16777216 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("a second predictor of 40 MiB while one lives, under a 64 MiB bind limit", [] {
    BindLimitForTest limit(uint64_t{64} << 20);
    const Symbol neg = Symbol::Create("negative", "n", {}, {{"data", Var("data")}});
    Predictor first(neg, {}, {}, {{"data", TShape({int64_t{5} << 20})}});
    Predictor second(neg, {}, {}, {{"data", TShape({int64_t{5} << 20})}});
  }, "OutOfMemoryError", "SimpleBind: the 2 arrays to allocate need 41943040 bytes and the executors alive in this process hold 41943040 bytes: together more than the bind memory limit of 67108864 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it), which bounds all executors of the process");
  add("_zeros shape (10^9,) under the default 2 GiB bind budget", [] {
    BindLimitForTest limit(kDefaultMaxBindBytes);
    Predictor(LoadSymbolJSON(R"j({"nodes": [{"op": "_zeros", "name": "z", "attrs": {"shape": "(1000000000,)"}, "inputs": []}],
                                  "arg_nodes": [], "heads": [[0, 0, 0]]})j"), {}, {}, {});
  }, "OutOfMemoryError", "SimpleBind: array 'z_output' of shape (1000000000,) (float32) needs 4000000000 bytes, more than the bind memory limit of 2147483648 bytes (SYMBIND_MAX_BIND_BYTES or SetMaxBindBytes raise it)");
  add("C API: MXPredCreateMultiThread with num_threads 10^6", [lenet] {
    static std::string json, params;
    json = ReadFileToString(lenet + "-symbol.json");
    params = ReadFileToString(lenet + "-0008.params");
    PredictorHandle p = nullptr;
    CApi(MXPredCreateMultiThread(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr,
                                 shape, 1000000, &p));
  }, "Error", "MXPredCreateMultiThread: num_threads must be 1 to 1024 (MXPRED_MAX_THREADS), got 1000000");
  add(".params of 121 bytes with a row_sparse array of 4 GiB", [] {
    Bytes b;
    b.list_header(1);
    b.u32(0xF993FAC9).i32(1).shape64({0, 1}).shape64({int64_t{1} << 30, 1}).i32(1).i32(0).i32(0).i32(6).shape64({0});
    b.names({"arg:e"});
    LoadParamsBytes(b.str());
  }, "IOError", "the file's sparse arrays expand to 4294967296 bytes as dense arrays, more than the 67108864 bytes allowed for a file of 121 bytes (NDArrayLoadOptions::max_dense_bytes_from_sparse; default 256 bytes per file byte, at least 67108864)");
  add("Predictor with PredictorOptions::disabled_passes naming no pass", [] {
    PredictorOptions options;
    options.disabled_passes = {"fold_bn"};
    Predictor(Var("data"), {}, {}, {{"data", TShape({1})}}, options);
  }, "Error", "no graph pass named 'fold_bn'; the passes: fold_batch_norm, fuse_activations, fuse_inverted_residuals, fuse_residual_adds, fuse_quantized_activations, fuse_quantized_inverted_residuals");
  // One rule for a .params file's keys, from a file or from the C predict API's buffer.
  auto create_with_params = [lenet](const std::vector<std::string>& names) {
    static std::string json, params;
    json = ReadFileToString(lenet + "-symbol.json");
    Bytes b;
    b.list_header(names.size());
    for (size_t i = 0; i < names.size(); ++i) V2Array(b, {1}).f32(1.0f);
    b.names(names);
    params = b.str();
    PredictorHandle p = nullptr;
    CApi(MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys, indptr, shape, &p));
  };
  add("C API: MXPredCreate with the key 'arg:w' twice in param_bytes", [create_with_params] {
    create_with_params({"arg:w", "arg:w"});
  }, "Error", "MXPredCreate: param_bytes: name 'arg:w' appears twice (array 1)");
  add("C API: MXPredCreate with a key of neither arg: nor aux: in param_bytes", [create_with_params] {
    create_with_params({"arg:w", "w"});
  }, "Error", "MXPredCreate: parameter name 'w' has neither an 'arg:' nor an 'aux:' prefix");
  return c;
}

// The most derived symbind exception type of `e`.
std::string TypeName(const std::exception& e) {
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const IOError*>(&e)) return "IOError";
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  if (dynamic_cast<const ParamError*>(&e)) return "ParamError";
  if (dynamic_cast<const Error*>(&e)) return "Error";
  return std::string("std::exception (") + typeid(e).name() + ")";
}

struct Observed {
  std::string type, first_line;
};

Observed Run(const ErrorCase& c) {
  try {
    c.run();
  } catch (const std::exception& e) {
    std::string msg = e.what();
    msg = msg.substr(0, msg.find('\n'));
    for (size_t p; (p = msg.find(TmpDir())) != std::string::npos;) msg.replace(p, TmpDir().size(), "<tmp>");
    return {TypeName(e), msg};
  } catch (...) {
    return {"non-std exception", ""};
  }
  return {"(no exception)", ""};
}

std::string Cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string Render(const std::vector<ErrorCase>& cases) {
  std::ostringstream os;
  os << "# Errors: what bad input produces\n\n"
     << "Every row was produced by feeding symbind that input for real. The table is generated from\n"
     << "`tests/test_errors_table.cc`, which checks that each input still throws exactly this type\n"
     << "and message; regenerate it with\n"
     << "`SYMBIND_UPDATE_DOCS=1 ./build/tests/symbind_tests \"[errors]\"`.\n\n"
     << "All types derive from `symbind::Error` (`core/error.h`). Messages are shown verbatim up to\n"
     << "their first line break; `<tmp>` stands for the directory the test writes its files to\n"
     << "(`<system temp dir>/symbind-errors-table`). Rows marked \"C API\" are calls into\n"
     << "libmxnet.so (`mxnet/c_api.h`, `mxnet/c_predict_api.h`) that returned -1; the message is\n"
     << "`MXGetLastError()`'s.\n\n"
     << "| # | what was tried | exception | message |\n"
     << "| --- | --- | --- | --- |\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    os << "| " << i + 1 << " | " << Cell(cases[i].what) << " | `" << cases[i].type << "` | `"
       << Cell(cases[i].first_line) << "` |\n";
  }
  return os.str();
}

std::string CppLiteral(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

TEST_CASE("every bad input in docs/errors.md throws the documented error", "[errors]") {
  const auto cases = Cases();
  REQUIRE(cases.size() >= 40);
  const bool dump = std::getenv("SYMBIND_ERRORS_DUMP") != nullptr;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Observed got = Run(cases[i]);
    if (dump) {
      std::cout << "#" << i + 1 << " " << cases[i].what << "\n  " << CppLiteral(got.type) << ", "
                << CppLiteral(got.first_line) << "\n";
      continue;
    }
    INFO("#" << i + 1 << " " << cases[i].what);
    CHECK(got.type == cases[i].type);
    CHECK(got.first_line == cases[i].first_line);
  }
}

TEST_CASE("docs/errors.md matches the cases in tests/test_errors_table.cc", "[errors][docs]") {
  symbind::test::CheckGeneratedDoc("docs/errors.md", Render(Cases()), "[errors]");
}
