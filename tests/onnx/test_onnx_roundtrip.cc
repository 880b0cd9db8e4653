// ONNX export and import: models exported, imported back and run against the original graph,
// the CLI's convert / run / shapes on .onnx files, and hostile .onnx files.
#ifdef SYMBIND_HAVE_ONNX
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iostream>

#include <onnx/onnx_pb.h>

#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/io/onnx/onnx.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>

#include "model_test_util.h"
#include "onnx_test_util.h"
#include "shared_dir.h"
#include "test_io_util.h"
#include "tool_test_util.h"

namespace symbind {
namespace {
using symbind::test::SharedModel;

// Outputs of `model` on `input` (bound to its one data input).
std::vector<NDArray> RunModel(const Model& model, const std::string& input_name, const NDArray& input) {
  Predictor p(model.symbol, model.args, model.aux, {{input_name, input.shape()}});
  p.SetInput(input_name, input);
  p.Forward();
  std::vector<NDArray> out;
  for (const auto& o : p.Outputs()) out.push_back(o.Copy());
  return out;
}

NDArray UniformInput(const TShape& shape, uint32_t seed) {
  NDArray x(shape);
  uint32_t state = seed;
  for (int64_t i = 0; i < x.Size(); ++i) {
    state = state * 1664525u + 1013904223u;
    x.fdata()[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return x;
}

// Exports `model` at `opset`, imports the file back and compares outputs on one input:
// max |a - b| / max |a| over each output.
double RoundTripError(const std::string& what, const Model& model, const TShape& data_shape, int opset) {
  OnnxExportOptions options;
  options.opset = opset;
  options.input_shapes = {{"data", data_shape}};
  const std::string bytes = SaveOnnxToString(model, options);
  const Model back = LoadOnnxBuffer(bytes.data(), bytes.size(), "exported model");
  REQUIRE(back.input_shapes.at("data") == data_shape);
  const NDArray x = UniformInput(data_shape, 7);
  const std::vector<NDArray> want = RunModel(model, "data", x), got = RunModel(back, "data", x);
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    REQUIRE(got[i].shape() == want[i].shape());
    worst = std::max(worst, onnx_test::RelativeError(got[i], want[i]));
  }
  std::cout << "ONNX round trip " << what << " opset " << opset << ": max relative error " << worst << "\n";
  return worst;
}

Model ModelOf(const SharedModel& m) { return Model{m.symbol, m.params, m.aux, {}}; }

TEST_CASE("onnx: MTCNN nets (PReLU, full-convention pooling, channel softmax) export and import back",
          "[onnx][real][mtcnn][shared]") {
  const std::pair<const char*, TShape> nets[] = {
      {"det1", TShape({1, 3, 47, 61})}, {"det2", TShape({2, 3, 24, 24})}, {"det3", TShape({1, 3, 48, 48})}};
  for (const auto& [name, shape] : nets)
    for (int opset : {11, 13, 17}) {
      INFO(name << " opset " << opset);
      CHECK(RoundTripError(name, ModelOf(test::LoadMtcnnModel(name)), shape, opset) <= 1e-4);
    }
}

TEST_CASE("onnx: zoo graphs (BatchNorm, LRN, Dropout, Concat, Deconvolution, Crop) export and import back",
          "[onnx][real][zoo][shared]") {
  std::vector<std::pair<const char*, TShape>> graphs = {{"resnet-18-symbol.json", TShape({1, 3, 224, 224})},
                                                        {"squeezenet_v1.1-symbol.json", TShape({1, 3, 224, 224})}};
#ifndef SYMBIND_SANITIZER_BUILD
  // Their 61M and 134M parameters took most of this test's time under the sanitizers; the
  // layer mix below covers their LRN, Dropout, Deconvolution and Crop in every build.
  graphs.push_back({"caffenet-symbol.json", TShape({1, 3, 224, 224})});
  graphs.push_back({"fcn32s-symbol.json", TShape({1, 3, 64, 64})});
#endif
  for (const auto& [file, shape] : graphs) {
    INFO(file);
    const Symbol sym = LoadSymbolFile(symbind_test::SharedDir() + "/models/symbols/" + file);
    CHECK(RoundTripError(file, ModelOf(test::GaussianModel(sym, shape)), shape, 13) <= 1e-4);
  }
}

TEST_CASE("onnx: RetinaFace (upsampling, crop, reshape codes, softmax) exports and imports back",
          "[onnx][real][faces][shared]") {
  Model m = LoadModelFiles(symbind_test::SharedDir() + "/models/retinaface/retina16-symbol.json",
                           symbind_test::SharedDir() + "/models/retinaface/retina16-0000.params");
  CHECK(RoundTripError("retina16", m, TShape({1, 3, 64, 96}), 13) <= 1e-4);
}

// A small graph with the ops the real models above lack.
Model OpMixModel() {
  Symbol data = Symbol::Variable("data");
  auto op = [](const std::string& name, const KwArgs& params, const std::vector<Symbol>& in) {
    return Symbol::Create(name, "", params, {}, in);
  };
  Symbol conv = op("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "8"}, {"num_group", "2"}, {"dilate", "(2,2)"},
                                    {"pad", "(2,2)"}}, {data});
  Symbol pooled = op("Pooling", {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"},
                                 {"count_include_pad", "False"}}, {conv});
  Symbol elu = op("LeakyReLU", {{"act_type", "elu"}, {"slope", "0.3"}}, {pooled});
  Symbol parts = op("SliceChannel", {{"num_outputs", "2"}, {"axis", "1"}}, {elu});
  Symbol summed = op("broadcast_add", {}, {parts[0], op("clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}, {parts[1]})});
  Symbol padded = op("Pad", {{"mode", "edge"}, {"pad_width", "(0,0,0,0,1,2,2,1)"}}, {summed});
  Symbol up = op("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}}, {padded});
  Symbol norm = op("L2Normalization", {{"mode", "channel"}}, {up});
  Symbol sliced = op("slice", {{"begin", "(None,1,2)"}, {"end", "(None,4,None)"}, {"step", "(1,1,2)"}}, {norm});
  Symbol reshaped = op("Reshape", {{"shape", "(0,-3,-2)"}}, {sliced});
  Symbol t = op("transpose", {{"axes", "(0,2,1)"}}, {reshaped});
  Symbol fc = op("FullyConnected", {{"num_hidden", "5"}, {"flatten", "False"}}, {t});
  Symbol scaled = op("_rdiv_scalar", {{"scalar", "2"}}, {op("_plus_scalar", {{"scalar", "3"}}, {op("relu", {}, {fc})})});
  Symbol mean = op("mean", {{"axis", "(1,)"}, {"keepdims", "True"}}, {scaled});
  Symbol out = op("softmax", {{"axis", "1"}}, {op("Flatten", {}, {op("broadcast_mul", {}, {scaled, mean})})});
  Model m;
  m.symbol = Symbol::Group({out, op("sum", {{"axis", "(2,)"}, {"exclude", "True"}}, {norm})});
  const ShapeInferResult shapes = InferShape(m.symbol, {{"data", TShape({2, 4, 9, 10})}});
  const auto names = m.symbol.ListArguments();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] != "data") m.args[names[i]] = UniformInput(shapes.arg_shapes[i], static_cast<uint32_t>(i + 1));
  return m;
}

TEST_CASE("onnx: grouped dilated convolution, avg pooling without pad, slices, reshape codes export and import back",
          "[onnx]") {
  for (int opset : {11, 12, 13, 17}) {
    INFO("opset " << opset);
    CHECK(RoundTripError("op mix", OpMixModel(), TShape({2, 4, 9, 10}), opset) <= 1e-4);
  }
}

// CaffeNet's and FCN-32s's layers on a small graph: LRN, Dropout, a Deconvolution upsampling
// and the Crop back to the input's size at an offset, as FCN-32s ends.
Model CaffeFcnLayersModel() {
  Symbol data = Symbol::Variable("data");
  auto op = [](const std::string& name, const KwArgs& params, const std::vector<Symbol>& in) {
    return Symbol::Create(name, "", params, {}, in);
  };
  Symbol conv = op("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"stride", "(2,2)"}, {"pad", "(5,5)"}},
                   {data});
  Symbol lrn = op("LRN", {{"nsize", "5"}, {"alpha", "0.0001"}, {"beta", "0.75"}, {"knorm", "2"}}, {conv});
  Symbol dropped = op("Dropout", {{"p", "0.5"}}, {op("Activation", {{"act_type", "relu"}}, {lrn})});
  Symbol up = op("Deconvolution", {{"kernel", "(4,4)"}, {"stride", "(2,2)"}, {"num_filter", "3"}, {"no_bias", "True"}},
                 {dropped});
  Symbol out = op("Crop", {{"num_args", "2"}, {"offset", "(3,3)"}}, {up, data});
  Model m;
  m.symbol = out;
  const ShapeInferResult shapes = InferShape(m.symbol, {{"data", TShape({1, 3, 12, 14})}});
  const auto names = m.symbol.ListArguments();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] != "data") m.args[names[i]] = UniformInput(shapes.arg_shapes[i], static_cast<uint32_t>(i + 11));
  return m;
}

TEST_CASE("onnx: LRN, Dropout, Deconvolution and Crop to another input export and import back", "[onnx]") {
  for (int opset : {11, 13, 17}) {
    INFO("opset " << opset);
    CHECK(RoundTripError("caffenet / fcn32s layers", CaffeFcnLayersModel(), TShape({1, 3, 12, 14}), opset) <= 1e-4);
  }
}

TEST_CASE("onnx: export lists every node without an ONNX form at once", "[onnx]") {
  Symbol data = Symbol::Variable("data");
  Symbol a = Symbol::Create("topk", "pick_top", {{"k", "2"}}, {}, {data});
  Symbol b = Symbol::Create("argsort", "order", {}, {}, {a});
  Model m{b, {}, {}, {{"data", TShape({2, 5})}}};
  try {
    SaveOnnxToString(m);
    FAIL("export succeeded");
  } catch (const ParamError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("pick_top (topk)") && Catch::Contains("order (argsort)"));
  }
  OnnxExportOptions bad;
  bad.opset = 10;
  CHECK_THROWS_WITH(SaveOnnxToString(OpMixModel(), bad), Catch::Contains("opset 10"));
  CHECK_THROWS_WITH(SaveOnnxToString(OpMixModel()), Catch::Contains("--shape"));  // no input shape
}

// ---- hostile files -------------------------------------------------------------------------

std::string SmallOnnx() {
  Symbol data = Symbol::Variable("data");
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "3"}}, {}, {data});
  Model m{fc, {{"fc_weight", UniformInput(TShape({3, 4}), 1)}, {"fc_bias", UniformInput(TShape({3}), 2)}}, {},
          {{"data", TShape({1, 4})}}};
  return SaveOnnxToString(m);
}

