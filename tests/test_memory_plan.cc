// The memory planner (executor/memory_plan.h) reuses intermediate buffers in executors that
// compute no gradient. Planned runs must equal unplanned runs bit for bit, also when the
// shared buffers start as NaN (so no kernel may rely on zeroed outputs) and when parallel
// branches run on several threads.
#include <cstdlib>
#include <random>

#include <symbind/executor/memory_plan.h>
#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/quantize.h>

#include "op_test_util.h"
#include "shared_dir.h"

using namespace symbind;

namespace {
const std::string kShared = symbind_test::SharedDir();

struct PlanRun {
  std::vector<std::vector<float>> outputs;
  ExecutorMemory memory;
};

// Binds without gradients with buffer sharing `sharing` and runs inference twice.
PlanRun RunInference(const Symbol& sym, const std::map<std::string, NDArray>& args,
                     const std::map<std::string, NDArray>& aux, BufferSharing sharing,
                     SimpleBindOptions options = {}) {
  options.buffer_sharing = sharing;
  std::map<std::string, OpReq> no_grads;
  for (auto& n : sym.ListArguments()) no_grads[n] = OpReq::kNull;
  auto exec = SimpleBind(sym, Context::CPU(), args, {}, no_grads, aux, options);
  PlanRun r;
  for (int run = 0; run < 2; ++run) {
    exec->Forward(false);
    r.outputs.clear();
    for (auto& o : exec->outputs()) r.outputs.push_back(o.ToVector());
  }
  r.memory = exec->memory();
  return r;
}

// Same inputs and weights, planned (buffers poisoned with NaN) and unplanned.
size_t CheckPlannedEqualsUnplanned(const Symbol& sym, const std::map<std::string, NDArray>& args,
                                 const std::map<std::string, NDArray>& aux,
                                 const SimpleBindOptions& options = {}) {
  PlanRun plain = RunInference(sym, args, aux, BufferSharing::kOff, options);
  PlanRun planned = RunInference(sym, args, aux, BufferSharing::kOnNaNFilled, options);
  CHECK_FALSE(plain.memory.planned);
  CHECK(planned.memory.planned);
  CHECK(planned.memory.output_bytes < plain.memory.output_bytes);
  CHECK(plain.memory.output_bytes == plain.memory.unplanned_bytes);
  REQUIRE(plain.outputs.size() == planned.outputs.size());
  for (size_t i = 0; i < plain.outputs.size(); ++i) {
    INFO("output " << i);
    CHECK(plain.outputs[i] == planned.outputs[i]);
  }
  CHECK(plain.memory.joined_in_place == 0);
  return planned.memory.joined_in_place;
}

// The zoo graph up to its softmax input, bound with Gaussian weights shared by both runs.
// Returns how many Concat inputs the planned run wrote in place.
size_t CheckZooGraph(const std::string& file, const TShape& data_shape) {
  Symbol full = LoadSymbolFile(kShared + "/models/symbols/" + file);
  Symbol logits = full.GetChildren()[0];
  std::map<std::string, NDArray> args, aux;
  auto init = SimpleBind(logits, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", data_shape}}, 7});
  args = init->arg_dict();
  aux = init->aux_dict();
  return CheckPlannedEqualsUnplanned(logits, args, aux);
}

Symbol Conv(const Symbol& x, int filters, int kernel, const std::string& name) {
  return OpBuilder("Convolution").SetParam("kernel", TShape({kernel, kernel}))
      .SetParam("pad", TShape({kernel / 2, kernel / 2})).SetParam("num_filter", filters)
      .SetInput("data", x).CreateSymbol(name);
}
Symbol Act(const Symbol& x, const std::string& type, const std::string& name) {
  return OpBuilder("Activation").SetParam("act_type", type).SetInput("data", x).CreateSymbol(name);
}
Symbol Join(const std::vector<Symbol>& parts, int dim, const std::string& name) {
  OpBuilder b("Concat");
  b.SetParam("num_args", parts.size()).SetParam("dim", dim);
  for (auto& p : parts) b.PushInput(p);
  return b.CreateSymbol(name);
}
// SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands joined on the channels.
Symbol Fire(const Symbol& x, const std::string& name) {
  Symbol squeeze = Act(Conv(x, 3, 1, name + "_s"), "relu", name + "_s_relu");
  Symbol e1 = Act(Conv(squeeze, 4, 1, name + "_e1"), "relu", name + "_e1_relu");
  Symbol e3 = Act(Conv(squeeze, 5, 3, name + "_e3"), "relu", name + "_e3_relu");
  return Join({e1, e3}, 1, name + "_concat");
}

// Binds `sym` (input "data" of `data_shape`, other shapes from `shapes`, Gaussian weights) without gradients, planned
// with NaN-filled buffers and unplanned, on 1 and 2 threads; every output must agree bit for
// bit. Returns how many Concat inputs the planned run wrote in place.
size_t CheckJoins(const Symbol& sym, const TShape& data_shape, std::map<std::string, TShape> shapes = {}) {
  shapes["data"] = data_shape;
  auto init = SimpleBind(sym, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{shapes, 11});
  auto args = init->arg_dict();
  args["data"] = symbind::test::RandomArray(data_shape, 5);
  size_t joined = 0;
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    SetNumThreads(threads);
    PlanRun plain = RunInference(sym, args, init->aux_dict(), BufferSharing::kOff);
    PlanRun planned = RunInference(sym, args, init->aux_dict(), BufferSharing::kOnNaNFilled);
    CHECK(plain.memory.joined_in_place == 0);
    REQUIRE(plain.outputs.size() == planned.outputs.size());
    for (size_t i = 0; i < plain.outputs.size(); ++i) {
      INFO("output " << i);
      CHECK(plain.outputs[i] == planned.outputs[i]);
    }
    joined = planned.memory.joined_in_place;
  }
  SetNumThreads(0);
  return joined;
}
}  // namespace

