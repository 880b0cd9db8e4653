#include <symbind/io/checkpoint.h>
#include <symbind/io/ndarray_file.h>

#include "test_io_util.h"

using namespace symbind;

TEST_CASE("io: checkpoint paths follow MXNet's naming", "[io]") {
  CHECK(CheckpointSymbolPath("m/det1") == "m/det1-symbol.json");
  CHECK(CheckpointParamsPath("m/det1", 1) == "m/det1-0001.params");
  CHECK(CheckpointParamsPath("x", 12345) == "x-12345.params");
  CHECK_THROWS_AS(CheckpointParamsPath("x", -1), Error);
}

TEST_CASE("io: MTCNN checkpoints load", "[io][shared]") {
  const std::string prefix = symbind_test::SharedDir() + "/models/mtcnn/det2";
  std::map<std::string, NDArray> args, aux;
  const bool have_ops = OpRegistry::Global().Find("Convolution") &&
                        OpRegistry::Global().Find("LeakyReLU") &&
                        OpRegistry::Global().Find("Pooling");
  Symbol sym;
  LoadCheckpoint(prefix, 1, have_ops ? &sym : nullptr, &args, &aux);
  CHECK(args.size() == 16);
  CHECK(aux.empty());
  CHECK(args.at("conv4_weight").shape() == TShape{128, 576});
  if (!have_ops) {
    WARN("MTCNN operators not registered yet; symbol part skipped");
    return;
  }
  for (auto& name : sym.ListArguments())
    if (name != "data" && name.find("label") == std::string::npos) CHECK(args.count(name));
}

TEST_CASE("io: checkpoint save then load", "[io]") {
  if (!OpRegistry::Global().Find("FullyConnected")) {
    WARN("FullyConnected not registered yet; skipping");
    return;
  }
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 3)
                  .SetInput("data", Symbol::Variable("data")).CreateSymbol("fc");
  std::map<std::string, NDArray> args = {
      {"fc_weight", NDArray(TShape{3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6})},
      {"fc_bias", NDArray(TShape{3}, std::vector<float>{7, 8, 9})}};
  std::map<std::string, NDArray> aux = {{"bn_moving_mean", NDArray(TShape{2}, DType::kFloat64)}};
  const std::string prefix = symbind_test::TempPath("ckpt");
  SaveCheckpoint(prefix, 7, fc, args, aux);
  Symbol sym;
  std::map<std::string, NDArray> args2, aux2;
  LoadCheckpoint(prefix, 7, &sym, &args2, &aux2);
  CHECK(sym.ListArguments() == fc.ListArguments());
  REQUIRE(args2.size() == 2);
  CHECK(args2.at("fc_weight").ToVector() == args.at("fc_weight").ToVector());
  CHECK(aux2.at("bn_moving_mean").dtype() == DType::kFloat64);
  auto raw = LoadNDArrayMap(CheckpointParamsPath(prefix, 7));
  CHECK(raw.count("arg:fc_bias"));
  CHECK(raw.count("aux:bn_moving_mean"));
  try {
    LoadCheckpoint(prefix, 8, nullptr, &args2, nullptr);
    FAIL("expected IOError");
  } catch (const IOError& e) {
    CHECK(std::string(e.what()).find("-0008.params") != std::string::npos);
  }
  std::remove(CheckpointSymbolPath(prefix).c_str());
  std::remove(CheckpointParamsPath(prefix, 7).c_str());
}
