// Predictor (the inference entry point) and ClassifyArguments (data / label / parameter).
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <symbind/core/input_roles.h>
#include <symbind/io/checkpoint.h>
#include <symbind/predict/predictor.h>

#include "model_test_util.h"
#include "test_io_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
Symbol TwoInputNet() {
  // Inputs not named "data", a parameter not named "*_weight", and a label: roles come from
  // graph position, not from MXNet's name rule.
  Symbol image = Symbol::Variable("image"), extra = Symbol::Variable("extra_input");
  Symbol scale = Symbol::Variable("scale");
  Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(3,3)").SetParam("num_filter", 4)
                    .SetInput("data", image).CreateSymbol("conv");
  Symbol flat = OpBuilder("Flatten").SetInput("data", conv).CreateSymbol("flat");
  Symbol joined = OpBuilder("Concat").SetParam("num_args", 2).SetParam("dim", 1)
                      .PushInput(flat).PushInput(extra).CreateSymbol("joined");
  Symbol scaled = OpBuilder("broadcast_mul").SetInput("lhs", joined).SetInput("rhs", scale).CreateSymbol("scaled");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 3).SetInput("data", scaled).CreateSymbol("fc");
  return OpBuilder("SoftmaxOutput").SetInput("data", fc).CreateSymbol("softmax");
}

bool SameBits(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0;
}
}  // namespace

TEST_CASE("ClassifyArguments: labels of loss heads, parameters by graph position or by name", "[predict][roles]") {
  Graph g(TwoInputNet());
  InputRoles by_position = ClassifyArguments(g);
  CHECK(by_position.labels == std::vector<std::string>{"softmax_label"});
  // Concat's second input is no op's first input: with no parameter names the position rule
  // calls it a parameter; given the names of a .params file that lacks it, it is data.
  CHECK(by_position.parameters ==
        std::vector<std::string>{"conv_weight", "conv_bias", "extra_input", "scale", "fc_weight", "fc_bias"});
  CHECK(by_position.data == std::vector<std::string>{"image"});
  const std::vector<std::string> weights{"conv_weight", "conv_bias", "scale", "fc_weight", "fc_bias"};
  InputRoles by_name = ClassifyArguments(g, {weights.begin(), weights.end()});
  CHECK(by_name.data == std::vector<std::string>{"image", "extra_input"});
  CHECK(by_name.parameters == weights);
  CHECK(by_name.RoleOf("softmax_label") == InputRole::kLabel);
  CHECK_THROWS_WITH(by_name.RoleOf("nope"), Catch::Contains("'nope' is not an argument") && Catch::Contains("extra_input"));
  // Binding for inference guesses nothing: without names, no argument is a parameter.
  InputRoles given = ClassifyArguments(g, {}, ParameterSource::kNamesOnly);
  CHECK(given.parameters.empty());
  CHECK(given.data == std::vector<std::string>{"image", "conv_weight", "conv_bias", "extra_input", "scale", "fc_weight",
                                               "fc_bias"});
  CHECK(given.labels == std::vector<std::string>{"softmax_label"});
}

TEST_CASE("Predictor: roles come from what was given, and absent parameters are missing, not guessed", "[predict][roles][hostile]") {
  const Symbol net = TwoInputNet();
  // extra_input and scale feed no op's first input: the graph-position guess took them for
  // parameters and refused their shapes.
  const std::map<std::string, TShape> shapes{
      {"image", TShape({1, 1, 5, 5})}, {"extra_input", TShape({1, 2})}, {"scale", TShape({1, 1})}};
  // No parameters at all: the weights are missing (they ran as N(0,1) draws without a word).
  CHECK_THROWS_WITH(Predictor(net, {}, {}, shapes),
                    Catch::Contains("not given as inputs: conv_weight, conv_bias, fc_weight, fc_bias (no parameters were given)"));
  PredictorOptions fill;
  fill.allow_missing = true;
  Predictor p(net, {}, {}, shapes, fill);
  CHECK(p.input_names() == std::vector<std::string>{"image", "extra_input", "scale"});
  CHECK(p.filled() == std::vector<std::string>{"conv_weight", "conv_bias", "fc_weight", "fc_bias"});
  p.Forward();
  CHECK(p.Output(0).shape() == TShape({1, 3}));
  // Inputs start zeroed, whatever fills the missing parameters.
  CHECK(p.Input("extra_input").GetFlat(0) == 0.0f);
}

