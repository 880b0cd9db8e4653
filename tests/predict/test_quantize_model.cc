// Post-training quantization (predict/quantize.h): the graph MXNet 1.9.1's quantize_model writes,
// its int8 parameters against their definition, and int8 results against float32 ones.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/symbol_json.h>
#include <symbind/io/mnist.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/predict/graph_rewrites.h>
#include <symbind/predict/onednn_fusion.h>
#include <symbind/predict/predictor.h>
#include <symbind/predict/quantize.h>

#include "../model_test_util.h"
#include "../test_io_util.h"

using namespace symbind;
using symbind::test::GaussianModel;
using symbind::test::SharedModel;

namespace {

Symbol Conv(const Symbol& x, int filters, const std::string& name, const std::string& kernel = "(3,3)",
            const std::string& pad = "(1,1)") {
  return OpBuilder("Convolution").SetParam("kernel", kernel).SetParam("pad", pad).SetParam("num_filter", filters)
      .SetInput("data", x).CreateSymbol(name);
}
Symbol Act(const Symbol& x, const std::string& type, const std::string& name) {
  return OpBuilder("Activation").SetParam("act_type", type).SetInput("data", x).CreateSymbol(name);
}

// conv_a (then BatchNorm bn_a with `with_bn`) and relu_a; conv_b added to relu_a, then relu_sum;
// a 1x1 conv_c and relu_c beside it; both concatenated, global average pooling, FullyConnected fc.
Symbol ResidualConcatNet(bool with_bn) {
  Symbol a = Conv(Symbol::Variable("data"), 8, "conv_a");
  if (with_bn) a = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", a).CreateSymbol("bn_a");
  a = Act(a, "relu", "relu_a");
  Symbol b = Conv(a, 8, "conv_b");
  Symbol r = Act(OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", b).CreateSymbol("add"), "relu", "relu_sum");
  Symbol c = Act(Conv(a, 4, "conv_c", "(1,1)", "(0,0)"), "relu", "relu_c");
  Symbol cat = OpBuilder("Concat").SetParam("num_args", 2).SetParam("dim", 1).PushInput(r).PushInput(c)
                   .CreateSymbol("cat");
  Symbol pool = OpBuilder("Pooling").SetParam("kernel", "(1,1)").SetParam("global_pool", true)
                    .SetParam("pool_type", "avg").SetInput("data", cat).CreateSymbol("gap");
  return OpBuilder("FullyConnected").SetParam("num_hidden", 7).SetInput("data", pool).CreateSymbol("fc");
}

// Op of each node by name, and a node's input names, in the quantized graph.
struct GraphView {
  std::map<std::string, std::string> op;
  std::map<std::string, std::vector<std::string>> inputs;
  explicit GraphView(const Symbol& s) {
    const Graph g(s);
    for (const auto& info : g.nodes()) {
      const Node& n = *info.node;
      op[n.name()] = n.is_variable() ? "null" : n.attrs.op->name;
      for (const auto& in : n.inputs) inputs[n.name()].push_back(in.node->name());
    }
  }
  bool has(const std::string& name) const { return op.count(name) > 0; }
};

// The contrib form (_contrib_quantized_conv, offline int8 weights), whose graph the first tests
// check node by node; the default oneDNN form has a test of its own below.
QuantizeOptions ContribForm() {
  QuantizeOptions o;
  o.form = "contrib";
  return o;
}

const QuantizeNote& Note(const QuantizedModel& q, const std::string& node) {
  for (const auto& n : q.report)
    if (n.node == node) return n;
  FAIL("no report line for " << node);
  throw std::logic_error("unreachable");
}

std::vector<NDArray> Run(const Symbol& s, const std::map<std::string, NDArray>& args,
                         const std::map<std::string, NDArray>& aux, const NDArray& data) {
  Predictor p(s, args, aux, {{"data", data.shape()}});
  p.SetInput("data", data);
  p.Forward();
  std::vector<NDArray> out;
  for (const auto& o : p.Outputs()) out.push_back(o.Copy());
  return out;
}

float MaxAbsDiff(const NDArray& a, const NDArray& b) {
  REQUIRE(a.shape() == b.shape());
  float m = 0;
  for (int64_t i = 0; i < a.Size(); ++i) m = std::max(m, std::fabs(a.fdata()[i] - b.fdata()[i]));
  return m;
}
float MaxAbs(const NDArray& a) {
  float m = 0;
  for (int64_t i = 0; i < a.Size(); ++i) m = std::max(m, std::fabs(a.fdata()[i]));
  return m;
}

}  // namespace

TEST_CASE("quantize: MXNet's graph form, offline int8 weights and calibrated ranges", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  Symbol h = Act(Conv(x, 8, "conv1"), "relu", "relu1");
  h = OpBuilder("Pooling").SetParam("kernel", "(2,2)").SetParam("stride", "(2,2)").SetParam("pool_type", "max")
          .SetInput("data", h).CreateSymbol("pool1");
  h = OpBuilder("Flatten").SetInput("data", h).CreateSymbol("flatten");
  h = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", h).CreateSymbol("fc1");
  Symbol net = OpBuilder("SoftmaxOutput").SetInput("data", h).CreateSymbol("softmax");
  const TShape shape({16, 3, 8, 8});
  const SharedModel m = GaussianModel(net, shape);
  const NDArray data = symbind::test::RandomArray(shape, 3);
  std::vector<std::map<std::string, NDArray>> calib;  // enough values for the 8001-bin histograms
  for (uint64_t s = 0; s < 4; ++s) calib.push_back({{"data", symbind::test::RandomArray(shape, 10 + s)}});

  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, ContribForm());
  const GraphView v(q.symbol);
  CHECK(v.op.at("data_quantize") == "_contrib_quantize_v2");
  CHECK(v.op.at("quantized_conv1") == "_contrib_quantized_conv");
  CHECK(v.inputs.at("quantized_conv1") ==
        std::vector<std::string>{"data_quantize", "conv1_weight_quantize", "conv1_bias_quantize", "data_quantize",
                                 "data_quantize", "conv1_weight_quantize_min", "conv1_weight_quantize_max",
                                 "conv1_bias_quantize_min", "conv1_bias_quantize_max"});
  CHECK(v.op.at("requantize_conv1") == "_contrib_requantize");
  CHECK(v.op.at("quantized_relu1") == "_contrib_quantized_act");
  CHECK(v.op.at("quantized_pool1") == "_contrib_quantized_pooling");
  CHECK(v.op.at("quantized_flatten") == "_contrib_quantized_flatten");
  CHECK(v.op.at("quantized_fc1") == "_contrib_quantized_fully_connected");
  CHECK(v.op.at("requantize_fc1") == "_contrib_requantize");
  CHECK(v.op.at("fc1_dequantize") == "_contrib_dequantize");
  CHECK(v.op.at("softmax") == "SoftmaxOutput");
  CHECK(v.inputs.at("softmax")[0] == "fc1_dequantize");
  CHECK_FALSE(v.has("conv1_weight"));
  CHECK(Note(q, "softmax").reason == "no int8 form");
  CHECK(Note(q, "pool1").quantized);

