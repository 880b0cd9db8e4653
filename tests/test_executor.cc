// Symbol composition, MXNet ordering, inference errors, SimpleBind and the TBB executor.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <symbind/executor/threading.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
Symbol Mlp() {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = OpBuilder("FullyConnected").SetParam("num_hidden", 128).SetInput("data", data).CreateSymbol("fc1");
  Symbol act1 = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", fc1).CreateSymbol("relu1");
  Symbol fc2 = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", act1).CreateSymbol("fc2");
  return OpBuilder("SoftmaxOutput").SetInput("data", fc2).CreateSymbol("softmax");
}
}  // namespace

TEST_CASE("Composition names missing inputs and lists in MXNet order", "[symbol]") {
  Symbol net = Mlp();
  CHECK(net.ListArguments() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight",
                                                        "fc2_bias", "softmax_label"});
  CHECK(net.ListOutputs() == std::vector<std::string>{"softmax_output"});
  CHECK(net.ListAuxiliaryStates().empty());
  Symbol internals = net.GetInternals();
  auto names = internals.ListOutputs();
  CHECK(names == std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_output",
                                          "fc2_weight", "fc2_bias", "fc2_output", "softmax_label",
                                          "softmax_output"});
  CHECK(internals["fc1_output"].ListArguments() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias"});
  CHECK(net.GetChildren().ListOutputs() == std::vector<std::string>{"fc2_output", "softmax_label"});
}

TEST_CASE("Internals list visible outputs only, as MXNet's get_internals", "[symbol]") {
  Symbol data = Symbol::Variable("data");
  Symbol drop = Symbol::Create("Dropout", "drop", {{"p", "0.5"}}, {{"data", data}});
  Symbol bn = Symbol::Create("BatchNorm", "bn", {}, {{"data", drop}});
  CHECK(bn.GetInternals().ListOutputs() ==
        std::vector<std::string>{"data", "drop_output", "bn_gamma", "bn_beta", "bn_moving_mean",
                                 "bn_moving_var", "bn_output"});
  Symbol stats = Symbol::Create("BatchNorm", "bn2", {{"output_mean_var", "True"}}, {{"data", data}});
  auto names = stats.GetInternals().ListOutputs();
  CHECK(std::vector<std::string>(names.end() - 3, names.end()) ==
        std::vector<std::string>{"bn2_output", "bn2_mean", "bn2_var"});
}

TEST_CASE("Unnamed ops get <op lowercase><counter> names", "[symbol]") {
  Symbol::ResetNameCounters();
  Symbol x = Symbol::Variable("x");
  Symbol a = Symbol::Create("FullyConnected", "", {{"num_hidden", "2"}}, {{"data", x}});
  Symbol b = Symbol::Create("FullyConnected", "", {{"num_hidden", "2"}}, {{"data", a}});
  CHECK(a.GetName() == "fullyconnected0");
  CHECK(b.GetName() == "fullyconnected1");
  CHECK(b.ListArguments() == std::vector<std::string>{"x", "fullyconnected0_weight", "fullyconnected0_bias",
                                                      "fullyconnected1_weight", "fullyconnected1_bias"});
}

TEST_CASE("DFS post-order visits inputs in order, shared nodes once", "[symbol][graph]") {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol s = Symbol::Create("elemwise_add", "s", {}, {{"lhs", b}, {"rhs", a}});
  Symbol m = Symbol::Create("elemwise_mul", "m", {}, {{"lhs", s}, {"rhs", b}});
  Symbol g = Symbol::Group({m, s, Symbol::Variable("c")});
  CHECK(g.ListArguments() == std::vector<std::string>{"b", "a", "c"});
  CHECK(g.ListOutputs() == std::vector<std::string>{"m_output", "s_output", "c"});
  Graph graph(g);
  std::vector<std::string> order;
  for (auto& n : graph.nodes()) order.push_back(n.node->name());
  CHECK(order == std::vector<std::string>{"b", "a", "s", "m", "c"});
}

