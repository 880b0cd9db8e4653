#include "symbol.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_set>

#include "graph.h"

namespace symbind {

namespace {
std::mutex g_name_mutex;
std::map<std::string, int>& NameCounters() {
  static std::map<std::string, int> counters;
  return counters;
}

std::string GenerateName(const std::string& op_name) {
  std::string hint = op_name;
  for (auto& c : hint) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::lock_guard<std::mutex> lock(g_name_mutex);
  int n = NameCounters()[hint]++;
  return hint + std::to_string(n);
}

std::shared_ptr<Node> MakeVariableNode(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->attrs.name = name;
  return n;
}
}  // namespace

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  for (auto& e : inputs) pending.push_back(std::move(e.node));
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    // Sole owner: take its inputs before it dies, so its destructor has nothing to recurse into.
    if (n && n.use_count() == 1)
      for (auto& e : n->inputs) pending.push_back(std::move(e.node));
  }
}

void Symbol::ResetNameCounters() {
  std::lock_guard<std::mutex> lock(g_name_mutex);
  NameCounters().clear();
}

Symbol Symbol::FromEntries(std::vector<NodeEntry> entries) {
  Symbol s;
  s.outputs_ = std::move(entries);
  return s;
}

void SetDefaultInitializers(Node* node) {
  const Op* op = node->attrs.op;
  if (!op || op->input_initializers.empty()) return;
  std::vector<std::string> names = op->ListArguments(node->attrs);
  for (auto& a : op->ListAuxStates(node->attrs)) names.push_back(a);
  for (size_t i = 0; i < names.size() && i < node->inputs.size(); ++i) {
    auto init = op->input_initializers.find(names[i]);
    Node* input = node->inputs[i].node.get();
    if (init != op->input_initializers.end() && input->is_variable())
      input->user_attrs.emplace("__init__", init->second);
  }
}

Symbol Symbol::Variable(const std::string& name, const std::map<std::string, std::string>& attrs) {
  if (name.empty()) throw Error("Symbol::Variable needs a non-empty name");
  auto n = MakeVariableNode(name);
  n->user_attrs = attrs;
  return FromEntries({NodeEntry{n, 0}});
}

