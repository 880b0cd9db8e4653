// An old-style model graph (MXNet 0.x JSON with "param" attributes) built from Convolution_v1,
// BatchNorm_v1 and Pooling_v1 loads, infers shapes and computes what the same graph of current
// ops computes (where their arithmetic agrees: inference BatchNorm, max pooling without padding).
#include <symbind/io/symbol_json.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
std::string LegacyJson(const std::string& conv, const std::string& bn, const std::string& pool) {
  return R"J({"nodes": [
    {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "c_weight", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "c_bias", "inputs": [], "backward_source_id": -1},
    {"op": ")J" + conv + R"J(", "param": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)"}, "name": "c",
     "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_beta", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_moving_mean", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "bn_moving_var", "inputs": [], "backward_source_id": -1},
    {"op": ")J" + bn + R"J(", "param": {"eps": "0.001", "fix_gamma": "False", "momentum": "0.9"}, "name": "bn",
     "inputs": [[3, 0], [4, 0], [5, 0], [6, 0], [7, 0]], "backward_source_id": -1},
    {"op": ")J" + pool + R"J(", "param": {"kernel": "(2, 2)", "pool_type": "max", "stride": "(2, 2)"}, "name": "p",
     "inputs": [[8, 0]], "backward_source_id": -1}],
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7], "heads": [[9, 0]]})J";
}
}  // namespace

TEST_CASE("A legacy graph of v1 ops runs like the same graph of current ops", "[ops][Convolution_v1][BatchNorm_v1][Pooling_v1]") {
  Symbol legacy = LoadSymbolJSON(LegacyJson("Convolution_v1", "BatchNorm_v1", "Pooling_v1"));
  Symbol current = LoadSymbolJSON(LegacyJson("Convolution", "BatchNorm", "Pooling"));
  REQUIRE(InferShape(legacy, {{"data", TShape({2, 3, 8, 8})}}).out_shapes[0] == TShape({2, 4, 4, 4}));
  std::map<std::string, NDArray> args{{"data", RandomArray(TShape({2, 3, 8, 8}), 1)},
                                      {"c_weight", RandomArray(TShape({4, 3, 3, 3}), 2)},
                                      {"c_bias", RandomArray(TShape({4}), 3)},
                                      {"bn_gamma", RandomArray(TShape({4}), 4)},
                                      {"bn_beta", RandomArray(TShape({4}), 5)}};
  std::map<std::string, NDArray> aux{{"bn_moving_mean", RandomArray(TShape({4}), 6)},
                                     {"bn_moving_var", RandomArray(TShape({4}), 7, 0.5f, 2.0f)}};
  auto run = [&](const Symbol& s) {
    auto exec = SimpleBind(s, Context::CPU(), args, {}, {}, aux);
    exec->Forward(false);
    return exec->outputs()[0].Copy();
  };
  RequireClose(run(legacy), run(current), 1e-5f, 1e-4f);
}
