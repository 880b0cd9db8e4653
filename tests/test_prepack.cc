// Prepacked .symbind files (PrepackModel, symbind convert --prepack): the kernels' forms stored,
// read back in place, used without packing, and the same outputs to the bit.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include <symbind/io/model_file.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/predict/predictor.h>
#include <symbind/predict/prepack.h>

#include "model_test_util.h"
#include "proc_maps_util.h"
#include "test_io_util.h"
#include "tool_test_util.h"

using namespace symbind;

namespace {

// A first layer on 3 channels, a BatchNorm to fold, a 1x1 and a 3x3 convolution of 32 channels.
Model SmallNet() {
  Symbol x = Symbol::Variable("data");
  auto conv = [&](const std::string& name, const char* kernel, const char* pad, int filters) {
    x = OpBuilder("Convolution").SetParam("kernel", kernel).SetParam("pad", pad).SetParam("num_filter", filters)
            .SetInput("data", x).CreateSymbol(name);
  };
  conv("conv1", "(3,3)", "(1,1)", 16);
  x = OpBuilder("BatchNorm").SetInput("data", x).CreateSymbol("bn1");
  x = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", x).CreateSymbol("relu1");
  conv("conv2", "(1,1)", "(0,0)", 32);
  x = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", x).CreateSymbol("relu2");
  conv("conv3", "(3,3)", "(1,1)", 32);
  const TShape shape({1, 3, 32, 32});
  const test::SharedModel m = test::GaussianModel(x, shape);
  return Model{m.symbol, m.params, m.aux, {{"data", shape}}};
}

NDArray Run(const Model& model, const NDArray& input) {
  Predictor p(model.symbol, ReadOnlyViews(model.args), ReadOnlyViews(model.aux), {{"data", input.shape()}});
  p.SetInput("data", input);
  p.Forward();
  return p.Output(0).Copy();
}

bool SameBits(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}

}  // namespace

TEST_CASE("Prepack: stored forms are read in place, used without packing, same outputs", "[prepack][model_file]") {
  const Model original = SmallNet();
  NDArray input(original.input_shapes.at("data"));
  FillGaussian(input, 9, "x");
  const NDArray expected = Run(original, input);

  Model model = SmallNet();
  const PrepackReport report = PrepackModel(&model, {});
  CHECK(report.folded == 1);
  REQUIRE(report.forms >= 1);  // at least the 1x1 convolution's GEMM panels
  CHECK(report.forms == model.forms.size());
  CHECK(report.without_codec == 0);
  CHECK(model.forms_isa == GemmIsa());
  const std::string path = symbind_test::TempPath("prepacked.symbind");
  SaveModel(path, model);

  const Model loaded = LoadModel(path);
  CHECK(loaded.forms.size() == report.forms);
  CHECK(loaded.forms_in_use == report.forms);
  const Storage& file = *loaded.args.begin()->second.storage();
  const size_t held = file.num_derived_forms();
  CHECK(held == report.forms);
  CHECK(SameBits(Run(loaded, input), expected));
  CHECK(file.num_derived_forms() == held);  // every form the kernels asked for was in the file

  // Saved again, the forms go along.
  const std::string again = symbind_test::TempPath("prepacked-again.symbind");
  SaveModel(again, loaded);
  CHECK(LoadModel(again).forms_in_use == report.forms);
}

TEST_CASE("Prepack: a mapped file's stored forms ask for huge pages, its other weights do not", "[prepack][model_file]") {
  if (!symbind_test::KernelHasHugePages()) {
    WARN("skipped: this kernel has no transparent huge pages");
    return;
  }
  // Four 3x3 layers of 128 channels, whose Winograd forms (up to 64/9 of 576 KiB each) or packed
  // panels span whole 2 MiB blocks.
  Symbol x = Symbol::Variable("data");
  for (const char* name : {"conv1", "conv2", "conv3", "conv4"})
    x = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)").SetParam("num_filter", 128)
            .SetInput("data", x).CreateSymbol(name);
  const TShape shape({1, 128, 28, 28});
  const test::SharedModel m = test::GaussianModel(x, shape);
  Model model{m.symbol, m.params, m.aux, {{"data", shape}}};
  PrepackModel(&model, {});
  const std::string path = symbind_test::TempPath("prepacked-huge.symbind");
  SaveModel(path, model);

  const Model loaded = LoadModel(path);
  REQUIRE(loaded.forms_in_use == loaded.forms.size());
  size_t form_bytes = 0, in_huge = 0;
  for (const StoredForm& f : loaded.forms)
    for (const NDArray& a : f.arrays) {
      form_bytes += a.bytes();
      if (a.bytes() && symbind_test::VmFlagsAt(a.raw_data()).find(" hg ") != std::string::npos) in_huge += a.bytes();
    }
  REQUIRE(form_bytes >= (size_t{6} << 20));
  // All but the blocks the forms share with other bytes at either end.
  CHECK(in_huge + (size_t{4} << 20) >= form_bytes);
  for (const auto& [name, weight] : loaded.args)
    CHECK(symbind_test::VmFlagsAt(weight.raw_data()).find(" hg ") == std::string::npos);
}