  // Parameters: the float weights are gone; int8 levels round(w * 127 / R) with R = max |w|.
  CHECK_FALSE(q.args.count("conv1_weight"));
  for (const std::string name : {"conv1_weight", "conv1_bias", "fc1_weight", "fc1_bias"}) {
    INFO(name);
    const NDArray& w = m.params.at(name);
    const NDArray& levels = q.args.at(name + "_quantize");
    REQUIRE(levels.dtype() == DType::kInt8);
    REQUIRE(levels.shape() == w.shape());
    const float r = MaxAbs(w);
    CHECK(q.args.at(name + "_quantize_min").fdata()[0] == -r);
    CHECK(q.args.at(name + "_quantize_max").fdata()[0] == r);
    int64_t off = 0;
    for (int64_t i = 0; i < w.Size(); ++i)
      off += levels.data<int8_t>()[i] != std::nearbyint(w.fdata()[i] * (127.0f / r));
    CHECK(off == 0);
  }

  // Calibrated ranges on the quantize and requantize nodes, from the float tensors they stand for.
  const Graph g(q.symbol);
  for (const auto& info : g.nodes()) {
    const Node& n = *info.node;
    if (n.is_variable()) continue;
    const std::string& op = n.attrs.op->name;
    if (op != "_contrib_quantize_v2" && op != "_contrib_requantize") continue;
    INFO(n.name());
    const std::string tensor = n.name() == "data_quantize" ? "data" : n.name().substr(11) + "_output";
    REQUIRE(q.calib_ranges.count(tensor));
    const CalibRange r = q.calib_ranges.at(tensor);
    CHECK(std::stof(n.attrs.dict.at("min_calib_range")) == r.min);
    CHECK(std::stof(n.attrs.dict.at("max_calib_range")) == r.max);
    CHECK(r.max > 0);
  }
  CHECK(q.calib_examples == 64);

  // Saved and loaded back, the model computes what the in-memory one does, bit for bit.
  const std::string prefix = symbind_test::TempPath("quantized-form");
  SaveCheckpoint(prefix, 0, q.symbol, q.args, q.aux);
  Symbol loaded;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(prefix, 0, &loaded, &args, &aux);
  CHECK(args.at("fc1_weight_quantize").dtype() == DType::kInt8);
  const auto a = Run(q.symbol, q.args, q.aux, data), b = Run(loaded, args, aux, data);
  CHECK(MaxAbsDiff(a[0], b[0]) == 0.0f);
  // And it is near the float32 model (probabilities of a 5-way softmax).
  CHECK(MaxAbsDiff(a[0], Run(net, m.params, m.aux, data)[0]) < 0.05f);
}

TEST_CASE("quantize: BatchNorm folded, Dropout removed, smart and full modes, exclusions", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  Symbol h = Conv(x, 8, "conv0");
  h = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", h).CreateSymbol("bn0");
  h = Act(h, "relu", "relu0");
  h = OpBuilder("Dropout").SetParam("p", 0.3).SetInput("data", h).CreateSymbol("drop0");
  h = Act(Conv(h, 8, "conv1"), "relu", "relu1");
  h = Act(h, "sigmoid", "sig");
  h = OpBuilder("Flatten").SetInput("data", h).CreateSymbol("flatten");
  Symbol net = OpBuilder("FullyConnected").SetParam("num_hidden", 6).SetInput("data", h).CreateSymbol("fc");
  const TShape shape({2, 3, 6, 6});
  const SharedModel m = GaussianModel(net, shape);
  const NDArray data = symbind::test::RandomArray(shape, 5);

  QuantizeOptions smart = ContribForm();
  smart.calib_mode = CalibMode::kNaive;
  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, {{{"data", data}}}, smart);
  CHECK(q.removed == std::vector<std::string>{"bn0", "drop0"});
  const GraphView v(q.symbol);
  CHECK_FALSE(v.has("bn0"));
  CHECK(v.has("conv0_weight_quantize"));  // the folded weight keeps the layer's parameter name
  CHECK(v.inputs.at("quantized_conv1")[0] == "quantized_relu0");  // Dropout gone: int8 throughout
  CHECK(Note(q, "sig").reason == "only relu has an int8 form among activations");
  CHECK(Note(q, "relu1").reason == "not between quantized layers (smart mode)");
  CHECK(Note(q, "flatten").reason == "not between quantized layers (smart mode)");
  CHECK(Note(q, "fc").quantized);
  CHECK(v.op.at("conv1_dequantize") == "_contrib_dequantize");
  CHECK(v.op.at("flatten_output_quantize") == "_contrib_quantize_v2");
  // Naive ranges: the float tensors' min and max.
  CHECK(q.calib_ranges.at("flatten_output").max <= 1.0f);  // after a sigmoid
  CHECK(q.calib_ranges.at("flatten_output").min >= 0.0f);

  const NDArray want = Run(net, m.params, m.aux, data)[0];
  CHECK(MaxAbsDiff(Run(q.symbol, q.args, q.aux, data)[0], want) < 0.03f * MaxAbs(want));

  QuantizeOptions full = smart;
  full.quantize_mode = "full";
  full.excluded_nodes = {"conv1"};
  const QuantizedModel f = QuantizeModel(net, m.params, m.aux, {{{"data", data}}}, full);
  CHECK(Note(f, "conv1").reason == "excluded by name");
  CHECK(Note(f, "relu1").quantized);  // full mode: every supported operator
  CHECK(Note(f, "flatten").quantized);
  CHECK(GraphView(f.symbol).op.at("conv1") == "Convolution");
  CHECK(f.args.count("conv1_weight"));
  CHECK(MaxAbsDiff(Run(f.symbol, f.args, f.aux, data)[0], want) < 0.03f * MaxAbs(want));

  QuantizeOptions bad = smart;
  bad.excluded_nodes = {"conv9"};
  CHECK_THROWS_WITH(QuantizeModel(net, m.params, m.aux, {{{"data", data}}}, bad),
                    Catch::Contains("excluded nodes not in the graph: conv9"));
  bad = smart;
  bad.excluded_ops = {"Convolutoin"};
  CHECK_THROWS_WITH(QuantizeModel(net, m.params, m.aux, {{{"data", data}}}, bad),
                    Catch::Contains("operators that do not exist: Convolutoin"));
  bad = smart;
  bad.quantized_dtype = "int4";
  CHECK_THROWS_AS(QuantizeModel(net, m.params, m.aux, {{{"data", data}}}, bad), ParamError);
  CHECK_THROWS_WITH(QuantizeModel(net, m.params, m.aux, {}, smart), Catch::Contains("needs calibration batches"));
  CHECK_THROWS_WITH(QuantizeModel(net, m.params, m.aux, {{{"pixels", data}}}, smart),
                    Catch::Contains("give no input 'data'"));

  // Without calibration the ranges come at run time, and the results stay close.
  QuantizeOptions none = ContribForm();
  none.calib_mode = CalibMode::kNone;
  const QuantizedModel n = QuantizeModel(net, m.params, m.aux, {}, none);
  CHECK(n.calib_ranges.empty());
  CHECK(MaxAbsDiff(Run(n.symbol, n.args, n.aux, data)[0], want) < 0.03f * MaxAbs(want));
}