Symbol Symbol::Create(const std::string& op_name, const std::string& name, const KwArgs& params,
                      const std::vector<std::pair<std::string, Symbol>>& named_inputs,
                      const std::vector<Symbol>& positional_inputs) {
  const Op& op = OpRegistry::Global().Get(op_name);
  auto node = std::make_shared<Node>();
  node->attrs.op = &op;
  node->attrs.name = name.empty() ? GenerateName(op.name) : name;
  for (auto& kv : params) {
    if (kv.first.size() > 4 && kv.first.compare(0, 2, "__") == 0 &&
        kv.first.compare(kv.first.size() - 2, 2, "__") == 0)
      node->user_attrs[kv.first] = kv.second;
    else
      node->attrs.dict[kv.first] = kv.second;
  }
  if (!op.key_var_num_args.empty() && !node->attrs.dict.count(op.key_var_num_args) &&
      !positional_inputs.empty())
    node->attrs.dict[op.key_var_num_args] = std::to_string(positional_inputs.size());
  op.ParseAttrs(&node->attrs);

  std::vector<std::string> args = op.ListArguments(node->attrs);
  std::vector<std::string> aux = op.ListAuxStates(node->attrs);
  std::vector<std::string> all = args;
  all.insert(all.end(), aux.begin(), aux.end());
  std::vector<NodeEntry> inputs(all.size());
  std::vector<bool> bound(all.size(), false);

  auto single_entry = [&](const Symbol& s, const std::string& what) {
    if (s.outputs_.size() != 1)
      throw Error(StrCat("operator ", node->attrs.name, " (", op.name, "): input '", what,
                         "' is a symbol with ", s.outputs_.size(),
                         " outputs; compose with exactly one output"));
    return s.outputs_[0];
  };

  // As in MXNet, positional inputs fill the arguments, then the aux states (an imperative
  // BatchNorm call passes all five).
  if (positional_inputs.size() > all.size())
    throw Error(StrCat("operator ", node->attrs.name, " (", op.name, ") takes ", all.size(), " inputs (",
                       JoinNames(all), ") but ", positional_inputs.size(), " were given"));
  for (size_t i = 0; i < positional_inputs.size(); ++i) {
    inputs[i] = single_entry(positional_inputs[i], all[i]);
    bound[i] = true;
  }
  for (auto& kv : named_inputs) {
    auto it = std::find(all.begin(), all.end(), kv.first);
    if (it == all.end()) {
      throw Error(StrCat("operator ", node->attrs.name, " (", op.name, ") has no input '",
                         kv.first, "'; its inputs are: ", JoinNames(all)));
    }
    size_t i = static_cast<size_t>(it - all.begin());
    if (bound[i])
      throw Error(StrCat("operator ", node->attrs.name, " (", op.name, "): input '", kv.first,
                         "' given twice"));
    inputs[i] = single_entry(kv.second, kv.first);
    bound[i] = true;
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (!bound[i]) inputs[i] = NodeEntry{MakeVariableNode(node->attrs.name + "_" + all[i]), 0};
  node->inputs = std::move(inputs);
  SetDefaultInitializers(node.get());

  Symbol s;
  // An op with no visible output (reset_arrays, which writes its inputs) keeps its hidden
  // ones: a symbol without outputs would be a graph without the node.
  int visible = op.NumVisibleOutputs(node->attrs);
  if (visible == 0) visible = op.NumOutputs(node->attrs);
  for (int i = 0; i < visible; ++i) s.outputs_.push_back(NodeEntry{node, static_cast<uint32_t>(i)});
  return s;
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  Symbol s;
  for (auto& sym : symbols) s.outputs_.insert(s.outputs_.end(), sym.outputs_.begin(), sym.outputs_.end());
  return s;
}

Symbol Symbol::operator[](size_t i) const {
  if (i >= outputs_.size())
    throw Error(StrCat("output index ", i, " out of range: the symbol has ", outputs_.size(),
                       " outputs"));
  return FromEntries({outputs_[i]});
}

Symbol Symbol::operator[](const std::string& name) const {
  std::vector<std::string> names = ListOutputs();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return (*this)[i];
  throw Error("the symbol has no output named '" + name + "'");
}

std::string EntryName(const NodeEntry& e) {
  if (e.node->is_variable()) return e.node->name();
  return e.node->name() + "_" + e.node->attrs.op->OutputName(e.node->attrs, e.index);
}

std::vector<bool> AuxInputMask(const Node& node) {
  std::vector<bool> mask(node.inputs.size(), false);
  if (node.is_variable()) return mask;
  size_t nargs = node.attrs.op->ListArguments(node.attrs).size();
  for (size_t i = nargs; i < mask.size(); ++i) mask[i] = true;
  return mask;
}

Symbol Symbol::GetInternals() const {
  Graph g(*this);
  Symbol s;
  for (auto& n : g.nodes()) {
    // Visible outputs only, as MXNet lists them (Dropout's mask, BatchNorm's saved mean and var
    // stay hidden).
    int count = n.node->is_variable() ? 1 : n.node->attrs.op->NumVisibleOutputs(n.node->attrs);
    for (int i = 0; i < count; ++i) s.outputs_.push_back(NodeEntry{n.node, static_cast<uint32_t>(i)});
  }
  return s;
}

Symbol Symbol::GetChildren() const {
  Symbol s;
  std::unordered_set<const Node*> seen;
  for (auto& e : outputs_) {
    if (!seen.insert(e.node.get()).second) continue;
    s.outputs_.insert(s.outputs_.end(), e.node->inputs.begin(), e.node->inputs.end());
  }
  return s;
}

std::vector<std::string> Symbol::ListArguments() const { return Graph(*this).ListArguments(); }

std::vector<std::string> Symbol::ListAuxiliaryStates() const { return Graph(*this).ListAuxiliaryStates(); }

std::vector<std::string> Symbol::ListInputs() const { return Graph(*this).ListInputs(); }

std::vector<std::string> Symbol::ListOutputs() const {
  std::vector<std::string> out;
  for (auto& e : outputs_) out.push_back(EntryName(e));
  return out;
}

namespace {
// GetName, GetAttr and SetAttr address one node: the symbol's single output.
void RequireSingleOutput(const std::vector<NodeEntry>& outputs, const char* what) {
  if (outputs.empty())
    throw Error(StrCat(what, ": the symbol is empty (default-constructed, no outputs)"));
  if (outputs.size() != 1)
    throw Error(StrCat(what, ": the symbol has ", outputs.size(), " outputs (a group); select one "
                       "with operator[] first"));
}
}  // namespace

std::string Symbol::GetName() const {
  RequireSingleOutput(outputs_, "GetName");
  return outputs_[0].node->name();
}

bool Symbol::GetAttr(const std::string& key, std::string* value) const {
  RequireSingleOutput(outputs_, "GetAttr");
  auto& attrs = outputs_[0].node->user_attrs;
  auto it = attrs.find(key);
  if (it == attrs.end()) return false;
  *value = it->second;
  return true;
}

void Symbol::SetAttr(const std::string& key, const std::string& value) {
  RequireSingleOutput(outputs_, "SetAttr");
  outputs_[0].node->user_attrs[key] = value;
}

Symbol Symbol::Copy() const {
  Graph g(*this);
  std::map<const Node*, std::shared_ptr<Node>> copies;
  for (auto& n : g.nodes()) {
    auto c = std::make_shared<Node>(*n.node);
    for (auto& in : c->inputs) in.node = copies.at(in.node.get());
    copies[n.node.get()] = c;
  }
  Symbol s;
  for (auto& e : outputs_) s.outputs_.push_back(NodeEntry{copies.at(e.node.get()), e.index});
  return s;
}

Symbol Symbol::ReplaceVariables(const std::map<std::string, Symbol>& replacements) const {
  const std::vector<std::string> inputs = ListInputs();
  for (const auto& kv : replacements) {
    if (std::find(inputs.begin(), inputs.end(), kv.first) == inputs.end())
      throw Error(StrCat("cannot replace '", kv.first, "': the symbol has no such input (inputs: ",
                         JoinNames(inputs), ")"));
    if (kv.second.NumOutputs() != 1)
      throw Error(StrCat("the symbol replacing '", kv.first, "' has ", kv.second.NumOutputs(),
                         " outputs; it must have one"));
  }
  Graph g(*this);
  std::map<const Node*, std::shared_ptr<Node>> copies;
  auto entry_for = [&](const NodeEntry& e) {
    if (e.node->is_variable()) {
      auto r = replacements.find(e.node->name());
      if (r != replacements.end()) return r->second.outputs_[0];
    }
    return NodeEntry{copies.at(e.node.get()), e.index};
  };
  for (auto& n : g.nodes()) {
    auto c = std::make_shared<Node>(*n.node);
    for (auto& in : c->inputs) in = entry_for(in);
    copies[n.node.get()] = c;
  }
  Symbol s;
  for (auto& e : outputs_) s.outputs_.push_back(entry_for(e));
  return s;
}

}  // namespace symbind