TEST_CASE("A cycle is rejected", "[symbol][graph]") {
  Symbol x = Symbol::Variable("x");
  Symbol a = Symbol::Create("_mul_scalar", "a", {{"scalar", "2"}}, {{"data", x}});
  Symbol b = Symbol::Create("_mul_scalar", "b", {{"scalar", "2"}}, {{"data", a}});
  a.outputs()[0].node->inputs[0] = b.outputs()[0];  // a <- b <- a
  CHECK_THROWS_WITH(Graph(b), Catch::Contains("cycle"));
  a.outputs()[0].node->inputs[0] = x.outputs()[0];  // break the shared_ptr cycle so it is freed
}

TEST_CASE("Composition errors name the op and input", "[symbol]") {
  Symbol x = Symbol::Variable("x");
  CHECK_THROWS_WITH(Symbol::Create("FullyConnected", "fc", {{"num_hidden", "2"}}, {{"weights", x}}),
                    Catch::Contains("has no input 'weights'"));
  CHECK_THROWS_WITH(Symbol::Create("NoSuchOp", "n", {}, {}), "Cannot find operator NoSuchOp");
  CHECK_THROWS_WITH(Symbol::Create("FullyConnected", "fc", {{"num_hiden", "2"}}, {{"data", x}}),
                    Catch::Contains("Cannot find argument 'num_hiden'") &&
                        Catch::Contains("in operator FullyConnected(name=\"fc\")"));
}

TEST_CASE("InferShape propagates both ways and reports partial results", "[graph][shape]") {
  Symbol net = Mlp();
  auto r = InferShape(net, {{"data", TShape({32, 784})}});
  CHECK(r.arg_shapes == std::vector<TShape>{TShape({32, 784}), TShape({128, 784}), TShape({128}),
                                            TShape({10, 128}), TShape({10}), TShape({32})});
  CHECK(r.out_shapes == std::vector<TShape>{TShape({32, 10})});
  // Backward direction: elemwise_add fills its lhs from the rhs.
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol s = Symbol::Create("elemwise_add", "s", {}, {{"lhs", a}, {"rhs", b}});
  CHECK(InferShape(s, {{"b", TShape({2, 3})}}).arg_shapes[0] == TShape({2, 3}));
  auto partial = InferShapePartial(net, {});
  CHECK_FALSE(partial.complete());
  CHECK(partial.arg_shapes[2] == TShape({128}));  // bias known from num_hidden alone
  CHECK_THROWS_WITH(InferShape(net, {}), Catch::Contains("cannot infer the shapes of: data"));
}

TEST_CASE("Shape errors name node, op, input, provided and inferred shapes", "[graph][shape]") {
  Symbol net = Mlp();
  CHECK_THROWS_WITH(InferShape(net, {{"data", TShape({32, 784})}, {"fc1_weight", TShape({128, 100})}}),
                    "Error in operator fc1 (FullyConnected): Shape inconsistent for input 'weight' "
                    "(fc1_weight): provided (128,100), inferred (128,784)");
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol s = Symbol::Create("elemwise_add", "s", {}, {{"lhs", a}, {"rhs", b}});
  CHECK_THROWS_AS(InferShape(s, {{"a", TShape({2, 3})}, {"b", TShape({3, 2})}}), ShapeError);
  CHECK_THROWS_WITH(InferShape(net, {{"date", TShape({1, 2})}}), Catch::Contains("'date' is not an input"));
}