TEST_CASE("Predictor: MTCNN outputs bit-identical to a SimpleBind executor, weights shared, no gradients", "[predict][real][shared]") {
  for (const char* name : {"det1", "det2", "det3"}) {
    SharedModel m = LoadMtcnnModel(name);
    const int side = std::string(name) == "det1" ? 12 : std::string(name) == "det2" ? 24 : 48;
    const TShape shape({2, 3, side, side});
    NDArray input(shape);
    FillGaussian(input, 7, "input");

    Predictor p(m.symbol, m.params, m.aux, {{"data", shape}});
    CHECK(p.input_names() == std::vector<std::string>{"data"});
    p.SetInput("data", input);
    p.Forward();

    std::map<std::string, NDArray> args = m.params;
    args["data"] = input.Copy();
    auto reference = SimpleBind(m.symbol, Context::CPU(), args);  // MXNet's default grad_req
    reference->Forward(false);
    REQUIRE(p.Outputs().size() == reference->outputs().size());
    for (size_t i = 0; i < p.Outputs().size(); ++i) CHECK(SameBits(p.Output(i), reference->outputs()[i]));

    // Parameters are the loaded arrays themselves; nothing is allocated for gradients.
    auto bound = p.executor().arg_dict();
    for (auto& kv : m.params) CHECK(bound.at(kv.first).SharesStorageWith(kv.second));
    for (const NDArray& g : p.executor().grad_arrays()) CHECK(g.is_none());
    CHECK(p.executor().memory().planned);
    CHECK(p.executor().memory().output_bytes < reference->memory().output_bytes);
  }
}

TEST_CASE("Predictor: Reshape shares parameters, outputs by name, internal outputs", "[predict][real][shared]") {
  SharedModel m = LoadMtcnnModel("det1");
  Predictor p(m.symbol, m.params, m.aux, {{"data", TShape({1, 3, 12, 12})}});
  Predictor wide = p.Reshape({{"data", TShape({1, 3, 20, 30})}});
  CHECK(wide.Output("prob1_output").shape() == TShape({1, 2, 5, 10}));
  CHECK(wide.executor().arg_dict().at("conv1_weight").SharesStorageWith(m.params.at("conv1_weight")));
  CHECK(p.Output(0).shape() == TShape({1, 4, 1, 1}));  // the first predictor is unchanged

  NDArray input(TShape({1, 3, 20, 30}));
  FillGaussian(input, 3, "x");
  wide.SetInput("data", input);
  wide.Forward();
  PredictorOptions cut;
  cut.outputs = {"conv2_output", "prob1_output"};
  Predictor partial(m.symbol, m.params, m.aux, {{"data", input.shape()}}, cut);
  CHECK(partial.output_names() == cut.outputs);
  partial.SetInput("data", input);
  partial.Forward();
  CHECK(SameBits(partial.Output("prob1_output"), wide.Output("prob1_output")));
  CHECK(partial.Output("conv2_output").shape() == TShape({1, 16, 7, 12}));
}

TEST_CASE("Predictor: errors name what is missing or unknown", "[predict][errors][shared]") {
  SharedModel m = LoadMtcnnModel("det2");
  const std::map<std::string, TShape> shapes{{"data", TShape({1, 3, 24, 24})}};
  auto partial = m.params;
  partial.erase("conv4_weight");
  CHECK_THROWS_WITH(Predictor(m.symbol, partial, m.aux, shapes),
                    Catch::Contains("not given as inputs: conv4_weight"));
  PredictorOptions fill;
  fill.allow_missing = true;
  Predictor filled(m.symbol, partial, m.aux, shapes, fill);
  CHECK(filled.filled() == std::vector<std::string>{"conv4_weight"});
  CHECK(filled.input_names() == std::vector<std::string>{"data"});

  CHECK_THROWS_WITH(Predictor(m.symbol, m.params, m.aux, {{"dta", TShape({1, 3, 24, 24})}}),
                    Catch::Contains("'dta' is given an input shape but is not an input") && Catch::Contains("inputs: data"));
  CHECK_THROWS_WITH(Predictor(m.symbol, m.params, m.aux, {{"data", TShape({1, 3, 24, 24})}, {"conv1_weight", TShape({1})}}),
                    Catch::Contains("(it is a parameter)"));
  Predictor p(m.symbol, m.params, m.aux, shapes);
  CHECK_THROWS_AS(p.SetInput("data", NDArray(TShape({1, 3, 12, 12}))), ShapeError);
  CHECK_THROWS_WITH(p.Input("label"), Catch::Contains("not an input of the predictor"));
  CHECK_THROWS_WITH(p.Output("nope"), Catch::Contains("outputs: conv5_2_output, prob1_output"));
  PredictorOptions bad_output;
  bad_output.outputs = {"conv99_output"};
  CHECK_THROWS_WITH(Predictor(m.symbol, m.params, m.aux, shapes, bad_output),
                    Catch::Contains("no output named 'conv99_output'") && Catch::Contains("conv1_output"));
}