onnx::ModelProto Parsed(const std::string& bytes) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(bytes));
  return m;
}

std::string Bytes(const onnx::ModelProto& m) {
  std::string s;
  REQUIRE(m.SerializeToString(&s));
  return s;
}

TEST_CASE("onnx: hostile files get a clear error", "[onnx][hostile]") {
  const std::string good = SmallOnnx();
  REQUIRE_NOTHROW(LoadOnnxBuffer(good.data(), good.size()));
  SECTION("truncated") {
    for (size_t n : {size_t{0}, size_t{3}, good.size() / 2, good.size() - 1}) {
      INFO(n << " bytes");
      CHECK_THROWS_AS(LoadOnnxBuffer(good.data(), n), Error);
    }
  }
  SECTION("an attribute of the wrong type") {
    onnx::ModelProto m = Parsed(good);
    auto* node = m.mutable_graph()->mutable_node(0);
    auto* attr = node->add_attribute();
    attr->set_name("transB");
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(1.0f);
    node->mutable_attribute()->SwapElements(0, node->attribute_size() - 1);
    node->mutable_attribute()->RemoveLast();
    const std::string bytes = Bytes(m);
    CHECK_THROWS_WITH(LoadOnnxBuffer(bytes.data(), bytes.size()), Catch::Contains("transB"));
  }
  SECTION("an initializer whose data does not fit its dims, or dims past any memory") {
    onnx::ModelProto m = Parsed(good);
    auto* t = m.mutable_graph()->mutable_initializer(0);
    t->set_dims(0, int64_t{1} << 40);
    t->set_dims(1, int64_t{1} << 40);
    std::string bytes = Bytes(m);
    CHECK_THROWS_WITH(LoadOnnxBuffer(bytes.data(), bytes.size()), Catch::Contains(t->name()));
    t->set_dims(0, 3);
    t->set_dims(1, 5);
    bytes = Bytes(m);
    CHECK_THROWS_WITH(LoadOnnxBuffer(bytes.data(), bytes.size()), Catch::Contains("raw_data"));
  }
  SECTION("a huge input dim") {
    onnx::ModelProto m = Parsed(good);
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(
        int64_t{1} << 50);
    const std::string bytes = Bytes(m);
    CHECK_THROWS_AS(LoadOnnxBuffer(bytes.data(), bytes.size()), Error);
  }
  SECTION("external data outside the model's folder is refused; inside it is read") {
    const std::string dir = symbind_test::TempPath("onnx_external");
    REQUIRE(symbind_test::RunShell("mkdir -p " + dir + "/model").status == 0);
    onnx::ModelProto m = Parsed(good);
    auto* t = m.mutable_graph()->mutable_initializer(0);
    const std::string raw = t->raw_data();
    t->clear_raw_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    {
      std::ofstream(dir + "/outside.bin", std::ios::binary) << raw;
      std::ofstream(dir + "/model/weights.bin", std::ios::binary) << raw;
    }
    for (const std::string& where : {std::string("../outside.bin"), dir + "/outside.bin", std::string("/etc/passwd")}) {
      loc->set_value(where);
      std::ofstream(dir + "/model/m.onnx", std::ios::binary) << Bytes(m);
      INFO(where);
      CHECK_THROWS_WITH(LoadOnnx(dir + "/model/m.onnx"), Catch::Contains("model's folder"));
    }
    loc->set_value("weights.bin");
    std::ofstream(dir + "/model/m.onnx", std::ios::binary) << Bytes(m);
    const Model back = LoadOnnx(dir + "/model/m.onnx");
    CHECK(std::memcmp(back.args.at(t->name()).raw_data(), raw.data(), raw.size()) == 0);
    const std::string bytes = Bytes(m);
    CHECK_THROWS_WITH(LoadOnnxBuffer(bytes.data(), bytes.size()), Catch::Contains("external data"));
  }
  SECTION("unsupported ops are listed together with their node names") {
    onnx::ModelProto m = Parsed(good);
    for (const char* op : {"NonMaxSuppression", "Loop"}) {
      auto* n = m.mutable_graph()->add_node();
      n->set_op_type(op);
      n->set_name(std::string("my_") + op);
      n->add_input("data");
      n->add_output(std::string("out_") + op);
    }
    const std::string bytes = Bytes(m);
    try {
      LoadOnnxBuffer(bytes.data(), bytes.size());
      FAIL("import succeeded");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::Contains("my_NonMaxSuppression (NonMaxSuppression)") && Catch::Contains("my_Loop (Loop)"));
    }
  }
  SECTION("an opset outside 9-17") {
    onnx::ModelProto m = Parsed(good);
    m.mutable_opset_import(0)->set_version(8);
    const std::string bytes = Bytes(m);
    CHECK_THROWS_WITH(LoadOnnxBuffer(bytes.data(), bytes.size()), Catch::Contains("opset 8"));
  }
}