TEST_CASE("SimpleBind matches arrays by name and allocates the rest", "[executor]") {
  Symbol net = Mlp();
  NDArray data = RandomArray(TShape({4, 784}), 1);
  NDArray label(TShape({4}), {1, 2, 3, 4});
  NDArray w1 = RandomArray(TShape({128, 784}), 2);
  auto exec = SimpleBind(net, Context::CPU(), {{"data", data}, {"softmax_label", label}, {"fc1_weight", w1}});
  auto args = exec->arg_dict();
  CHECK(args["data"].SharesStorageWith(data));
  CHECK(args["fc1_weight"].SharesStorageWith(w1));
  CHECK(args["fc2_weight"].shape() == TShape({10, 128}));
  // Allocated arguments are N(0,1): mean near 0, variance near 1.
  double sum = 0, sq = 0;
  const NDArray& w2 = args["fc2_weight"];
  for (int64_t i = 0; i < w2.Size(); ++i) {
    sum += w2.GetFlat(i);
    sq += w2.GetFlat(i) * w2.GetFlat(i);
  }
  CHECK(std::fabs(sum / w2.Size()) < 0.1);
  CHECK(std::fabs(sq / w2.Size() - 1.0) < 0.1);
  // grad_req: null for *data and *label, write otherwise; gradients zeroed.
  auto names = net.ListArguments();
  for (size_t i = 0; i < names.size(); ++i) {
    bool input = names[i] == "data" || names[i] == "softmax_label";
    CHECK((exec->grad_reqs()[i] == OpReq::kNull) == input);
    if (!input) CHECK(exec->grad_arrays()[i].GetFlat(0) == 0.0f);
  }
  // Same seed, same initialisation.
  auto again = SimpleBind(net, Context::CPU(), {{"data", data}, {"softmax_label", label}});
  CHECK(again->arg_dict()["fc2_weight"].GetFlat(5) == w2.GetFlat(5));
  SimpleBindOptions other;
  other.seed = 7;
  auto reseeded = SimpleBind(net, Context::CPU(), {{"data", data}}, {}, {}, {}, other);
  CHECK(reseeded->arg_dict()["fc2_weight"].GetFlat(5) != w2.GetFlat(5));

  CHECK_THROWS_WITH(SimpleBind(net, Context::CPU(), {{"data", data}, {"fc1_weight", RandomArray(TShape({128, 10}), 3)}}),
                    Catch::Contains("fc1_weight") && Catch::Contains("(128,10)") && Catch::Contains("(128,784)"));
  CHECK_THROWS_WITH(SimpleBind(net, Context::CPU(), {{"dat", data}}), Catch::Contains("'dat'"));
}

TEST_CASE("An entry used twice sums its gradients, grad_req add accumulates", "[executor]") {
  Symbol x = Symbol::Variable("x");
  Symbol sq = Symbol::Create("elemwise_mul", "sq", {}, {{"lhs", x}, {"rhs", x}});
  Symbol y = Symbol::Create("elemwise_add", "y", {}, {{"lhs", sq}, {"rhs", x}});  // x^2 + x
  NDArray xv(TShape({3}), {1, 2, -3});
  auto exec = SimpleBind(y, Context::CPU(), {{"x", xv}});
  exec->Forward(true);
  exec->Backward();  // head gradient of ones
  for (int i = 0; i < 3; ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 2 * xv.GetFlat(i) + 1);
  auto acc = SimpleBind(y, Context::CPU(), {{"x", xv}}, {}, {{"x", OpReq::kAdd}});
  acc->Forward(true);
  acc->Backward();
  acc->Backward();
  for (int i = 0; i < 3; ++i) CHECK(acc->grad_arrays()[0].GetFlat(i) == 2 * (2 * xv.GetFlat(i) + 1));
  CHECK_THROWS_WITH(exec->Backward({NDArray(TShape({4}))}), Catch::Contains("head gradient 0 has shape (4,)"));
}