TEST_CASE("quantize: residual adds, concat and global pooling stay int8, uint8 where ranges allow", "[quantize]") {
  const Symbol net = ResidualConcatNet(false);
  const TShape shape({3, 3, 8, 8});
  const SharedModel m = GaussianModel(net, shape);
  std::vector<std::map<std::string, NDArray>> calib;
  for (uint64_t s = 0; s < 3; ++s) calib.push_back({{"data", symbind::test::RandomArray(shape, 20 + s)}});
  const NDArray data = symbind::test::RandomArray(shape, 99);
  const NDArray want = Run(net, m.params, m.aux, data)[0];

  for (const std::string dtype : {"int8", "auto"}) {
    INFO(dtype);
    QuantizeOptions o = ContribForm();
    o.quantized_dtype = dtype;
    o.calib_mode = CalibMode::kNaive;  // the entropy search is tested in test_calibration.cc
    const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, o);
    const GraphView v(q.symbol);
    CHECK(v.op.at("quantized_add") == "_contrib_quantized_elemwise_add");
    CHECK(v.op.at("requantize_add") == "_contrib_requantize");
    CHECK(v.op.at("quantized_cat") == "_contrib_quantized_concat");
    CHECK(v.op.at("quantized_gap") == "_contrib_quantized_pooling");
    CHECK(v.op.at("fc") == "_contrib_dequantize");  // the output keeps its name
    CHECK(q.symbol.ListOutputs() == net.ListOutputs());
    for (const auto& note : q.report) CHECK(note.quantized);
    CHECK(q.calib_examples == 9);
    CHECK(GraphView(q.symbol).op.at("requantize_conv_c") == "_contrib_requantize");
    const Graph g(q.symbol);
    for (const auto& info : g.nodes())
      if (!info.node->is_variable() && info.node->attrs.dict.count("out_type"))
        CHECK(info.node->attrs.dict.at("out_type") == dtype);
    CHECK(MaxAbsDiff(Run(q.symbol, q.args, q.aux, data)[0], want) < 0.05f * MaxAbs(want));
  }
}

// MXNet's oneDNN flow (quantize_model_mkldnn): convolutions fused with what follows them into
// _sg_mkldnn_conv, float weights quantized per output channel, the requantize folded into the
// node's calibrated range. Per-channel weights keep a layer whose folded channels differ widely
// in scale, which one range per weight tensor does not.
TEST_CASE("quantize: the oneDNN form, _sg_mkldnn_conv with per-channel weights, loads back and runs", "[quantize]") {
  const Symbol net = ResidualConcatNet(true);
  const TShape shape({3, 3, 8, 8});
  SharedModel m = GaussianModel(net, shape);
  // bn_a's channel 0 is dead (relu never passes it) with a folded weight 100 times the others',
  // as BatchNorm over a channel of tiny variance leaves it: one range over the whole weight
  // leaves the other channels a level or two.
  {
    NDArray gamma = m.params.at("bn_a_gamma").Copy(), beta = m.params.at("bn_a_beta").Copy();
    gamma.fdata()[0] = 100 * std::fabs(gamma.fdata()[0]) + 1;
    beta.fdata()[0] = -1e4f;
    m.params["bn_a_gamma"] = gamma;
    m.params["bn_a_beta"] = beta;
  }
  std::vector<std::map<std::string, NDArray>> calib;
  for (uint64_t s = 0; s < 3; ++s) calib.push_back({{"data", symbind::test::RandomArray(shape, 20 + s)}});
  const NDArray data = symbind::test::RandomArray(shape, 99);
  const NDArray want = Run(net, m.params, m.aux, data)[0];

  QuantizeOptions o;
  o.calib_mode = CalibMode::kNaive;
  o.form = "onednn";
  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, o);
  const GraphView v(q.symbol);
  for (const std::string fused : {"quantized_relu_a", "quantized_relu_sum", "quantized_relu_c"}) {
    INFO(fused);
    REQUIRE(v.op.at(fused) == "_sg_mkldnn_conv");
    CHECK(!v.has("requantize_" + fused.substr(10)));  // folded into the node's calibrated range
  }
  CHECK(v.inputs.at("quantized_relu_a") ==
        std::vector<std::string>{"data_quantize", "conv_a_weight", "conv_a_bias", "data_quantize", "data_quantize"});
  // conv_b's sum reads relu_a's int8 levels and range.
  CHECK(v.inputs.at("quantized_relu_sum") ==
        std::vector<std::string>{"quantized_relu_a", "conv_b_weight", "conv_b_bias", "quantized_relu_a",
                                 "quantized_relu_a", "quantized_relu_a", "quantized_relu_a", "quantized_relu_a"});
  CHECK(v.op.at("quantized_cat") == "_contrib_quantized_concat");
  CHECK(v.op.at("fc") == "_contrib_dequantize");
  {
    // MXNet's scale alignment: the concat's two inputs share one range, the union of theirs
    // (relu_sum's and relu_c's calibrated ranges differ), so the concat copies their levels.
    const Graph graph(q.symbol);
    std::map<std::string, std::pair<float, float>> range;
    for (const auto& info : graph.nodes())
      if (info.node->attrs.dict.count("min_calib_range"))
        range[info.node->name()] = {std::stof(info.node->attrs.dict.at("min_calib_range")),
                                    std::stof(info.node->attrs.dict.at("max_calib_range"))};
    CHECK(range.at("quantized_relu_sum") == range.at("quantized_relu_c"));
    CHECK(range.at("quantized_relu_sum").second ==
          std::max(q.calib_ranges.at("relu_sum_output").max, q.calib_ranges.at("relu_c_output").max));
    CHECK(q.calib_ranges.at("relu_sum_output").max != q.calib_ranges.at("relu_c_output").max);
    CHECK(range.at("quantized_relu_a") != range.at("quantized_relu_c"));  // read by other layers too: its own
  }
  CHECK(q.symbol.ListOutputs() == net.ListOutputs());
  CHECK(q.args.at("conv_a_weight").dtype() == DType::kFloat32);  // folded, quantized at load
  CHECK(!q.args.count("conv_a_weight_quantize"));
  for (const std::string node : {"conv_a", "relu_a", "conv_b", "add", "relu_sum", "conv_c", "relu_c"}) {
    INFO(node);
    CHECK(Note(q, node).quantized);
  }
  const Graph g(q.symbol);
  for (const auto& info : g.nodes()) {
    const Node& n = *info.node;
    if (n.is_variable() || n.attrs.op->name != "_sg_mkldnn_conv") continue;
    INFO(n.name());
    CHECK(n.attrs.dict.at("quantized") == "true");
    CHECK(n.attrs.dict.count("min_calib_range"));
    CHECK(n.attrs.dict.count("max_calib_range"));
  }

  // MXNet's file form (the nested graphs in "subgraphs") reads back as the same graph.
  const std::string json = SaveSymbolJSON(q.symbol);
  CHECK(json.find("\"subgraphs\"") != std::string::npos);
  const Symbol reloaded = LoadSymbolJSON(json);
  CHECK(SaveSymbolJSON(reloaded) == json);
  const NDArray got = Run(q.symbol, q.args, q.aux, data)[0];
  const NDArray again = Run(reloaded, q.args, q.aux, data)[0];
  REQUIRE(got.Size() == again.Size());
  CHECK(std::memcmp(got.fdata(), again.fdata(), got.Size() * sizeof(float)) == 0);

  o.form = "contrib";
  const QuantizedModel per_tensor = QuantizeModel(net, m.params, m.aux, calib, o);
  const float onednn_error = MaxAbsDiff(got, want), contrib_error = MaxAbsDiff(Run(per_tensor.symbol, per_tensor.args, per_tensor.aux, data)[0], want);
  INFO("onednn " << onednn_error << ", contrib " << contrib_error << ", output " << MaxAbs(want));
  CHECK(onednn_error < 0.05f * MaxAbs(want));
  CHECK(onednn_error < 0.5f * contrib_error);

  o.form = "mkldnn";
  CHECK_THROWS_WITH(QuantizeModel(net, m.params, m.aux, calib, o),
                    Catch::Contains("quantized form 'mkldnn' is none of: contrib, onednn"));
}

