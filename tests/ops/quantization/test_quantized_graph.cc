// A quantized network in the symbol-file form MXNet 1.9.1's quantize_model writes (node names,
// output names output0..2, int8 parameters <name>_quantize with _min/_max), bound through
// Predictor, against its float32 original.
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>

#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const char* const kQuantizedNet = R"json({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "_contrib_quantize_v2", "name": "data_quantize",
     "attrs": {"out_type": "uint8", "min_calib_range": "0.000000", "max_calib_range": "1.000000"}, "inputs": [[0, 0, 0]]},
    {"op": "null", "name": "conv0_weight_quantize", "inputs": []},
    {"op": "null", "name": "conv0_bias_quantize", "inputs": []},
    {"op": "null", "name": "conv0_weight_quantize_min", "inputs": []},
    {"op": "null", "name": "conv0_weight_quantize_max", "inputs": []},
    {"op": "null", "name": "conv0_bias_quantize_min", "inputs": []},
    {"op": "null", "name": "conv0_bias_quantize_max", "inputs": []},
    {"op": "_contrib_quantized_conv", "name": "quantized_conv0",
     "attrs": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)"},
     "inputs": [[1, 0, 0], [2, 0, 0], [3, 0, 0], [1, 1, 0], [1, 2, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 0]]},
    {"op": "_contrib_requantize", "name": "requantize_conv0",
     "attrs": {"out_type": "int8", "min_calib_range": "-3.000000", "max_calib_range": "3.000000"},
     "inputs": [[8, 0, 0], [8, 1, 0], [8, 2, 0]]},
    {"op": "_contrib_quantized_act", "name": "quantized_relu0", "attrs": {"act_type": "relu"},
     "inputs": [[9, 0, 0], [9, 1, 0], [9, 2, 0]]},
    {"op": "_contrib_quantized_pooling", "name": "quantized_pool0",
     "attrs": {"kernel": "(2, 2)", "stride": "(2, 2)", "pool_type": "max"}, "inputs": [[10, 0, 0], [10, 1, 0], [10, 2, 0]]},
    {"op": "_contrib_quantized_flatten", "name": "quantized_flatten0", "inputs": [[11, 0, 0], [11, 1, 0], [11, 2, 0]]},
    {"op": "null", "name": "fc1_weight_quantize", "inputs": []},
    {"op": "null", "name": "fc1_bias_quantize", "inputs": []},
    {"op": "null", "name": "fc1_weight_quantize_min", "inputs": []},
    {"op": "null", "name": "fc1_weight_quantize_max", "inputs": []},
    {"op": "null", "name": "fc1_bias_quantize_min", "inputs": []},
    {"op": "null", "name": "fc1_bias_quantize_max", "inputs": []},
    {"op": "_contrib_quantized_fully_connected", "name": "quantized_fc1", "attrs": {"num_hidden": "3"},
     "inputs": [[12, 0, 0], [13, 0, 0], [14, 0, 0], [12, 1, 0], [12, 2, 0], [15, 0, 0], [16, 0, 0], [17, 0, 0], [18, 0, 0]]},
    {"op": "_contrib_requantize", "name": "requantize_fc1",
     "attrs": {"out_type": "int8", "min_calib_range": "-4.000000", "max_calib_range": "4.000000"},
     "inputs": [[19, 0, 0], [19, 1, 0], [19, 2, 0]]},
    {"op": "_contrib_dequantize", "name": "fc1_dequantize", "inputs": [[20, 0, 0], [20, 1, 0], [20, 2, 0]]}
  ],
  "arg_nodes": [0, 2, 3, 4, 5, 6, 7, 13, 14, 15, 16, 17, 18],
  "heads": [[21, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
})json";

// Weights quantized as MXNet's _quantize_params does: _contrib_quantize int8 over +-max|w|.
void AddQuantized(const std::string& name, const NDArray& w, std::map<std::string, NDArray>* args) {
  float r = 0;
  for (int64_t i = 0; i < w.Size(); ++i) r = std::max(r, std::fabs(w.GetFlat(i)));
  auto q = RunAll("_contrib_quantize", {{"out_type", "int8"}}, {{"data", w}, {"min_range", Range(-r)}, {"max_range", Range(r)}});
  (*args)[name + "_quantize"] = q[0];
  (*args)[name + "_quantize_min"] = q[1];
  (*args)[name + "_quantize_max"] = q[2];
}
}  // namespace

TEST_CASE("a quantized network as MXNet writes it runs through Predictor and follows the float32 network",
          "[ops][quantization][predict]") {
  Symbol q = LoadSymbolJSON(kQuantizedNet);
  CHECK(q.ListOutputs() == std::vector<std::string>{"fc1_dequantize_output"});
  NDArray cw = RandomArray(TShape({4, 2, 3, 3}), 71, -0.5f, 0.5f), cb = RandomArray(TShape({4}), 72, -0.1f, 0.1f);
  NDArray fw = RandomArray(TShape({3, 36}), 73, -0.5f, 0.5f), fb = RandomArray(TShape({3}), 74, -0.1f, 0.1f);
  std::map<std::string, NDArray> args;
  AddQuantized("conv0_weight", cw, &args);
  AddQuantized("conv0_bias", cb, &args);
  AddQuantized("fc1_weight", fw, &args);
  AddQuantized("fc1_bias", fb, &args);
  Predictor quantized(q, args, {}, {{"data", TShape({2, 2, 6, 6})}});

  // The float32 network the quantized one was made from.
  Symbol x = Symbol::Variable("data");
  Symbol conv = Symbol::Create("Convolution", "conv0", {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(1,1)"}}, {{"data", x}});
  Symbol relu = Symbol::Create("Activation", "relu0", {{"act_type", "relu"}}, {{"data", conv}});
  Symbol pool = Symbol::Create("Pooling", "pool0", {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "max"}}, {{"data", relu}});
  Symbol fc = Symbol::Create("FullyConnected", "fc1", {{"num_hidden", "3"}}, {{"data", pool}});
  Predictor fp32(fc, {{"conv0_weight", cw}, {"conv0_bias", cb}, {"fc1_weight", fw}, {"fc1_bias", fb}}, {},
                 {{"data", TShape({2, 2, 6, 6})}});

  NDArray image = RandomArray(TShape({2, 2, 6, 6}), 75, 0.0f, 1.0f);
  quantized.SetInput("data", image);
  quantized.Forward();
  fp32.SetInput("data", image);
  fp32.Forward();
  const NDArray& got = quantized.Output(0);
  const NDArray& want = fp32.Output(0);
  REQUIRE(got.shape() == want.shape());
  float worst = 0, largest = 0;
  for (int64_t i = 0; i < want.Size(); ++i) {
    worst = std::max(worst, std::fabs(got.GetFlat(i) - want.GetFlat(i)));
    largest = std::max(largest, std::fabs(want.GetFlat(i)));
  }
  INFO("largest difference " << worst << " of outputs up to " << largest);
  CHECK(largest > 0.1f);
  CHECK(worst < 0.1f);
}
