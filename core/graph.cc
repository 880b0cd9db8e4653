#include "graph.h"

#include <algorithm>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <unordered_map>

namespace symbind {

namespace {
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;
using Edge = boost::graph_traits<BoostGraph>::edge_descriptor;

struct CycleFound {
  Vertex at;
};

// Records vertices as they finish (post-order) and rejects back edges (cycles).
class PostOrderRecorder : public boost::default_dfs_visitor {
 public:
  explicit PostOrderRecorder(std::vector<Vertex>* order) : order_(order) {}
  void finish_vertex(Vertex v, const BoostGraph&) { order_->push_back(v); }
  void back_edge(Edge e, const BoostGraph& g) { throw CycleFound{boost::target(e, g)}; }

 private:
  std::vector<Vertex>* order_;
};
}  // namespace

Graph::Graph(const Symbol& symbol) : symbol_(symbol) {
  // Discover nodes and build a Boost graph whose out-edges (node -> input) keep input order.
  BoostGraph bg;
  std::vector<Node*> vertex_node;
  std::unordered_map<const Node*, Vertex> vertex_of;
  std::vector<std::shared_ptr<Node>> owners;
  std::vector<const Node*> stack;
  auto vertex_for = [&](const std::shared_ptr<Node>& n) {
    auto it = vertex_of.find(n.get());
    if (it != vertex_of.end()) return it->second;
    Vertex v = boost::add_vertex(bg);
    vertex_of[n.get()] = v;
    vertex_node.push_back(n.get());
    owners.push_back(n);
    stack.push_back(n.get());
    return v;
  };
  for (auto& e : symbol.outputs()) {
    if (!e.node) throw Error("symbol output refers to no node");
    vertex_for(e.node);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    Vertex u = vertex_of[n];
    for (auto& in : n->inputs) {
      if (!in.node) throw Error(StrCat("node ", n->name(), " has an input that refers to no node"));
      Vertex v = vertex_for(in.node);
      boost::add_edge(u, v, bg);
    }
  }

  std::vector<Vertex> order;
  std::vector<boost::default_color_type> colors(boost::num_vertices(bg), boost::white_color);
  auto color_map = boost::make_iterator_property_map(colors.begin(),
                                                     boost::get(boost::vertex_index, bg));
  PostOrderRecorder recorder(&order);
  try {
    for (auto& e : symbol.outputs()) {
      Vertex h = vertex_of[e.node.get()];
      if (colors[h] == boost::white_color) boost::depth_first_visit(bg, h, recorder, color_map);
    }
  } catch (const CycleFound& c) {
    throw Error("the graph has a cycle through node '" + vertex_node[c.at]->name() + "'");
  }

  nodes_.resize(order.size());
  ids_.reserve(order.size());
  std::vector<uint32_t> id_of_vertex(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    id_of_vertex[order[i]] = i;
    ids_[vertex_node[order[i]]] = i;
    nodes_[i].node = owners[order[i]];
  }
  row_ptr_.assign(1, 0);
  aux_.assign(nodes_.size(), false);
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = *nodes_[i].node;
    const int n_out = n.num_outputs();
    if (n_out < 0 || static_cast<uint32_t>(n_out) > kMaxNodeOutputs)
      throw Error(StrCat("node ", n.name(), " (", n.is_variable() ? "variable" : n.attrs.op->name,
                         ") has ", n_out, " outputs; at most ", kMaxNodeOutputs, " are supported"));
    if (row_ptr_.back() + static_cast<uint64_t>(n_out) > kMaxEntries)
      throw Error(StrCat("the graph has more than ", kMaxEntries, " node outputs (at node ",
                         n.name(), "); symbind supports at most ", kMaxEntries));
    row_ptr_.push_back(row_ptr_.back() + static_cast<uint32_t>(n_out));
    if (!n.is_variable() && static_cast<int>(n.inputs.size()) != n.attrs.op->NumInputs(n.attrs))
      throw Error(StrCat("node ", n.name(), " (", n.attrs.op->name, ") has ", n.inputs.size(),
                         " inputs but the operator takes ", n.attrs.op->NumInputs(n.attrs)));
    for (auto& in : n.inputs) {
      uint32_t src = ids_.at(in.node.get());
      if (static_cast<int>(in.index) >= in.node->num_outputs())
        throw Error(StrCat("node ", n.name(), " uses output ", in.index, " of node ",
                           in.node->name(), ", which has only ", in.node->num_outputs(),
                           " outputs"));
      nodes_[i].inputs.push_back(EntryRef{src, in.index});
    }
    if (n.is_variable()) arg_nodes_.push_back(i);
  }
  for (auto& info : nodes_) {
    auto mask = AuxInputMask(*info.node);
    for (size_t k = 0; k < mask.size(); ++k)
      if (mask[k] && info.node->inputs[k].node->is_variable()) aux_[info.inputs[k].node_id] = true;
  }
  for (auto& e : symbol.outputs()) heads_.push_back(EntryRef{ids_.at(e.node.get()), e.index});
}