TEST_CASE("quantize: MXNet's quantize_model_mkldnn steps, BatchNorm fused into _sg_mkldnn_conv", "[quantize]") {
  // As MXNet's Python quantize_model_mkldnn drives the C API: get_backend_symbol("MKLDNN_QUANTIZE")
  // on the float graph (BatchNorm still in it), QuantizeGraph, ranges from the float graph's
  // tensors, SetCalibTable, get_backend_symbol("MKLDNN_QUANTIZE") again.
  const Symbol net = ResidualConcatNet(true);
  const TShape shape({3, 3, 8, 8});
  const SharedModel m = GaussianModel(net, shape);
  const NDArray data = symbind::test::RandomArray(shape, 99);
  const NDArray want = Run(net, m.params, m.aux, data)[0];

  const Symbol fused = OneDnnBackendSymbol(net, "MKLDNN_QUANTIZE");
  const GraphView f(fused);
  REQUIRE(f.op.at("relu_a") == "_sg_mkldnn_conv");
  // Ours: the statistics last, as aux states; MXNet's file lists them after beta.
  CHECK(f.inputs.at("relu_a") == std::vector<std::string>{"data", "conv_a_weight", "conv_a_bias", "bn_a_gamma",
                                                          "bn_a_beta", "bn_a_moving_mean", "bn_a_moving_var"});
  CHECK(!f.has("bn_a"));
  CHECK(f.op.at("relu_sum") == "_sg_mkldnn_conv");
  CHECK(fused.ListAuxiliaryStates() == net.ListAuxiliaryStates());
  const std::string json = SaveSymbolJSON(fused);
  CHECK(json.find("\"with_bn\": \"true\"") != std::string::npos);
  const NDArray fused_out = Run(LoadSymbolJSON(json), m.params, m.aux, data)[0];
  CHECK(MaxAbsDiff(fused_out, want) <= 1e-5f * MaxAbs(want));
  CHECK(SaveSymbolJSON(OneDnnBackendSymbol(net, "MKLDNN")) == json);

  QuantizeGraphOptions go;
  go.excluded_nodes = {"fc"};
  for (const auto& kv : m.params) go.offline_params.insert(kv.first);
  const QuantizedGraph qg = QuantizeGraph(fused, go);
  CHECK(qg.offline.empty());  // the fused nodes quantize their weights themselves; fc stays float
  const GraphView q(qg.symbol);
  CHECK(q.inputs.at("quantized_relu_a") ==
        std::vector<std::string>{"data_quantize", "conv_a_weight", "conv_a_bias", "bn_a_gamma", "bn_a_beta",
                                 "data_quantize", "data_quantize", "bn_a_moving_mean", "bn_a_moving_var"});

  // Naive ranges of the float tensors the graph names, over three images.
  std::map<std::string, CalibRange> table;
  {
    std::vector<NodeEntry> entries;
    std::vector<std::string> names;
    const Graph g(net);
    for (const auto& info : g.nodes())
      for (uint32_t i = 0; i < (info.node->is_variable() ? 1u : info.node->num_outputs()); ++i) {
        const NodeEntry e{info.node, i};
        if (std::find(qg.calib_names.begin(), qg.calib_names.end(), EntryName(e)) == qg.calib_names.end()) continue;
        entries.push_back(e);
        names.push_back(EntryName(e));
      }
    REQUIRE(names.size() == qg.calib_names.size());
    for (uint64_t seed = 0; seed < 3; ++seed) {
      const std::vector<NDArray> outs =
          Run(Symbol::FromEntries(entries), m.params, m.aux, symbind::test::RandomArray(shape, 20 + seed));
      for (size_t k = 0; k < names.size(); ++k) {
        const auto [lo, hi] = quant::MinMax(outs[k].fdata(), outs[k].Size());
        auto it = table.find(names[k]);
        if (it == table.end()) table[names[k]] = CalibRange{lo, hi};
        else it->second = CalibRange{std::min(it->second.min, lo), std::max(it->second.max, hi)};
      }
    }
  }
  const Symbol calibrated = OneDnnBackendSymbol(SetCalibTable(qg.symbol, table), "MKLDNN_QUANTIZE");
  const GraphView c(calibrated);
  CHECK(!c.has("requantize_relu_a"));  // folded into the node's range
  const Graph cg(calibrated);
  for (const auto& info : cg.nodes())
    if (!info.node->is_variable() && info.node->attrs.op->name == "_sg_mkldnn_conv") {
      INFO(info.node->name());
      CHECK(info.node->attrs.dict.count("min_calib_range"));
    }
  const NDArray got = Run(LoadSymbolJSON(SaveSymbolJSON(calibrated)), m.params, m.aux, data)[0];
  INFO("max |int8 - float32| " << MaxAbsDiff(got, want) << " of " << MaxAbs(want));
  CHECK(MaxAbsDiff(got, want) < 0.05f * MaxAbs(want));

  // ResNet v1's pattern: convolution, BatchNorm, the shortcut added, relu: with_bn and with_sum.
  const Symbol x = Act(Conv(Symbol::Variable("data"), 3, "conv_x"), "relu", "relu_x");
  const Symbol y = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", Conv(x, 3, "conv_y")).CreateSymbol("bn_y");
  const Symbol block = Act(OpBuilder("elemwise_add").SetInput("lhs", y).SetInput("rhs", x).CreateSymbol("add_y"), "relu", "relu_y");
  const SharedModel bm = GaussianModel(block, shape);
  const Symbol block_fused = OneDnnBackendSymbol(block, "MKLDNN_QUANTIZE");
  const GraphView bf(block_fused);
  REQUIRE(bf.op.at("relu_y") == "_sg_mkldnn_conv");
  CHECK(bf.inputs.at("relu_y") == std::vector<std::string>{"relu_x", "conv_y_weight", "conv_y_bias", "bn_y_gamma", "bn_y_beta",
                                                           "relu_x", "bn_y_moving_mean", "bn_y_moving_var"});
  const NDArray block_want = Run(block, bm.params, bm.aux, data)[0];
  CHECK(MaxAbsDiff(Run(LoadSymbolJSON(SaveSymbolJSON(block_fused)), bm.params, bm.aux, data)[0], block_want) <=
        1e-5f * MaxAbs(block_want));
  const QuantizedGraph bq = QuantizeGraph(block_fused, QuantizeGraphOptions{});
  CHECK(GraphView(bq.symbol).inputs.at("quantized_relu_y") ==
        std::vector<std::string>{"requantize_relu_x", "conv_y_weight", "conv_y_bias", "bn_y_gamma", "bn_y_beta",
                                 "requantize_relu_x", "requantize_relu_x", "requantize_relu_x", "requantize_relu_x",
                                 "requantize_relu_x", "bn_y_moving_mean", "bn_y_moving_var"});
  std::map<std::string, CalibRange> block_table;
  for (const std::string& name : bq.calib_names) {
    const Symbol tensor = name == "data" ? Symbol::Variable("data") : name == "relu_x_output" ? x : block;
    const NDArray t = name == "data" ? data : Run(tensor, bm.params, bm.aux, data)[0];
    const auto [lo, hi] = quant::MinMax(t.fdata(), t.Size());
    block_table[name] = CalibRange{lo, hi};
  }
  const Symbol block_int8 = OneDnnBackendSymbol(SetCalibTable(bq.symbol, block_table), "MKLDNN_QUANTIZE");
  const NDArray block_got = Run(LoadSymbolJSON(SaveSymbolJSON(block_int8)), bm.params, bm.aux, data)[0];
  INFO("block: max |int8 - float32| " << MaxAbsDiff(block_got, block_want) << " of " << MaxAbs(block_want));
  CHECK(MaxAbsDiff(block_got, block_want) < 0.05f * MaxAbs(block_want));

  CHECK_THROWS_WITH(OneDnnBackendSymbol(net, "TensorRT"),
                    Catch::Contains("subgraph backend 'TensorRT' is not supported by symbind (it has MKLDNN and MKLDNN_QUANTIZE)"));
}