TEST_CASE("Backward may come before Forward and ignores head gradients nothing reads", "[executor]") {
  // repeat's gradient reads only the head gradient: exact without a forward pass, as in MXNet.
  Symbol x = Symbol::Variable("x");
  Symbol rep = Symbol::Create("repeat", "rep", {{"repeats", "2"}, {"axis", "0"}}, {{"data", x}});
  NDArray xv(TShape({2, 1}), {5, 7});
  auto exec = SimpleBind(rep, Context::CPU(), {{"x", xv}}, {}, {{"x", OpReq::kWrite}});
  exec->Backward({NDArray(TShape({4, 1}), {1, 2, 3, 4})});
  CHECK(exec->grad_dict().at("x").ToVector() == std::vector<float>{3, 7});
  // shape_array has a zero gradient: its head gradient is not read, whatever its shape.
  Symbol shape = Symbol::Create("shape_array", "shape", {}, {{"data", x}});
  auto zero = SimpleBind(shape, Context::CPU(), {{"x", xv}}, {}, {{"x", OpReq::kWrite}});
  zero->Forward(true);
  zero->Backward({NDArray(TShape({2, 1}))});
  CHECK(zero->grad_dict().at("x").ToVector() == std::vector<float>{0, 0});
  // So are the index results of argmax, argmin and argsort (MXNet's test_order passes them
  // head gradients of the input's shape).
  for (const char* op : {"argmax", "argmin", "argsort"}) {
    INFO(op);
    Symbol idx = Symbol::Create(op, "idx", {{"axis", "1"}}, {{"data", x}});
    auto e = SimpleBind(idx, Context::CPU(), {{"x", xv}}, {}, {{"x", OpReq::kWrite}});
    e->Forward(true);
    e->Backward({NDArray(TShape({5, 5}))});
    CHECK(e->grad_dict().at("x").ToVector() == std::vector<float>{0, 0});
  }
  // A head gradient that is read must have the output's shape.
  CHECK_THROWS_WITH(exec->Backward({NDArray(TShape({3}))}), Catch::Contains("head gradient 0 has shape (3,)"));
}

TEST_CASE("A float64 argument used twice sums its gradient", "[executor][dtype]") {
  Symbol x = Symbol::Variable("x");
  Symbol y = Symbol::Create("broadcast_add", "y", {}, {{"lhs", Symbol::Create("square", "sq", {}, {{"data", x}})},
                                                      {"rhs", Symbol::Create("zeros_like", "z", {}, {{"data", x}})}});
  NDArray xv = NDArray(TShape({3}), {1, 2, -3}).AsType(DType::kFloat64);
  auto exec = SimpleBind(y, Context::CPU(), {{"x", xv}}, {}, {{"x", OpReq::kWrite}});
  exec->Forward(true);
  exec->Backward();
  const NDArray g = exec->grad_dict().at("x");
  CHECK(g.dtype() == DType::kFloat64);
  CHECK(g.AsType(DType::kFloat32).ToVector() == std::vector<float>{2, 4, -6});
}

TEST_CASE("Backward skips what feeds only a zero gradient, as MXNet prunes it", "[executor]") {
  // batch_take has no gradient: under stop_gradient nothing needs it, on its own it is needed.
  Symbol x = Symbol::Variable("x"), idx = Symbol::Variable("idx");
  Symbol taken = Symbol::Create("batch_take", "take", {}, {{"a", x}, {"indices", idx}});
  Symbol stopped = Symbol::Create("stop_gradient", "stop", {}, {{"data", taken}});
  NDArray xv(TShape({2, 3}), {1, 2, 3, 4, 5, 6}), iv(TShape({2}), {0, 2});
  auto exec = SimpleBind(stopped, Context::CPU(), {{"x", xv}, {"idx", iv}}, {}, {{"x", OpReq::kWrite}});
  exec->Forward(true);
  exec->Backward();
  CHECK(exec->grad_dict().at("x").ToVector() == std::vector<float>(6, 0.0f));
  auto direct = SimpleBind(taken, Context::CPU(), {{"x", xv}, {"idx", iv}}, {}, {{"x", OpReq::kWrite}});
  direct->Forward(true);
  CHECK_THROWS_WITH(direct->Backward(), Catch::Contains("operator take (batch_take) has no gradient"));
}