TEST_CASE("Compact weights: no derived form larger than the weights, the same results to rounding", "[prepack][compact]") {
  // 3x3 layers of 48 channels, which Winograd may take by default. 48 filters fill the GEMM's
  // row tiles of every instruction set (6, 8, 16, 24 rows), so its panels hold no padding rows.
  Symbol x = Symbol::Variable("data");
  for (const char* name : {"conv1", "conv2"}) {
    x = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)").SetParam("num_filter", 48)
            .SetInput("data", x).CreateSymbol(name);
    x = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", x).CreateSymbol(std::string(name) + "_relu");
  }
  const TShape shape({1, 48, 28, 28});
  const test::SharedModel m = test::GaussianModel(x, shape);
  size_t weight_bytes = 0;
  for (const auto& [name, array] : m.params) weight_bytes += array.bytes();

  Model compact{m.symbol, m.params, m.aux, {{"data", shape}}};
  const PrepackReport report = PrepackModel(&compact, {}, /*compact_weights=*/true);
  CHECK(report.forms >= 2);
  CHECK(report.form_bytes <= weight_bytes);

  NDArray input(shape);
  FillGaussian(input, 3, "x");
  auto run = [&](bool compact_weights) {
    PredictorOptions options;
    options.compact_weights = compact_weights;
    Predictor p(m.symbol, ReadOnlyViews(m.params), ReadOnlyViews(m.aux), {{"data", shape}}, options);
    p.SetInput("data", input);
    p.Forward();
    return p.Output(0).ToVector();
  };
  // The reference: every convolution as im2col + GEMM (fast paths off).
  const bool fast_paths = conv::FastPathsEnabled();
  conv::SetFastPathsEnabled(false);
  const std::vector<float> reference = run(false);
  conv::SetFastPathsEnabled(fast_paths);
  const std::vector<float> by_default = run(false), compact_run = run(true);
  float largest = 0, compact_diff = 0, default_diff = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    largest = std::max(largest, std::fabs(reference[i]));
    compact_diff = std::max(compact_diff, std::fabs(compact_run[i] - reference[i]));
    default_diff = std::max(default_diff, std::fabs(by_default[i] - reference[i]));
  }
  CHECK(largest > 0);
  CHECK(compact_diff <= 1e-5f * largest);  // GEMM sums in another order only
  CHECK(default_diff <= 1e-4f * largest);  // Winograd's tolerance (test_conv_fast_paths.cc)
}

TEST_CASE("Prepack: forms for another instruction set are kept but not used", "[prepack][model_file]") {
  Model model = SmallNet();
  PrepackModel(&model, {});
  NDArray input(model.input_shapes.at("data"));
  FillGaussian(input, 9, "x");
  const NDArray expected = Run(model, input);
  model.forms_isa = "an-isa-of-the-future";
  const std::string path = symbind_test::TempPath("prepacked-other-isa.symbind");
  SaveModel(path, model);
  const Model loaded = LoadModel(path);
  CHECK(loaded.forms.size() == model.forms.size());
  CHECK(loaded.forms_in_use == 0);
  CHECK(loaded.args.begin()->second.storage()->num_derived_forms() == 0);
  CHECK(SameBits(Run(loaded, input), expected));
}

TEST_CASE("Prepack: a stored form's empty array survives a save and load round trip", "[prepack][model_file]") {
  // The writer gives an empty array no aligned place; the reader must not ask for one (found by fuzz_model_file).
  Model model = SmallNet();
  PrepackModel(&model, {});
  REQUIRE(!model.forms.empty());
  model.forms_isa = "an-isa-of-the-future";  // kept, not handed to a codec
  model.forms[0].arrays.push_back(NDArray(TShape({0})));
  const std::string path = symbind_test::TempPath("prepacked-empty-array.symbind");
  SaveModel(path, model);
  const Model loaded = LoadModel(path);
  REQUIRE(loaded.forms.size() == model.forms.size());
  CHECK(loaded.forms[0].arrays.size() == model.forms[0].arrays.size());
  CHECK(loaded.forms[0].arrays.back().shape() == TShape({0}));
  SaveModel(path, loaded);
  CHECK(LoadModel(path).forms[0].arrays.size() == model.forms[0].arrays.size());
}