TEST_CASE("quantize: int8 LeNet on Fashion-MNIST within 0.5 points of float32", "[quantize][mnist]") {
  if (!std::ifstream(DefaultFashionMNISTDir() + "/t10k-images-idx3-ubyte.gz")) {
    WARN("Fashion-MNIST not found at " << DefaultFashionMNISTDir() << " (Debian package dataset-fashion-mnist); skipped");
    return;
  }
  Symbol lenet;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(std::string(SYMBIND_SOURCE_DIR) + "/models/lenet-fashion-mnist/lenet", 8, &lenet, &args, &aux);
  const MNISTData train = LoadFashionMNIST(true), test = LoadFashionMNIST(false);
  auto images = [](const MNISTData& d, int64_t from, int64_t count) {
    NDArray out(TShape({count, 1, 28, 28}));
    std::copy(d.images.fdata() + from * 784, d.images.fdata() + (from + count) * 784, out.fdata());
    return out;
  };
  std::vector<std::map<std::string, NDArray>> calib;
  for (int64_t i = 0; i < 4; ++i) calib.push_back({{"data", images(train, i * 64, 64)}});
  QuantizeOptions contrib;
  contrib.form = "contrib";
#ifdef SYMBIND_SANITIZER_BUILD
  const int64_t n = 1000;  // the int8 kernels run unvectorised under the sanitizers
#else
  const int64_t n = 10000;
#endif
  const NDArray x = images(test, 0, n);
  auto accuracy = [&](const Symbol& s, const std::map<std::string, NDArray>& a, const std::map<std::string, NDArray>& x_aux) {
    const NDArray prob = Run(s, a, x_aux, x)[0];
    int64_t right = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float* row = prob.fdata() + i * 10;
      right += std::max_element(row, row + 10) - row == int64_t(test.labels.fdata()[i]);
    }
    return double(right) / double(n);
  };
  const double fp32 = accuracy(lenet, args, aux);
  CHECK(fp32 > 0.89);
  for (const QuantizeOptions& o : {QuantizeOptions{}, contrib}) {
    const QuantizedModel q = QuantizeModel(lenet, args, aux, calib, o);
    CHECK(q.calib_examples == 256);
    const double int8 = accuracy(q.symbol, q.args, q.aux);
    INFO("form " << o.form << ": float32 " << fp32 << ", int8 " << int8);
    CHECK(std::fabs(int8 - fp32) <= 0.005);
  }
}