TEST_CASE("memory plan: zoo graphs equal their unplanned runs bit for bit", "[executor][memory_plan][shared]") {
  // CheckZooGraph runs each graph on 1 and 2 threads.
  CheckZooGraph("resnet-18-symbol.json", TShape({1, 3, 96, 96}));
  // Batch 2 joins nothing (each image's channels are a separate run of the Concat's output,
  // and the expands' relu ops cannot write so; a Predictor fuses them into the convolutions,
  // which can); batch 1 writes both expands of all 8 fire modules in place.
  CHECK(CheckZooGraph("squeezenet_v1.1-symbol.json", TShape({2, 3, 96, 96})) == 0);
  CHECK(CheckZooGraph("squeezenet_v1.1-symbol.json", TShape({1, 3, 96, 96})) == 16);
#ifndef SYMBIND_SANITIZER_BUILD
  // Their dense layers (61M and 134M parameters) were most of this test's time under the
  // sanitizers; the planner's code is the same for the two graphs above.
  CheckZooGraph("caffenet-symbol.json", TShape({1, 3, 227, 227}));
  CheckZooGraph("fcn32s-symbol.json", TShape({1, 3, 64, 64}));
#endif
}

TEST_CASE("memory plan: MTCNN nets with real weights equal their unplanned runs", "[executor][memory_plan][shared]") {
  const std::pair<const char*, TShape> nets[] = {{"det1", TShape({1, 3, 120, 160})},
                                                 {"det2", TShape({8, 3, 24, 24})},
                                                 {"det3", TShape({4, 3, 48, 48})}};
  for (auto& [name, shape] : nets) {
    INFO(name);
    Symbol sym;
    std::map<std::string, NDArray> args, aux;
    LoadCheckpoint(kShared + "/models/mtcnn/" + name, 1, &sym, &args, &aux);
    args["data"] = symbind::test::RandomArray(shape, 3);
    CheckPlannedEqualsUnplanned(sym, args, aux);
  }
}

TEST_CASE("memory plan: ResNet-18 keeps a fraction of the unplanned bytes", "[executor][memory_plan][shared]") {
  Symbol sym = LoadSymbolFile(kShared + "/models/symbols/resnet-18-symbol.json");
  SimpleBindOptions options{{{"data", TShape({1, 3, 224, 224})}}, 0};
  PlanRun planned = RunInference(sym, {}, {}, BufferSharing::kOn, options);
  // Largest activation pair: conv0's 64x112x112 output and its ReLU's, 3.2 MB each.
  const size_t largest_pair = 2 * 64 * 112 * 112 * sizeof(float);
  CHECK(planned.memory.planned);
  CHECK(planned.memory.output_bytes <= 2 * largest_pair);
  CHECK(planned.memory.unplanned_bytes > 4 * planned.memory.output_bytes);
}