TEST_CASE("BackwardNodeGradients names each node's input gradients as MXNet's backward nodes", "[executor]") {
  Symbol data = Symbol::Variable("data");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 2).SetInput("data", data).CreateSymbol("fc");
  Symbol act = OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", fc).CreateSymbol("act");
  NDArray dv(TShape({1, 3}), {1, 2, 3});
  auto exec = SimpleBind(act, Context::CPU(), {{"data", dv}}, {}, {{"data", OpReq::kNull}});
  CHECK(exec->BackwardNodeGradients().empty());
  exec->Forward(true);
  exec->Backward();
  std::vector<std::string> names;
  for (const auto& named : exec->BackwardNodeGradients()) names.push_back(named.first);
  // data takes no gradient: fc's backward gives its weight's and bias's; act's its one input's.
  CHECK(names == std::vector<std::string>{"fc_backward_output1", "fc_backward_output2", "act_backward_output"});
  for (const auto& named : exec->BackwardNodeGradients())
    if (named.first == "fc_backward_output1") CHECK(named.second.SharesStorageWith(exec->grad_dict().at("fc_weight")));
}

namespace {
// A test-only op that sleeps, recording when it ran, to observe scheduling.
std::atomic<int64_t> g_start[2], g_end[2];
int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
struct SleepParam : Parameter<SleepParam> {
  int slot;
  static void Declare(ParamDeclarer<SleepParam>& d) { d.field("slot", &SleepParam::slot); }
};
SYMBIND_REGISTER_OP(_test_sleep)
    .set_params<SleepParam>()
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_forward([](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>& in,
                    const std::vector<OpReq>&, const std::vector<NDArray>& out) {
      int s = a.param<SleepParam>().slot;
      g_start[s] = NowUs();
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      NDArray dst = out[0];
      in[0].CopyTo(&dst);
      g_end[s] = NowUs();
    });
}  // namespace

TEST_CASE("Independent branches run concurrently", "[executor][parallel]") {
  SetNumThreads(2);
  Symbol x = Symbol::Variable("x");
  Symbol a = Symbol::Create("_test_sleep", "a", {{"slot", "0"}}, {{"data", x}});
  Symbol b = Symbol::Create("_test_sleep", "b", {{"slot", "1"}}, {{"data", x}});
  Symbol sum = Symbol::Create("elemwise_add", "sum", {}, {{"lhs", a}, {"rhs", b}});
  auto exec = SimpleBind(sum, Context::CPU(), {{"x", NDArray(TShape({2}), {1, 2})}});
  exec->Forward(false);
  // The two sleeps overlap in time.
  CHECK(g_start[0] < g_end[1]);
  CHECK(g_start[1] < g_end[0]);
  CHECK(exec->outputs()[0].GetFlat(1) == 4.0f);
  SetNumThreads(0);
}

TEST_CASE("Parallel results equal a 1-thread run exactly", "[executor][parallel]") {
  Symbol data = Symbol::Variable("data");
  // Two wide branches, large enough that GEMMs and loops split into parallel blocks.
  Symbol b1 = OpBuilder("FullyConnected").SetParam("num_hidden", 512).SetInput("data", data).CreateSymbol("b1");
  Symbol b2 = OpBuilder("FullyConnected").SetParam("num_hidden", 512).SetInput("data", data).CreateSymbol("b2");
  Symbol t1 = OpBuilder("Activation").SetParam("act_type", "tanh").SetInput("data", b1).CreateSymbol("t1");
  Symbol s = Symbol::Create("elemwise_mul", "s", {}, {{"lhs", t1}, {"rhs", b2}});
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", s).CreateSymbol("fc");
  Symbol net = OpBuilder("SoftmaxOutput").SetInput("data", fc).CreateSymbol("softmax");
  NDArray x = RandomArray(TShape({256, 300}), 4);
  NDArray label(TShape({256}));
  for (int i = 0; i < 256; ++i) label.SetFlat(i, static_cast<float>(i % 10));
  auto run = [&](int threads) {
    SetNumThreads(threads);
    auto exec = SimpleBind(net, Context::CPU(), {{"data", x}, {"softmax_label", label}});
    exec->Forward(true);
    exec->Backward();
    std::vector<NDArray> result{exec->outputs()[0].Copy()};
    for (auto& g : exec->grad_arrays())
      if (!g.is_none()) result.push_back(g.Copy());
    return result;
  };
  auto one = run(1), two = run(2);
  SetNumThreads(0);
  REQUIRE(one.size() == two.size());
  for (size_t k = 0; k < one.size(); ++k)
    CHECK(std::memcmp(one[k].raw_data(), two[k].raw_data(), one[k].bytes()) == 0);
}

