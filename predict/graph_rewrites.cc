#include "graph_rewrites.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <symbind/core/graph.h>
#include <symbind/core/parsed_param.h>
#include <symbind/core/param.h>
#include <symbind/ops/subgraph/fused_quantized_inverted_residual.h>

namespace symbind {

namespace {
bool IsOp(const Node& n, const char* name) { return !n.is_variable() && n.attrs.op->name == name; }

// How often each entry is read (by op inputs and as a head).
std::vector<int> CountUses(const Graph& g) {
  std::vector<int> uses(g.num_entries(), 0);
  for (auto& info : g.nodes())
    for (auto& in : info.inputs) ++uses[g.entry_id(in)];
  for (auto& h : g.heads()) ++uses[g.entry_id(h)];
  return uses;
}

// The array a variable input of node `n` is bound to, when it is a variable read only there.
const NDArray* OwnVariable(const Graph& g, const std::vector<int>& uses, uint32_t n, size_t input,
                           const std::map<std::string, NDArray>& arrays) {
  const auto& info = g.node(n);
  if (input >= info.inputs.size()) return nullptr;
  const Graph::EntryRef e = info.inputs[input];
  const Node& var = *g.node(e.node_id).node;
  if (!var.is_variable() || uses[g.entry_id(e)] != 1) return nullptr;
  auto it = arrays.find(var.name());
  return it == arrays.end() || it->second.dtype() != DType::kFloat32 ? nullptr : &it->second;
}

const NDArray* Given(const Graph& g, uint32_t n, size_t input, const std::map<std::string, NDArray>& arrays) {
  const Node& var = *g.node(g.node(n).inputs[input].node_id).node;
  auto it = arrays.find(var.name());
  return !var.is_variable() || it == arrays.end() || it->second.dtype() != DType::kFloat32 ? nullptr : &it->second;
}

std::set<uint32_t> HeadEntries(const Graph& g) {
  std::set<uint32_t> heads;
  for (auto& h : g.heads()) heads.insert(g.entry_id(h));
  return heads;
}

// Every input reading a node of `replaced` (its output 0) reads the entry given for it instead.
void Rewire(const Graph& g, const std::map<const Node*, NodeEntry>& replaced) {
  for (auto& info : g.nodes())
    for (NodeEntry& e : info.node->inputs) {
      auto it = replaced.find(e.node.get());
      if (it != replaced.end()) e = it->second;
    }
}

// _fused_conv_act's parameters for applying activation node `act` (Activation relu, clip,
// LeakyReLU leaky or prelu): act_type and its own a_min / a_max or slope; empty for any other node.
std::map<std::string, std::string> FusedActivationParams(const Node& act) {
  const bool leaky_relu = IsOp(act, "LeakyReLU");  // its act_type defaults to leaky
  if (IsOp(act, "clip"))
    return {{"act_type", "clip"}, {"a_min", ParsedParamText(act.attrs, "a_min")}, {"a_max", ParsedParamText(act.attrs, "a_max")}};
  const bool activation = IsOp(act, "Activation");
  if (!activation && !leaky_relu) return {};
  const std::string type = ParsedParam<std::string>(act.attrs, "act_type");
  if (activation && type == "relu") return {{"act_type", "relu"}};
  if (leaky_relu && type == "leaky") return {{"act_type", "leaky"}, {"slope", ParsedParamText(act.attrs, "slope")}};
  if (leaky_relu && type == "prelu") return {{"act_type", "prelu"}};
  return {};
}

// `a` as a read-only array: only the rewrite holds it, and nothing may change it afterwards (and
// read-only weights let wide layers choose Winograd, whose transform is then made once).
NDArray Frozen(const NDArray& a) { return ReadOnlyView(a, "a folded weight"); }
}  // namespace

RewriteState::RewriteState(const Symbol& symbol, std::map<std::string, NDArray> args,
                           std::map<std::string, NDArray> aux)
    : symbol(symbol.Copy()), args(std::move(args)), aux(std::move(aux)) {}
RewriteState::~RewriteState() = default;

const Graph& RewriteState::graph() {
  if (!graph_) {
    graph_ = std::make_unique<Graph>(symbol);
    uses_ = CountUses(*graph_);
    heads_ = HeadEntries(*graph_);
  }
  return *graph_;
}
const std::vector<int>& RewriteState::uses() {
  graph();
  return uses_;
}
const std::set<uint32_t>& RewriteState::heads() {
  graph();
  return heads_;
}
void RewriteState::Changed() { graph_.reset(); }

namespace {

std::vector<std::string> FoldBatchNormPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  const std::map<std::string, NDArray>& args = state->args;
  const std::map<std::string, NDArray>& aux = state->aux;
  std::vector<std::string> folded;
  std::set<std::string> names;
  for (auto& info : g.nodes()) names.insert(info.node->name());
  // BatchNorm node -> the producer entry that replaces its output 0.
  std::map<const Node*, NodeEntry> replaced;

  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& bn = g.node(n);
    if (!IsOp(*bn.node, "BatchNorm") || bn.inputs.size() != 5) continue;
    const NodeAttrs& bn_attrs = bn.node->attrs;
    if (ParsedParam<int>(bn_attrs, "axis") != 1) continue;
    // A head keeps its node, so that the executor's outputs keep their names.
    if (heads.count(g.entry_id(n, 0)) || uses[g.entry_id(n, 1)] != 0 || uses[g.entry_id(n, 2)] != 0) continue;
    const Graph::EntryRef src = bn.inputs[0];
    const std::shared_ptr<Node>& producer = g.node(src.node_id).node;
    const bool conv = IsOp(*producer, "Convolution"), fc = IsOp(*producer, "FullyConnected");
    if (!(conv || fc) || src.index != 0 || uses[g.entry_id(src)] != 1) continue;
    if (fc && !ParsedParam<bool>(producer->attrs, "flatten")) continue;  // channels would not be axis 1
    const bool has_bias = !ParsedParam<bool>(producer->attrs, "no_bias");
    const NDArray* weight = OwnVariable(g, uses, src.node_id, 1, args);
    const NDArray* bias = has_bias ? OwnVariable(g, uses, src.node_id, 2, args) : nullptr;
    const NDArray *gamma = Given(g, n, 1, args), *beta = Given(g, n, 2, args);
    const NDArray *mean = Given(g, n, 3, aux), *var = Given(g, n, 4, aux);
    if (!weight || (has_bias && !bias) || !gamma || !beta || !mean || !var) continue;
    if (weight->dtype() != DType::kFloat32) continue;
    const int64_t channels = weight->shape()[0];
    auto one_per_channel = [&](const NDArray* a) { return a->Size() == channels; };
    if (weight->shape().ndim() < 2 || !one_per_channel(gamma) || !one_per_channel(beta) ||
        !one_per_channel(mean) || !one_per_channel(var))
      continue;
    const std::string weight_name = producer->name() + "_folded_weight";
    const std::string bias_name = producer->name() + "_folded_bias";
    if (names.count(weight_name) || names.count(bias_name)) continue;