TEST_CASE("memory plan: executors that compute gradients keep every buffer", "[executor][memory_plan][shared]") {
  Symbol sym = LoadSymbolFile(kShared + "/models/symbols/squeezenet_v1.1-symbol.json");
  auto exec = SimpleBind(sym, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", TShape({1, 3, 64, 64})}}, 0});
  CHECK_FALSE(exec->memory().planned);
  CHECK(exec->memory().output_bytes == exec->memory().unplanned_bytes);
}

TEST_CASE("memory plan: Concat inputs written in place equal the unplanned run", "[executor][memory_plan][join]") {
  Symbol data = Symbol::Variable("data");
  SECTION("fire modules, batch 1 in place, batch 2 copied") {
    Symbol net = Conv(Fire(Fire(data, "fire1"), "fire2"), 3, 1, "head");
    CHECK(CheckJoins(net, TShape({1, 3, 9, 9})) == 4);
    CHECK(CheckJoins(net, TShape({2, 3, 9, 9})) == 0);
  }
  SECTION("batch > 1: convolutions write their images in place, the Concat's image apart") {
    // Convolutions (Op::strided_output) straight into the Concat: 1x1 on the packed GEMM,
    // 3x3 by Winograd (16 channels, 18 tiles), a depthwise one through a temporary; an
    // activation's output beside them is copied.
    Symbol x = Conv(data, 16, 1, "x");
    Symbol depthwise = OpBuilder("Convolution").SetParam("kernel", TShape({3, 3})).SetParam("pad", TShape({1, 1}))
                           .SetParam("num_filter", 16).SetParam("num_group", 16).SetInput("data", x).CreateSymbol("dw");
    Symbol net = Join({Conv(x, 5, 1, "e1"), Conv(x, 16, 3, "e3"), depthwise, Act(x, "relu", "x_relu")}, 1, "concat");
    CHECK(CheckJoins(Conv(net, 3, 1, "head"), TShape({2, 3, 12, 12})) == 3);
    CHECK(CheckJoins(Conv(net, 3, 1, "head"), TShape({1, 3, 12, 12})) == 4);
  }
  SECTION("on axis 0 the parts are contiguous for any batch") {
    Symbol net = Join({Act(Conv(data, 2, 3, "a"), "relu", "a_relu"), Conv(data, 2, 1, "b")}, 0, "rows");
    CHECK(CheckJoins(Conv(net, 2, 1, "head"), TShape({3, 2, 5, 5})) == 2);
  }
  SECTION("nested joins, a multi-output producer, a repeated input and a variable") {
    Symbol parts = OpBuilder("SliceChannel").SetParam("num_outputs", 3).SetParam("axis", 1)
                       .SetInput("data", Conv(data, 6, 3, "c")).CreateSymbol("parts");
    Symbol inner = Join({parts[2], parts[0]}, 1, "inner");
    // parts[1] twice: it cannot sit in both places, so both are copies; `extra` is bound.
    Symbol outer = Join({inner, parts[1], Symbol::Variable("extra"), parts[1]}, 1, "outer");
    CHECK(CheckJoins(Conv(outer, 3, 1, "head"), TShape({1, 2, 5, 5}), {{"extra", TShape({1, 2, 5, 5})}}) == 3);
  }
}

TEST_CASE("memory plan: a quantized concat's levels written in place equal the unplanned run", "[executor][memory_plan][join][quantize]") {
  // Two int8 fire modules: in the oneDNN form the expands share the concat's range (MXNet's
  // scale alignment), so their levels are written in place and left there; in the contrib form
  // each is requantized to its own range and rescaled in place. Both bit for bit as unplanned.
  // fire2's 1x1 expand is also read by a layer that runs after the concat (late): its levels
  // must stay as they are, so it alone stays apart (the concat rescales it in both forms: the
  // alignment takes only outputs the concat alone reads) and three inputs are joined.
  const Symbol fire1 = Fire(Symbol::Variable("data"), "fire1");
  const Symbol squeeze = Act(Conv(fire1, 3, 1, "fire2_s"), "relu", "fire2_s_relu");
  const Symbol e1 = Act(Conv(squeeze, 4, 1, "fire2_e1"), "relu", "fire2_e1_relu");
  const Symbol e3 = Act(Conv(squeeze, 5, 3, "fire2_e3"), "relu", "fire2_e3_relu");
  const Symbol after = Conv(Join({e1, e3}, 1, "fire2_concat"), 4, 1, "after");
  const Symbol late = Conv(e1, 4, 1, "late");
  const Symbol net = Conv(OpBuilder("elemwise_add").SetInput("lhs", after).SetInput("rhs", late).CreateSymbol("sum"), 3, 1, "head");
  const TShape shape({1, 3, 9, 9});
  auto init = SimpleBind(net, Context::CPU(), {}, {}, {}, {}, SimpleBindOptions{{{"data", shape}}, 11});
  std::map<std::string, NDArray> params = init->arg_dict();
  params.erase("data");
  std::vector<std::map<std::string, NDArray>> calib;
  for (uint64_t seed = 0; seed < 2; ++seed) calib.push_back({{"data", symbind::test::RandomArray(shape, 30 + seed)}});
  for (const std::string form : {"onednn", "contrib"}) {
    INFO(form);
    QuantizeOptions options;
    options.form = form;
    options.calib_mode = CalibMode::kNaive;
    const QuantizedModel q = QuantizeModel(net, params, init->aux_dict(), calib, options);
    std::map<std::string, NDArray> args = q.args;
    args["data"] = symbind::test::RandomArray(shape, 5);
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      SetNumThreads(threads);
      const PlanRun plain = RunInference(q.symbol, args, q.aux, BufferSharing::kOff);
      const PlanRun planned = RunInference(q.symbol, args, q.aux, BufferSharing::kOnNaNFilled);
      CHECK(planned.memory.joined_in_place == 3);
      REQUIRE(plain.outputs.size() == planned.outputs.size());
      for (size_t i = 0; i < plain.outputs.size(); ++i) CHECK(plain.outputs[i] == planned.outputs[i]);
    }
    SetNumThreads(0);
  }
}