namespace {
// The quantized model's first output on `data` with the Predictor's graph pass `pass` and
// without it: the same bits. Returns the nodes the pass fused away.
std::vector<std::string> FusedAndPlainAgree(const QuantizedModel& q, const TShape& shape, const NDArray& data,
                                            const std::string& pass = "fuse_quantized_activations") {
  Predictor fused(q.symbol, q.args, q.aux, {{"data", shape}});
  PredictorOptions plain_options;
  plain_options.disabled_passes = {pass};
  Predictor plain(q.symbol, q.args, q.aux, {{"data", shape}}, plain_options);
  CHECK(plain.rewritten(pass).empty());
  for (Predictor* p : {&fused, &plain}) {
    p->SetInput("data", data);
    p->Forward();
  }
  REQUIRE(fused.Outputs()[0].shape() == plain.Outputs()[0].shape());
  CHECK(std::memcmp(fused.Outputs()[0].raw_data(), plain.Outputs()[0].raw_data(), plain.Outputs()[0].bytes()) == 0);
  return fused.rewritten(pass);
}

QuantizeOptions NaiveCalibration() {
  QuantizeOptions o;
  o.calib_mode = CalibMode::kNaive;
  return o;
}
// `net` with Gaussian weights for `shape`, quantized with `o` over one random input of that
// shape (seed `calib_seed`).
QuantizedModel QuantizedGaussian(const Symbol& net, const TShape& shape, uint64_t calib_seed, const QuantizeOptions& o) {
  const SharedModel m = GaussianModel(net, shape);
  std::vector<std::map<std::string, NDArray>> calib{{{"data", symbind::test::RandomArray(shape, calib_seed)}}};
  return QuantizeModel(net, m.params, m.aux, calib, o);
}
}  // namespace

// MobileNet v2's relu6 has no int8 form in MXNet's graphs: the quantized graph dequantizes,
// clips and quantizes again. The Predictor's fuse_quantized_activations pass runs those three
// nodes as one _fused_quantized_act; the outputs are the same bits with it as without it.
TEST_CASE("quantize: relu6, leaky and prelu between quantized layers run as one fused node each, the same bits", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  auto relu6 = [](const Symbol& s, const std::string& name) {
    return OpBuilder("clip").SetParam("a_min", 0).SetParam("a_max", 6).SetInput("data", s).CreateSymbol(name);
  };
  Symbol a = relu6(Conv(x, 8, "conv_a"), "relu6_a");
  Symbol b = OpBuilder("LeakyReLU").SetParam("act_type", "leaky").SetParam("slope", 0.1f)
                 .SetInput("data", Conv(a, 8, "conv_b")).CreateSymbol("leaky_b");
  Symbol c = Act(Conv(b, 8, "conv_c"), "relu", "relu_c");
  Symbol d = OpBuilder("LeakyReLU").SetParam("act_type", "prelu").SetInput("data", Conv(c, 8, "conv_d"))
                 .CreateSymbol("prelu_d");
  Symbol net = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", Conv(d, 4, "conv_e"))
                   .CreateSymbol("fc");
  const TShape shape({2, 3, 9, 9});
  const SharedModel m = GaussianModel(net, shape);
  std::vector<std::map<std::string, NDArray>> calib{{{"data", symbind::test::RandomArray(shape, 31)}}};
  for (const std::string dtype : {"int8", "auto"}) {
    INFO(dtype);
    QuantizeOptions o = ContribForm();
    o.quantized_dtype = dtype;
    o.calib_mode = CalibMode::kNaive;
    const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, o);
    const GraphView v(q.symbol);
    REQUIRE(v.op.at("relu6_a") == "clip");  // float32 in MXNet's form, between dequantize and quantize
    // relu6_a, leaky_b and prelu_d with their dequantize nodes (relu_c is MXNet's quantized_act
    // already); prelu_d's gamma, one slope per channel, stays an argument.
    const std::vector<std::string> rewritten = FusedAndPlainAgree(q, shape, symbind::test::RandomArray(shape, 32));
    CHECK(rewritten.size() == 6);
    CHECK(std::count(rewritten.begin(), rewritten.end(), "prelu_d") == 1);
    CHECK(std::count(rewritten.begin(), rewritten.end(), "relu6_a") == 1);
    CHECK(std::count(rewritten.begin(), rewritten.end(), "leaky_b") == 1);
  }
}

// Pre-activation ResNet's BatchNorm and relu after a residual add stay quantized nodes of their own
// in MXNet's graphs (nothing to fold them into); the Predictor's fuse_quantized_activations pass
// runs each pair as one _fused_quantized_batch_norm_relu: the same bits with it as without it.
TEST_CASE("quantize: a quantized BatchNorm and the relu after it run as one fused node, the same bits", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  Symbol a = Act(Conv(x, 8, "conv_a"), "relu", "relu_a");
  Symbol sum = OpBuilder("elemwise_add").SetInput("lhs", Conv(a, 8, "conv_b")).SetInput("rhs", a).CreateSymbol("sum");
  Symbol bn = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", sum).CreateSymbol("bn");
  Symbol net = OpBuilder("FullyConnected").SetParam("num_hidden", 5)
                   .SetInput("data", Conv(Act(bn, "relu", "relu_bn"), 4, "conv_c")).CreateSymbol("fc");
  const TShape shape({2, 3, 9, 9});
  const QuantizedModel q = QuantizedGaussian(net, shape, 41, NaiveCalibration());
  const GraphView v(q.symbol);
  REQUIRE(v.op.count("quantized_bn"));
  REQUIRE(v.op.at("quantized_bn") == "_contrib_quantized_batch_norm");
  const std::vector<std::string> rewritten = FusedAndPlainAgree(q, shape, symbind::test::RandomArray(shape, 42));
  CHECK(std::count(rewritten.begin(), rewritten.end(), "quantized_bn") == 1);
}

namespace {
// Whether fuse_quantized_inverted_residuals fuses blocks here (FormsQuantizedInvertedResidual).
bool BandPathRuns() { return ActiveVnniVbmi() && conv::FastPathsEnabled(); }

// The graph with its blocks fused and without give the same bits on 1 and 2 threads; `blocks`
// are fused where the band path runs (their expansion and depthwise nodes folded away).
void FusedBlocksAgree(const QuantizedModel& q, const TShape& shape, uint64_t seed, size_t blocks) {
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<std::string> rewritten =
        FusedAndPlainAgree(q, shape, symbind::test::RandomArray(shape, seed), "fuse_quantized_inverted_residuals");
    CHECK(rewritten.size() == (BandPathRuns() ? blocks * 2 : 0u));
  }
}
}  // namespace

