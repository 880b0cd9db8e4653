// Facts registered on ops (Op::mac_count, Op::argument_docs), checked against the ops' own
// shapes: multiply-adds against a loop that counts every multiply of the naive definition.
#include <catch2/catch.hpp>

#include <symbind/core/graph.h>
#include <symbind/core/op_docs.h>

#include <algorithm>

namespace symbind {
namespace {

// The op's mac_count on the shapes inferred for one node with these inputs.
int64_t MacCount(const std::string& op_name, const KwArgs& params,
                 const std::map<std::string, TShape>& input_shapes) {
  const Op& op = OpRegistry::Global().Get(op_name);
  std::vector<std::pair<std::string, Symbol>> inputs;
  for (auto& [name, shape] : input_shapes) inputs.emplace_back(name, Symbol::Variable(name));
  const Symbol s = Symbol::Create(op_name, "node", params, inputs);
  const ShapeInferResult r = InferShape(s, input_shapes);
  std::vector<TShape> in = r.arg_shapes;
  in.insert(in.end(), r.aux_shapes.begin(), r.aux_shapes.end());
  NodeAttrs attrs;
  attrs.op = &op;
  attrs.dict = params;
  op.ParseAttrs(&attrs);
  REQUIRE(op.mac_count);
  return op.mac_count(attrs, in, r.out_shapes);
}

// Iterations of loops nested with these extents (outermost first), counted one by one: the
// multiplies of a naive kernel whose innermost statement is one multiply-add.
int64_t CountIterations(const std::vector<int64_t>& extents, size_t level = 0) {
  if (level == extents.size()) return 1;
  int64_t count = 0;
  for (int64_t i = 0; i < extents[level]; ++i) count += CountIterations(extents, level + 1);
  return count;
}

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }

}  // namespace

TEST_CASE("mac_count: convolution, deconvolution and dense ops against counted multiplies",
          "[ops][facts]") {
  SECTION("grouped 2-D convolution, stride 2, pad 1") {
    const int64_t N = 2, C = 4, F = 6, G = 2, H = 7, W = 9, K = 3;
    const int64_t OH = OutSize(H, K, 2, 1), OW = OutSize(W, K, 2, 1);
    // batch, filters, output positions, input channels of the group, kernel taps
    const int64_t multiplies = CountIterations({N, F, OH * OW, C / G, K * K});
    const KwArgs p{{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
                   {"num_filter", "6"}, {"num_group", "2"}};
    CHECK(MacCount("Convolution", p, {{"data", TShape({N, C, H, W})}}) == multiplies);
    // The fused op made by the inference rewrite counts as the convolution it replaces.
    KwArgs fused = p;
    fused["act_type"] = "relu";
    CHECK(MacCount("_fused_conv_act", fused, {{"data", TShape({N, C, H, W})}}) == multiplies);
  }
  SECTION("inverted residual block: expansion, depthwise and projection, stride 2") {
    const int64_t N = 2, C = 4, E = 12, F = 5, H = 7, W = 9, K = 3;
    const int64_t OH = OutSize(H, K, 2, 1), OW = OutSize(W, K, 2, 1);
    const int64_t multiplies = CountIterations({N, E, H * W, C}) + CountIterations({N, E, OH * OW, K * K}) +
                               CountIterations({N, F, OH * OW, E});
    CHECK(MacCount("_fused_inverted_residual",
                   {{"num_hidden", "12"}, {"num_filter", "5"}, {"kernel", "3"}, {"stride", "2"}, {"pad", "1"}},
                   {{"data", TShape({N, C, H, W})}}) == multiplies);
  }
  SECTION("grouped deconvolution: every input element meets num_filter/num_group kernels") {
    const int64_t N = 1, C = 4, F = 6, G = 2, H = 3, W = 5, K = 3;
    // batch, input channels, input positions, filters of the group, kernel taps
    const int64_t multiplies = CountIterations({N, C, H * W, F / G, K * K});
    CHECK(MacCount("Deconvolution",
                   {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"num_filter", "6"}, {"num_group", "2"}},
                   {{"data", TShape({N, C, H, W})}}) == multiplies);
  }
  SECTION("FullyConnected flattens its input") {
    CHECK(MacCount("FullyConnected", {{"num_hidden", "7"}}, {{"data", TShape({3, 2, 5})}}) ==
          3 * 7 * 10);
  }
  SECTION("dot and batch_dot, with and without transposes") {
    CHECK(MacCount("dot", {}, {{"lhs", TShape({3, 4})}, {"rhs", TShape({4, 5})}}) == 3 * 4 * 5);
    CHECK(MacCount("dot", {{"transpose_a", "True"}}, {{"lhs", TShape({4, 3})}, {"rhs", TShape({4, 5})}}) ==
          3 * 4 * 5);
    CHECK(MacCount("dot", {}, {{"lhs", TShape({6})}, {"rhs", TShape({6})}}) == 6);
    CHECK(MacCount("batch_dot", {{"transpose_b", "True"}},
                   {{"lhs", TShape({2, 3, 4})}, {"rhs", TShape({2, 5, 4})}}) == 2 * 3 * 4 * 5);
  }
  SECTION("ops that multiply no weights declare no count, legacy ones included") {
    for (const char* name : {"BatchNorm", "BatchNorm_v1", "Pooling", "Activation", "elemwise_add"})
      CHECK(!OpRegistry::Global().Get(name).mac_count);
  }
  SECTION("legacy Convolution_v1 counts as Convolution") {
    CHECK(MacCount("Convolution_v1", {{"kernel", "(1,1)"}, {"num_filter", "8"}},
                   {{"data", TShape({1, 3, 4, 4})}}) == 8 * 16 * 3);
  }
}