    // As the BatchNorm kernel computes it: scale = float(1/sqrt(var + eps)) * gamma.
    const double eps = ParsedParam<double>(bn_attrs, "eps");
    const bool fix_gamma = ParsedParam<bool>(bn_attrs, "fix_gamma");
    std::vector<double> scale(static_cast<size_t>(channels));
    NDArray folded_bias(TShape({channels}));
    for (int64_t c = 0; c < channels; ++c) {
      scale[size_t(c)] = double(static_cast<float>(1.0 / std::sqrt(double(var->fdata()[c]) + eps))) *
                         (fix_gamma ? 1.0 : double(gamma->fdata()[c]));
      const double b = bias ? double(bias->fdata()[c]) : 0.0;
      folded_bias.fdata()[c] = float((b - mean->fdata()[c]) * scale[size_t(c)] + beta->fdata()[c]);
    }
    // The folded weight is computed when read: kernels that pack it read it once (the packed
    // form then replaces it), so it never sits in memory beside its source and its packed form.
    // A writable source is copied now, so that a later write into it does not reach the fold.
    const NDArray source = weight->read_only() ? *weight : weight->Copy();
    const int64_t per_channel = int64_t(source.Size()) / channels;
    auto fold = [source, scale = std::move(scale), per_channel](void* out) {
      const float* w = source.fdata();
      float* folded = static_cast<float*>(out);
      for (size_t c = 0; c < scale.size(); ++c)
        for (int64_t i = 0; i < per_channel; ++i) {
          const int64_t at = int64_t(c) * per_channel + i;
          folded[at] = float(w[at] * scale[c]);
        }
      // Mapped from a model file, the source's pages may leave memory until read again.
      source.storage()->ReleaseResidentPages(w, source.bytes());
    };
    NDArray folded_weight = NDArray::View(Storage::Deferred(source.bytes(), fold, "a folded weight"), 0, source.shape());