// MobileNet v2's inverted residual blocks in MXNet's oneDNN int8 form: a 1x1 expansion, a 3x3
// depthwise layer and a 1x1 projection, each a quantized _sg_mkldnn_conv (the block's input as
// the projection's sum where the block adds it). The Predictor's fuse_quantized_inverted_residuals
// pass runs each block as one node, a band of rows at a time, on CPUs with AVX512-VNNI and VBMI
// (elsewhere it leaves the graph as it is): the same bits with it as without it, for any number
// of threads, at odd sizes, with stride 2 and without the sum.
TEST_CASE("quantize: int8 inverted residual blocks run as one node each, the same bits", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  auto relu6 = [](const Symbol& s, const std::string& name) {
    return OpBuilder("clip").SetParam("a_min", 0).SetParam("a_max", 6).SetInput("data", s).CreateSymbol(name);
  };
  // Block `name`: c channels in, `hidden` expanded, `out` out; the sum when it keeps the shape.
  // Without `depthwise_relu6` the depthwise levels are int8 (flipped into the projection's quads).
  auto block = [&](const Symbol& in, int c, int hidden, int out, int stride, const std::string& name,
                   bool depthwise_relu6 = true) {
    Symbol e = relu6(Conv(in, hidden, name + "_expand", "(1,1)", "(0,0)"), name + "_relu6_a");
    Symbol d = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("pad", "(1,1)")
                   .SetParam("stride", stride == 1 ? "(1,1)" : "(2,2)").SetParam("num_filter", hidden)
                   .SetParam("num_group", hidden).SetInput("data", e).CreateSymbol(name + "_depthwise");
    if (depthwise_relu6) d = relu6(d, name + "_relu6_b");
    Symbol p = Conv(d, out, name + "_project", "(1,1)", "(0,0)");
    if (stride == 1 && c == out)
      p = OpBuilder("elemwise_add").SetInput("lhs", p).SetInput("rhs", in).CreateSymbol(name + "_add");
    return p;
  };
  Symbol stem = relu6(Conv(x, 8, "stem"), "stem_relu6");
  Symbol b1 = block(stem, 8, 24, 8, 1, "b1");   // the sum
  Symbol b2 = block(b1, 8, 40, 16, 2, "b2");    // stride 2 to odd rows
  Symbol b3 = block(b2, 16, 48, 16, 1, "b3");   // the sum again
  Symbol b4 = block(b3, 16, 30, 12, 1, "b4", false);  // no sum; int8 depthwise levels, a quad of 2 channels
  Symbol net = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", b4).CreateSymbol("fc");
  for (const TShape& shape : {TShape({1, 3, 15, 15}), TShape({2, 3, 14, 9})}) {
    INFO(shape);
    const QuantizedModel q = QuantizedGaussian(net, shape, 51, NaiveCalibration());
    const GraphView v(q.symbol);
    REQUIRE(v.op.at("quantized_b1_add") == "_sg_mkldnn_conv");  // the projection with the sum
    FusedBlocksAgree(q, shape, 52, 4);
    if (!BandPathRuns()) continue;
    // The fused node without its band path (the reference kernels) runs the three nodes.
    const PassesResult fused = RunGraphPasses(q.symbol, q.args, q.aux, {});
    REQUIRE(fused.rewritten.at("fuse_quantized_inverted_residuals").size() == 4 * 2);
    const NDArray data = symbind::test::RandomArray(shape, 53);
    const NDArray want = Run(q.symbol, q.args, q.aux, data)[0];
    conv::SetFastPathsEnabled(false);
    const NDArray got = Run(fused.symbol, fused.args, fused.aux, data)[0];
    conv::SetFastPathsEnabled(true);
    REQUIRE(got.shape() == want.shape());
    CHECK(std::memcmp(got.raw_data(), want.raw_data(), want.bytes()) == 0);
  }
}

// The same for MobileNet v2 whole (16 blocks with an expansion), quantized as a user would.
TEST_CASE("quantize: int8 MobileNet v2 with its blocks fused gives the same bits", "[quantize]") {
  const Symbol net = LoadSymbolFile(std::string(SYMBIND_SOURCE_DIR) + "/bench/models/mobilenet-v2-symbol.json");
  const TShape shape({1, 3, 64, 64});
  const QuantizedModel q = QuantizedGaussian(net, shape, 61, QuantizeOptions{});
  FusedBlocksAgree(q, shape, 62, 16);
}

// Per-layer error: each quantized convolution's requantized output (read through a dequantize
// probe) against the float32 layer's output on the same input, as relative RMS error
// ||int8 - fp32|| / ||fp32||. Errors add up along the path (each layer reads its predecessor's
// rounded levels); docs/quantization.md states the tolerance checked here: 1.5% for the first
// quantized layer on the path, 0.6% more for each one before it, on a net calibrated on inputs
// of the distribution it runs on.
TEST_CASE("quantize: per-layer error of each quantized convolution within the documented tolerance", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  Symbol a = Act(Conv(x, 16, "conv1"), "relu", "relu1");
  Symbol b = Act(Conv(a, 16, "conv2"), "relu", "relu2");
  Symbol sum = OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", Conv(b, 16, "conv3")).CreateSymbol("add");
  Symbol c = Act(Conv(sum, 32, "conv4", "(3,3)", "(1,1)"), "relu", "relu4");
  Symbol d = Act(Conv(c, 32, "conv5", "(1,1)", "(0,0)"), "relu", "relu5");
  Symbol net = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", d).CreateSymbol("fc");
  const TShape shape({2, 3, 16, 16});
  const SharedModel m = GaussianModel(net, shape);
  std::vector<std::map<std::string, NDArray>> calib;
  for (uint64_t s = 0; s < 4; ++s) calib.push_back({{"data", symbind::test::RandomArray(shape, 40 + s)}});
  QuantizeOptions o = ContribForm();
  o.calib_mode = CalibMode::kNaive;
  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, o);
  const std::vector<std::string> layers = {"conv1", "conv2", "conv3", "conv4", "conv5"};
  // Probes: a dequantize of each layer's requantized levels, as the graph's own heads.
  std::vector<Symbol> probes;
  const Symbol internals = q.symbol.GetInternals();
  for (const std::string& layer : layers) {
    const std::string r = "requantize_" + layer;
    probes.push_back(Symbol::Create("_contrib_dequantize", layer + "_probe", {}, {},
                                    {internals[r + "_output0"], internals[r + "_output1"], internals[r + "_output2"]}));
  }
  const NDArray data = symbind::test::RandomArray(shape, 50);
  Predictor int8(Symbol::Group(probes), q.args, q.aux, {{"data", shape}});
  int8.SetInput("data", data);
  int8.Forward();
  PredictorOptions fp32_options;
  for (const std::string& layer : layers) fp32_options.outputs.push_back(layer + "_output");
  Predictor fp32(net, m.params, m.aux, {{"data", shape}}, fp32_options);
  fp32.SetInput("data", data);
  fp32.Forward();
  for (size_t i = 0; i < layers.size(); ++i) {
    const NDArray& got = int8.Outputs()[i];
    const NDArray& want = fp32.Outputs()[i];
    REQUIRE(got.shape() == want.shape());
    double err = 0, norm = 0;
    for (int64_t k = 0; k < want.Size(); ++k) {
      err += std::pow(double(got.fdata()[k]) - double(want.fdata()[k]), 2);
      norm += std::pow(double(want.fdata()[k]), 2);
    }
    const double rel = std::sqrt(err / norm);
    INFO(layers[i] << ": relative RMS error " << rel);
    std::cout << "per-layer int8 error " << layers[i] << ": " << rel << "\n";
    CHECK(rel <= 0.015 + 0.006 * static_cast<double>(i));  // conv1..conv5 lie on one path
  }
}