TEST_CASE("Prepack: a damaged stored form is an error, never a wrong result", "[prepack][model_file][hostile]") {
  Model model = SmallNet();
  PrepackModel(&model, {});
  REQUIRE(!model.forms.empty());
  const std::string path = symbind_test::TempPath("prepacked-damaged.symbind");
  auto load_fails_with = [&](const Model& damaged, const std::string& says) {
    SaveModel(path, damaged);
    CHECK_THROWS_WITH(LoadModel(path), Catch::Contains(says));
  };
  Model extra_header = model;
  extra_header.forms[0].header.push_back(1);
  load_fails_with(extra_header, "stored form 0 (" + model.forms[0].codec + ") of '" + model.forms[0].param + "': ");
  Model wrong_shape = model;
  wrong_shape.forms[0].key[1] += 1;
  load_fails_with(wrong_shape, "stored form 0 (" + model.forms[0].codec + ") does not belong to the float32 parameter");
  Model no_arrays = model;
  no_arrays.forms[0].arrays.clear();
  load_fails_with(no_arrays, "stored form 0");

  // Panels of one row fewer in the same floats: read without complaint, refused by the kernel that
  // knows its layer. (The 3x3 convolution of 32 channels takes GEMM panels, Winograd's or its own.)
  bool tried = false;
  for (size_t i = 0; i < model.forms.size() && !tried; ++i) {
    const StoredForm& f = model.forms[i];
    if (f.codec != "conv_packed_gemm" && f.codec != "winograd_packed_gemm") continue;
    Model fewer_rows = model;
    std::vector<int64_t>& h = fewer_rows.forms[i].header;
    bool same_floats = true;
    for (size_t part = 0; part < static_cast<size_t>(h[0]); ++part) {
      int64_t& rows = h[1 + 4 * part];
      same_floats = same_floats && rows % h[3 + 4 * part] != 1;
      rows -= 1;
    }
    if (!same_floats) continue;
    tried = true;
    SaveModel(path, fewer_rows);
    const Model loaded = LoadModel(path);
    REQUIRE(loaded.forms_in_use == model.forms.size());
    Predictor p(loaded.symbol, loaded.args, loaded.aux, loaded.input_shapes);
    CHECK_THROWS_WITH(p.Forward(), Catch::Contains("the stored form does not fit the layer"));
  }
  CHECK(tried);
}

TEST_CASE("tool: convert --prepack, and run on the file says the forms are in use", "[prepack][tool]") {
  if (!symbind_test::ToolBuilt()) return;
  const Model net = SmallNet();
  const std::string prefix = symbind_test::TempPath("prepack-cli"), model = prefix + ".symbind";
  SaveCheckpoint(prefix, 0, net.symbol, net.args, net.aux);
  const std::string inputs = prefix + "-symbol.json " + prefix + "-0000.params";
  symbind_test::RunResult no_shape = symbind_test::RunTool("convert " + inputs + " -o " + model + " --prepack");
  CHECK(no_shape.status == 1);
  CHECK(no_shape.output.find("--prepack: give the input shapes") != std::string::npos);
  symbind_test::RunResult not_symbind =
      symbind_test::RunTool("convert " + inputs + " -o " + prefix + ".onnx --prepack --shape data=1,3,32,32");
  CHECK(not_symbind.status == 1);
  CHECK(not_symbind.output.find("--prepack stores packed weights in a .symbind file") != std::string::npos);
  symbind_test::RunResult made = symbind_test::RunTool("convert " + inputs + " -o " + model + " --prepack --shape data=1,3,32,32");
  INFO(made.output);
  REQUIRE(made.status == 0);
  CHECK(made.output.find("folded 1 BatchNorm node(s)") != std::string::npos);
  const size_t forms = LoadModel(model).forms.size();
  CHECK(made.output.find("stored " + std::to_string(forms) + " packed form(s)") != std::string::npos);
  symbind_test::RunResult run = symbind_test::RunTool("run " + model + " --bench 1");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("prepacked: " + std::to_string(forms) + " of the file's " + std::to_string(forms)) !=
        std::string::npos);
}
