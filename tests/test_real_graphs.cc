// Real MXNet graphs: MTCNN with real weights against goldens from OpenCV DNN (Caffe files),
// and the model-zoo graphs bound with Gaussian weights, run forward and backward.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include <symbind/io/checkpoint.h>
#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>

#include "op_test_util.h"
#include "shared_dir.h"

using namespace symbind;

namespace {
const std::string kShared = symbind_test::SharedDir();
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/mtcnn/";

bool AllFinite(const NDArray& a) {
  for (int64_t i = 0; i < a.Size(); ++i)
    if (!std::isfinite(a.GetFlat(i))) return false;
  return true;
}
}  // namespace

TEST_CASE("MTCNN nets match OpenCV DNN goldens within 1e-4", "[real][mtcnn][shared]") {
  std::ifstream f(kGoldens + "manifest.json");
  REQUIRE(f.good());
  nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 4);
  for (auto& c : manifest["cases"]) {
    std::string name = c["name"];
    INFO(name);
    std::string prefix = kShared + "/models/mtcnn/" + std::string(c["symbol"]).substr(0, 4);
    Symbol sym;
    std::map<std::string, NDArray> args, aux;
    LoadCheckpoint(prefix, 1, &sym, &args, &aux);
    NDArray data = LoadNpy(kGoldens + std::string(c["input_file"]));
    args["data"] = data;
    // Labels of the loss heads are not needed for inference; SimpleBind allocates them.
    auto exec = SimpleBind(sym, Context::CPU(), args, {}, {}, aux);
    exec->Forward(false);
    auto outputs = exec->output_dict();
    REQUIRE(outputs.size() == c["outputs"].size());
    for (auto& o : c["outputs"]) {
      NDArray want = LoadNpy(kGoldens + std::string(o["file"]));
      REQUIRE(outputs.count(o["name"]));
      const NDArray& got = outputs[o["name"]];
      REQUIRE(got.shape() == want.shape());
      double worst = 0;
      for (int64_t i = 0; i < got.Size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(got.GetFlat(i) - want.GetFlat(i))));
      INFO(std::string(o["name"]) << " max abs diff " << worst);
      CHECK(worst <= 1e-4);
    }
  }
}

namespace {
void RunZooGraph(const std::string& file, const TShape& data_shape, const TShape& expected_out) {
  Symbol sym = LoadSymbolFile(kShared + "/models/symbols/" + file);
  auto exec = SimpleBind(sym, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", data_shape}}, 0});
  REQUIRE(exec->outputs().size() == 1);
  CHECK(exec->outputs()[0].shape() == expected_out);
  // Labels: valid class indices (Gaussian values would not be).
  for (auto& kv : exec->arg_dict())
    if (kv.first.size() > 5 && kv.first.compare(kv.first.size() - 5, 5, "label") == 0) kv.second.Fill(1.0f);
  exec->Forward(true);
  CHECK(AllFinite(exec->outputs()[0]));
  exec->Backward();
  auto names = sym.ListArguments();
  int checked = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (exec->grad_reqs()[i] == OpReq::kNull) continue;
    INFO(names[i]);
    CHECK(AllFinite(exec->grad_arrays()[i]));
    ++checked;
  }
  CHECK(checked > 0);
  exec->Forward(false);
  CHECK(AllFinite(exec->outputs()[0]));
}
}  // namespace

TEST_CASE("resnet-18 runs forward and backward", "[real][zoo][shared]") {
  RunZooGraph("resnet-18-symbol.json", TShape({1, 3, 224, 224}), TShape({1, 1000}));
}
TEST_CASE("squeezenet_v1.1 runs forward and backward", "[real][zoo][shared]") {
  RunZooGraph("squeezenet_v1.1-symbol.json", TShape({1, 3, 224, 224}), TShape({1, 1000}));
}
TEST_CASE("caffenet runs forward and backward", "[real][zoo][shared]") {
  RunZooGraph("caffenet-symbol.json", TShape({1, 3, 224, 224}), TShape({1, 1000}));
}
TEST_CASE("fcn32s runs forward and backward, Crop restores the input size", "[real][zoo][shared]") {
#ifdef SYMBIND_SANITIZER_BUILD
  // Sanitizer builds run this graph about 10x slower (500x500 took ~476 s under ASan). The
  // first convolution pads by 100, so a small input still passes every layer, including the
  // 7x7 fc6 convolution and the Crop back to the input size, with every op exercised.
  const int64_t side = 64;
#else
  const int64_t side = 500;
#endif
  // Training it at 500x500 binds about 2.3 GB of arrays, more than the default bind budget.
  struct Budget {
    Budget() { SetMaxBindBytes(uint64_t{4} << 30); }
    ~Budget() { SetMaxBindBytes(0); }
  } budget;
  RunZooGraph("fcn32s-symbol.json", TShape({1, 3, side, side}), TShape({1, 21, side, side}));
}