TEST_CASE("memory plan: a Concat input that is also an output or read later keeps its value", "[executor][memory_plan][join]") {
  Symbol data = Symbol::Variable("data");
  Symbol squeeze = Act(Conv(data, 3, 1, "s"), "relu", "s_relu");
  Symbol e1 = Conv(squeeze, 4, 1, "e1");
  Symbol e3 = Act(Conv(squeeze, 5, 3, "e3"), "relu", "e3_relu");
  Symbol after = Conv(Join({e1, e3}, 1, "concat"), 9, 1, "after");
  SECTION("an input the user reads as an output has its own array") {
    CHECK(CheckJoins(Symbol::Group({after, e1}), TShape({1, 3, 7, 7})) == 1);
  }
  // DFS order runs `after` (the Concat's only reader) before these late readers of e1: e1's
  // slice must stay allocated, and not be overwritten, until they have run.
  SECTION("an input read again after the Concat's last reader, by an op with a new output") {
    // Its output is exactly the Concat's size, the best fit for the Concat's block if freed.
    Symbol late = Conv(e1, 9, 1, "late");
    Symbol sum = OpBuilder("broadcast_add").SetInput("lhs", after).SetInput("rhs", late).CreateSymbol("sum");
    CHECK(CheckJoins(Conv(sum, 2, 3, "head"), TShape({1, 3, 7, 7})) == 2);
  }
  SECTION("an input read again after the Concat's last reader, by an in-place op") {
    Symbol late = Act(e1, "sigmoid", "e1_sigmoid");
    Symbol sum = OpBuilder("broadcast_add").SetInput("lhs", Conv(after, 4, 1, "after4"))
                     .SetInput("rhs", late).CreateSymbol("sum");
    CHECK(CheckJoins(Conv(sum, 2, 3, "head"), TShape({1, 3, 7, 7})) == 2);
  }
}

namespace {
// PlanMemory's inputs for `g` with the given bytes per entry: variables and heads kept, no
// in-place writes, no joins.
MemoryPlanInputs PlainInputs(const Graph& g, const std::vector<size_t>& entry_bytes) {
  MemoryPlanInputs in;
  in.entry_bytes = entry_bytes;
  in.keep.assign(g.num_entries(), false);
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    if (g.node(n).node->is_variable()) {
      in.keep[g.entry_id(n, 0)] = true;
      continue;
    }
    in.op_nodes.push_back(n);
    in.inplace.push_back(false);
  }
  for (auto& h : g.heads()) in.keep[g.entry_id(h)] = true;
  return in;
}
}  // namespace