// ---- the CLI -------------------------------------------------------------------------------

TEST_CASE("tool: convert to .onnx and back, and run, shapes, summary and dot take an .onnx file", "[onnx][tool]") {
  if (!symbind_test::ToolBuilt()) return;
  const std::string lenet = std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet";
  const std::string onnx_path = symbind_test::TempPath("lenet.onnx");
  symbind_test::RunResult c = symbind_test::RunTool("convert " + lenet + "-symbol.json " + lenet + "-0008.params -o " + onnx_path +
                        " --shape data=1,1,28,28 --opset 12");
  INFO(c.output);
  REQUIRE(c.status == 0);
  CHECK_THAT(c.output, Catch::Contains("opset 12"));
  for (const char* cmd : {"shapes ", "summary ", "dot "}) {
    symbind_test::RunResult r = symbind_test::RunTool(std::string(cmd) + onnx_path);
    INFO(cmd << r.output);
    CHECK(r.status == 0);
  }
  const std::string npy_json = symbind_test::TempPath("lenet-json.npy"), npy_onnx = symbind_test::TempPath("lenet-onnx.npy");
  REQUIRE(symbind_test::RunTool("run " + lenet + "-symbol.json " + lenet + "-0008.params --shape data=1,1,28,28 --output " + npy_json)
              .status == 0);
  REQUIRE(symbind_test::RunTool("run " + onnx_path + " --output " + npy_onnx).status == 0);
  const NDArray a = LoadNpy(npy_json), b = LoadNpy(npy_onnx);
  CHECK(onnx_test::RelativeError(b, a) <= 1e-5);
  const std::string back = symbind_test::TempPath("lenet-back");
  REQUIRE(symbind_test::RunTool("convert " + onnx_path + " -o " + back).status == 0);
  REQUIRE(symbind_test::RunTool("convert " + onnx_path + " -o " + back + ".symbind").status == 0);
  symbind_test::RunResult r = symbind_test::RunTool("run " + back + ".symbind --output " + npy_onnx);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(onnx_test::RelativeError(LoadNpy(npy_onnx), a) <= 1e-5);
  symbind_test::RunResult twice = symbind_test::RunTool("convert " + onnx_path + " " + lenet + "-0008.params -o " + back);
  CHECK(twice.status != 0);
  CHECK_THAT(twice.output, Catch::Contains("holds its parameters"));
}

}  // namespace
}  // namespace symbind
#endif  // SYMBIND_HAVE_ONNX
