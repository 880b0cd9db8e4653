// An indexed view of a Symbol's graph, ordered as MXNet orders it: DFS post-order from the
// heads, visiting each node's inputs in order (computed with Boost.Graph).
#pragma once
#include <cstdint>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include "symbol.h"

namespace symbind {

class Graph {
 public:
  struct EntryRef {
    uint32_t node_id;
    uint32_t index;
  };
  struct NodeInfo {
    std::shared_ptr<Node> node;
    std::vector<EntryRef> inputs;
  };

  // Bounds that keep the per-entry tables (shapes, types, arrays) of a hostile graph small
  // before anything is inferred: entry ids are uint32, and no real model comes near these.
  static constexpr uint32_t kMaxNodeOutputs = uint32_t{1} << 16;
  static constexpr uint32_t kMaxEntries = uint32_t{1} << 24;

  // Throws symbind::Error on a cycle, an input that names a missing output, or a graph past
  // the bounds above.
  explicit Graph(const Symbol& symbol);

  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const NodeInfo& node(uint32_t id) const { return nodes_[id]; }
  size_t num_nodes() const { return nodes_.size(); }
  // Entries (node outputs) are numbered consecutively: entry_id(n, i) = row_ptr[n] + i.
  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return row_ptr_[node_id] + index; }
  uint32_t entry_id(const EntryRef& e) const { return entry_id(e.node_id, e.index); }
  size_t num_entries() const { return row_ptr_.back(); }
  uint32_t num_node_outputs(uint32_t node_id) const { return row_ptr_[node_id + 1] - row_ptr_[node_id]; }
  const std::vector<uint32_t>& row_ptr() const { return row_ptr_; }
  // Variable nodes in topological order.
  const std::vector<uint32_t>& arg_nodes() const { return arg_nodes_; }
  bool is_aux_node(uint32_t id) const { return aux_[id]; }
  const std::vector<EntryRef>& heads() const { return heads_; }
  // Node id of a Node pointer in this graph.
  uint32_t node_id(const Node* n) const { return ids_.at(n); }
  const Symbol& symbol() const { return symbol_; }
  // Names of the variables in topological order, as Symbol's ListArguments (not aux states),
  // ListAuxiliaryStates and ListInputs (both) give them.
  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  std::vector<std::string> ListInputs() const;

 private:
  Symbol symbol_;
  std::vector<NodeInfo> nodes_;
  std::vector<uint32_t> row_ptr_;
  std::vector<uint32_t> arg_nodes_;
  std::vector<bool> aux_;
  std::vector<EntryRef> heads_;
  std::unordered_map<const Node*, uint32_t> ids_;
};

// Result of shape inference: shapes in ListArguments / ListOutputs / ListAuxiliaryStates order.
struct ShapeInferResult {
  std::vector<TShape> arg_shapes, out_shapes, aux_shapes;
  // Names of arguments and aux states still not fully known (empty when complete).
  std::vector<std::string> unknown;
  bool complete() const { return unknown.empty(); }
  std::vector<TShape> entry_shapes;  // every entry of the graph, by entry id
};

// Shapes of every entry of `g`, given shapes for some inputs by name. Runs each op's
// InferShape forward and backward over the graph until nothing changes. Throws ShapeError
// naming node, op, input and the provided and inferred shapes on a contradiction.
std::vector<TShape> InferEntryShapes(const Graph& g, const std::map<std::string, TShape>& known);

// Like InferShape but returns what is known without failing on unknown shapes.
ShapeInferResult InferShapePartial(const Symbol& sym, const std::map<std::string, TShape>& known);
ShapeInferResult InferShapePartial(const Graph& g, const std::map<std::string, TShape>& known);
// Throws ShapeError listing the arguments whose shape could not be inferred.
ShapeInferResult InferShape(const Symbol& sym, const std::map<std::string, TShape>& known);
ShapeInferResult InferShape(const Graph& g, const std::map<std::string, TShape>& known);

// Throws ShapeError naming the first node whose output shapes depend on its inputs' values
// (Op::value_dependent_shape, MXNet's dynamic shapes): a bound graph needs every shape before
// it runs, so such ops run in imperative calls only.
void RequireStaticShapes(const Graph& g);

struct TypeInferResult {
  std::vector<DType> arg_types, out_types, aux_types;
  std::vector<int> entry_types;  // every entry of the graph, by entry id (-1 unknown)
};
// Types of every entry (-1 unknown); inputs nothing constrains default to float32 unless
// default_unconstrained is false (then they and what depends on them stay -1).
std::vector<int> InferEntryTypes(const Graph& g, const std::map<std::string, DType>& known,
                                 bool default_unconstrained = true);
TypeInferResult InferType(const Symbol& sym, const std::map<std::string, DType>& known);
TypeInferResult InferType(const Graph& g, const std::map<std::string, DType>& known);

}  // namespace symbind