    NodeAttrs& attrs = producer->attrs;
    attrs.dict["no_bias"] = "False";
    attrs.op->ParseAttrs(&attrs);
    producer->inputs.resize(3);
    producer->inputs[1] = Symbol::Variable(weight_name).outputs()[0];
    producer->inputs[2] = Symbol::Variable(bias_name).outputs()[0];
    state->args[weight_name] = folded_weight;  // a name no node has (checked above)
    state->args[bias_name] = Frozen(folded_bias);
    names.insert(weight_name);
    names.insert(bias_name);
    replaced[bn.node.get()] = NodeEntry{producer, 0};
    folded.push_back(bn.node->name());
  }
  if (replaced.empty()) return folded;

  Rewire(g, replaced);  // only output 0 of a BatchNorm is read (checked above)
  state->Changed();

  // Keep only the arrays the rewritten graph still reads.
  const Graph& rewritten = state->graph();
  std::map<std::string, NDArray> used_args, used_aux;
  for (const std::string& name : rewritten.ListArguments())
    if (state->args.count(name)) used_args[name] = state->args[name];
  for (const std::string& name : rewritten.ListAuxiliaryStates())
    if (state->aux.count(name)) used_aux[name] = state->aux[name];
  state->args = std::move(used_args);
  state->aux = std::move(used_aux);
  return folded;
}

std::vector<std::string> FuseActivationsPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  const std::map<std::string, NDArray>& args = state->args;
  std::vector<std::string> fused;
  const Op& fused_conv = OpRegistry::Global().Get("_fused_conv_act");
  const Op& fused_batch_norm = OpRegistry::Global().Get("_fused_batch_norm_act");
  std::map<const Node*, NodeEntry> replaced;  // activation node -> the fused convolution or BatchNorm
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& act = g.node(n);
    const std::map<std::string, std::string> act_params = FusedActivationParams(*act.node);
    const bool prelu = !act_params.empty() && act_params.at("act_type") == "prelu";
    if (act_params.empty() || act.inputs.empty() || heads.count(g.entry_id(n, 0))) continue;
    const Graph::EntryRef src = act.inputs[0];
    const std::shared_ptr<Node>& producer = g.node(src.node_id).node;
    if (src.index != 0 || uses[g.entry_id(src)] != 1) continue;
    const Op* fused_op = nullptr;
    if (IsOp(*producer, "Convolution")) {
      // prelu: one slope per filter, a given array (gamma (1,) or (N, C) stays unfused).
      const NDArray* gamma = prelu && act.inputs.size() == 2 ? Given(g, n, 1, args) : nullptr;
      if (prelu && (!gamma || gamma->shape().ndim() != 1 ||
                    gamma->Size() != ParsedParam<int64_t>(producer->attrs, "num_filter")))
        continue;
      fused_op = &fused_conv;
    } else if (IsOp(*producer, "BatchNorm") && !prelu) {
      // One the folding left (after a residual add: pre-activation ResNet's), its mean / var unread.
      if (uses[g.entry_id(src.node_id, 1)] != 0 || uses[g.entry_id(src.node_id, 2)] != 0) continue;
      fused_op = &fused_batch_norm;
    } else {
      continue;
    }
    NodeAttrs& attrs = producer->attrs;
    attrs.op = fused_op;
    for (auto& [key, value] : act_params) attrs.dict[key] = value;
    if (prelu) producer->inputs.push_back(act.node->inputs[1]);  // gamma, still an argument
    fused_op->ParseAttrs(&attrs);
    replaced[act.node.get()] = NodeEntry{producer, 0};
    fused.push_back(act.node->name());
  }
  Rewire(g, replaced);
  return fused;
}