std::vector<std::string> Graph::ListArguments() const {
  std::vector<std::string> out;
  for (uint32_t id : arg_nodes_)
    if (!aux_[id]) out.push_back(nodes_[id].node->name());
  return out;
}

std::vector<std::string> Graph::ListAuxiliaryStates() const {
  std::vector<std::string> out;
  for (uint32_t id : arg_nodes_)
    if (aux_[id]) out.push_back(nodes_[id].node->name());
  return out;
}

std::vector<std::string> Graph::ListInputs() const {
  std::vector<std::string> out;
  for (uint32_t id : arg_nodes_) out.push_back(nodes_[id].node->name());
  return out;
}

namespace {
std::string InputLabel(const Graph& g, uint32_t nid, size_t slot) {
  const Node& n = *g.node(nid).node;
  auto args = n.attrs.op->ListArguments(n.attrs);
  auto aux = n.attrs.op->ListAuxStates(n.attrs);
  std::string name = slot < args.size() ? args[slot] : aux[slot - args.size()];
  const auto& src = g.node(g.node(nid).inputs[slot].node_id).node;
  return StrCat("input '", name, "' (", src->name(), ")");
}

std::string OutputLabel(const Graph& g, uint32_t nid, size_t slot) {
  const Node& n = *g.node(nid).node;
  return StrCat("output '", n.attrs.op->OutputName(n.attrs, static_cast<uint32_t>(slot)), "'");
}

std::string NodeLabel(const Node& n) {
  return StrCat("Error in operator ", n.name(), " (", n.attrs.op->name, "): ");
}

// Rejects a dtype the node's kernels cannot read (see Op::dtype_generic): float32, or a
// floating type the executor runs through float32 copies (executor/kernel_call.h).
void CheckFloat32Kernels(const Graph& g, const std::vector<int>& types) {
  auto readable = [](int t) { return t < 0 || IsFloatingType(static_cast<DType>(t)); };
  auto reject = [](const Node& n, const std::string& what, int got) {
    throw TypeError(StrCat(NodeLabel(n), "unsupported dtype for ", what, ": expected a floating type, got ",
                            DTypeName(static_cast<DType>(got)), " (the operator computes in float32; "
                            "Cast the input to float32)"));
  };
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node& n = *g.node(nid).node;
    if (n.is_variable() || n.attrs.op->dtype_generic) continue;
    const auto& inputs = g.node(nid).inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int t = types[g.entry_id(inputs[i])];
      if (readable(t) || n.attrs.op->ReadsAnyDType(n.attrs, i)) continue;  // lists arguments: the rare path only
      reject(n, InputLabel(g, nid, i), t);
    }
    for (uint32_t i = 0; i < g.num_node_outputs(nid); ++i) {
      const int t = types[g.entry_id(nid, i)];
      if (!readable(t)) reject(n, OutputLabel(g, nid, i), t);
    }
  }
}
}  // namespace

// The fixed-point sweep shared by shape and type inference (NNVM's InferAttr): runs every op
// node's inference function forward then backward over the graph, merging what it infers into
// the entry attributes, until a pass changes nothing; then `at_fixed_point` may fill defaults
// (returning whether it changed anything, which starts the passes again).
//   run(nid, &in, &out) -> false when the node has no inference function
//   merge(nid, is_input, slot, &entry_attr, inferred) -> whether the entry changed; throws on a
//   contradiction. A node whose inputs and outputs were all known when it last ran is
// consistent for good (known attributes never change), so later passes skip it: inference
// stays linear in practice.
template <typename T, typename RunFn, typename MergeFn, typename KnownFn, typename FixedPointFn>
void InferAttrSweep(const Graph& g, std::vector<T>* attrs, RunFn run, MergeFn merge, KnownFn known,
                    FixedPointFn at_fixed_point) {
  std::vector<T>& entries = *attrs;
  std::vector<bool> settled(g.num_nodes(), false);
  auto run_node = [&](uint32_t nid) {
    const auto& info = g.node(nid);
    if (settled[nid] || info.node->is_variable()) return false;
    std::vector<T> in(info.inputs.size()), out(g.num_node_outputs(nid));
    for (size_t i = 0; i < in.size(); ++i) in[i] = entries[g.entry_id(info.inputs[i])];
    for (uint32_t i = 0; i < out.size(); ++i) out[i] = entries[g.entry_id(nid, i)];
    if (!run(nid, &in, &out)) return false;
    bool changed = false, all_known = true;
    for (size_t i = 0; i < in.size(); ++i)
      changed |= merge(nid, true, i, &entries[g.entry_id(info.inputs[i])], in[i]);
    for (uint32_t i = 0; i < out.size(); ++i) {
      T& slot = entries[g.entry_id(nid, i)];
      changed |= merge(nid, false, i, &slot, out[i]);
      all_known = all_known && known(slot);
    }
    for (auto& e : info.inputs) all_known = all_known && known(entries[g.entry_id(e)]);
    settled[nid] = all_known;
    return changed;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) changed |= run_node(nid);
    for (uint32_t nid = static_cast<uint32_t>(g.num_nodes()); nid-- > 0;) changed |= run_node(nid);
    if (!changed) changed = at_fixed_point();
  }
}