TEST_CASE("memory plan: entries alive at one time never share bytes, and a chain takes its largest live pair",
          "[executor][memory_plan]") {
  SECTION("random graphs, random sizes") {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<Symbol> made{Symbol::Variable("x")};
      for (int i = 0; i < 40; ++i) {
        const Symbol& a = made[rng() % made.size()];
        const Symbol& b = made[rng() % made.size()];
        const std::string name = "n" + std::to_string(i);
        made.push_back(rng() % 2 ? Act(a, "relu", name)
                                 : OpBuilder("elemwise_add").SetInput("lhs", a).SetInput("rhs", b).CreateSymbol(name));
      }
      const Graph g(Symbol::Group({made.back(), made[made.size() / 2]}));
      std::vector<size_t> bytes(g.num_entries());
      for (auto& b : bytes) b = 64 * (1 + rng() % 100) - rng() % 64;
      const MemoryPlanInputs in = PlainInputs(g, bytes);
      const MemoryPlan plan = PlanMemory(g, in);
      // Each planned entry's lifetime, from its writer's task to its last reader's.
      std::vector<uint32_t> first(g.num_entries(), 0), last(g.num_entries(), 0);
      for (uint32_t t = 0; t < in.op_nodes.size(); ++t) {
        const uint32_t out = g.entry_id(in.op_nodes[t], 0);
        first[out] = last[out] = t;
        for (auto& input : g.node(in.op_nodes[t]).inputs) last[g.entry_id(input)] = t;
      }
      std::vector<uint32_t> planned;
      for (uint32_t e = 0; e < g.num_entries(); ++e) {
        if (in.keep[e]) CHECK(plan.block_of_entry[e] == MemoryPlan::kOwnStorage);
        if (plan.block_of_entry[e] == MemoryPlan::kOwnStorage) continue;
        CHECK(plan.offset_of_entry[e] % MemoryPlan::kAlignment == 0);
        CHECK(plan.offset_of_entry[e] + bytes[e] <= plan.block_bytes.at(0));
        planned.push_back(e);
      }
      // What must run before what: data edges and the plan's reuse dependencies, closed.
      const size_t tasks = in.op_nodes.size();
      std::vector<std::vector<bool>> before(tasks, std::vector<bool>(tasks, false));
      std::vector<uint32_t> task_of(g.num_nodes(), 0);
      for (uint32_t t = 0; t < tasks; ++t) task_of[in.op_nodes[t]] = t;
      for (uint32_t t = 0; t < tasks; ++t)
        for (auto& input : g.node(in.op_nodes[t]).inputs)
          if (!g.node(input.node_id).node->is_variable()) before[task_of[input.node_id]][t] = true;
      for (auto& [x, y] : plan.reuse_dependencies) before.at(x).at(y) = true;
      for (size_t k = 0; k < tasks; ++k)
        for (size_t i = 0; i < tasks; ++i)
          if (before[i][k])
            for (size_t j = 0; j < tasks; ++j)
              if (before[k][j]) before[i][j] = true;
      for (uint32_t a : planned)
        for (uint32_t b : planned) {
          if (a == b) continue;
          INFO("trial " << trial << ": entries " << a << " and " << b);
          const bool share = plan.offset_of_entry[a] < plan.offset_of_entry[b] + bytes[b] &&
                             plan.offset_of_entry[b] < plan.offset_of_entry[a] + bytes[a];
          if (first[b] <= last[a] && first[a] <= last[b]) CHECK_FALSE(share);  // alive together
          // b takes bytes a held: every task that touched a runs before b's writer.
          if (share && last[a] < first[b])
            for (uint32_t t = 0; t < tasks; ++t) {
              bool touched = t == first[a];
              for (auto& input : g.node(in.op_nodes[t]).inputs) touched = touched || g.entry_id(input) == a;
              if (touched && t != first[b]) CHECK(before[t][first[b]]);
            }
        }
    }
  }
  SECTION("a chain that narrows and widens (MTCNN's P-Net) needs no more than its largest live pair") {
    Symbol x = Symbol::Variable("x");
    Symbol net = Act(Act(Act(Act(Act(x, "relu", "a"), "relu", "b"), "relu", "c"), "relu", "d"), "relu", "head");
    const Graph g(net);
    std::vector<size_t> bytes(g.num_entries(), 0);
    const std::map<std::string, size_t> kib = {{"a", 10700}, {"b", 2700}, {"c", 4200}, {"d", 8300}, {"head", 500}};
    for (uint32_t n = 0; n < g.num_nodes(); ++n)
      if (!g.node(n).node->is_variable()) bytes[g.entry_id(n, 0)] = kib.at(g.node(n).node->name()) << 10;
    const MemoryPlan plan = PlanMemory(g, PlainInputs(g, bytes));
    CHECK(plan.block_bytes == std::vector<size_t>{size_t{10700 + 2700} << 10});
  }
}