TEST_CASE("A 200k-node chain is built, ordered, inferred and freed without deep recursion", "[symbol][graph]") {
  Symbol h = Symbol::Variable("x");
  for (int i = 0; i < 200000; ++i)
    h = Symbol::Create("_mul_scalar", "m" + std::to_string(i), {{"scalar", "1"}}, {{"data", h}});
  Graph g(h);
  CHECK(g.num_nodes() == 200001);
  CHECK(InferShape(h, {{"x", TShape({2})}}).out_shapes[0] == TShape({2}));
}

TEST_CASE("Entry dtypes follow the bound arrays", "[executor][dtype]") {
  Symbol x = Symbol::Variable("x");
  Symbol c = Symbol::Create("Cast", "c", {{"dtype", "float32"}}, {{"data", x}});
  NDArray ints(TShape({3}), DType::kInt32);
  ints.SetFlat(0, 1);
  ints.SetFlat(1, -2);
  ints.SetFlat(2, 7);
  auto exec = SimpleBind(c, Context::CPU(), {{"x", ints}}, {}, {{"x", OpReq::kNull}});
  exec->Forward(false);
  CHECK(exec->outputs()[0].dtype() == DType::kFloat32);
  CHECK(exec->outputs()[0].ToVector() == std::vector<float>{1, -2, 7});
  // A float64 input through an op that keeps its type gives a float64 output.
  Symbol id = Symbol::Create("_copy", "id", {}, {{"data", x}});
  auto exec64 = SimpleBind(id, Context::CPU(), {{"x", NDArray(TShape({2}), DType::kFloat64)}}, {}, {{"x", OpReq::kNull}});
  CHECK(exec64->outputs()[0].dtype() == DType::kFloat64);
}

