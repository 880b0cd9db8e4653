#include "model_report.h"

#include <algorithm>
#include <iomanip>
#include <set>

// GCC reports a false -Wmaybe-uninitialized inside Boost.Graph's edge iterator (a
// boost::optional) when write_graphviz is instantiated.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include <symbind/core/graph.h>
#include <symbind/core/input_roles.h>

namespace symbind {

namespace {

// By node id: variables holding learned values or aux states (not data or label inputs).
std::vector<bool> ParameterNodes(const Graph& g, const std::map<std::string, TShape>& known) {
  const InputRoles roles = ClassifyArguments(g);
  const std::set<std::string> parameters(roles.parameters.begin(), roles.parameters.end());
  std::vector<bool> is_parameter(g.num_nodes(), false);
  for (uint32_t id : g.arg_nodes()) {
    const std::string& name = g.node(id).node->name();
    is_parameter[id] = !known.count(name) && (g.is_aux_node(id) || parameters.count(name));
  }
  return is_parameter;
}

// Entry shapes of the graph; unknown where inference cannot tell.
std::vector<TShape> EntryShapes(const Graph& g, const std::map<std::string, TShape>& known) {
  return InferEntryShapes(g, known);
}

int64_t KnownSize(const TShape& s) { return s.is_known() ? s.Size() : -1; }

// Multiply-adds of one node, from its op's mac_count: 0 for variables and ops without one,
// -1 when a shape it needs is unknown.
int64_t MultiplyAdds(const Graph& g, uint32_t id, const std::vector<TShape>& shapes) {
  const Node& n = *g.node(id).node;
  if (n.is_variable() || !n.attrs.op->mac_count) return 0;
  std::vector<TShape> in, out;
  for (const Graph::EntryRef& e : g.node(id).inputs) in.push_back(shapes[g.entry_id(e)]);
  for (uint32_t i = 0; i < g.num_node_outputs(id); ++i) out.push_back(shapes[g.entry_id(id, i)]);
  for (const auto* list : {&in, &out})
    for (const TShape& s : *list)
      if (!s.is_known()) return -1;
  return n.attrs.op->mac_count(n.attrs, in, out);
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string ShapeText(const TShape& s) {
  if (!s.ndim_known()) return "?";
  std::string out = "(";
  for (int i = 0; i < s.ndim(); ++i) {
    if (i) out += ",";
    out += s[i] < 0 ? std::string("?") : std::to_string(s[i]);
  }
  return out + ")";
}

std::pair<std::string, TShape> ParseShapeSpec(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ParamError("bad shape '" + spec + "': expected NAME=D0,D1,... (e.g. data=1,3,224,224)");
  TShape shape = TShape::Parse(spec.substr(eq + 1));
  // An element count past int64 would wrap every size computed from it.
  if (std::all_of(shape.dims().begin(), shape.dims().end(), [](int64_t d) { return d >= 0; })) {
    try {
      shape.Size();
    } catch (const ShapeError& e) {
      throw ParamError("bad shape '" + spec + "': " + e.what());
    }
  }
  return {spec.substr(0, eq), shape};
}

void PrintParamsListing(const NDArrayFile& f, std::ostream& os, const std::string& format) {
  int64_t values = 0;
  for (size_t i = 0; i < f.arrays.size(); ++i) {
    // From the file's headers (sparse arrays need not be expanded to be listed); an
    // NDArrayFile built in memory may carry only its arrays.
    const bool from_headers = i < f.shapes.size() && i < f.dtypes.size();
    const TShape shape = from_headers ? f.shapes[i]
                         : f.arrays[i].is_none() ? TShape() : f.arrays[i].shape();
    const DType dtype = from_headers ? f.dtypes[i] : f.arrays[i].dtype();
    const std::string name = f.names.empty() ? StrCat("[", i, "]") : f.names[i];
    if (!shape.ndim_known()) {
      os << name << " none\n";
      continue;
    }
    os << name << " " << DTypeName(dtype) << " " << ShapeText(shape) << "\n";
    values += shape.Size();
  }
  std::vector<int> formats = f.formats;
  std::sort(formats.begin(), formats.end());
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());
  os << f.arrays.size() << " arrays, " << values << " values, format ";
  if (!format.empty()) os << format;
  else if (formats.empty()) os << "none";
  else
    for (size_t i = 0; i < formats.size(); ++i) os << (i ? "," : "") << "v" << formats[i];
  os << "\n";
}

void PrintShapes(const Symbol& symbol, const std::map<std::string, TShape>& known,
                 std::ostream& os) {
  const ShapeInferResult r = InferShape(symbol, known);
  auto print = [&](const char* kind, const std::vector<std::string>& names,
                   const std::vector<TShape>& shapes) {
    for (size_t i = 0; i < names.size(); ++i)
      os << kind << " " << names[i] << " " << ShapeText(shapes[i]) << "\n";
  };
  print("arg", symbol.ListArguments(), r.arg_shapes);
  print("aux", symbol.ListAuxiliaryStates(), r.aux_shapes);
  print("out", symbol.ListOutputs(), r.out_shapes);
}

void PrintSummary(const Symbol& symbol, const std::map<std::string, TShape>& known,
                  std::ostream& os) {
  const Graph g(symbol);
  const std::vector<TShape> shapes = EntryShapes(g, known);
  struct Row {
    std::string layer, shape, params, previous;
  };
  std::vector<Row> rows;
  int64_t total_params = 0, total_macs = 0;
  bool params_known = true, macs_known = true;
  std::set<std::string> counted_ops;
  const std::vector<bool> is_parameter = ParameterNodes(g, known);
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = *g.node(id).node;
    if (is_parameter[id]) continue;
    Row row;
    row.layer = n.name() + " (" + (n.is_variable() ? std::string("null") : n.attrs.op->name) + ")";
    row.shape = ShapeText(shapes[g.entry_id(id, 0)]);
    int64_t count = 0;
    bool count_known = true;
    const auto aux = AuxInputMask(n);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Node& src = *n.inputs[k].node;
      if (is_parameter[g.node(id).inputs[k].node_id]) {
        if (aux[k]) continue;  // aux states are not learned parameters
        int64_t s = KnownSize(shapes[g.entry_id(g.node(id).inputs[k])]);
        if (s < 0) count_known = false;
        else count = CheckedAdd(count, s, "summary: parameters of node ", n.name());
      } else {
        row.previous += (row.previous.empty() ? "" : ", ") + src.name();
      }
    }
    row.params = count_known ? std::to_string(count) : "?";
    if (count_known) total_params = CheckedAdd(total_params, count, "summary: total parameters");
    else params_known = false;
    const int64_t macs = MultiplyAdds(g, id, shapes);
    if (!n.is_variable() && n.attrs.op->mac_count) counted_ops.insert(n.attrs.op->name);
    if (macs < 0) macs_known = false;
    else total_macs = CheckedAdd(total_macs, macs, "summary: total multiply-adds");
    rows.push_back(row);
  }
  size_t w0 = 12, w1 = 12, w2 = 7;
  for (auto& r : rows) {
    w0 = std::max(w0, r.layer.size());
    w1 = std::max(w1, r.shape.size());
    w2 = std::max(w2, r.params.size());
  }
  const size_t width = w0 + w1 + w2 + 6 + 14;
  auto line = [&](const Row& r) {
    os << std::left << std::setw(static_cast<int>(w0 + 2)) << r.layer
       << std::setw(static_cast<int>(w1 + 2)) << r.shape << std::right
       << std::setw(static_cast<int>(w2)) << r.params;
    if (!r.previous.empty()) os << "  " << r.previous;
    os << "\n";
  };
  line(Row{"Layer (type)", "Output Shape", "Param #", "Previous Layer"});
  os << std::string(width, '=') << "\n";
  for (auto& r : rows) line(r);
  os << std::string(width, '=') << "\n";
  os << "Total params: " << (params_known ? std::to_string(total_params) : "?") << "\n";
  // Names the ops counted: only ops that declare a mac count contribute.
  os << "Total multiply-adds: " << (macs_known ? std::to_string(total_macs) : "?");
  if (!counted_ops.empty()) {
    os << " (";
    for (auto it = counted_ops.begin(); it != counted_ops.end(); ++it)
      os << (it == counted_ops.begin() ? "" : ", ") << *it;
    os << ")";
  }
  os << "\n";
}