TEST_CASE("LoadPredictor reads a checkpoint and converts non-float32 parameters once", "[predict][real][shared]") {
  SharedModel m = LoadMtcnnModel("det1");
  std::map<std::string, NDArray> doubles;
  for (auto& kv : m.params) doubles[kv.first] = kv.second.AsType(DType::kFloat64);
  const std::string prefix = symbind_test::TempPath("predictor-det1-f64");
  SaveCheckpoint(prefix, 3, m.symbol, doubles, {});
  Predictor p = LoadPredictor(prefix, 3, {{"data", TShape({1, 3, 12, 12})}});
  CHECK(p.executor().arg_dict().at("conv1_weight").dtype() == DType::kFloat32);
  Predictor f32(m.symbol, m.params, m.aux, {{"data", TShape({1, 3, 12, 12})}});
  NDArray input(TShape({1, 3, 12, 12}));
  FillGaussian(input, 5, "x");
  p.SetInput("data", input);
  f32.SetInput("data", input);
  p.Forward();
  f32.Forward();
  CHECK(SameBits(p.Output(0), f32.Output(0)));
}

TEST_CASE("SimpleBind grad policies: MXNet's name rule, none, all, grad_req_type still wins", "[predict][executor]") {
  Symbol net = TwoInputNet();
  const std::map<std::string, TShape> shapes{{"image", TShape({2, 1, 5, 5})}, {"extra_input", TShape({2, 3})},
                                             {"scale", TShape({1, 1})}};
  auto reqs_with = [&](GradPolicy policy, const std::map<std::string, OpReq>& explicit_reqs = {}) {
    BindOptions o;
    o.shapes = shapes;
    o.grads = policy;
    auto exec = SimpleBind(net, Context::CPU(), {}, {}, explicit_reqs, {}, o);
    std::map<std::string, OpReq> reqs;
    auto names = net.ListArguments();
    for (size_t i = 0; i < names.size(); ++i) reqs[names[i]] = exec->grad_reqs()[i];
    return reqs;
  };
  auto by_name = reqs_with(GradPolicy::kByName);
  CHECK(by_name["image"] == OpReq::kWrite);  // MXNet's rule looks at names only
  CHECK(by_name["softmax_label"] == OpReq::kNull);
  CHECK(by_name["fc_weight"] == OpReq::kWrite);
  for (auto& kv : reqs_with(GradPolicy::kNone)) CHECK(kv.second == OpReq::kNull);
  for (auto& kv : reqs_with(GradPolicy::kAll)) CHECK(kv.second == OpReq::kWrite);
  CHECK(reqs_with(GradPolicy::kNone, {{"scale", OpReq::kAdd}})["scale"] == OpReq::kAdd);
}