// A 2-D Convolution or _fused_conv_act with a bias, as the block rewrite needs to see it.
struct Conv2D {
  int64_t kernel = 0, stride = 0, pad = 0, filters = 0, groups = 0;
  std::string act = "none", lo = "0", hi = "0", slope = "0";  // the fused activation, clip bounds, leaky slope
  bool prelu() const { return act == "prelu"; }
};
bool SquareConvWithBias(const Node& n, Conv2D* c) {
  const bool fused = IsOp(n, "_fused_conv_act");
  if (!fused && !IsOp(n, "Convolution")) return false;
  const NodeAttrs& a = n.attrs;
  const TShape kernel = ParsedParam<TShape>(a, "kernel"), stride = ParsedParam<TShape>(a, "stride");
  const TShape pad = ParsedParam<TShape>(a, "pad"), dilate = ParsedParam<TShape>(a, "dilate");
  if (kernel.ndim() != 2 || kernel[0] != kernel[1] || ParsedParam<bool>(a, "no_bias")) return false;
  // The one value of a tuple equal in both dims (`fallback` when not given), or -1.
  auto square = [](const TShape& t, int64_t fallback) -> int64_t {
    if (t.ndim() <= 0) return fallback;  // not given
    return t.ndim() == 2 && t[0] == t[1] ? t[0] : -1;
  };
  c->stride = square(stride, 1);
  c->pad = square(pad, 0);
  if (c->stride < 0 || c->pad < 0 || square(dilate, 1) != 1) return false;
  c->kernel = kernel[0];
  c->filters = ParsedParam<int64_t>(a, "num_filter");
  c->groups = ParsedParam<int64_t>(a, "num_group");
  if (fused) {
    c->act = ParsedParam<std::string>(a, "act_type");
    if (c->act != "relu" && c->act != "clip" && c->act != "leaky" && c->act != "prelu") return false;
    c->lo = ParsedParamText(a, "a_min");
    c->hi = ParsedParamText(a, "a_max");
    c->slope = ParsedParamText(a, "slope");
  }
  // data, weight, bias and prelu's gamma: no residual, no second output.
  return n.inputs.size() == (c->prelu() ? 4u : 3u);
}
bool Pointwise(const Conv2D& c) { return c.kernel == 1 && c.stride == 1 && c.pad == 0 && c.groups == 1; }

std::vector<std::string> FuseInvertedResidualsPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  std::vector<std::string> fused;
  const Op& fused_op = OpRegistry::Global().Get("_fused_inverted_residual");
  std::map<uint32_t, uint32_t> add_reading;  // entry read by an elemwise_add -> that add's node
  for (uint32_t n = 0; n < g.num_nodes(); ++n)
    if (IsOp(*g.node(n).node, "elemwise_add"))
      for (const auto& in : g.node(n).inputs) add_reading[g.entry_id(in)] = n;
  // The one reader of entry `e` when it is read once, by no head, by node `of` input 0.
  auto only_input_of = [&](const Graph::EntryRef& e, uint32_t n) {
    return e.index == 0 && uses[g.entry_id(e)] == 1 && !heads.count(g.entry_id(e)) && g.node(n).inputs[0].node_id == e.node_id;
  };
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& project = g.node(n);
    Conv2D pc, dc, ec;
    if (!IsOp(*project.node, "Convolution") || !SquareConvWithBias(*project.node, &pc) || !Pointwise(pc)) continue;
    const Graph::EntryRef d = project.inputs[0];
    const auto& depthwise = g.node(d.node_id);
    if (!only_input_of(d, n) || !SquareConvWithBias(*depthwise.node, &dc) || dc.groups != dc.filters ||
        !(dc.kernel == 3 || dc.kernel == 5) || !(dc.stride == 1 || dc.stride == 2))
      continue;
    const Graph::EntryRef e = depthwise.inputs[0];
    const auto& expand = g.node(e.node_id);
    if (!only_input_of(e, d.node_id) || !SquareConvWithBias(*expand.node, &ec) || !Pointwise(ec) ||
        ec.filters != dc.filters)
      continue;
    const Graph::EntryRef x = expand.inputs[0];
    // Residual: the projection's output read only by an add of it and the block's input.
    const uint32_t p_entry = g.entry_id(n, 0);
    std::shared_ptr<Node> last = project.node;
    bool residual = false;
    if (uses[p_entry] == 1 && !heads.count(p_entry) && add_reading.count(p_entry)) {
      const auto& add = g.node(add_reading.at(p_entry));
      const uint32_t a = g.entry_id(add.inputs[0]), b = g.entry_id(add.inputs[1]);  // p + x or x + p: same bits
      const bool inputs_match = (a == p_entry && b == g.entry_id(x)) || (b == p_entry && a == g.entry_id(x));
      if (inputs_match && dc.stride == 1 && 2 * dc.pad == dc.kernel - 1) {
        last = add.node;
        residual = true;
      }
    }
    NodeAttrs attrs;
    attrs.op = &fused_op;
    attrs.name = last->attrs.name;
    attrs.dict = {{"num_hidden", std::to_string(dc.filters)}, {"num_filter", std::to_string(pc.filters)},
                  {"kernel", std::to_string(dc.kernel)},      {"stride", std::to_string(dc.stride)},
                  {"pad", std::to_string(dc.pad)},            {"expand_act", ec.act},
                  {"expand_min", ec.lo},                      {"expand_max", ec.hi},
                  {"expand_slope", ec.slope},                 {"depthwise_act", dc.act},
                  {"depthwise_min", dc.lo},                   {"depthwise_max", dc.hi},
                  {"depthwise_slope", dc.slope},              {"residual", residual ? "True" : "False"}};
    fused_op.ParseAttrs(&attrs);
    // Each convolution's inputs after the first (prelu's gamma after the bias), in graph order.
    std::vector<NodeEntry> inputs = expand.node->inputs;
    inputs.insert(inputs.end(), depthwise.node->inputs.begin() + 1, depthwise.node->inputs.end());
    inputs.insert(inputs.end(), project.node->inputs.begin() + 1, project.node->inputs.end());
    fused.push_back(expand.node->name());
    fused.push_back(depthwise.node->name());
    if (residual) fused.push_back(project.node->name());
    last->attrs = std::move(attrs);
    last->inputs = std::move(inputs);
  }
  return fused;
}

