#include <symbind/predict/onednn_fusion.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/io/symbol_json.h>
#include <symbind/ops/nn/convolution_param.h>
#include <symbind/ops/subgraph/sg_mkldnn_common.h>

namespace symbind {

namespace {

bool FusableActivation(const Node& n) {
  if (n.is_variable()) return false;
  const std::string& op = n.attrs.op->name;
  if (op != "Activation" && op != "LeakyReLU" && op != "clip") return false;
  try {
    subgraph::PostOp::FromNode(subgraph::InnerNode{n.attrs, {}});
    return true;
  } catch (const ParamError&) {
    return false;  // prelu, rrelu, softsign, ...: not a post-op
  }
}

bool IsVariable(const NodeEntry& e) { return e.node->is_variable(); }

// The nested graph of a fused node in MXNet's form (a JSON array of one graph): a variable per
// input of the fused node, named as the tensor it reads, then copies of `chain` reading them: the
// convolution its data, weight and bias, the add the sum (the last input).
std::string InnerGraphText(const std::vector<const Node*>& chain, const std::vector<NodeEntry>& inputs) {
  std::vector<NodeEntry> vars;
  std::set<std::string> names;
  for (const NodeEntry& e : inputs) {
    std::string name = EntryName(e);
    while (!names.insert(name).second) name += "_sum";  // a sum of the convolution's own data
    vars.push_back(Symbol::Variable(name).outputs()[0]);
  }
  NodeEntry last;
  for (const Node* n : chain) {
    auto copy = std::make_shared<Node>();
    copy->attrs = n->attrs;
    if (!last.node) {
      copy->inputs.assign(vars.begin(), vars.begin() + long(n->inputs.size()));
    } else {
      for (const NodeEntry& in : n->inputs) {
        const bool previous = std::find(chain.begin(), chain.end(), in.node.get()) != chain.end();
        copy->inputs.push_back(previous ? last : vars.back());
      }
    }
    last = NodeEntry{copy, 0};
  }
  const nlohmann::json graph = nlohmann::json::parse(SaveSymbolJSON(Symbol::FromEntries({last})));
  return nlohmann::json::array({graph}).dump();
}

}  // namespace

OneDnnFusion FuseOneDnnConvolutions(const Symbol& symbol, const std::set<std::string>& excluded) {
  OneDnnFusion result;
  result.symbol = symbol.Copy();
  const Graph g(result.symbol);
  std::vector<int> readers(g.num_entries(), 0);
  std::vector<std::vector<uint32_t>> consumers(g.num_nodes());
  for (uint32_t id = 0; id < g.num_nodes(); ++id)
    for (const auto& in : g.node(id).inputs) {
      ++readers[g.entry_id(in)];
      consumers[in.node_id].push_back(id);
    }
  for (const auto& h : g.heads()) readers[g.entry_id(h)] += 2;  // an output keeps its tensor

  // The one reader of node `id`'s only output, when it may join: not excluded, not claimed.
  std::vector<bool> claimed(g.num_nodes(), false);
  auto sole_reader = [&](uint32_t id) -> int {
    if (g.num_node_outputs(id) != 1 || readers[g.entry_id(id, 0)] != 1) return -1;
    const uint32_t next = consumers[id].front();
    const Node& n = *g.node(next).node;
    if (claimed[next] || excluded.count(n.name())) return -1;
    return int(next);
  };

  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const auto& info = g.node(id);
    const Node& conv = *info.node;
    if (conv.is_variable() || conv.attrs.op->name != "Convolution" || excluded.count(conv.name())) continue;
    const auto& p = conv.attrs.param<conv::ConvolutionParam>();
    if (p.kernel.ndim() != 2 || !IsVariable(conv.inputs[1]) || (!p.no_bias && !IsVariable(conv.inputs[2]))) continue;

    std::vector<uint32_t> chain = {id};
    bool with_act = false, with_sum = false, with_postsum_act = false;
    NodeEntry sum;
    int next = sole_reader(chain.back());
    if (next >= 0 && FusableActivation(*g.node(next).node)) {
      chain.push_back(uint32_t(next));
      with_act = true;
      next = sole_reader(chain.back());
    }
    if (next >= 0 && g.node(next).node->attrs.op->name == "elemwise_add") {
      const Node& add = *g.node(next).node;
      const Node* mine = g.node(chain.back()).node.get();
      const NodeEntry& other = add.inputs[0].node.get() == mine ? add.inputs[1] : add.inputs[0];
      if (other.node.get() != mine) {
        chain.push_back(uint32_t(next));
        with_sum = true;
        sum = other;
        next = sole_reader(chain.back());
        if (next >= 0 && FusableActivation(*g.node(next).node)) {
          chain.push_back(uint32_t(next));
          with_postsum_act = true;
        }
      }
    }
    for (uint32_t m : chain) claimed[m] = true;

    std::vector<NodeEntry> inputs(conv.inputs.begin(), conv.inputs.begin() + (p.no_bias ? 2 : 3));
    if (with_sum) inputs.push_back(sum);
    std::vector<const Node*> members;
    for (uint32_t m : chain) members.push_back(g.node(m).node.get());
    const std::string text = InnerGraphText(members, inputs);

    // The last member becomes the fused node, so that its readers and the outputs keep it.
    Node& fused = *g.node(chain.back()).node;
    std::vector<std::string>& names = result.members[fused.name()];
    for (const Node* m : members) names.push_back(m->name());
    auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    fused.attrs.op = &OpRegistry::Global().Get("_sg_mkldnn_conv");
    fused.attrs.dict = {{"with_act", flag(with_act)},
                        {"with_sum", flag(with_sum)},
                        {"with_postsum_act", flag(with_postsum_act)},
                        {"subgraphs", text}};
    fused.attrs.op->ParseAttrs(&fused.attrs);
    fused.inputs = std::move(inputs);
  }
  return result;
}

}  // namespace symbind