// A BatchNorm the folding leaves (after a residual add: pre-activation ResNet's) becomes MXNet's
// _contrib_quantized_batch_norm between quantized layers, calibrated on its own output (no
// requantize after it, as in MXNet), and the int8 graph stays close to float32.
TEST_CASE("quantize: a BatchNorm after a residual add becomes _contrib_quantized_batch_norm", "[quantize]") {
  Symbol x = Symbol::Variable("data");
  Symbol a = Conv(x, 8, "conv_a");
  Symbol sum = OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", Conv(a, 8, "conv_b")).CreateSymbol("add");
  Symbol bn = OpBuilder("BatchNorm").SetParam("fix_gamma", false).SetInput("data", sum).CreateSymbol("bn");
  Symbol net = Conv(Act(bn, "relu", "relu"), 4, "conv_c");
  const TShape shape({2, 3, 8, 8});
  const SharedModel m = GaussianModel(net, shape);
  std::vector<std::map<std::string, NDArray>> calib{{{"data", symbind::test::RandomArray(shape, 61)}},
                                                    {{"data", symbind::test::RandomArray(shape, 62)}}};
  QuantizeOptions o = ContribForm();
  o.calib_mode = CalibMode::kNaive;
  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, o);
  const GraphView v(q.symbol);
  REQUIRE(v.op.at("quantized_bn") == "_contrib_quantized_batch_norm");
  CHECK_FALSE(v.has("requantize_bn"));
  CHECK(v.inputs.at("quantized_bn") == std::vector<std::string>{"requantize_add", "bn_gamma", "bn_beta", "requantize_add",
                                                                "requantize_add", "bn_moving_mean", "bn_moving_var"});
  const Graph g(q.symbol);
  for (const auto& info : g.nodes())
    if (info.node->name() == "quantized_bn") {
      CHECK(info.node->attrs.dict.count("min_calib_range"));
      CHECK(info.node->attrs.dict.count("max_calib_range"));
    }
  CHECK(q.symbol.ListAuxiliaryStates() == net.ListAuxiliaryStates());
  const NDArray data = symbind::test::RandomArray(shape, 63);
  const NDArray want = Run(net, m.params, m.aux, data)[0];
  CHECK(MaxAbsDiff(Run(q.symbol, q.args, q.aux, data)[0], want) < 0.05f * MaxAbs(want));
}

TEST_CASE("quantize: an LSTM becomes MXNet's int8 LSTM, its data quantized with a zero point", "[quantize][rnn]") {
  Symbol x = Symbol::Variable("data");
  Symbol h = OpBuilder("RNN").SetParam("mode", "lstm").SetParam("state_size", 6).SetParam("num_layers", 2)
                 .SetParam("bidirectional", true).SetInput("data", x).CreateSymbol("lstm");
  h = OpBuilder("FullyConnected").SetParam("num_hidden", 4).SetInput("data", h).CreateSymbol("fc");
  Symbol net = OpBuilder("SoftmaxOutput").SetInput("data", h).CreateSymbol("softmax");
  const TShape shape({5, 3, 7});
  SharedModel m = GaussianModel(net, shape);
  const NDArray data = symbind::test::RandomArray(shape, 21);
  std::vector<std::map<std::string, NDArray>> calib;
  for (uint64_t s = 0; s < 4; ++s) calib.push_back({{"data", symbind::test::RandomArray(shape, 30 + s)}});

  const QuantizedModel q = QuantizeModel(net, m.params, m.aux, calib, ContribForm());
  const GraphView v(q.symbol);
  CHECK(v.op.at("data_quantize") == "_contrib_quantize_asym");
  CHECK(v.op.at("quantized_lstm") == "_contrib_quantized_rnn");
  CHECK(v.inputs.at("quantized_lstm") == std::vector<std::string>{"data_quantize", "lstm_parameters", "lstm_state",
                                                                   "lstm_state_cell", "data_quantize", "data_quantize"});
  // Its float32 output feeds the quantized FullyConnected through a quantize of its own.
  CHECK(v.op.at("lstm_output_quantize") == "_contrib_quantize_v2");
  CHECK(v.inputs.at("lstm_output_quantize") == std::vector<std::string>{"quantized_lstm"});
  CHECK(v.op.at("quantized_fc") == "_contrib_quantized_fully_connected");
  CHECK(q.args.count("lstm_parameters"));  // the weights stay float32
  const Graph g(q.symbol);
  for (const auto& info : g.nodes()) {
    const Node& n = *info.node;
    if (n.name() != "data_quantize") continue;
    CHECK(std::stof(n.attrs.dict.at("min_calib_range")) == q.calib_ranges.at("data").min);
    CHECK(std::stof(n.attrs.dict.at("max_calib_range")) == q.calib_ranges.at("data").max);
  }
  // Saved and loaded, it runs, near the float32 model.
  const std::string prefix = symbind_test::TempPath("quantized-lstm");
  SaveCheckpoint(prefix, 0, q.symbol, q.args, q.aux);
  Symbol loaded;
  std::map<std::string, NDArray> args, aux;
  LoadCheckpoint(prefix, 0, &loaded, &args, &aux);
  const auto a = Run(loaded, args, aux, data);
  CHECK(MaxAbsDiff(a[0], Run(net, m.params, m.aux, data)[0]) < 0.05f);
  // A GRU has no int8 form: it stays float32, with the reason.
  Symbol gru = OpBuilder("RNN").SetParam("mode", "gru").SetParam("state_size", 6).SetParam("num_layers", 1)
                   .SetInput("data", x).CreateSymbol("gru");
  gru = OpBuilder("FullyConnected").SetParam("num_hidden", 4).SetInput("data", gru).CreateSymbol("fc");
  const SharedModel mg = GaussianModel(gru, shape);
  const QuantizedModel qg = QuantizeModel(gru, mg.params, mg.aux, calib, ContribForm());
  CHECK_FALSE(Note(qg, "gru").quantized);
  CHECK(Note(qg, "gru").reason == "only LSTM has an int8 form among RNNs");
}