// FuseResidualAdds' second step: a BatchNorm (or _fused_batch_norm_act) reading a fused residual
// sum that others read too (pre-activation ResNet's next unit: its bn1 and its shortcut) becomes
// the sum's second output. All or none: when the graph would list its arguments or aux states in
// another order, it is left as it was.
void FuseBatchNormsOfSums(RewriteState* state, std::vector<std::string>* fused_names) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  std::optional<Symbol> before;  // copied before the first change, to go back to
  const Op& fused_op = OpRegistry::Global().Get("_fused_conv_act");
  std::map<const Node*, NodeEntry> replaced;
  std::vector<std::string> fused;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& bn = g.node(n);
    if (!(IsOp(*bn.node, "_fused_batch_norm_act") || IsOp(*bn.node, "BatchNorm")) || bn.inputs.size() != 5 ||
        bn.inputs[0].index != 0)
      continue;
    const std::shared_ptr<Node>& sum = g.node(bn.inputs[0].node_id).node;
    if (!IsOp(*sum, "_fused_conv_act") || ParsedParam<std::string>(sum->attrs, "residual") == "none" ||
        ParsedParam<bool>(sum->attrs, "normalize") || ParsedParam<int>(bn.node->attrs, "axis") != 1)
      continue;
    const uint32_t y = g.entry_id(n, 0);
    if (heads.count(y) || uses[g.entry_id(n, 1)] != 0 || uses[g.entry_id(n, 2)] != 0) continue;
    if (!before) before = state->symbol.Copy();
    const NodeAttrs& b = bn.node->attrs;
    NodeAttrs& attrs = sum->attrs;
    attrs.dict["normalize"] = "True";
    // The BatchNorm's values as it parsed them; the activation's only a fused one has.
    for (const char* key : {"eps", "fix_gamma", "act_type", "a_min", "a_max", "slope"})
      if (b.parsed.schema && b.parsed.schema->Find(key)) attrs.dict[std::string("norm_") + key] = ParsedParamText(b, key);
    fused_op.ParseAttrs(&attrs);
    for (size_t i = 1; i < 5; ++i) sum->inputs.push_back(bn.node->inputs[i]);  // gamma, beta; the moving statistics
    replaced[bn.node.get()] = NodeEntry{sum, 1};
    fused.push_back(bn.node->name());
  }
  if (!before) return;
  Rewire(g, replaced);
  state->Changed();
  if (state->symbol.ListArguments() != before->ListArguments() ||
      state->symbol.ListAuxiliaryStates() != before->ListAuxiliaryStates()) {
    state->symbol = *before;
    return;
  }
  fused_names->insert(fused_names->end(), fused.begin(), fused.end());
}