void WriteDot(const Symbol& symbol, const std::map<std::string, TShape>& known,
              std::ostream& os) {
  const Graph g(symbol);
  const std::vector<TShape> shapes = EntryShapes(g, known);
  static const char* const kHidden[] = {"_weight", "_bias", "_beta", "_gamma", "_moving_var",
                                        "_moving_mean", "_running_var", "_running_mean"};
  auto hidden = [&](const Node& n) {
    if (!n.is_variable()) return false;
    for (const char* h : kHidden)
      if (EndsWith(n.name(), h)) return true;
    return false;
  };
  struct VertexProps {
    std::string label, shape, fill;
  };
  struct EdgeProps {
    std::string label;
  };
  using DotGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                         VertexProps, EdgeProps>;
  DotGraph dg;
  std::vector<long> vertex_of(g.num_nodes(), -1);
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = *g.node(id).node;
    if (hidden(n)) continue;
    VertexProps p;
    if (n.is_variable()) {
      p = {Escape(n.name()), "oval", "#8dd3c7"};
    } else {
      p = {Escape(n.name()) + "\\n" + Escape(n.attrs.op->name), "box", "#fb8072"};
    }
    vertex_of[id] = static_cast<long>(boost::add_vertex(p, dg));
  }
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    if (vertex_of[id] < 0) continue;
    for (auto& in : g.node(id).inputs) {
      if (vertex_of[in.node_id] < 0) continue;
      const TShape& s = shapes[g.entry_id(in)];
      boost::add_edge(static_cast<size_t>(vertex_of[in.node_id]), static_cast<size_t>(vertex_of[id]),
                      EdgeProps{s.is_known() ? ShapeText(s) : std::string()}, dg);
    }
  }
  auto vertex_writer = [&](std::ostream& out, DotGraph::vertex_descriptor v) {
    const VertexProps& p = dg[v];
    out << "[label=\"" << p.label << "\", shape=" << p.shape
        << ", style=filled, fillcolor=\"" << p.fill << "\"]";
  };
  auto edge_writer = [&](std::ostream& out, DotGraph::edge_descriptor e) {
    const std::string& l = dg[e].label;
    if (!l.empty()) out << "[label=\"" << Escape(l) << "\"]";
  };
  auto graph_writer = [](std::ostream& out) { out << "rankdir=BT;\n"; };
  boost::write_graphviz(os, dg, vertex_writer, edge_writer, graph_writer);
}

}  // namespace symbind