TEST_CASE("argument docs name inputs their op has", "[ops][facts]") {
  int documented = 0;
  for (const Op* op : OpRegistry::Global().ListOps()) {
    if (op->argument_docs.empty()) continue;
    ++documented;
    const OpInputList inputs = ListOpInputs(*op);
    // The subgraph ops' inputs come from their nested graph, which no default gives:
    // tests/ops/subgraph checks their docs against the inputs of real nested graphs.
    if (inputs.all_names.empty() && inputs.error.find("needs the nested graph") != std::string::npos) continue;
    for (auto& [input, doc] : op->argument_docs) {
      INFO(op->name << " documents '" << input << "'; " << inputs.error);
      CHECK(!doc.empty());
      CHECK(std::count(inputs.all_names.begin(), inputs.all_names.end(), input) == 1);
      CHECK(op->ArgumentDoc(input) == doc);
    }
  }
  CHECK(documented >= 10);
}

TEST_CASE("monitor input names: the op's input names, or input<i> where MXNet registers none", "[ops][facts][monitor]") {
  struct Case {
    std::string op;
    KwArgs params;
    std::vector<std::string> names;
  };
  // MXNet 1.9.1's test_op_all_names_monitor, and a few more of each kind.
  const std::vector<Case> cases = {
      {"Convolution", {{"kernel", "(2,2)"}, {"num_filter", "1"}}, {"data", "weight", "bias"}},
      {"FullyConnected", {{"num_hidden", "2"}, {"no_bias", "True"}}, {"data", "weight"}},
      {"BatchNorm", {}, {"data", "gamma", "beta", "moving_mean", "moving_var"}},
      {"Concat", {{"num_args", "2"}}, {"arg0", "arg1"}},
      {"softmax", {}, {"data"}},
      {"softmax", {{"use_length", "True"}}, {"data", "length"}},
      {"elemwise_add", {}, {"lhs", "rhs"}},
      {"Activation", {{"act_type", "relu"}}, {"input0"}},
      {"SoftmaxActivation", {}, {"input0"}},
      {"softmin", {}, {"input0"}},
      {"exp", {}, {"input0"}},
      {"relu", {}, {"input0"}},
      {"_plus_scalar", {{"scalar", "1"}}, {"input0"}},
      {"sum", {}, {"input0"}},
      {"Reshape", {{"shape", "(-1,)"}}, {"input0"}}};
  for (const Case& c : cases) {
    INFO(c.op);
    const Op& op = OpRegistry::Global().Get(c.op);
    NodeAttrs attrs;
    attrs.op = &op;
    attrs.dict = c.params;
    op.ParseAttrs(&attrs);
    CHECK(op.MonitorInputNames(attrs) == c.names);
  }
}

}  // namespace symbind
