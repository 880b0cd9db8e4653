// Symbols: composable descriptions of a computation graph, MXNet-style.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "op.h"

namespace symbind {

struct Node;

// One output of one node.
struct NodeEntry {
  std::shared_ptr<Node> node;
  uint32_t index = 0;
};

struct Node {
  NodeAttrs attrs;  // attrs.op is null for a variable
  std::vector<NodeEntry> inputs;
  // Attributes that are not op parameters: "__shape__", "__init__", "__lr_mult__", ...
  std::map<std::string, std::string> user_attrs;

  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  // Releases inputs iteratively: a long chain must not recurse once per node.
  ~Node();

  bool is_variable() const { return attrs.op == nullptr; }
  int num_outputs() const { return is_variable() ? 1 : attrs.op->NumOutputs(attrs); }
  const std::string& name() const { return attrs.name; }
};

// Gives each variable input of op node `node` that has no "__init__" attribute the op's
// default initializer for that input (Op::input_initializers), as MXNet does at compose.
void SetDefaultInitializers(Node* node);

class Symbol {
 public:
  Symbol() = default;

  // A variable (graph input). `attrs` may hold "__shape__" etc.
  static Symbol Variable(const std::string& name,
                         const std::map<std::string, std::string>& attrs = {});

  // Applies op `op_name` to inputs. Named inputs bind to the op's argument names; positional
  // ones fill arguments in order. Missing arguments and aux states are created as variables
  // "<name>_<argument>". An empty `name` is generated as "<op lowercase><counter>".
  static Symbol Create(const std::string& op_name, const std::string& name,
                       const KwArgs& params,
                       const std::vector<std::pair<std::string, Symbol>>& named_inputs,
                       const std::vector<Symbol>& positional_inputs = {});

  // Several symbols side by side: outputs concatenated.
  static Symbol Group(const std::vector<Symbol>& symbols);

  // The i-th output as a symbol.
  Symbol operator[](size_t i) const;
  // The output called `name` (as ListOutputs spells it).
  Symbol operator[](const std::string& name) const;
  // Every output of every node, in topological order ("fc1_output", "data", ...).
  Symbol GetInternals() const;
  // The inputs of this (single-node) symbol's node.
  Symbol GetChildren() const;

  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  std::vector<std::string> ListOutputs() const;
  // Every variable (arguments and aux states) in topological order.
  std::vector<std::string> ListInputs() const;

  // The name of the single head node; throws for grouped symbols.
  std::string GetName() const;
  // User attribute of the single head node.
  bool GetAttr(const std::string& key, std::string* value) const;
  void SetAttr(const std::string& key, const std::string& value);

  size_t NumOutputs() const { return outputs_.size(); }
  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  static Symbol FromEntries(std::vector<NodeEntry> entries);
  // A structural copy whose nodes are new (attributes copied).
  Symbol Copy() const;
  // A copy in which each variable named in `replacements` is that (one-output) symbol instead
  // (MXNet's Compose of a whole symbol: net2(fc3_data=net1)). Unknown names throw.
  Symbol ReplaceVariables(const std::map<std::string, Symbol>& replacements) const;

  // Resets the automatic name counters (fullyconnected0, ...), e.g. between tests.
  static void ResetNameCounters();

 private:
  std::vector<NodeEntry> outputs_;
};

// The name ListOutputs gives an entry: a variable's own name, else "<node>_<output name>".
std::string EntryName(const NodeEntry& e);

// Marks which inputs of op nodes are aux states; true at index i means input i is aux.
std::vector<bool> AuxInputMask(const Node& node);

// Builder for op symbols with string-converted parameters:
//   Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", x)
//                   .CreateSymbol("fc1");
class OpBuilder {
 public:
  explicit OpBuilder(std::string op_name) : op_name_(std::move(op_name)) {}
  template <typename T>
  OpBuilder& SetParam(const std::string& key, const T& value) {
    params_[key] = ToParamString(value);
    return *this;
  }
  OpBuilder& SetInput(const std::string& name, const Symbol& s) {
    named_.emplace_back(name, s);
    return *this;
  }
  OpBuilder& PushInput(const Symbol& s) {
    positional_.push_back(s);
    return *this;
  }
  Symbol CreateSymbol(const std::string& name = "") const {
    return Symbol::Create(op_name_, name, params_, named_, positional_);
  }

  static std::string ToParamString(const std::string& v) { return v; }
  static std::string ToParamString(const char* v) { return v; }
  static std::string ToParamString(bool v) { return v ? "True" : "False"; }
  static std::string ToParamString(const TShape& v) { return v.ToString(); }
  template <typename T>
  static std::string ToParamString(const T& v) {
    return StrCat(v);
  }

 private:
  std::string op_name_;
  KwArgs params_;
  std::vector<std::pair<std::string, Symbol>> named_;
  std::vector<Symbol> positional_;
};

}  // namespace symbind