TEST_CASE("Type inference rejects integer data for float32 kernels at bind", "[executor][dtype]") {
  Symbol x = Symbol::Variable("x");
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 2).SetInput("data", x).CreateSymbol("fc");
  for (DType t : {DType::kInt8, DType::kInt32, DType::kUint8}) {
    INFO(DTypeName(t));
    CHECK_THROWS_WITH(InferType(fc, {{"x", t}}),
                      Catch::Contains(std::string("Error in operator fc (FullyConnected): unsupported dtype for "
                                                  "input 'data' (x): expected a floating type, got ") + DTypeName(t)));
  }
  for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16})
    CHECK(InferType(fc, {{"x", t}}).out_types[0] == t);
  // A float32 weight next to int8 data is a plain inconsistency, reported as before.
  CHECK_THROWS_WITH(InferType(fc, {{"x", DType::kInt8}, {"fc_weight", DType::kFloat32}}),
                    Catch::Contains("Type inconsistent"));
  // Both are TypeErrors, not ShapeErrors (a caller can tell a dtype problem from a shape one).
  CHECK_THROWS_AS(InferType(fc, {{"x", DType::kInt8}}), TypeError);
  CHECK_THROWS_AS(InferType(fc, {{"x", DType::kInt8}, {"fc_weight", DType::kFloat32}}), TypeError);
  // Copies, reshapes and casts take any dtype; Cast back to float32 feeds a float op.
  Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(-1,)"}}, {{"data", x}});
  Symbol c = Symbol::Create("Cast", "c", {{"dtype", "float32"}}, {{"data", r}});
  Symbol relu = Symbol::Create("Activation", "relu", {{"act_type", "relu"}}, {{"data", c}});
  NDArray ints(TShape({2, 2}), DType::kInt32);
  for (int64_t i = 0; i < 4; ++i) ints.SetFlat(i, static_cast<float>(i) - 2);
  auto exec = SimpleBind(relu, Context::CPU(), {{"x", ints}}, {}, {{"x", OpReq::kNull}});
  exec->Forward(false);
  CHECK(exec->outputs()[0].ToVector() == std::vector<float>{0, 0, 0, 1});
  // Indices and conditions may be integers; the data they select stays float32.
  Symbol take = Symbol::Create("take", "t", {}, {{"a", Symbol::Variable("a")}, {"indices", Symbol::Variable("i")}});
  NDArray idx(TShape({2}), DType::kInt32);
  idx.SetFlat(0, 2);
  idx.SetFlat(1, 0);
  auto texec = SimpleBind(take, Context::CPU(), {{"a", NDArray(TShape({3}), {5, 6, 7})}, {"i", idx}},
                          {}, {{"a", OpReq::kNull}, {"i", OpReq::kNull}});
  texec->Forward(false);
  CHECK(texec->outputs()[0].ToVector() == std::vector<float>{7, 5});
  CHECK_THROWS_WITH(InferType(take, {{"a", DType::kInt32}, {"i", DType::kInt32}}),
                    Catch::Contains("unsupported dtype for input 'a' (a): expected a floating type, got int32"));
  Symbol where = Symbol::Create("where", "w", {}, {{"condition", Symbol::Variable("cond")},
                                                  {"x", Symbol::Variable("wx")}, {"y", Symbol::Variable("wy")}});
  CHECK_NOTHROW(InferType(where, {{"cond", DType::kUint8}}));
  // An output dtype the next op cannot read: Cast to int32 into relu.
  Symbol to_int = Symbol::Create("Cast", "to_int", {{"dtype", "int32"}}, {{"data", x}});
  Symbol relu2 = Symbol::Create("Activation", "relu2", {{"act_type", "relu"}}, {{"data", to_int}});
  CHECK_THROWS_WITH(InferType(relu2, {}), Catch::Contains("input 'data' (to_int): expected a floating type, got int32"));
}

TEST_CASE("float16, bfloat16 and float64 arrays run float32 kernels through float32 copies", "[executor][dtype]") {
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "3"}}, {{"data", Symbol::Variable("x")}});
  Symbol act = Symbol::Create("Activation", "act", {{"act_type", "tanh"}}, {{"data", fc}});
  Symbol net = Symbol::Create("MakeLoss", "loss", {}, {{"data", act}});
  const NDArray x = RandomArray(TShape({4, 5}), 1), w = RandomArray(TShape({3, 5}), 2), b = RandomArray(TShape({3}), 3);
  auto run = [&](DType t) {
    auto exec = SimpleBind(net, Context::CPU(),
                           {{"x", x.AsType(t)}, {"fc_weight", w.AsType(t)}, {"fc_bias", b.AsType(t)}}, {}, {});
    exec->Forward(true);
    exec->Backward({});
    REQUIRE(exec->outputs()[0].dtype() == t);
    REQUIRE(exec->grad_arrays()[1].dtype() == t);
    return std::make_pair(exec->outputs()[0].AsType(DType::kFloat32), exec->grad_arrays()[1].AsType(DType::kFloat32));
  };
  const auto want = run(DType::kFloat32);
  for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    INFO(DTypeName(t));
    // The kernels see the inputs rounded to t and computed in float32; outputs rounded to t.
    const float tol = t == DType::kFloat64 ? 1e-6f : t == DType::kFloat16 ? 4e-3f : 3e-2f;
    const auto got = run(t);
    RequireClose(got.first, want.first, tol, tol);
    RequireClose(got.second, want.second, tol, tol);
  }
}

namespace {
// Sets the bind memory limit for one scope.
struct ScopedBindLimit {
  explicit ScopedBindLimit(uint64_t bytes) { SetMaxBindBytes(bytes); }
  ~ScopedBindLimit() { SetMaxBindBytes(0); }
};

// MemTotal from /proc/meminfo, in bytes: an independent reading of the physical memory.
uint64_t MemTotalBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  uint64_t kb = 0;
  while (f >> key >> kb >> unit)
    if (key == "MemTotal:") return kb * 1024;
  return 0;
}
}  // namespace

