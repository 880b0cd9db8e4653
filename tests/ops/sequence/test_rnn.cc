// RNN (rnn_relu, rnn_tanh, lstm, gru; multi-layer, bidirectional, state_outputs): forward and
// backward against PyTorch goldens (scripts/gen_rnn_goldens.py), gradients against finite
// differences, dropout between layers, shape inference, the rejected cuDNN-only options and
// sequence_length against each sequence run on its own.
#include <fstream>

#include <nlohmann/json.hpp>

#include <symbind/io/npy.h>
#include <symbind/io/symbol_json.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/rnn/";

KwArgs RNNParams(const std::string& mode, int layers, bool bidirectional, bool state_outputs, int hidden,
                 float p = 0) {
  return {{"mode", mode}, {"num_layers", std::to_string(layers)},
          {"bidirectional", bidirectional ? "True" : "False"},
          {"state_outputs", state_outputs ? "True" : "False"}, {"state_size", std::to_string(hidden)},
          {"p", std::to_string(p)}};
}

// Packed parameter count from MXNet's GetRnnParamSize formula, written out independently.
int64_t PackedSize(int64_t gates, int64_t layers, int64_t dirs, int64_t input, int64_t hidden) {
  const int64_t size = hidden * dirs * gates;
  return (input + hidden + 2) * size + (layers - 1) * (hidden * dirs + hidden + 2) * size;
}

std::map<std::string, NDArray> RandomInputs(const std::string& mode, int layers, int dirs, int64_t T,
                                            int64_t N, int64_t C, int64_t H, uint64_t seed) {
  const int64_t gates = mode == "lstm" ? 4 : mode == "gru" ? 3 : 1;
  std::map<std::string, NDArray> in{
      {"data", RandomArray({T, N, C}, seed)},
      {"parameters", RandomArray({PackedSize(gates, layers, dirs, C, H)}, seed + 1, -0.7f, 0.7f)},
      {"state", RandomArray({layers * dirs, N, H}, seed + 2)}};
  if (mode == "lstm") in["state_cell"] = RandomArray({layers * dirs, N, H}, seed + 3);
  return in;
}
}  // namespace

TEST_CASE("RNN matches PyTorch nn.RNN/LSTM/GRU forward and backward on the goldens", "[ops][rnn]") {
  std::ifstream f(kGoldens + "manifest.json");
  REQUIRE(f.good());
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 6);
  for (const auto& c : manifest["cases"]) {
    const std::string name = c["name"], mode = c["mode"];
    INFO(name);
    auto load = [&](const std::string& what) { return LoadNpy(kGoldens + name + "_" + what + ".npy"); };
    const bool lstm = mode == "lstm", state_outputs = c["state_outputs"];
    std::map<std::string, NDArray> inputs{
        {"data", load("data")}, {"parameters", load("parameters")}, {"state", load("state")}};
    if (lstm) inputs["state_cell"] = load("state_cell");
    auto exec = BindSingleOp("RNN", RNNParams(mode, c["num_layers"], c["bidirectional"], state_outputs,
                                              c["state_size"]),
                             inputs);
    exec->Forward(true);
    std::vector<std::string> outs{"output"};
    if (state_outputs) outs.push_back("state_output");
    if (state_outputs && lstm) outs.push_back("statecell_output");
    REQUIRE(exec->outputs().size() == outs.size());
    std::vector<NDArray> heads;
    for (size_t k = 0; k < outs.size(); ++k) {
      RequireClose(exec->outputs()[k], load(outs[k]), 1e-5f, 1e-4f, outs[k]);
      heads.push_back(load(k == 0 ? "head_output" : k == 1 ? "head_state" : "head_statecell"));
    }
    exec->Backward(heads);
    auto grads = exec->grad_dict();
    RequireClose(grads.at("op_data"), load("grad_data"), 1e-5f, 1e-4f, "grad data");
    RequireClose(grads.at("op_parameters"), load("grad_parameters"), 1e-5f, 1e-4f, "grad parameters");
    RequireClose(grads.at("op_state"), load("grad_state"), 1e-5f, 1e-4f, "grad state");
    if (lstm) RequireClose(grads.at("op_state_cell"), load("grad_state_cell"), 1e-5f, 1e-4f, "grad state_cell");
  }
}