TEST_CASE("Workspace: predictors for several input shapes share intermediate buffers", "[predict][memory][shared]") {
  SharedModel m = LoadMtcnnModel("det1");
  PredictorOptions shared;
  shared.workspace = std::make_shared<Workspace>();
  std::vector<TShape> shapes{TShape({1, 3, 120, 100}), TShape({1, 3, 60, 50}), TShape({2, 3, 30, 25})};
  size_t largest = 0;
  for (const TShape& shape : shapes) {
    NDArray input(shape);
    FillGaussian(input, 11, "x");
    Predictor own(m.symbol, m.params, m.aux, {{"data", shape}});
    Predictor in_workspace(m.symbol, m.params, m.aux, {{"data", shape}}, shared);
    largest = std::max(largest, own.executor().memory().output_bytes);
    own.SetInput("data", input);
    in_workspace.SetInput("data", input);
    own.Forward();
    in_workspace.Forward();
    for (size_t i = 0; i < own.Outputs().size(); ++i) CHECK(SameBits(own.Output(i), in_workspace.Output(i)));
  }
  // Bound largest first, the family needs no more shared memory than its largest member.
  CHECK(shared.workspace->bytes() > 0);
  CHECK(shared.workspace->bytes() <= largest);

  // Predictors sharing a workspace run one at a time: two threads running Forward on two of
  // them overlap within a few runs, and the one that comes second must throw.
  Predictor a(m.symbol, m.params, m.aux, {{"data", shapes[0]}}, shared);
  Predictor b = a.Reshape({{"data", shapes[1]}});
  std::atomic<bool> clash{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto hammer = [&](Predictor& p) {
    while (!clash && std::chrono::steady_clock::now() < deadline) {
      try {
        p.Forward();
      } catch (const Error& e) {
        if (std::string(e.what()).find("must run one at a time") != std::string::npos) clash = true;
      }
    }
  };
  std::thread other([&] { hammer(b); });
  hammer(a);
  other.join();
  CHECK(clash);
}

TEST_CASE("Workspace: a block grows in place, so predictors bound smallest first share one", "[predict][memory][shared]") {
  auto ws = std::make_shared<Workspace>();
  const std::shared_ptr<Storage> small = ws->Block(0, 1000);
  static_cast<float*>(small->data())[0] = 42.0f;
  const std::shared_ptr<Storage> large = ws->Block(0, 5000000);
  CHECK(large->bytes() == 5000000);
  CHECK(large->address() == small->address());
  CHECK(static_cast<float*>(large->data())[0] == 42.0f);
  CHECK(ws->Block(0, 2000) == large);
  CHECK(ws->bytes() == 5000000);

  SharedModel m = LoadMtcnnModel("det1");
  PredictorOptions shared;
  shared.workspace = std::make_shared<Workspace>();
  std::vector<TShape> shapes{TShape({2, 3, 30, 25}), TShape({1, 3, 60, 50}), TShape({1, 3, 120, 100})};
  std::vector<Predictor> family, own;
  std::vector<NDArray> inputs;
  size_t largest = 0;
  for (const TShape& shape : shapes) {
    inputs.emplace_back(shape);
    FillGaussian(inputs.back(), 17, "x");
    own.emplace_back(m.symbol, m.params, m.aux, std::map<std::string, TShape>{{"data", shape}});
    family.emplace_back(m.symbol, m.params, m.aux, std::map<std::string, TShape>{{"data", shape}}, shared);
    largest = std::max(largest, own.back().executor().memory().output_bytes);
  }
  CHECK(shared.workspace->bytes() <= largest);
  // Each still computes its own outputs in the grown block, in any order.
  for (size_t k : {size_t{0}, size_t{2}, size_t{1}, size_t{0}}) {
    own[k].SetInput("data", inputs[k]);
    family[k].SetInput("data", inputs[k]);
    own[k].Forward();
    family[k].Forward();
    for (size_t i = 0; i < own[k].Outputs().size(); ++i) CHECK(SameBits(own[k].Output(i), family[k].Output(i)));
  }
}

TEST_CASE("Input workspace: predictors written and run one at a time share one input array",
          "[predict][memory][shared]") {
  SharedModel m = LoadMtcnnModel("det1");
  PredictorOptions shared;
  shared.input_workspace = std::make_shared<Workspace>();
  std::vector<TShape> shapes{TShape({1, 3, 120, 100}), TShape({1, 3, 60, 50}), TShape({2, 3, 30, 25})};
  std::vector<Predictor> family;
  for (const TShape& shape : shapes) {
    NDArray input(shape);
    FillGaussian(input, 13, "x");
    Predictor own(m.symbol, m.params, m.aux, {{"data", shape}});
    family.emplace_back(m.symbol, m.params, m.aux, std::map<std::string, TShape>{{"data", shape}}, shared);
    own.SetInput("data", input);
    family.back().SetInput("data", input);
    own.Forward();
    family.back().Forward();
    for (size_t i = 0; i < own.Outputs().size(); ++i) CHECK(SameBits(own.Output(i), family.back().Output(i)));
  }
  // Bound largest first, one block of the largest input's bytes holds them all.
  const size_t largest = static_cast<size_t>(shapes[0].Size()) * sizeof(float);
  CHECK(shared.input_workspace->bytes() >= largest);
  CHECK(shared.input_workspace->bytes() < largest + 64);
  for (const Predictor& p : family) CHECK(p.Input("data").storage() == family[0].Input("data").storage());
  Predictor reshaped = family[0].Reshape({{"data", shapes[1]}});
  CHECK(reshaped.Input("data").storage() == family[0].Input("data").storage());
  // Without it, inputs are the predictors' own.
  Predictor a(m.symbol, m.params, m.aux, {{"data", shapes[1]}}), b(m.symbol, m.params, m.aux, {{"data", shapes[1]}});
  CHECK(a.Input("data").storage() != b.Input("data").storage());
}

TEST_CASE("Executor::PartialForward runs one op per step, as Forward does in one call", "[predict][partial][shared]") {
  SharedModel m = LoadMtcnnModel("det2");
  const TShape shape({2, 3, 24, 24});
  NDArray input(shape);
  FillGaussian(input, 11, "input");
  Predictor whole(m.symbol, m.params, m.aux, {{"data", shape}});
  whole.SetInput("data", input);
  whole.Forward();

  Predictor stepped = whole.Reshape({{"data", shape}});
  stepped.SetInput("data", input);
  Executor& exec = stepped.executor();
  const size_t steps = exec.num_forward_steps();
  CHECK(steps == exec.ForwardProfile().size());  // one row per op node
  REQUIRE(steps > 5);  // det2: 10 ops once its prelus are fused into the convolutions
  for (size_t step = 0; step < steps; ++step) {
    const size_t left = exec.PartialForward(false, step);
    CHECK(left == steps - step - 1);
    // After the first op (a convolution) the softmax output is not computed yet.
    if (step == 0) CHECK(!SameBits(stepped.Output("prob1_output"), whole.Output("prob1_output")));
  }
  for (size_t i = 0; i < whole.Outputs().size(); ++i) CHECK(SameBits(stepped.Output(i), whole.Output(i)));
  CHECK(exec.PartialForward(false, steps) == 0);      // past the end: nothing to run
  CHECK(exec.PartialForward(false, steps + 7) == 0);

  // Steps run in order from 0; a new pass may start at 0 at any time.
  CHECK(exec.PartialForward(false, 0) == steps - 1);
  CHECK_THROWS_WITH(exec.PartialForward(false, 5),
                    Catch::Contains("step 5 requested, but the next step is 1"));
  CHECK(exec.PartialForward(false, 0) == steps - 1);
}

TEST_CASE("SelectOutputs takes an op node's name for its output, as MXNet's partial-output predictor", "[predict][shared]") {
  SharedModel m = LoadMtcnnModel("det1");
  PredictorOptions by_node;
  by_node.outputs = {"conv2", "prob1_output"};
  Predictor p(m.symbol, m.params, m.aux, {{"data", TShape({1, 3, 12, 12})}}, by_node);
  CHECK(p.output_names() == std::vector<std::string>{"conv2_output", "prob1_output"});
}

// LoadPredictor holds the arrays it loads alone, so it binds read-only views of them
// (ReadOnlyViews): the kernels then derive their packed forms once. The outputs are
// those of a Predictor over writable copies, and writing into a bound parameter is refused.
TEST_CASE("LoadPredictor binds its loaded parameters read-only: the same outputs, writes refused", "[predict][real][shared]") {
  SharedModel m = LoadMtcnnModel("det2");
  const std::string prefix = symbind_test::TempPath("predictor-det2-read-only");
  SaveCheckpoint(prefix, 1, m.symbol, m.params, m.aux);
  const std::map<std::string, TShape> shapes = {{"data", TShape({2, 3, 24, 24})}};
  Predictor loaded = LoadPredictor(prefix, 1, shapes);
  Predictor writable(m.symbol, m.params, m.aux, shapes);
  const auto bound = loaded.executor().arg_dict(), writable_bound = writable.executor().arg_dict();
  REQUIRE_FALSE(loaded.roles().parameters.empty());
  for (const std::string& name : loaded.roles().parameters) {
    INFO(name);
    CHECK(bound.at(name).read_only());
    CHECK_FALSE(writable_bound.at(name).read_only());
  }
  NDArray input(TShape({2, 3, 24, 24}));
  FillGaussian(input, 11, "x");
  for (int run = 0; run < 2; ++run) {  // the second run on cached packed weights
    loaded.SetInput("data", input);
    writable.SetInput("data", input);
    loaded.Forward();
    writable.Forward();
    for (size_t i = 0; i < loaded.Outputs().size(); ++i) CHECK(SameBits(loaded.Output(i), writable.Output(i)));
  }
  const NDArray weight = bound.at(loaded.roles().parameters.front());
  CHECK_THROWS_WITH(weight.SetFlat(0, 1.0f), Catch::Contains("read-only") && Catch::Contains("parameter '"));

  // ReadOnlyView: the same bytes, no copy; read-only arrays and empty ones come back as they are.
  NDArray a(TShape({4, 4}));
  a.Fill(2.0f);
  const NDArray view = ReadOnlyView(a, "a");
  CHECK(view.read_only());
  CHECK(view.raw_data() == a.raw_data());
  CHECK(ReadOnlyView(view, "again").SharesStorageWith(view));
  CHECK(ReadOnlyView(NDArray(), "none").is_none());
}

// Predictors made by Reshape (the C predict API's per-thread predictors are) bind the same
// read-only parameters: the kernels' packed weights are made once, by the first, and kept with the
// parameters' storage, not once per predictor.
TEST_CASE("Predictor: predictors made by Reshape share the kernels' derived weights", "[predict]") {
  const Symbol conv = OpBuilder("Convolution").SetParam("kernel", "(1,1)").SetParam("num_filter", 32)
                          .SetInput("data", Symbol::Variable("data")).CreateSymbol("conv");
  NDArray w(TShape({32, 16, 1, 1})), b(TShape({32})), input(TShape({1, 16, 28, 28}));
  FillGaussian(w, 3, "w");
  FillGaussian(b, 4, "b");
  FillGaussian(input, 5, "x");
  const std::map<std::string, TShape> shapes{{"data", input.shape()}};
  Predictor first(conv, ReadOnlyViews({{"conv_weight", w}, {"conv_bias", b}}), {}, shapes);
  first.SetInput("data", input);
  first.Forward();
  const Storage& weights = *first.executor().arg_dict().at("conv_weight").storage();
  const size_t forms = weights.num_derived_forms();
  REQUIRE(forms >= 1);  // the 1x1 convolution's GEMM panels, whatever the tiling
  for (int i = 0; i < 2; ++i) {
    Predictor again = first.Reshape(shapes);
    again.SetInput("data", input);
    again.Forward();
    CHECK(weights.num_derived_forms() == forms);
    CHECK(SameBits(again.Output(0), first.Output(0)));
  }
  Predictor writable(conv, {{"conv_weight", w.Copy()}, {"conv_bias", b.Copy()}}, {}, shapes);
  writable.SetInput("data", input);
  writable.Forward();
  CHECK(SameBits(writable.Output(0), first.Output(0)));
}

TEST_CASE("Predictor: every call on a moved-from predictor throws", "[predict][hostile]") {
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 2).SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  Predictor p(fc, {{"fc_weight", NDArray(TShape({2, 3}))}, {"fc_bias", NDArray(TShape({2}))}}, {},
              {{"data", TShape({1, 3})}});
  Predictor moved = std::move(p);
  moved.Forward();
  // Each dereferenced the executor the move had taken (SIGSEGV).
  const std::string says = "this predictor was moved from and holds no model";
  CHECK_THROWS_WITH(p.Forward(), Catch::Contains("Predictor::Forward: " + says));
  CHECK_THROWS_WITH(p.Outputs(), Catch::Contains(says));
  CHECK_THROWS_WITH(p.Output(0), Catch::Contains(says));
  CHECK_THROWS_WITH(p.Output("fc_output"), Catch::Contains(says));
  CHECK_THROWS_WITH(p.Input("data"), Catch::Contains(says));
  CHECK_THROWS_WITH(p.SetInput("data", NDArray(TShape({1, 3}))), Catch::Contains(says));
  CHECK_THROWS_WITH(p.Reshape({{"data", TShape({2, 3})}}), Catch::Contains(says));
  CHECK_THROWS_WITH(p.executor(), Catch::Contains(says));
  CHECK(moved.Output(0).shape() == TShape({1, 2}));
}