TEST_CASE("Binding refuses arrays beyond the memory limit before allocating", "[executor][memory]") {
  // FullyConnected(num_hidden=4) on (2,3) data: SimpleBind allocates fc_weight (4,3) and
  // fc_bias (4,) with gradients, and the output (2,4): (12 + 12 + 4 + 4 + 8) * 4 = 160 bytes.
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 4).SetInput("data", Symbol::Variable("data"))
                  .CreateSymbol("fc");
  NDArray data(TShape({2, 3}));
  {
    ScopedBindLimit limit(160);
    CHECK_NOTHROW(SimpleBind(fc, Context::CPU(), {{"data", data}}));
  }
  {
    ScopedBindLimit limit(159);
    CHECK_THROWS_WITH(SimpleBind(fc, Context::CPU(), {{"data", data}}),
                      Catch::Contains("SimpleBind: the 5 arrays to allocate need 160 bytes together, more "
                                      "than the bind memory limit of 159 bytes"));
    CHECK_THROWS_AS(SimpleBind(fc, Context::CPU(), {{"data", data}}), OutOfMemoryError);
    // Bind allocates only the output (32 bytes) here.
    std::vector<NDArray> args{data, NDArray(TShape({4, 3})), NDArray(TShape({4}))};
    CHECK_NOTHROW(Bind(fc, Context::CPU(), args, {}, {}, {}));
  }
  {
    ScopedBindLimit limit(31);
    std::vector<NDArray> args{data, NDArray(TShape({4, 3})), NDArray(TShape({4}))};
    CHECK_THROWS_WITH(Bind(fc, Context::CPU(), args, {}, {}, {}),
                      Catch::Contains("Bind: array 'fc_output' of shape (2,4) (float32) needs 32 bytes"));
  }
  // The default is well below the machine's physical memory (it was all of it): 2 GiB, or half
  // the memory when that is less. Absurd shapes fail at bind.
  const uint64_t mem = MemTotalBytes();
  REQUIRE(mem > 0);
  CHECK(MaxBindBytes() == std::min(kDefaultMaxBindBytes, mem / 2));
  SimpleBindOptions o;
  o.shapes["data"] = TShape({1000000, 1000000});
  CHECK_THROWS_WITH(SimpleBind(fc, Context::CPU(), {}, {}, {}, {}, o),
                    Catch::Contains("array 'data' of shape (1000000,1000000) (float32) needs 4000000000000 bytes"));
  // Dims whose byte count overflows 64 bits still fail cleanly.
  o.shapes["data"] = TShape({int64_t{1} << 40, int64_t{1} << 40});
  CHECK_THROWS_AS(SimpleBind(fc, Context::CPU(), {}, {}, {}, {}, o), OutOfMemoryError);
}

TEST_CASE("The bind memory limit refuses larger binds, SYMBIND_MAX_BIND_BYTES is parsed strictly",
          "[executor][memory]") {
  CHECK(ParseMaxBindBytes("1000") == 1000);
  ScopedBindLimit bytes_1000(1000);
  CHECK(MaxBindBytes() == 1000);
  Symbol relu = Symbol::Create("Activation", "relu", {{"act_type", "relu"}}, {{"data", Symbol::Variable("data")}});
  CHECK_NOTHROW(SimpleBind(relu, Context::CPU(), {{"data", NDArray(TShape({250}))}}));  // output: 1000 bytes
  CHECK_THROWS_AS(SimpleBind(relu, Context::CPU(), {{"data", NDArray(TShape({251}))}}), OutOfMemoryError);
  CHECK_THROWS_WITH(ParseMaxBindBytes("lots"),
                    Catch::Contains("SYMBIND_MAX_BIND_BYTES must be a positive byte count, got 'lots'"));
}