TEST_CASE("RNN gradients match finite differences in every mode", "[ops][rnn]") {
  struct Case { std::string mode; int layers; bool bidirectional, state_outputs; };
  for (const Case& c : {Case{"lstm", 2, true, true}, Case{"gru", 2, true, true}, Case{"rnn_tanh", 2, true, true},
                        Case{"rnn_relu", 1, false, true}, Case{"lstm", 1, false, false}}) {
    INFO(c.mode << " layers " << c.layers << " bidirectional " << c.bidirectional);
    GradCheckOptions opt;
    opt.eps = 2e-3f;
    CheckGradients("RNN", RNNParams(c.mode, c.layers, c.bidirectional, c.state_outputs, 2),
                   RandomInputs(c.mode, c.layers, c.bidirectional ? 2 : 1, 3, 2, 2, 2, 11), opt);
  }
  // Only the parameters differentiated (SimpleBind's default for an argument named *data).
  GradCheckOptions params_only;
  params_only.no_grad = {"data", "state", "state_cell"};
  CheckGradients("RNN", RNNParams("lstm", 2, false, false, 2), RandomInputs("lstm", 2, 1, 3, 2, 2, 2, 12), params_only);
}

TEST_CASE("RNN dropout acts between layers in training only, with a matching gradient", "[ops][rnn]") {
  const auto inputs = RandomInputs("gru", 2, 1, 4, 2, 3, 3, 5);
  NDArray plain = RunForward("RNN", RNNParams("gru", 2, false, false, 3), inputs);
  // Inference ignores p.
  RequireClose(RunForward("RNN", RNNParams("gru", 2, false, false, 3, 0.5f), inputs), plain, 0, 0);
  NDArray dropped = RunForward("RNN", RNNParams("gru", 2, false, false, 3, 0.5f), inputs, 0, true);
  bool differs = false;
  for (int64_t i = 0; i < plain.Size(); ++i) differs |= plain.GetFlat(i) != dropped.GetFlat(i);
  CHECK(differs);
  // One layer: nothing to drop.
  const auto one = RandomInputs("lstm", 1, 1, 3, 2, 2, 2, 6);
  RequireClose(RunForward("RNN", RNNParams("lstm", 1, false, false, 2, 0.5f), one, 0, true),
               RunForward("RNN", RNNParams("lstm", 1, false, false, 2), one), 0, 0);
  GradCheckOptions opt;
  opt.is_train = true;
  CheckGradients("RNN", RNNParams("lstm", 2, true, false, 2, 0.5f), RandomInputs("lstm", 2, 2, 3, 2, 2, 2, 7), opt);
}

TEST_CASE("RNN infers parameter, state and output shapes and lists MXNet's names", "[ops][rnn]") {
  Symbol s = SingleOpSymbol("RNN", RNNParams("lstm", 2, true, true, 5));
  CHECK(s.ListArguments() == std::vector<std::string>{"op_data", "op_parameters", "op_state", "op_state_cell"});
  CHECK(s.ListOutputs() == std::vector<std::string>{"op_output", "op_state_output", "op_statecell_output"});
  ShapeInferResult r = InferShape(s, {{"op_data", TShape({7, 3, 4})}});
  CHECK(r.arg_shapes[1] == TShape({PackedSize(4, 2, 2, 4, 5)}));
  CHECK(r.arg_shapes[2] == TShape({4, 3, 5}));
  CHECK(r.arg_shapes[3] == TShape({4, 3, 5}));
  CHECK(r.out_shapes[0] == TShape({7, 3, 10}));
  CHECK(r.out_shapes[2] == TShape({4, 3, 5}));
  Symbol g = SingleOpSymbol("RNN", RNNParams("gru", 1, false, false, 3));
  CHECK(g.ListArguments() == std::vector<std::string>{"op_data", "op_parameters", "op_state"});
  CHECK(g.ListOutputs() == std::vector<std::string>{"op_output"});
  r = InferShape(g, {{"op_data", TShape({2, 1, 6})}});
  CHECK(r.arg_shapes[1] == TShape({PackedSize(3, 1, 1, 6, 3)}));
  CHECK_THROWS_AS(InferShape(g, {{"op_data", TShape({2, 6})}}), ShapeError);
  CHECK_THROWS_AS(InferShape(g, {{"op_data", TShape({2, 1, 6})}, {"op_parameters", TShape({5})}}), ShapeError);
  KwArgs proj = RNNParams("lstm", 1, false, false, 3);
  proj["projection_size"] = "2";
  CHECK_THROWS_WITH(InferShape(SingleOpSymbol("RNN", proj), {{"op_data", TShape({2, 1, 6})}}),
                    Catch::Contains("projection_size"));
  CHECK_THROWS_AS(SingleOpSymbol("RNN", {{"state_size", "2"}, {"num_layers", "1"}, {"mode", "lstmx"}}), ParamError);
  // Sizes that overflow int64 are refused, without looping over the layers.
  CHECK_THROWS_WITH(InferShape(SingleOpSymbol("RNN", RNNParams("lstm", 2147483647, true, false, 2147483647)),
                               {{"op_data", TShape({2, 1, 6})}}),
                    Catch::Contains("overflows int64"));
}