std::vector<TShape> InferEntryShapes(const Graph& g, const std::map<std::string, TShape>& known) {
  std::vector<TShape> shapes(g.num_entries());
  for (uint32_t id : g.arg_nodes()) {
    const Node& n = *g.node(id).node;
    auto it = known.find(n.name());
    if (it != known.end()) {
      shapes[g.entry_id(id, 0)] = it->second;
    } else {
      auto attr = n.user_attrs.find("__shape__");
      if (attr != n.user_attrs.end()) {
        TShape s = TShape::Parse(attr->second);
        // MXNet's legacy JSON writes 0 for an unknown dim in __shape__.
        for (int d = 0; d < s.ndim(); ++d)
          if (s[d] == 0) s[d] = TShape::kUnknownDim;
        shapes[g.entry_id(id, 0)] = s;
      }
    }
  }
  InferAttrSweep<TShape>(
      g, &shapes,
      [&](uint32_t nid, std::vector<TShape>* in, std::vector<TShape>* out) {
        const Node& n = *g.node(nid).node;
        if (!n.attrs.op->infer_shape) return false;
        try {
          n.attrs.op->infer_shape(n.attrs, in, out);
        } catch (const ShapeAssignFailure& f) {
          std::string what = f.slots == in ? InputLabel(g, nid, f.index) : OutputLabel(g, nid, f.index);
          throw ShapeError(StrCat(NodeLabel(n), "Shape inconsistent for ", what, ": provided ",
                                  f.provided, ", inferred ", f.inferred));
        } catch (const ShapeError& e) {
          throw ShapeError(NodeLabel(n) + e.what());
        }
        return true;
      },
      [&](uint32_t nid, bool is_input, size_t i, TShape* slot, const TShape& inferred) {
        TShape merged;
        if (!UnifyShapes(*slot, inferred, &merged))
          throw ShapeError(StrCat(NodeLabel(*g.node(nid).node), "Shape inconsistent for ",
                                  is_input ? InputLabel(g, nid, i) : OutputLabel(g, nid, i),
                                  ": provided ", *slot, ", inferred ", inferred));
        if (merged == *slot) return false;
        *slot = merged;
        return true;
      },
      [](const TShape& s) { return s.is_known(); }, [] { return false; });
  return shapes;
}

ShapeInferResult InferShapePartial(const Symbol& sym, const std::map<std::string, TShape>& known) {
  return InferShapePartial(Graph(sym), known);
}

ShapeInferResult InferShapePartial(const Graph& g, const std::map<std::string, TShape>& known) {
  std::vector<TShape> shapes = InferEntryShapes(g, known);
  ShapeInferResult r;
  for (uint32_t id : g.arg_nodes()) {
    const TShape& s = shapes[g.entry_id(id, 0)];
    (g.is_aux_node(id) ? r.aux_shapes : r.arg_shapes).push_back(s);
    if (!s.is_known()) r.unknown.push_back(g.node(id).node->name());
  }
  for (auto& h : g.heads()) r.out_shapes.push_back(shapes[g.entry_id(h)]);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    if (g.node(nid).node->is_variable()) continue;
    for (uint32_t i = 0; i < g.num_node_outputs(nid); ++i) {
      if (!shapes[g.entry_id(nid, i)].is_known()) {
        r.unknown.push_back(EntryName(NodeEntry{g.node(nid).node, i}));
      }
    }
  }
  r.entry_shapes = std::move(shapes);
  return r;
}

ShapeInferResult InferShape(const Symbol& sym, const std::map<std::string, TShape>& known) {
  return InferShape(Graph(sym), known);
}

void RequireStaticShapes(const Graph& g) {
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node& n = *g.node(nid).node;
    if (!n.is_variable() && n.attrs.op->value_dependent_shape)
      throw ShapeError(StrCat(NodeLabel(n), "its output shape depends on the values of its inputs (a dynamic "
                              "shape), so it runs only in imperative calls (mx.nd, autograd, a hybridized "
                              "block), not in a bound graph (bind, simple_bind, a Predictor)"));
  }
}