std::vector<std::string> FuseResidualAddsPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  std::vector<std::string> fused;
  const Op& fused_op = OpRegistry::Global().Get("_fused_conv_act");
  std::map<uint32_t, uint32_t> reader;  // entry -> the node reading it (the last one seen)
  for (uint32_t n = 0; n < g.num_nodes(); ++n)
    for (const auto& in : g.node(n).inputs) reader[g.entry_id(in)] = n;
  // A Convolution's output read by nothing else and no head.
  auto own_conv = [&](const Graph::EntryRef& e) {
    return e.index == 0 && IsOp(*g.node(e.node_id).node, "Convolution") && uses[g.entry_id(e)] == 1 &&
           !heads.count(g.entry_id(e));
  };
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& add = g.node(n);
    const bool two_input_sum = IsOp(*add.node, "elemwise_add") ||
                               (IsOp(*add.node, "add_n") && add.inputs.size() == 2);  // in0 + in1 either way
    if (!two_input_sum || add.inputs.size() != 2) continue;
    const size_t k = own_conv(add.inputs[0]) ? 0 : own_conv(add.inputs[1]) ? 1 : 2;
    if (k == 2 || g.entry_id(add.inputs[0]) == g.entry_id(add.inputs[1])) continue;
    const std::shared_ptr<Node>& conv = g.node(add.inputs[k].node_id).node;
    // relu / clip / leaky reading only the sum joins too (ResNet v1's relu after the add); not
    // prelu, whose gamma input would come after the residual.
    std::shared_ptr<Node> last = add.node;
    std::map<std::string, std::string> act_params = {{"act_type", "none"}};
    const uint32_t sum = g.entry_id(n, 0);
    if (uses[sum] == 1 && !heads.count(sum) && reader.count(sum)) {
      const std::shared_ptr<Node>& act = g.node(reader.at(sum)).node;
      std::map<std::string, std::string> params = FusedActivationParams(*act);
      if (!params.empty() && params.at("act_type") != "prelu") {
        last = act;
        act_params = std::move(params);
      }
    }
    NodeAttrs attrs = conv->attrs;
    attrs.op = &fused_op;
    attrs.name = last->attrs.name;
    for (auto& [key, value] : act_params) attrs.dict[key] = value;
    // The residual where the add read it: the graph's depth-first order, and so ListArguments, stays.
    attrs.dict["residual"] = k == 0 ? "last" : "first";
    fused_op.ParseAttrs(&attrs);
    std::vector<NodeEntry> inputs = conv->inputs;
    const NodeEntry residual = add.node->inputs[1 - k];
    if (k == 0) inputs.push_back(residual);
    else inputs.insert(inputs.begin(), residual);
    fused.push_back(conv->name());
    if (last != add.node) fused.push_back(add.node->name());
    last->attrs = std::move(attrs);
    last->inputs = std::move(inputs);
  }
  if (!fused.empty()) state->Changed();
  FuseBatchNormsOfSums(state, &fused);
  return fused;
}

}  // namespace

namespace {
// A _contrib_quantized_act (relu) reading the three outputs of a _contrib_quantized_batch_norm
// (pre-activation ResNet's bn1 and relu1 in int8) becomes one _fused_quantized_batch_norm_relu
// (the act's name and outputs, the BatchNorm's inputs and parameters), when nothing else reads
// the BatchNorm's outputs and none is a head. The same levels as the two nodes.
void FuseQuantizedBatchNormRelus(RewriteState* state, std::vector<std::string>* fused) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  const Op& fused_op = OpRegistry::Global().Get("_fused_quantized_batch_norm_relu");
  bool changed = false;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& act = g.node(n);
    if (!IsOp(*act.node, "_contrib_quantized_act") || act.inputs.size() != 3) continue;
    const uint32_t bn_id = act.inputs[0].node_id;
    const auto& bn = g.node(bn_id);
    if (!IsOp(*bn.node, "_contrib_quantized_batch_norm")) continue;
    bool own = true;
    for (uint32_t i = 0; i < 3; ++i) {
      const uint32_t entry = g.entry_id(bn_id, i);
      own = own && act.inputs[i].node_id == bn_id && act.inputs[i].index == i && uses[entry] == 1 &&
            !heads.count(entry);
    }
    if (!own) continue;
    NodeAttrs attrs = bn.node->attrs;
    attrs.op = &fused_op;
    attrs.name = act.node->attrs.name;
    fused_op.ParseAttrs(&attrs);
    act.node->attrs = std::move(attrs);
    act.node->inputs = bn.node->inputs;
    fused->push_back(bn.node->name());
    changed = true;
  }
  if (changed) state->Changed();
}
}  // namespace