// The reference for use_sequence_length: batch entry n run alone on its first len[n] steps.
TEST_CASE("RNN with sequence_length matches each sequence run alone on its valid steps", "[ops][rnn]") {
  const int64_t T = 4, N = 3, C = 2, H = 3;
  const std::vector<float> lengths{4, 1, 2};
  struct Case { std::string mode; int layers; bool bidirectional; };
  for (const Case& c : {Case{"lstm", 2, true}, Case{"gru", 1, true}, Case{"rnn_tanh", 2, false},
                        Case{"rnn_relu", 1, true}}) {
    INFO(c.mode << " layers " << c.layers << " bidirectional " << c.bidirectional);
    const int dirs = c.bidirectional ? 2 : 1;
    const bool lstm = c.mode == "lstm";
    std::map<std::string, NDArray> inputs = RandomInputs(c.mode, c.layers, dirs, T, N, C, H, 21);
    NDArray len(TShape({N}));
    for (int64_t n = 0; n < N; ++n) len.SetFlat(n, lengths[n]);
    inputs["sequence_length"] = len;
    KwArgs params = RNNParams(c.mode, c.layers, c.bidirectional, true, static_cast<int>(H));
    params["use_sequence_length"] = "True";
    auto exec = BindSingleOp("RNN", params, inputs, {}, OpReq::kNull);
    exec->Forward(false);
    const NDArray out = exec->outputs()[0], state = exec->outputs()[1];
    for (int64_t n = 0; n < N; ++n) {
      const int64_t steps = static_cast<int64_t>(lengths[n]);
      INFO("batch entry " << n << ", " << steps << " steps");
      std::map<std::string, NDArray> alone{{"parameters", inputs.at("parameters")}};
      NDArray data(TShape({steps, 1, C})), h0(TShape({c.layers * dirs, 1, H})), c0(h0.shape());
      for (int64_t t = 0; t < steps; ++t)
        for (int64_t k = 0; k < C; ++k) data.SetFlat(t * C + k, inputs.at("data").GetFlat((t * N + n) * C + k));
      for (int64_t l = 0; l < c.layers * dirs; ++l)
        for (int64_t k = 0; k < H; ++k) {
          h0.SetFlat(l * H + k, inputs.at("state").GetFlat((l * N + n) * H + k));
          if (lstm) c0.SetFlat(l * H + k, inputs.at("state_cell").GetFlat((l * N + n) * H + k));
        }
      alone["data"] = data;
      alone["state"] = h0;
      if (lstm) alone["state_cell"] = c0;
      auto ref = BindSingleOp("RNN", RNNParams(c.mode, c.layers, c.bidirectional, true, static_cast<int>(H)),
                              alone, {}, OpReq::kNull);
      ref->Forward(false);
      const int64_t DH = dirs * H;
      for (int64_t t = 0; t < T; ++t)
        for (int64_t k = 0; k < DH; ++k) {
          const float want = t < steps ? ref->outputs()[0].GetFlat(t * DH + k) : 0.0f;
          CHECK(out.GetFlat((t * N + n) * DH + k) == Approx(want).margin(1e-5));
        }
      for (int64_t l = 0; l < c.layers * dirs; ++l)
        for (int64_t k = 0; k < H; ++k)
          CHECK(state.GetFlat((l * N + n) * H + k) == Approx(ref->outputs()[1].GetFlat(l * H + k)).margin(1e-5));
    }
    // Gradients through the held states and the zeroed outputs.
    GradCheckOptions opt;
    opt.eps = 2e-3f;
    opt.no_grad = {"sequence_length"};
    CheckGradients("RNN", params, inputs, opt);
  }
  // sequence_length is (batch,), and each length lies in [1, T].
  KwArgs params = RNNParams("gru", 1, false, false, 2);
  params["use_sequence_length"] = "True";
  Symbol s = SingleOpSymbol("RNN", params);
  CHECK(s.ListArguments() == std::vector<std::string>{"op_data", "op_parameters", "op_state", "op_sequence_length"});
  CHECK(InferShape(s, {{"op_data", TShape({5, 3, 2})}}).arg_shapes[3] == TShape({3}));
  std::map<std::string, NDArray> inputs = RandomInputs("gru", 1, 1, 2, 2, 2, 2, 3);
  NDArray bad(TShape({2}));
  bad.SetFlat(0, 2);
  bad.SetFlat(1, 3);
  inputs["sequence_length"] = bad;
  CHECK_THROWS_WITH(RunForward("RNN", params, inputs), Catch::Contains("sequence_length[1] = 3 is out of range"));
}