ShapeInferResult InferShape(const Graph& g, const std::map<std::string, TShape>& known) {
  const auto inputs = g.ListInputs();
  for (auto& kv : known) {
    if (std::find(inputs.begin(), inputs.end(), kv.first) == inputs.end()) {
      throw ShapeError("InferShape: '" + kv.first + "' is not an input of the symbol; inputs are: " +
                       JoinNames(inputs));
    }
  }
  ShapeInferResult r = InferShapePartial(g, known);
  if (!r.complete()) {
    RequireStaticShapes(g);
    std::vector<std::string> unknown_inputs;
    for (auto& a : r.unknown)
      if (std::find(inputs.begin(), inputs.end(), a) != inputs.end()) unknown_inputs.push_back(a);
    throw ShapeError("InferShape: cannot infer the shapes of: " + JoinNames(r.unknown) +
                     "; provide the shape of one or more of the inputs " + JoinNames(unknown_inputs));
  }
  return r;
}

std::vector<int> InferEntryTypes(const Graph& g, const std::map<std::string, DType>& known,
                                 bool default_unconstrained) {
  std::vector<int> types(g.num_entries(), -1);
  for (uint32_t id : g.arg_nodes()) {
    const Node& n = *g.node(id).node;
    auto it = known.find(n.name());
    if (it != known.end()) {
      types[g.entry_id(id, 0)] = static_cast<int>(it->second);
    } else {
      auto attr = n.user_attrs.find("__dtype__");
      if (attr != n.user_attrs.end()) {
        int flag = -1;
        try {
          flag = std::stoi(attr->second);
        } catch (...) {
          throw Error("variable " + n.name() + " has a bad __dtype__ '" + attr->second + "'");
        }
        if (!IsValidDTypeFlag(flag))
          throw Error("variable " + n.name() + " has an unknown __dtype__ " + attr->second);
        types[g.entry_id(id, 0)] = flag;
      }
    }
  }
  bool defaulted = false;
  InferAttrSweep<int>(
      g, &types,
      [&](uint32_t nid, std::vector<int>* in, std::vector<int>* out) {
        const Node& n = *g.node(nid).node;
        try {
          if (n.attrs.op->infer_type) n.attrs.op->infer_type(n.attrs, in, out);
          else InferSameType(n.attrs, in, out);
        } catch (const TypeAssignFailure& f) {
          std::string what = f.slots == in ? InputLabel(g, nid, f.index) : OutputLabel(g, nid, f.index);
          throw TypeError(StrCat(NodeLabel(n), "Type inconsistent for ", what, ": provided ",
                                 DTypeName(static_cast<DType>(f.provided)), ", inferred ",
                                 DTypeName(static_cast<DType>(f.inferred))));
        } catch (const TypeError& e) {
          throw TypeError(NodeLabel(n) + e.what());
        } catch (const ShapeError& e) {
          throw ShapeError(NodeLabel(n) + e.what());
        }
        return true;
      },
      // A type an op infers only fills an unknown slot (known ones were checked inside it).
      [](uint32_t, bool, size_t, int* slot, int inferred) {
        if (*slot >= 0 || inferred < 0) return false;
        *slot = inferred;
        return true;
      },
      [](int t) { return t >= 0; },
      [&] {
        // Inputs nobody constrains compute in float32, MXNet's default.
        if (defaulted || !default_unconstrained) return false;
        defaulted = true;
        bool changed = false;
        for (uint32_t id : g.arg_nodes())
          if (types[g.entry_id(id, 0)] < 0) {
            types[g.entry_id(id, 0)] = static_cast<int>(DType::kFloat32);
            changed = true;
          }
        return changed;
      });
  CheckFloat32Kernels(g, types);
  return types;
}

TypeInferResult InferType(const Symbol& sym, const std::map<std::string, DType>& known) {
  return InferType(Graph(sym), known);
}

TypeInferResult InferType(const Graph& g, const std::map<std::string, DType>& known) {
  std::vector<int> types = InferEntryTypes(g, known);
  TypeInferResult r;
  for (uint32_t id : g.arg_nodes())
    (g.is_aux_node(id) ? r.aux_types : r.arg_types).push_back(static_cast<DType>(types[g.entry_id(id, 0)]));
  for (auto& h : g.heads()) {
    int t = types[g.entry_id(h)];
    r.out_types.push_back(t < 0 ? DType::kFloat32 : static_cast<DType>(t));
  }
  r.entry_types = std::move(types);
  return r;
}

}  // namespace symbind
