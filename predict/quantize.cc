#include <symbind/predict/quantize.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <queue>
#include <set>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/core/parsed_param.h>
#include <symbind/executor/invoke.h>
#include <symbind/ops/nn/activation_param.h>
#include <symbind/ops/nn/convolution_param.h>
#include <symbind/ops/nn/dropout_param.h>
#include <symbind/ops/nn/pooling_param.h>
#include <symbind/ops/quantization/quantization_util.h>
#include <symbind/ops/tensor/concat_param.h>
#include <symbind/ops/subgraph/sg_mkldnn_conv.h>
#include <symbind/predict/graph_rewrites.h>
#include <symbind/predict/onednn_fusion.h>
#include <symbind/predict/predictor.h>

namespace symbind {

namespace {

// How an operator takes part, as MXNet's FQuantizable says: layers are always quantized
// (kMust); the others only where the mode keeps them (kSupport).
enum class Role { kNone, kMust, kSupport };

struct Decision {
  Role role = Role::kNone;
  std::string quantized_op;  // for kMust / kSupport
  std::string reason;        // for kNone: why it stays float32
  bool float_outputs = false;  // its outputs float32, no requantize or dequantize (MXNet's FAvoidDequantizeOutput)
};

// The quantized form of a node of the float graph, or why it has none.
Decision QuantizedForm(const Node& n) {
  const std::string& op = n.attrs.op->name;
  if (op == "Convolution") {
    const auto& p = n.attrs.param<conv::ConvolutionParam>();
    if (p.kernel.ndim() != 2) return {Role::kNone, "", "only 2-D convolutions have an int8 form"};
    return {Role::kMust, "_contrib_quantized_conv", ""};
  }
  if (op == "_sg_mkldnn_conv") return {Role::kMust, "_sg_mkldnn_conv", ""};  // weights quantized at load
  if (op == "FullyConnected") return {Role::kMust, "_contrib_quantized_fully_connected", ""};
  if (op == "Pooling") {
    const auto& p = n.attrs.param<conv::PoolingParam>();
    if (p.pool_type != conv::kMax && p.pool_type != conv::kAvg)
      return {Role::kNone, "", "only max and avg pooling have an int8 form"};
    if (p.kernel.ndim() > 2) return {Role::kNone, "", "only 1-D and 2-D pooling have an int8 form"};
    return {Role::kSupport, "_contrib_quantized_pooling", ""};
  }
  if (op == "Activation") {
    if (n.attrs.param<ActivationParam>().act_type != kRelu)
      return {Role::kNone, "", "only relu has an int8 form among activations"};
    return {Role::kSupport, "_contrib_quantized_act", ""};
  }
  if (op == "Flatten") return {Role::kSupport, "_contrib_quantized_flatten", ""};
  if (op == "Concat") {
    if (n.attrs.param<ConcatParam>().dim <= 0) return {Role::kNone, "", "Concat on axis 0 has no int8 form"};
    return {Role::kSupport, "_contrib_quantized_concat", ""};
  }
  if (op == "elemwise_add") return {Role::kSupport, "_contrib_quantized_elemwise_add", ""};
  if (op == "RNN") {
    // MXNet's int8 LSTM: uint8 data with a zero point, float32 weights and states, float32 outputs.
    if (ParsedParamText(n.attrs, "mode") != "lstm") return {Role::kNone, "", "only LSTM has an int8 form among RNNs"};
    if (ParsedParam<bool>(n.attrs, "use_sequence_length"))
      return {Role::kNone, "", "an LSTM with use_sequence_length has no int8 form"};
    return {Role::kMust, "_contrib_quantized_rnn", "", true};
  }
  if (op == "BatchNorm") {
    if (ParsedParam<bool>(n.attrs, "output_mean_var"))
      return {Role::kNone, "", "BatchNorm with output_mean_var has no int8 form"};
    return {Role::kSupport, "_contrib_quantized_batch_norm", ""};
  }
  return {Role::kNone, "", "no int8 form"};
}

std::shared_ptr<Node> MakeOpNode(const std::string& op, const std::string& name, KwArgs dict,
                                 std::vector<NodeEntry> inputs) {
  auto n = std::make_shared<Node>();
  n->attrs.op = &OpRegistry::Global().Get(op);
  n->attrs.name = name;
  n->attrs.dict = std::move(dict);
  n->attrs.op->ParseAttrs(&n->attrs);
  n->inputs = std::move(inputs);
  return n;
}

NodeEntry VariableEntry(const std::string& name) { return Symbol::Variable(name).outputs()[0]; }

// A range as a calibration attribute: the shortest text that reads back as the same float
// (MXNet writes six decimals, which loses small ranges).
std::string RangeText(float v) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

// Whether input `k` of node `n` stays float32 in the quantized node: the quantized BatchNorm's
// parameters and statistics, and a _sg_mkldnn_conv's weight and bias (MXNet's
// FAvoidQuantizeInput: the node quantizes them per output channel itself).
bool FloatInput(const Node& n, size_t k) {
  if (k == 0) return false;
  const std::string& op = n.attrs.op->name;
  if (op == "BatchNorm" || op == "RNN") return true;
  if (op == "_sg_mkldnn_conv") {
    const auto& p = n.attrs.param<subgraph::SgConvParam>();
    return !(p.with_sum && k == subgraph::SgConvSlots(p).sum);
  }
  return false;
}

// The aux states at the end of node `n`'s inputs, which the quantized node keeps last (after
// the ranges of its quantized inputs): a BatchNorm's, a _sg_mkldnn_conv's with_bn statistics.
size_t TrailingAuxInputs(const Node& n) {
  const std::string& op = n.attrs.op->name;
  if (op == "BatchNorm") return 2;
  if (op == "_sg_mkldnn_conv") {
    const auto& p = n.attrs.param<subgraph::SgConvParam>();
    return subgraph::SgConvSlots(p).aux.size();
  }
  return 0;
}

// The float graph the quantized one is made from: BatchNorm folded (the folded arrays under the
// layer's own parameter names) and inference Dropout removed, in a copy.
struct FloatGraph {
  Symbol symbol;
  std::map<std::string, NDArray> args, aux;
  std::vector<std::string> removed;
};

FloatGraph PrepareFloatGraph(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux, const QuantizeOptions& options) {
  FloatGraph f;
  if (options.fold_batch_norm) {
    RewrittenGraph folded = FoldBatchNorm(symbol, args, aux);
    f.symbol = folded.symbol.Copy();
    f.args = std::move(folded.args);
    f.aux = std::move(folded.aux);
    f.removed = folded.folded;
  } else {
    f.symbol = symbol.Copy();
    f.args = args;
    f.aux = aux;
  }
  Graph g(f.symbol);
  std::set<std::string> names;
  for (const auto& info : g.nodes()) names.insert(info.node->name());

  // The folded weight and bias take back the names the layer's parameters had.
  if (!f.removed.empty()) {
    const Graph original(symbol);
    std::map<std::string, const Node*> by_name;
    for (const auto& info : original.nodes()) by_name[info.node->name()] = info.node.get();
    auto rename = [&](Node* var, const std::string& wanted) {
      if (names.count(wanted) || f.args.count(wanted)) return;
      auto it = f.args.find(var->name());
      if (it == f.args.end()) return;
      NDArray a = it->second;
      f.args.erase(it);
      f.args[wanted] = a;
      names.erase(var->name());
      names.insert(wanted);
      var->attrs.name = wanted;
    };
    for (const auto& info : g.nodes()) {
      Node* n = info.node.get();
      if (n->is_variable()) continue;
      for (size_t i = 1; i < n->inputs.size() && i <= 2; ++i) {
        Node* var = n->inputs[i].node.get();
        const std::string suffix = i == 1 ? "_folded_weight" : "_folded_bias";
        if (!var->is_variable() || var->name() != n->name() + suffix) continue;
        auto orig = by_name.find(n->name());
        std::string wanted = n->name() + (i == 1 ? "_weight" : "_bias");
        if (orig != by_name.end() && orig->second->inputs.size() > i && orig->second->inputs[i].node->is_variable())
          wanted = orig->second->inputs[i].node->name();
        rename(var, wanted);
      }
    }
  }

  if (options.remove_dropout) {
    // Consumers read a Dropout's input instead (in topological order, so chains collapse);
    // a Dropout that is a head stays, keeping the output's name.
    auto is_identity_dropout = [](const Node* n) {
      return !n->is_variable() && n->attrs.op->name == "Dropout" &&
             n->attrs.param<DropoutParam>().mode == kDropoutTraining;
    };
    std::set<const Node*> heads;
    for (const NodeEntry& e : f.symbol.outputs()) heads.insert(e.node.get());
    for (const auto& info : g.nodes()) {
      Node* n = info.node.get();
      for (NodeEntry& e : n->inputs)
        if (e.index == 0 && is_identity_dropout(e.node.get())) e = e.node->inputs[0];
      if (is_identity_dropout(n) && !heads.count(n)) f.removed.push_back(n->name());
    }
  }
  return f;
}

}  // namespace

QuantizedGraph QuantizeGraph(const Symbol& symbol, const QuantizeGraphOptions& options) {
  const std::string& dtype = options.quantized_dtype;
  if (dtype != "int8" && dtype != "uint8" && dtype != "auto")
    throw ParamError("quantized dtype '" + dtype + "' is none of: int8, uint8, auto");
  if (options.quantize_mode != "smart" && options.quantize_mode != "full")
    throw ParamError("quantize mode '" + options.quantize_mode + "' is none of: smart, full");
  const Graph g(symbol);
  const size_t num_nodes = g.num_nodes();

  // Which nodes are quantized.
  std::vector<Decision> decision(num_nodes);
  for (uint32_t id = 0; id < num_nodes; ++id) {
    const Node& n = *g.node(id).node;
    if (n.is_variable()) continue;
    if (options.excluded_nodes.count(n.name())) {
      decision[id] = {Role::kNone, "", "excluded by name"};
    } else if (options.excluded_ops.count(n.attrs.op->name)) {
      decision[id] = {Role::kNone, "", "excluded operator"};
    } else {
      decision[id] = QuantizedForm(n);
    }
  }
  if (options.quantize_mode == "smart") {
    // MXNet's smart mode: an operator of the second kind stays quantized only when a chain of
    // such operators links it to a layer upstream and to a layer downstream.
    std::vector<std::vector<uint32_t>> consumers(num_nodes);
    for (uint32_t id = 0; id < num_nodes; ++id)
      for (const auto& in : g.node(id).inputs) consumers[in.node_id].push_back(id);
    std::vector<int> marks(num_nodes, 0);
    auto walk = [&](int bit, bool upstream) {
      std::queue<uint32_t> todo;
      for (uint32_t id = 0; id < num_nodes; ++id)
        if (decision[id].role == Role::kMust) todo.push(id);
      while (!todo.empty()) {
        const uint32_t id = todo.front();
        todo.pop();
        std::vector<uint32_t> next;
        if (upstream) {
          for (const auto& in : g.node(id).inputs) next.push_back(in.node_id);
        } else {
          next = consumers[id];
        }
        for (uint32_t m : next)
          if (decision[m].role == Role::kSupport && !(marks[m] & bit)) {
            marks[m] |= bit;
            todo.push(m);
          }
      }
    };
    walk(1, /*upstream=*/true);
    walk(2, /*upstream=*/false);
    for (uint32_t id = 0; id < num_nodes; ++id)
      if (decision[id].role == Role::kSupport && marks[id] != 3)
        decision[id] = {Role::kNone, "", "not between quantized layers (smart mode)"};
  }
  auto quantized = [&](uint32_t id) { return decision[id].role != Role::kNone; };
  auto float_outputs = [&](uint32_t id) { return decision[id].float_outputs; };
  // Whether a reader of node id's output reads levels with their range.
  auto levels_out = [&](uint32_t id) { return quantized(id) && !float_outputs(id); };

  QuantizedGraph result;
  for (uint32_t id = 0; id < num_nodes; ++id) {
    const Node& n = *g.node(id).node;
    if (n.is_variable()) continue;
    result.report.push_back({n.name(), n.attrs.op->name, quantized(id), decision[id].reason});
  }

  // The new graph, node by node in topological order (MXNet's QuantizeGraph).
  std::vector<std::shared_ptr<Node>> mirror(num_nodes);           // a node's stand-in
  std::map<uint32_t, std::shared_ptr<Node>> quantize_of;           // float entry -> its quantize node
  std::map<uint32_t, std::shared_ptr<Node>> asym_quantize_of;      // the same for LSTM data (uint8 with a zero point)
  std::map<uint32_t, std::array<NodeEntry, 3>> offline_of;         // weight entry -> int8 variables
  std::map<uint32_t, std::shared_ptr<Node>> dequantize_of;         // quantized node -> its dequantize node
  std::set<std::string> calib_seen;
  auto add_calib_name = [&](const std::string& name) {
    if (calib_seen.insert(name).second) result.calib_names.push_back(name);
  };
  // A dequantize that gives a graph output takes the quantized node's own name, so the output
  // keeps its name ("conv4_2_output"; MXNet names it "<node>_dequantize" and the output changes).
  std::set<uint32_t> head_nodes;
  for (const auto& h : g.heads()) head_nodes.insert(h.node_id);
  auto dequantized = [&](uint32_t producer) {
    auto it = dequantize_of.find(producer);
    if (it != dequantize_of.end()) return NodeEntry{it->second, 0};
    const auto& q = mirror[producer];
    const std::string& name = g.node(producer).node->name();
    auto d = MakeOpNode("_contrib_dequantize", head_nodes.count(producer) ? name : name + "_dequantize", {},
                        {NodeEntry{q, 0}, NodeEntry{q, 1}, NodeEntry{q, 2}});
    dequantize_of[producer] = d;
    return NodeEntry{d, 0};
  };
  for (uint32_t id = 0; id < num_nodes; ++id) {
    const auto& info = g.node(id);
    const Node& n = *info.node;
    if (!quantized(id)) {
      auto copy = std::make_shared<Node>();
      copy->attrs = n.attrs;
      copy->user_attrs = n.user_attrs;
      for (const auto& in : info.inputs)
        copy->inputs.push_back(levels_out(in.node_id) ? dequantized(in.node_id) : NodeEntry{mirror[in.node_id], in.index});
      mirror[id] = copy;
      continue;
    }
    const bool batch_norm = decision[id].quantized_op == "_contrib_quantized_batch_norm";
    std::vector<NodeEntry> data, ranges;
    for (const auto& in : info.inputs) {
      if (FloatInput(n, size_t(&in - &info.inputs[0]))) {
        data.push_back({mirror[in.node_id], in.index});
        continue;
      }
      const bool rnn = float_outputs(id);
      if (levels_out(in.node_id) && !rnn) {
        data.push_back({mirror[in.node_id], in.index});
        ranges.push_back({mirror[in.node_id], 1});
        ranges.push_back({mirror[in.node_id], 2});
        continue;
      }
      const uint32_t entry = g.entry_id(in);
      const Node& producer = *g.node(in.node_id).node;
      if (producer.is_variable() && options.offline_params.count(producer.name())) {
        // A given parameter: quantized now, offline (MXNet's OfflineParams).
        auto it = offline_of.find(entry);
        if (it == offline_of.end()) {
          const std::string base = producer.name() + "_quantize";
          it = offline_of.emplace(entry, std::array<NodeEntry, 3>{VariableEntry(base), VariableEntry(base + "_min"),
                                                                  VariableEntry(base + "_max")}).first;
          result.offline.insert(producer.name());
        }
        data.push_back(it->second[0]);
        ranges.push_back(it->second[1]);
        ranges.push_back(it->second[2]);
        continue;
      }
      // The LSTM's data: uint8 with a zero point (_contrib_quantize_asym; its scale and shift
      // are the quantized node's last inputs), from the float tensor (levels dequantized first).
      auto& quantizers = rnn ? asym_quantize_of : quantize_of;
      auto it = quantizers.find(entry);
      if (it == quantizers.end()) {
        const std::string tensor = EntryName(NodeEntry{g.node(in.node_id).node, in.index});
        const NodeEntry source = levels_out(in.node_id) ? dequantized(in.node_id) : NodeEntry{mirror[in.node_id], in.index};
        // MXNet's name, "<tensor>_quantize", told apart when the tensor also has the other kind.
        const auto& others = rnn ? quantize_of : asym_quantize_of;
        const std::string name = tensor + "_quantize" + (others.count(entry) ? (rnn ? "_asym" : "_v2") : "");
        auto qnode = rnn ? MakeOpNode("_contrib_quantize_asym", name, {}, {source})
                         : MakeOpNode("_contrib_quantize_v2", name, {{"out_type", dtype}}, {source});
        add_calib_name(tensor);
        it = quantizers.emplace(entry, qnode).first;
      }
      data.push_back({it->second, 0});
      ranges.push_back({it->second, 1});
      ranges.push_back({it->second, 2});
    }
    std::vector<NodeEntry> inputs = data;
    // Arguments (data, then the layer's own, then the quantized inputs' ranges), then aux
    // states: a quantized BatchNorm's or fused BatchNorm's moving statistics come after the ranges.
    inputs.insert(inputs.end() - long(TrailingAuxInputs(n)), ranges.begin(), ranges.end());
    KwArgs dict = n.attrs.dict;
    if (decision[id].quantized_op == "_sg_mkldnn_conv" || float_outputs(id)) dict["quantized"] = "true";
    auto qnode = MakeOpNode(decision[id].quantized_op, "quantized_" + n.name(), std::move(dict), std::move(inputs));
    if (batch_norm) {
      add_calib_name(EntryName(NodeEntry{info.node, 0}));  // its own output range (MXNet: no requantize)
      mirror[id] = qnode;
    } else if (float_outputs(id)) {
      mirror[id] = qnode;  // float32 outputs: no requantize, no dequantize
    } else if (decision[id].role == Role::kMust || n.attrs.op->name == "elemwise_add") {
      auto requantize = MakeOpNode("_contrib_requantize", "requantize_" + n.name(), {{"out_type", dtype}},
                                   {NodeEntry{qnode, 0}, NodeEntry{qnode, 1}, NodeEntry{qnode, 2}});
      add_calib_name(EntryName(NodeEntry{info.node, 0}));
      mirror[id] = requantize;
    } else {
      mirror[id] = qnode;
    }
  }
  std::vector<NodeEntry> heads;
  for (const auto& h : g.heads())
    heads.push_back(levels_out(h.node_id) ? dequantized(h.node_id) : NodeEntry{mirror[h.node_id], h.index});

  result.symbol = Symbol::FromEntries(heads);
  return result;
}

Symbol SetCalibTable(const Symbol& quantized, const std::map<std::string, CalibRange>& table) {
  Symbol s = quantized.Copy();
  const Graph g(s);
  const std::string prefix = "quantized_";
  for (const auto& info : g.nodes()) {
    Node* n = info.node.get();
    if (n->is_variable() || n->inputs.empty()) continue;
    const std::string& op = n->attrs.op->name;
    std::string name;  // the float tensor whose range the node takes
    if (op == "_contrib_quantized_batch_norm") {
      // Its own output's ("quantized_bn" stands for bn_output): MXNet's quantized BatchNorm
      // writes int8 at that range, with no requantize after it.
      name = n->name().rfind(prefix, 0) == 0 ? n->name().substr(prefix.size()) + "_output" : EntryName(NodeEntry{info.node, 0});
    } else if (op == "_contrib_quantize_v2" || op == "_contrib_quantize_asym" || op == "_contrib_requantize") {
      // Its input's name, "quantized_" dropped (a requantize reads quantized_conv1's output and
      // stands for conv1_output).
      const NodeEntry& in = n->inputs[0];
      name = EntryName(in);
      if (!in.node->is_variable() && in.node->name().rfind(prefix, 0) == 0) name = name.substr(prefix.size());
    } else {
      continue;
    }
    auto it = table.find(name);
    if (it == table.end()) continue;
    n->attrs.dict["min_calib_range"] = RangeText(it->second.min);
    n->attrs.dict["max_calib_range"] = RangeText(it->second.max);
    n->attrs.op->ParseAttrs(&n->attrs);
  }
  return s;
}

QuantizedModel QuantizeModel(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux,
                             const std::vector<std::map<std::string, NDArray>>& calib_batches,
                             const QuantizeOptions& options) {
  if (options.calib_mode != CalibMode::kNone && calib_batches.empty())
    throw ParamError(std::string("calibration mode ") + CalibModeName(options.calib_mode) +
                     " needs calibration batches (or use calibration mode none)");
  FloatGraph fg = PrepareFloatGraph(symbol, args, aux, options);
  const Graph fg_graph(fg.symbol);
  const size_t num_nodes = fg_graph.num_nodes();

  // Exclusions must name what the graph has (a typo would silently quantize the layer).
  {
    std::set<std::string> node_names;
    for (const auto& info : fg_graph.nodes())
      if (!info.node->is_variable()) node_names.insert(info.node->name());
    std::vector<std::string> unknown;
    for (const auto& n : options.excluded_nodes)
      if (!node_names.count(n)) unknown.push_back(n);
    if (!unknown.empty())
      throw ParamError("excluded nodes not in the graph: " + JoinNames(unknown) +
                       " (folded BatchNorm and removed Dropout nodes are gone too)");
    for (const auto& n : options.excluded_ops)
      if (!OpRegistry::Global().Find(n)) unknown.push_back(n);
    if (!unknown.empty()) throw ParamError("excluded operators that do not exist: " + JoinNames(unknown));
  }

  if (options.form != "contrib" && options.form != "onednn")
    throw ParamError("quantized form '" + options.form + "' is none of: contrib, onednn");
  // The oneDNN form quantizes the fused convolutions; calibration still runs the float graph,
  // whose tensors the fused nodes' outputs keep the names of.
  OneDnnFusion fusion;
  if (options.form == "onednn") {
    std::set<std::string> keep = options.excluded_nodes;
    for (const auto& info : fg_graph.nodes())
      if (!info.node->is_variable() && options.excluded_ops.count(info.node->attrs.op->name)) keep.insert(info.node->name());
    fusion = FuseOneDnnConvolutions(fg.symbol, keep);
  } else {
    fusion.symbol = fg.symbol;
  }

  QuantizeGraphOptions graph_options;
  graph_options.quantized_dtype = options.quantized_dtype;
  graph_options.quantize_mode = options.quantize_mode;
  graph_options.excluded_nodes = options.excluded_nodes;
  graph_options.excluded_ops = options.excluded_ops;
  for (const auto& kv : fg.args) graph_options.offline_params.insert(kv.first);
  QuantizedGraph qg = QuantizeGraph(fusion.symbol, graph_options);

  QuantizedModel result;
  result.removed = fg.removed;
  // The report names the float graph's nodes: a fused node's line for each node it took in.
  std::map<std::string, std::string> op_of;
  for (const auto& info : fg_graph.nodes())
    if (!info.node->is_variable()) op_of[info.node->name()] = info.node->attrs.op->name;
  for (QuantizeNote& note : qg.report) {
    auto members = fusion.members.find(note.node);
    if (members == fusion.members.end()) {
      result.report.push_back(std::move(note));
      continue;
    }
    for (const std::string& m : members->second) result.report.push_back({m, op_of.at(m), note.quantized, note.reason});
  }
  // Calibration: the float graph's tensors the quantize and requantize nodes stand for.
  if (options.calib_mode != CalibMode::kNone) {
    const std::set<std::string> wanted(qg.calib_names.begin(), qg.calib_names.end());
    std::vector<NodeEntry> entries;
    std::vector<std::string> entry_names, input_names;
    for (uint32_t id = 0; id < num_nodes; ++id) {
      const auto& node = fg_graph.node(id).node;
      for (uint32_t i = 0; i < fg_graph.num_node_outputs(id); ++i) {
        const NodeEntry e{node, i};
        const std::string name = EntryName(e);
        if (!wanted.count(name)) continue;
        if (node->is_variable()) {
          input_names.push_back(name);
        } else {
          entries.push_back(e);
          entry_names.push_back(name);
        }
      }
    }
    const std::map<std::string, NDArray>& first = calib_batches.front();
    for (const auto& name : input_names)
      if (!first.count(name))
        throw ParamError("the calibration batches give no input '" + name + "'");
    for (size_t b = 1; b < calib_batches.size(); ++b) {
      std::set<std::string> a, c;
      for (const auto& kv : first) a.insert(kv.first);
      for (const auto& kv : calib_batches[b]) c.insert(kv.first);
      if (a != c) throw ParamError("calibration batch " + std::to_string(b) + " gives other inputs than batch 0");
    }
    PredictorOptions popt;
    for (const GraphPass& pass : GraphPasses()) popt.disabled_passes.insert(pass.name);
    // Heads: the tensors wanted, or (when only inputs are) the graph's own outputs.
    const Symbol calib_symbol = entries.empty() ? fg.symbol : Symbol::FromEntries(entries);
    std::unique_ptr<Predictor> predictor;
    std::map<std::string, TShape> bound;
    std::map<std::string, TensorCalibrator> calibrators;
    for (const auto& name : wanted) calibrators.emplace(name, TensorCalibrator(options.calib_mode));
    for (const auto& batch : calib_batches) {
      if (options.num_calib_examples && result.calib_examples >= options.num_calib_examples) break;
      std::map<std::string, TShape> batch_shapes;
      for (const auto& kv : batch) batch_shapes[kv.first] = kv.second.shape();
      if (!predictor) {
        predictor = std::make_unique<Predictor>(calib_symbol, fg.args, fg.aux, batch_shapes, popt);
      } else if (batch_shapes != bound) {
        predictor = std::make_unique<Predictor>(predictor->Reshape(batch_shapes));
      }
      bound = batch_shapes;
      for (const auto& kv : batch) predictor->SetInput(kv.first, kv.second);
      predictor->Forward();
      auto collect = [&](const std::string& name, const NDArray& values) {
        try {
          calibrators.at(name).Collect(values.fdata(), values.Size());
        } catch (const Error& e) {
          throw Error("calibration of '" + name + "': " + e.what());
        }
      };
      for (const auto& name : input_names) collect(name, predictor->Input(name));
      for (size_t k = 0; k < entry_names.size(); ++k) collect(entry_names[k], predictor->Output(k));
      const auto& any = batch.begin()->second;
      result.calib_examples += any.shape().ndim() ? size_t(any.shape()[0]) : 1;
    }
    const bool unsigned_allowed = options.quantized_dtype != "int8";
    for (auto& kv : calibrators) result.calib_ranges[kv.first] = kv.second.Range(unsigned_allowed);
  }

  result.symbol = qg.symbol;
  if (options.calib_mode != CalibMode::kNone) {
    result.symbol = SetCalibTable(qg.symbol, result.calib_ranges);
    if (options.form == "onednn") result.symbol = OneDnnPostQuantize(result.symbol);
  }
  // Parameters: the offline int8 ones, then every float array the new graph still reads.
  for (const std::string& name : qg.offline) {
    const NDArray& w = fg.args.at(name);
    if (w.dtype() != DType::kFloat32)
      throw TypeError("parameter '" + name + "' is " + DTypeName(w.dtype()) + "; quantizing needs float32");
    // As MXNet's _quantize_params: _contrib_quantize (int8) over the parameter's own min and max.
    const auto [lo, hi] = quant::MinMax(w.fdata(), int64_t(w.Size()));
    const std::vector<NDArray> q = Invoke("_contrib_quantize", {{"out_type", "int8"}},
                                          {w, NDArray(TShape({1}), std::vector<float>{lo}),
                                           NDArray(TShape({1}), std::vector<float>{hi})});
    result.args[name + "_quantize"] = q[0];
    result.args[name + "_quantize_min"] = q[1];
    result.args[name + "_quantize_max"] = q[2];
  }
  for (const std::string& name : result.symbol.ListArguments())
    if (!result.args.count(name) && fg.args.count(name)) result.args[name] = fg.args.at(name);
  for (const std::string& name : result.symbol.ListAuxiliaryStates())
    if (fg.aux.count(name)) result.aux[name] = fg.aux.at(name);
  return result;
}

}  // namespace symbind