TEST_CASE("RNN runs a graph shaped as Gluon exports a bidirectional GRU", "[ops][rnn]") {
  // MXNet 1.9.1's _RNNLayer._forward_kernel: every weight reshaped to (-1,), in the order weights
  // then biases, per layer, per direction (l, r), i2h then h2h; _rnn_param_concat(dim=0) packs
  // them; RNN gets every parameter as a string, None for the unset optionals. (Gluon feeds the
  // begin state from _zeros; a variable stands in here.)
  const std::vector<std::string> names{"l0_i2h_weight", "l0_h2h_weight", "r0_i2h_weight", "r0_h2h_weight",
                                       "l0_i2h_bias", "l0_h2h_bias", "r0_i2h_bias", "r0_h2h_bias"};
  std::string nodes = R"({"op": "null", "name": "data", "inputs": []})";
  std::string concat_inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    const int var = static_cast<int>(1 + 2 * i);
    nodes += StrCat(R"(, {"op": "null", "name": "gru0_)", names[i], R"(", "inputs": []})");
    nodes += StrCat(R"(, {"op": "Reshape", "name": "gru0_reshape)", i, R"js(", "attrs": {"shape": "(-1,)"}, "inputs": [[)js",
                    var, ", 0, 0]]}");
    concat_inputs += StrCat(i ? ", " : "", "[", var + 1, ", 0, 0]");
  }
  nodes += R"(, {"op": "_rnn_param_concat", "name": "gru0_rnn_param_concat0", "attrs": {"dim": "0", "num_args": "8"}, "inputs": [)" +
           concat_inputs + "]}";
  nodes += R"(, {"op": "null", "name": "gru0_begin_state_0", "inputs": []})";
  nodes += R"(, {"op": "RNN", "name": "gru0_rnn0", "attrs": {"bidirectional": "True", "lstm_state_clip_max": "None",
      "lstm_state_clip_min": "None", "lstm_state_clip_nan": "False", "mode": "gru", "num_layers": "1", "p": "0.0",
      "projection_size": "None", "state_outputs": "True", "state_size": "3", "use_sequence_length": "False"},
      "inputs": [[0, 0, 0], [17, 0, 0], [18, 0, 0]]})";
  const std::string json = R"({"nodes": [)" + nodes +
                           R"(], "arg_nodes": [0, 1, 3, 5, 7, 9, 11, 13, 15, 18], "heads": [[19, 0, 0]],
                           "attrs": {"mxnet_version": ["int", 10901]}})";
  Symbol net = LoadSymbolJSON(json);
  std::map<std::string, NDArray> args{{"data", RandomArray({4, 2, 5}, 30)},
                                      {"gru0_begin_state_0", RandomArray({2, 2, 3}, 31)}};
  std::vector<float> packed;
  for (size_t i = 0; i < names.size(); ++i) {
    const TShape shape = i < 4 ? TShape({9, i % 2 == 0 ? int64_t{5} : int64_t{3}}) : TShape({9});
    NDArray a = RandomArray(shape, 40 + i, -0.5f, 0.5f);
    args["gru0_" + names[i]] = a;
    for (float v : a.ToVector()) packed.push_back(v);
  }
  auto exec = SimpleBind(net, Context::CPU(), args);
  exec->Forward(false);
  REQUIRE(exec->outputs().size() == 1);
  const NDArray want = RunForward("RNN", RNNParams("gru", 1, true, true, 3),
                                  {{"data", args["data"]}, {"parameters", NDArray({static_cast<int64_t>(packed.size())}, packed)},
                                   {"state", args["gru0_begin_state_0"]}});
  RequireClose(exec->outputs()[0], want, 0, 0);
  // The JSON round trip keeps the graph (and the hidden reserve output stays hidden).
  Symbol lstm = SingleOpSymbol("RNN", RNNParams("lstm", 1, false, true, 3));
  Symbol again = LoadSymbolJSON(SaveSymbolJSON(lstm));
  CHECK(again.ListOutputs() == lstm.ListOutputs());
  CHECK(again.GetInternals().ListOutputs() == lstm.GetInternals().ListOutputs());
  CHECK(LoadSymbolJSON(SaveSymbolJSON(net)).ListArguments() == net.ListArguments());
}
