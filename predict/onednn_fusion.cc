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

// A BatchNorm over the channels whose parameters and statistics are the graph's own arrays:
// the fused node folds it into the filters when it binds.
bool FusableBatchNorm(const Node& n) {
  if (n.is_variable() || n.attrs.op->name != "BatchNorm" || n.inputs.size() != 5) return false;
  if (ParsedParam<int>(n.attrs, "axis") != 1) return false;
  return std::all_of(n.inputs.begin() + 1, n.inputs.end(), IsVariable);
}

// The nested graph of a fused node in MXNet's form (a JSON array of one graph): a variable per
// input of the fused node, named as the tensor it reads, then copies of `chain` reading them in
// order: the convolution its data, weight and bias, the BatchNorm its four parameters, the add
// the sum (the last input).
std::string InnerGraphText(const std::vector<const Node*>& chain, const std::vector<NodeEntry>& inputs) {
  std::vector<NodeEntry> vars;
  std::set<std::string> names;
  for (const NodeEntry& e : inputs) {
    std::string name = EntryName(e);
    while (!names.insert(name).second) name += "_sum";  // a sum of the convolution's own data
    vars.push_back(Symbol::Variable(name).outputs()[0]);
  }
  NodeEntry last;
  size_t next_var = 0;
  for (const Node* n : chain) {
    auto copy = std::make_shared<Node>();
    copy->attrs = n->attrs;
    for (const NodeEntry& in : n->inputs) {
      const bool previous = last.node && std::find(chain.begin(), chain.end(), in.node.get()) != chain.end();
      copy->inputs.push_back(previous ? last : vars.at(next_var++));
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

  // Whether only node `id`'s first output is read (not BatchNorm's mean and variance outputs):
  // a fused node has that one output.
  auto first_output_only = [&](uint32_t id) {
    for (uint32_t i = 1; i < g.num_node_outputs(id); ++i)
      if (readers[g.entry_id(id, i)] != 0) return false;
    return true;
  };
  // The one reader of node `id`'s first output, when it may join: not excluded, not claimed, and
  // no other output of `id` read.
  std::vector<bool> claimed(g.num_nodes(), false);
  auto sole_reader = [&](uint32_t id) -> int {
    if (readers[g.entry_id(id, 0)] != 1 || !first_output_only(id)) return -1;
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
    bool with_bn = false, with_act = false, with_sum = false, with_postsum_act = false;
    NodeEntry sum;
    int next = sole_reader(chain.back());
    if (next >= 0 && FusableBatchNorm(*g.node(next).node) && first_output_only(uint32_t(next))) {
      chain.push_back(uint32_t(next));
      with_bn = true;
      next = sole_reader(chain.back());
    }
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

    // The fused node's inputs: data, weight, bias, gamma, beta, sum, then the statistics (its
    // auxiliary states); MXNet's files and nested graph list the statistics after beta.
    std::vector<NodeEntry> inputs(conv.inputs.begin(), conv.inputs.begin() + (p.no_bias ? 2 : 3));
    std::vector<NodeEntry> statistics;
    if (with_bn) {
      const Node& bn = *g.node(chain[1]).node;
      inputs.insert(inputs.end(), bn.inputs.begin() + 1, bn.inputs.begin() + 3);
      statistics.assign(bn.inputs.begin() + 3, bn.inputs.end());
    }
    std::vector<NodeEntry> nested_inputs = inputs;
    nested_inputs.insert(nested_inputs.end(), statistics.begin(), statistics.end());
    if (with_sum) {
      inputs.push_back(sum);
      nested_inputs.push_back(sum);
    }
    inputs.insert(inputs.end(), statistics.begin(), statistics.end());
    std::vector<const Node*> members;
    for (uint32_t m : chain) members.push_back(g.node(m).node.get());
    const std::string text = InnerGraphText(members, nested_inputs);

    // The last member becomes the fused node, so that its readers and the outputs keep it.
    Node& fused = *g.node(chain.back()).node;
    std::vector<std::string>& names = result.members[fused.name()];
    for (const Node* m : members) names.push_back(m->name());
    auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    fused.attrs.op = &OpRegistry::Global().Get("_sg_mkldnn_conv");
    fused.attrs.dict = {{"with_bn", flag(with_bn)},
                        {"with_act", flag(with_act)},
                        {"with_sum", flag(with_sum)},
                        {"with_postsum_act", flag(with_postsum_act)},
                        {"subgraphs", text}};
    fused.attrs.op->ParseAttrs(&fused.attrs);
    fused.inputs = std::move(inputs);
  }
  return result;
}

namespace {

// OneDnnPostQuantize's first pass: each calibrated requantize folded into its _sg_mkldnn_conv.
Symbol FoldRequantizeIntoOneDnn(const Symbol& quantized) {
  Symbol s = quantized.Copy();
  const Graph g(s);
  std::map<const Node*, std::shared_ptr<Node>> replaced;  // requantize -> the node it folds into
  for (const auto& info : g.nodes()) {
    Node* r = info.node.get();
    if (r->is_variable() || r->attrs.op->name != "_contrib_requantize") continue;
    if (!r->attrs.dict.count("min_calib_range") || !r->attrs.dict.count("max_calib_range")) continue;
    const std::shared_ptr<Node>& conv = r->inputs[0].node;
    if (conv->is_variable() || conv->attrs.op->name != "_sg_mkldnn_conv" || conv->attrs.dict.count("min_calib_range")) continue;
    conv->attrs.dict["min_calib_range"] = r->attrs.dict.at("min_calib_range");
    conv->attrs.dict["max_calib_range"] = r->attrs.dict.at("max_calib_range");
    conv->attrs.op->ParseAttrs(&conv->attrs);
    replaced[r] = conv;
  }
  if (replaced.empty()) return s;
  auto redirect = [&](NodeEntry& e) {
    auto it = replaced.find(e.node.get());
    if (it != replaced.end()) e.node = it->second;  // the same output index: levels, min, max
  };
  for (const auto& info : g.nodes())
    for (NodeEntry& e : info.node->inputs) redirect(e);
  std::vector<NodeEntry> heads = s.outputs();
  for (NodeEntry& e : heads) redirect(e);
  return Symbol::FromEntries(heads);
}

// OneDnnPostQuantize's second pass: the ranges a quantized concat joins made one.
Symbol AlignConcatScales(const Symbol& quantized) {
  Symbol s = quantized.Copy();
  const Graph g(s);
  std::vector<std::set<uint32_t>> readers(g.num_nodes());
  std::vector<bool> is_head(g.num_nodes(), false);
  for (uint32_t id = 0; id < g.num_nodes(); ++id)
    for (const auto& in : g.node(id).inputs) readers[in.node_id].insert(id);
  for (const auto& h : g.heads()) is_head[h.node_id] = true;
  auto op_is = [&](uint32_t id, const char* name) {
    const Node& n = *g.node(id).node;
    return !n.is_variable() && n.attrs.op->name == name;
  };
  auto calibrated = [&](uint32_t id) {
    const Node& n = *g.node(id).node;
    return !n.is_variable() && n.attrs.dict.count("min_calib_range") && n.attrs.dict.count("max_calib_range");
  };
  for (uint32_t head = 0; head < g.num_nodes(); ++head) {
    if (!op_is(head, "_contrib_quantized_concat")) continue;
    // The concat's data inputs, through the quantized concats and poolings that only this group
    // reads: the calibrated nodes found there, each read by nothing else, share one range.
    std::set<uint32_t> visited = {head};
    std::vector<uint32_t> open = {head}, matched;
    while (!open.empty()) {
      const uint32_t v = open.back();
      open.pop_back();
      const auto& inputs = g.node(v).inputs;
      const size_t data_inputs = op_is(v, "_contrib_quantized_concat") ? inputs.size() / 3 : 1;
      for (size_t k = 0; k < data_inputs; ++k) {
        const uint32_t p = inputs[k].node_id;
        if (g.node(p).node->is_variable() || is_head[p] || visited.count(p)) continue;
        if (!std::includes(visited.begin(), visited.end(), readers[p].begin(), readers[p].end())) continue;
        if (calibrated(p)) {
          visited.insert(p);
          matched.push_back(p);
        } else if (op_is(p, "_contrib_quantized_concat") || op_is(p, "_contrib_quantized_pooling")) {
          visited.insert(p);
          open.push_back(p);
        }
      }
    }
    if (matched.size() < 2) continue;
    // The union of the ranges and 0, kept as the text of the node that holds each end.
    std::string min_text = "0", max_text = "0";
    float lo = 0.0f, hi = 0.0f;
    for (uint32_t id : matched) {
      const KwArgs& d = g.node(id).node->attrs.dict;
      const float m = std::stof(d.at("min_calib_range")), M = std::stof(d.at("max_calib_range"));
      if (m < lo) lo = m, min_text = d.at("min_calib_range");
      if (M > hi) hi = M, max_text = d.at("max_calib_range");
    }
    for (uint32_t id : matched) {
      NodeAttrs& attrs = g.node(id).node->attrs;
      attrs.dict["min_calib_range"] = min_text;
      attrs.dict["max_calib_range"] = max_text;
      attrs.op->ParseAttrs(&attrs);
    }
  }
  return s;
}

}  // namespace

Symbol OneDnnPostQuantize(const Symbol& quantized) { return AlignConcatScales(FoldRequantizeIntoOneDnn(quantized)); }

Symbol OneDnnBackendSymbol(const Symbol& symbol, const std::string& backend) {
  if (backend != "MKLDNN" && backend != "MKLDNN_QUANTIZE")
    throw Error("subgraph backend '" + backend + "' is not supported by symbind (it has MKLDNN and MKLDNN_QUANTIZE)");
  const Symbol fused = FuseOneDnnConvolutions(symbol).symbol;
  return backend == "MKLDNN_QUANTIZE" ? OneDnnPostQuantize(fused) : fused;
}

}  // namespace symbind