// A calibrated _contrib_quantize_v2 of a relu / clip / leaky / prelu that reads a _contrib_dequantize
// becomes one _fused_quantized_act on the dequantize's inputs (the quantize's name, parameters and
// outputs), when the dequantized values and the activation's output feed nothing else and are no
// heads. Same levels as the three nodes (the fused op applies their formulas).
std::vector<std::string> FuseQuantizedActivationsPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  const Op& fused_op = OpRegistry::Global().Get("_fused_quantized_act");
  // The one read of output 0 of node `id`, no head.
  auto only_read = [&](const Graph::EntryRef& e) {
    return e.index == 0 && uses[g.entry_id(e)] == 1 && !heads.count(g.entry_id(e));
  };
  std::vector<std::string> fused;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const auto& q = g.node(n);
    if (!IsOp(*q.node, "_contrib_quantize_v2") || q.inputs.empty()) continue;
    if (!ParsedParam<std::optional<float>>(q.node->attrs, "min_calib_range") ||
        !ParsedParam<std::optional<float>>(q.node->attrs, "max_calib_range"))
      continue;
    const Graph::EntryRef act_entry = q.inputs[0];
    const auto& act = g.node(act_entry.node_id);
    const std::map<std::string, std::string> act_params = FusedActivationParams(*act.node);
    const bool prelu = !act_params.empty() && act_params.at("act_type") == "prelu";
    if (act_params.empty() || act.inputs.size() != (prelu ? 2u : 1u) || !only_read(act_entry)) continue;
    const Graph::EntryRef deq_entry = act.inputs[0];
    const auto& deq = g.node(deq_entry.node_id);
    if (!IsOp(*deq.node, "_contrib_dequantize") || !only_read(deq_entry)) continue;
    NodeAttrs& attrs = q.node->attrs;
    attrs.op = &fused_op;
    for (auto& [key, value] : act_params) attrs.dict[key] = value;
    q.node->inputs = deq.node->inputs;
    if (prelu) q.node->inputs.push_back(act.node->inputs[1]);  // gamma, still an argument
    fused_op.ParseAttrs(&attrs);
    fused.push_back(act.node->name());
    fused.push_back(deq.node->name());
  }
  if (!fused.empty()) state->Changed();
  FuseQuantizedBatchNormRelus(state, &fused);
  return fused;
}

namespace {
// A quantized _sg_mkldnn_conv 1x1 expansion, the 3x3 depthwise one reading its three outputs
// and the 1x1 projection reading the depthwise one's become one
// _fused_quantized_inverted_residual (the projection's name and outputs), when nothing else reads
// the first two nodes' outputs, none is a head, and the op runs such blocks in bands on this CPU
// (FormsQuantizedInvertedResidual). The same levels as the three nodes.
std::vector<std::string> FuseQuantizedInvertedResidualsPass(RewriteState* state) {
  const Graph& g = state->graph();
  const std::vector<int>& uses = state->uses();
  const std::set<uint32_t>& heads = state->heads();
  const Op& fused_op = OpRegistry::Global().Get("_fused_quantized_inverted_residual");
  // Node `from`'s three outputs, each read once, by node `by`'s inputs 0 (the data) and
  // data_min, data_max, and no head.
  auto feeds_only = [&](uint32_t from, uint32_t by, size_t data_min) {
    const auto& reader = g.node(by).inputs;
    for (uint32_t i = 0; i < 3; ++i) {
      const uint32_t entry = g.entry_id(from, i);
      const size_t slot = i == 0 ? 0 : data_min + i - 1;
      if (slot >= reader.size() || reader[slot].node_id != from || reader[slot].index != i || uses[entry] != 1 ||
          heads.count(entry))
        return false;
    }
    return true;
  };
  auto sg_conv = [&](uint32_t n) -> const subgraph::SgConvParam* {
    const Node& node = *g.node(n).node;
    return IsOp(node, "_sg_mkldnn_conv") ? &node.attrs.param<subgraph::SgConvParam>() : nullptr;
  };
  std::vector<std::string> fused;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const subgraph::SgConvParam* pp = sg_conv(n);
    if (!pp || !pp->quantized) continue;
    const uint32_t d = g.node(n).inputs[0].node_id;
    const subgraph::SgConvParam* dp = sg_conv(d);
    if (!dp || !dp->quantized || !feeds_only(d, n, subgraph::SgConvSlots(*pp).data_min)) continue;
    const uint32_t e = g.node(d).inputs[0].node_id;
    const subgraph::SgConvParam* ep = sg_conv(e);
    if (!ep || !ep->quantized || !feeds_only(e, d, subgraph::SgConvSlots(*dp).data_min) ||
        !subgraph::FormsQuantizedInvertedResidual(*ep, *dp, *pp))
      continue;
    const Node& expand = *g.node(e).node;
    const Node& depthwise = *g.node(d).node;
    const std::shared_ptr<Node>& project = g.node(n).node;
    NodeAttrs attrs;
    attrs.op = &fused_op;
    attrs.name = project->attrs.name;
    for (const auto& [part, node] : {std::pair<const char*, const Node*>{"expand", &expand},
                                     {"depthwise", &depthwise}, {"project", project.get()}})
      for (const auto& [key, value] : node->attrs.dict) attrs.dict[std::string(part) + ":" + key] = value;
    fused_op.ParseAttrs(&attrs);
    // The op's inputs: the expansion's, then the others' but their data and its range.
    std::vector<NodeEntry> inputs = expand.inputs;
    for (const auto& [node, slots] : {std::pair<const Node*, subgraph::SgConvSlots>{&depthwise, subgraph::SgConvSlots(*dp)},
                                      {project.get(), subgraph::SgConvSlots(*pp)}})
      for (size_t i = 1; i < node->inputs.size(); ++i)
        if (i != slots.data_min && i != slots.data_min + 1) inputs.push_back(node->inputs[i]);
    fused.push_back(expand.name());
    fused.push_back(depthwise.name());
    project->attrs = std::move(attrs);
    project->inputs = std::move(inputs);
  }
  return fused;
}
}  // namespace

const std::vector<GraphPass>& GraphPasses() {
  static const std::vector<GraphPass> passes = {
      {"fold_batch_norm", FoldBatchNormPass},                  // into the Convolution / FullyConnected before it
      {"fuse_activations", FuseActivationsPass},              // relu / clip / LeakyReLU as the Convolution writes
      {"fuse_inverted_residuals", FuseInvertedResidualsPass},  // each inverted residual block as one node
      {"fuse_residual_adds", FuseResidualAddsPass},            // each residual add as the Convolution before it writes
      {"fuse_quantized_activations", FuseQuantizedActivationsPass},  // dequantize, an activation, quantize in one pass
      {"fuse_quantized_inverted_residuals", FuseQuantizedInvertedResidualsPass},  // int8 blocks as one node each
  };
  return passes;
}

namespace {
RewrittenGraph RunOnePass(GraphPassFn pass, const Symbol& symbol, const std::map<std::string, NDArray>& args,
                          const std::map<std::string, NDArray>& aux) {
  RewriteState state(symbol, args, aux);
  RewrittenGraph out;
  out.folded = pass(&state);
  out.symbol = std::move(state.symbol);
  out.args = std::move(state.args);
  out.aux = std::move(state.aux);
  return out;
}
}  // namespace

RewrittenGraph FoldBatchNorm(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux) {
  return RunOnePass(FoldBatchNormPass, symbol, args, aux);
}
RewrittenGraph FuseActivations(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                               const std::map<std::string, NDArray>& aux) {
  return RunOnePass(FuseActivationsPass, symbol, args, aux);
}
RewrittenGraph FuseInvertedResiduals(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                                     const std::map<std::string, NDArray>& aux) {
  return RunOnePass(FuseInvertedResidualsPass, symbol, args, aux);
}
RewrittenGraph FuseResidualAdds(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                                const std::map<std::string, NDArray>& aux) {
  return RunOnePass(FuseResidualAddsPass, symbol, args, aux);
}

PassesResult RunGraphPasses(const Symbol& symbol, std::map<std::string, NDArray> args,
                            std::map<std::string, NDArray> aux, const std::set<std::string>& disabled) {
  std::vector<std::string> names;
  for (const GraphPass& pass : GraphPasses()) names.push_back(pass.name);
  for (const std::string& name : disabled)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(StrCat("no graph pass named '", name, "'; the passes: ", JoinNames(names)));
  RewriteState state(symbol, std::move(args), std::move(aux));
  PassesResult result;
  for (const GraphPass& pass : GraphPasses()) {
    if (disabled.count(pass.name)) continue;
    std::vector<std::string> rewritten = pass.run(&state);
    if (!rewritten.empty()) state.Changed();
    result.rewritten[pass.name] = std::move(rewritten);
  }
  result.symbol = std::move(state.symbol);
  result.args = std::move(state.args);
  result.aux = std::move(state.aux);
  return result;
}

}  // namespace symbind
