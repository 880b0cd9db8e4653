// Symbol functions of MXNet's C API beyond the cpp-package's set: shape and type inference in
// every variant (32/64-bit, partial), attributes, children and inputs, printing. Graph
// rewrites symbind has no equivalent for (quantization, AMP, backends) fail with an error
// naming them.
#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/core/symbol.h>
#include <symbind/predict/onednn_fusion.h>
#include <symbind/predict/quantize.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

constexpr int64_t kMaxShapeDims = 32;  // as the .params reader

// The input each of the `num_args` values given is for: keys[i], or without keys the i-th
// argument. A key naming no input, or an input named twice, is an Error naming it (a shape or
// type meant for it would otherwise be dropped or overwritten without a word).
std::vector<std::string> GivenInputNames(const Symbol& s, uint32_t num_args, const char** keys, const char* what) {
  const std::vector<std::string> arguments = s.ListArguments();
  if (!keys) {
    if (num_args > arguments.size())
      throw Error(StrCat(num_args, " ", what, " given for a symbol with ", arguments.size(), " arguments"));
    return std::vector<std::string>(arguments.begin(), arguments.begin() + num_args);
  }
  const std::vector<std::string> given = CStrings(num_args, keys, "keys");
  const std::vector<std::string> inputs = s.ListInputs();
  std::set<std::string> seen;
  for (const std::string& name : given) {
    if (std::find(inputs.begin(), inputs.end(), name) == inputs.end())
      throw Error(StrCat("keys: '", name, "' is not an input of the symbol; inputs: ", JoinNames(inputs)));
    if (!seen.insert(name).second) throw Error(StrCat("keys: '", name, "' is given twice"));
  }
  return given;
}

// Known argument shapes from the C arrays (CSR: shapes i are data[ind_ptr[i], ind_ptr[i+1])).
// Without numpy shape semantics MXNet writes an unknown dim as 0 (and an unknown shape as
// ndim 0): both mean unknown here.
template <typename Ind, typename Dim>
std::map<std::string, TShape> KnownShapes(const Symbol& s, uint32_t num_args, const char** keys,
                                          const Ind* ind_ptr, const Dim* data) {
  const std::vector<std::string> names = GivenInputNames(s, num_args, keys, "shapes");
  if (num_args > 0) {
    NotNull(ind_ptr, "arg_ind_ptr");
    NotNull(data, "arg_shape_data");
    if (ind_ptr[0] != 0) throw Error(StrCat("arg_ind_ptr[0] is ", ind_ptr[0], ", expected 0"));
  }
  const bool legacy = !NumpyShapeSemantics();
  std::map<std::string, TShape> known;
  for (uint32_t i = 0; i < num_args; ++i) {
    const std::string& name = names[i];
    if (ind_ptr[i + 1] < ind_ptr[i]) throw Error(StrCat("arg_ind_ptr decreases at ", i));
    // Bounds what is read from arg_shape_data before any dim is.
    if (ind_ptr[i + 1] - ind_ptr[i] > kMaxShapeDims)
      throw Error(StrCat("the shape of '", name, "' has ", ind_ptr[i + 1] - ind_ptr[i],
                         " dims (arg_ind_ptr[", i + 1, "] - arg_ind_ptr[", i, "]); at most ", kMaxShapeDims,
                         " are supported"));
    std::vector<int64_t> dims(data + ind_ptr[i], data + ind_ptr[i + 1]);
    if (legacy && dims.empty()) continue;
    for (int64_t& d : dims)
      if (legacy && d == 0) d = -1;
    known[name] = TShape(dims);
  }
  return known;
}

// MXNet's reporting of a shape: without numpy semantics, unknown dims as 0 and an unknown
// shape as ndim 0; with them, -1 and ndim -1.
std::vector<int64_t> ReportedDims(const TShape& shape, int* ndim) {
  const bool legacy = !NumpyShapeSemantics();
  if (!shape.ndim_known()) {
    *ndim = legacy ? 0 : -1;
    return {};
  }
  std::vector<int64_t> dims = shape.dims();
  if (legacy)
    for (int64_t& d : dims)
      if (d < 0) d = 0;
  *ndim = static_cast<int>(dims.size());
  return dims;
}

template <typename Ind, typename Dim, typename Size>
void InferShapeOut(SymbolHandle sym, uint32_t num_args, const char** keys, const Ind* ind_ptr, const Dim* data,
                   Size* in_size, const int** in_ndim, const Dim*** in_data, Size* out_size, const int** out_ndim,
                   const Dim*** out_data, Size* aux_size, const int** aux_ndim, const Dim*** aux_data,
                   int* complete, bool partial) {
  const Symbol& s = SymbolOf(sym, "sym");
  ShapeInferResult r = InferShapePartial(s, KnownShapes(s, num_args, keys, ind_ptr, data));
  const std::vector<TShape>* groups[3] = {&r.arg_shapes, &r.out_shapes, &r.aux_shapes};
  Size* sizes[3] = {in_size, out_size, aux_size};
  const int** ndims[3] = {in_ndim, out_ndim, aux_ndim};
  const Dim*** datas[3] = {in_data, out_data, aux_data};
  Returns& ret = Ret();
  for (int g = 0; g < 3; ++g) {
    NotNull(sizes[g], "shape size");
    NotNull(ndims[g], "shape ndim");
    NotNull(datas[g], "shape data");
    ret.shapes[g].clear();
    ret.shapes64[g].clear();
    ret.ndims[g].clear();
    ret.shape_ptrs[g].clear();
    ret.shape64_ptrs[g].clear();
    for (const TShape& shape : *groups[g]) {
      int ndim = 0;
      std::vector<int64_t> dims = ReportedDims(shape, &ndim);
      ret.ndims[g].push_back(ndim);
      ret.shapes64[g].push_back(dims);
      std::vector<int> narrow;
      for (int64_t d : dims) {
        if (d > INT32_MAX) throw Error(StrCat("shape ", shape.ToString(), " does not fit int32: use the 64-bit call"));
        narrow.push_back(static_cast<int>(d));
      }
      ret.shapes[g].push_back(narrow);
    }
    for (auto& v : ret.shapes[g]) ret.shape_ptrs[g].push_back(v.data());
    for (auto& v : ret.shapes64[g]) ret.shape64_ptrs[g].push_back(v.data());
    *sizes[g] = static_cast<Size>(ret.ndims[g].size());
    *ndims[g] = ret.ndims[g].data();
    if constexpr (sizeof(Dim) == sizeof(int64_t))
      *datas[g] = ret.shape64_ptrs[g].data();
    else
      *datas[g] = ret.shape_ptrs[g].data();
  }
  // MXNet's partial calls always report complete, so frontends read the shapes they have.
  *NotNull(complete, "complete") = partial || r.complete();
}

void InferTypeOut(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                  uint32_t* in_size, const int** in_data, uint32_t* out_size, const int** out_data,
                  uint32_t* aux_size, const int** aux_data, int* complete, bool partial) {
  const Symbol& s = SymbolOf(sym, "sym");
  const std::vector<std::string> names = GivenInputNames(s, num_args, keys, "types");
  if (num_args > 0) NotNull(arg_type_data, "arg_type_data");
  std::map<std::string, DType> known;
  for (uint32_t i = 0; i < num_args; ++i) {
    const std::string& name = names[i];
    if (arg_type_data[i] < 0) continue;  // unknown
    DType t = static_cast<DType>(arg_type_data[i]);
    DTypeSize(t);  // throws on an unknown type flag
    known[name] = t;
  }
  // As MXNet reports them: -1 where nothing fixes a type (no float32 default here).
  const Graph graph(s);
  const std::vector<int> types = InferEntryTypes(graph, known, false);
  std::vector<int> groups[3];
  for (uint32_t id : graph.arg_nodes()) groups[graph.is_aux_node(id) ? 2 : 0].push_back(types[graph.entry_id(id, 0)]);
  for (auto& h : graph.heads()) groups[1].push_back(types[graph.entry_id(h)]);
  uint32_t* sizes[3] = {in_size, out_size, aux_size};
  const int** datas[3] = {in_data, out_data, aux_data};
  bool all_known = true;
  for (int g = 0; g < 3; ++g) {
    NotNull(sizes[g], "type size");
    NotNull(datas[g], "type data");
    Ret().types[g] = groups[g];
    for (int t : groups[g]) all_known &= t >= 0;
    *sizes[g] = static_cast<uint32_t>(Ret().types[g].size());
    *datas[g] = Ret().types[g].data();
  }
  *NotNull(complete, "complete") = partial || all_known;
}

// MXNet's attribute lookup on a node: its name, user attributes, then operator parameters.
bool NodeAttr(const Node& node, const std::string& key, std::string* value) {
  if (key == "name") {
    *value = node.name();
    return true;
  }
  auto u = node.user_attrs.find(key);
  if (u != node.user_attrs.end()) {
    *value = u->second;
    return true;
  }
  auto p = node.attrs.dict.find(key);
  if (p != node.attrs.dict.end()) {
    *value = p->second;
    return true;
  }
  return false;
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys, const uint32_t* arg_ind_ptr,
                         const int* arg_shape_data, uint32_t* in_shape_size, const int** in_shape_ndim,
                         const int*** in_shape_data, uint32_t* out_shape_size, const int** out_shape_ndim,
                         const int*** out_shape_data, uint32_t* aux_shape_size, const int** aux_shape_ndim,
                         const int*** aux_shape_data, int* complete) {
  return Guarded(__func__, [&] {
    InferShapeOut(sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim, in_shape_data,
                  out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim, aux_shape_data,
                  complete, false);
  });
}
// Both report what inference knows (a contradiction is an error); the full call sets
// complete to 0 when something stays unknown, the partial one always sets it to 1.
int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char** keys,
                                const uint32_t* arg_ind_ptr, const int* arg_shape_data, uint32_t* in_shape_size,
                                const int** in_shape_ndim, const int*** in_shape_data, uint32_t* out_shape_size,
                                const int** out_shape_ndim, const int*** out_shape_data, uint32_t* aux_shape_size,
                                const int** aux_shape_ndim, const int*** aux_shape_data, int* complete) {
  return Guarded(__func__, [&] {
    InferShapeOut(sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim, in_shape_data,
                  out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim, aux_shape_data,
                  complete, true);
  });
}
int MXSymbolInferShapeEx64(SymbolHandle sym, uint32_t num_args, const char** keys, const int64_t* arg_ind_ptr,
                           const int64_t* arg_shape_data, size_t* in_shape_size, const int** in_shape_ndim,
                           const int64_t*** in_shape_data, size_t* out_shape_size, const int** out_shape_ndim,
                           const int64_t*** out_shape_data, size_t* aux_shape_size, const int** aux_shape_ndim,
                           const int64_t*** aux_shape_data, int* complete) {
  return Guarded(__func__, [&] {
    InferShapeOut(sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim, in_shape_data,
                  out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim, aux_shape_data,
                  complete, false);
  });
}
int MXSymbolInferShapePartialEx64(SymbolHandle sym, uint32_t num_args, const char** keys,
                                  const int64_t* arg_ind_ptr, const int64_t* arg_shape_data, size_t* in_shape_size,
                                  const int** in_shape_ndim, const int64_t*** in_shape_data,
                                  size_t* out_shape_size, const int** out_shape_ndim,
                                  const int64_t*** out_shape_data, size_t* aux_shape_size,
                                  const int** aux_shape_ndim, const int64_t*** aux_shape_data, int* complete) {
  return Guarded(__func__, [&] {
    InferShapeOut(sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size, in_shape_ndim, in_shape_data,
                  out_shape_size, out_shape_ndim, out_shape_data, aux_shape_size, aux_shape_ndim, aux_shape_data,
                  complete, true);
  });
}

int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                      uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
                      const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data, int* complete) {
  return Guarded(__func__, [&] {
    InferTypeOut(sym, num_args, keys, arg_type_data, in_type_size, in_type_data, out_type_size, out_type_data,
                 aux_type_size, aux_type_data, complete, false);
  });
}
int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char** keys, const int* arg_type_data,
                             uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
                             const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data,
                             int* complete) {
  return Guarded(__func__, [&] {
    InferTypeOut(sym, num_args, keys, arg_type_data, in_type_size, in_type_data, out_type_size, out_type_data,
                 aux_type_size, aux_type_data, complete, true);
  });
}

int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol);
    const std::string k = CString(key, "key");
    NotNull(out, "out");
    NotNull(success, "success");
    std::string value;
    *success = s.NumOutputs() == 1 && NodeAttr(*s.outputs()[0].node, k, &value);
    if (!*success && s.NumOutputs() == 1) {
      const std::string hidden = StrCat("__", k, "__");
      if (AttrKey(k) == hidden) *success = NodeAttr(*s.outputs()[0].node, hidden, &value);
    }
    Ret().text = value;
    *out = Ret().text.c_str();
  });
}

// Every node's attributes as "<node>$<key>", value pairs (Symbol.attr_dict()).
int MXSymbolListAttr(SymbolHandle symbol, uint32_t* out_size, const char*** out) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol);
    NotNull(out_size, "out_size");
    NotNull(out, "out");
    const Graph g(s);
    std::vector<std::string> flat;
    for (uint32_t id = 0; id < g.num_nodes(); ++id) {
      const Node& node = *g.node(id).node;
      for (auto& kv : node.attrs.dict) AppendAttr(StrCat(node.name(), "$", kv.first), kv.second, &flat);
      for (auto& kv : node.user_attrs) {
        AppendAttr(StrCat(node.name(), "$", kv.first), kv.second, &flat);
        if (AttrKey(kv.first) != kv.first || !IsAttrKey(kv.first)) continue;
        // "__lr_mult__" is also listed as "lr_mult".
        const std::string plain = kv.first.substr(2, kv.first.size() - 4);
        if (AttrKey(plain) == kv.first) flat.insert(flat.end(), {StrCat(node.name(), "$", plain), kv.second});
      }
    }
    *out = StringsOut(flat, out_size);
    *out_size /= 2;
  });
}

// The inputs of the head node(s), grouped.
int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol);
    NotNull(out, "out");
    Symbol children = s.GetChildren();
    *out = NewSymbol(children);  // no outputs for a variable; the frontend reads that as None
  });
}

// One variable symbol per input (arguments and aux states, ListInputs order).
int MXSymbolGetInputSymbols(SymbolHandle sym, SymbolHandle** inputs, int* input_size) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(sym, "sym");
    NotNull(inputs, "inputs");
    NotNull(input_size, "input_size");
    const Graph g(s);
    Ret().handles.clear();
    for (uint32_t id = 0; id < g.num_nodes(); ++id) {
      const auto& node = g.node(id).node;
      if (!node->is_variable()) continue;
      Ret().handles.push_back(NewSymbol(Symbol::FromEntries({NodeEntry{node, 0}})));
    }
    *input_size = static_cast<int>(Ret().handles.size());
    *inputs = Ret().handles.data();
  });
}

// MXNet's Symbol.debug_str(): the graph node by node.
int MXSymbolPrint(SymbolHandle symbol, const char** out_str) {
  return Guarded(__func__, [&] {
    const Symbol& s = SymbolOf(symbol);
    NotNull(out_str, "out_str");
    const Graph g(s);
    std::string text = "Symbol Outputs:\n";
    auto outs = s.ListOutputs();
    for (size_t i = 0; i < outs.size(); ++i) text += StrCat("\toutput[", i, "]=", outs[i], "\n");
    for (uint32_t id = 0; id < g.num_nodes(); ++id) {
      const Node& node = *g.node(id).node;
      text += "--------------------\n";
      if (node.is_variable()) {
        text += StrCat("Variable:", node.name(), "\n");
        continue;
      }
      text += StrCat("Op:", node.attrs.op->name, ", Name=", node.name(), "\nInputs:\n");
      for (size_t i = 0; i < node.inputs.size(); ++i)
        text += StrCat("\targ[", i, "]=", node.inputs[i].node->name(), "(", node.inputs[i].index, ")\n");
      if (!node.attrs.dict.empty()) {
        text += "Attrs:\n";
        for (auto& kv : node.attrs.dict) text += StrCat("\t", kv.first, "=", kv.second, "\n");
      }
    }
    Ret().text = text;
    *out_str = Ret().text.c_str();
  });
}

int MXShallowCopySymbol(SymbolHandle src, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    *out = NewSymbol(SymbolOf(src, "src"));
  });
}

int NNSymbolFree(SymbolHandle symbol) { return MXSymbolFree(symbol); }
int NNSymbolCompose(SymbolHandle sym, const char* name, nn_uint num_args, const char** keys, SymbolHandle* args) {
  return MXSymbolCompose(sym, name, num_args, keys, args);
}

// AMP casts are never inserted here, so there are none to remove.
int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle* ret_sym_handle) {
  return Guarded(__func__, [&] {
    NotNull(ret_sym_handle, "ret_sym_handle");
    *ret_sym_handle = NewSymbol(SymbolOf(sym_handle, "sym_handle"));
  });
}

int MXSymbolGrad(SymbolHandle sym, uint32_t, const char**, SymbolHandle*) {
  return Guarded(__func__, [&] {
    SymbolOf(sym, "sym");
    Unsupported("Symbol.grad (a gradient graph as a symbol)");
  });
}
int MXSymbolCutSubgraph(SymbolHandle sym, SymbolHandle**, int*) {
  return Guarded(__func__, [&] {
    SymbolOf(sym, "sym");
    Unsupported("control-flow subgraphs (contrib.foreach, while_loop, cond)");
  });
}
// An uncomposed symbol of the (single) head operator, with its parameters and attributes, as
// MXSymbolCreateAtomicSymbol would make it.
int MXGenAtomicSymbolFromSymbol(SymbolHandle sym_handle, SymbolHandle* out) {
  return Guarded(__func__, [&] {
    const Symbol& source = SymbolOf(sym_handle, "sym_handle");
    NotNull(out, "out");
    if (source.outputs().empty()) throw Error("the symbol has no outputs");
    const auto& head = source.outputs()[0].node;
    for (const NodeEntry& e : source.outputs())
      if (e.node != head)
        throw Error("an atomic symbol can only be made from a symbol with one head node, not a group");
    if (head->is_variable())
      throw Error(StrCat("'", head->name(), "' is a variable, not an operator: no atomic symbol to make"));
    SymbolBox* box = NewHandle<SymbolBox>();
    box->pending_op = head->attrs.op;
    box->pending_params = head->attrs.dict;
    box->pending_attrs = head->user_attrs;
    *out = box;
  });
}
// MXNet's QuantizeGraph pass (mx.contrib.quantization.quantize_model calls it, then calibrates
// in Python and quantizes the parameters with _contrib_quantize): predict/quantize.h.
int MXQuantizeSymbol(SymbolHandle sym_handle, SymbolHandle* ret_sym_handle, const int* dev_type,
                     const uint32_t num_excluded_sym_names, const char** excluded_sym_names,
                     const uint32_t num_excluded_op_names, const char** excluded_op_names, const uint32_t num_offline,
                     const char** offline_params, const char* quantized_dtype, const bool,
                     const char* quantize_mode, const char* quantize_granularity, uint32_t* out_num_calib_names,
                     const char*** out_calib_names) {
  return Guarded(__func__, [&] {
    const Symbol& sym = SymbolOf(sym_handle, "sym_handle");
    NotNull(ret_sym_handle, "ret_sym_handle");
    NotNull(out_num_calib_names, "out_num_calib_names");
    NotNull(out_calib_names, "out_calib_names");
    if (dev_type && *dev_type != 1)
      throw Error(StrCat("MXQuantizeSymbol: device type ", *dev_type, " (symbind computes on the CPU, type 1)"));
    auto names = [](uint32_t n, const char** list, const char* what) {
      std::set<std::string> out;
      if (n > 0) NotNull(list, what);
      for (uint32_t i = 0; i < n; ++i) out.insert(NotNull(list[i], what));
      return out;
    };
    QuantizeGraphOptions options;
    options.excluded_nodes = names(num_excluded_sym_names, excluded_sym_names, "excluded_sym_names");
    options.excluded_ops = names(num_excluded_op_names, excluded_op_names, "excluded_op_names");
    options.offline_params = names(num_offline, offline_params, "offline_params");
    options.quantized_dtype = NotNull(quantized_dtype, "quantized_dtype");
    options.quantize_mode = NotNull(quantize_mode, "quantize_mode");
    // The granularity decides only how _sg_mkldnn_fully_connected weights are quantized, and this
    // pass makes no such node.
    const std::string granularity = quantize_granularity ? quantize_granularity : "tensor-wise";
    if (granularity != "tensor-wise" && granularity != "channel-wise")
      throw ParamError("quantize_granularity '" + granularity + "' is none of: tensor-wise, channel-wise");
    QuantizedGraph q = QuantizeGraph(sym, options);
    *out_calib_names = StringsOut(q.calib_names, out_num_calib_names);
    *ret_sym_handle = NewSymbol(q.symbol);
  });
}
int MXReducePrecisionSymbol(SymbolHandle sym_handle, SymbolHandle*, uint32_t, const int*, uint32_t, const int*,
                            const int*, const int, const uint32_t, const uint32_t, const uint32_t, const uint32_t,
                            const uint32_t, const uint32_t, const char**, const char**, const char**, const char**,
                            const char**, const char**, const char**, const char**, const char**) {
  return Guarded(__func__, [&] {
    SymbolOf(sym_handle, "sym_handle");
    Unsupported("automatic mixed precision (mx.contrib.amp)");
  });
}
int MXSetCalibTableToQuantizedSymbol(SymbolHandle qsym_handle, const uint32_t num_layers, const char** layer_names,
                                     const float* min_ranges, const float* max_ranges, SymbolHandle* ret_qsym_handle) {
  return Guarded(__func__, [&] {
    const Symbol& qsym = SymbolOf(qsym_handle, "qsym_handle");
    NotNull(ret_qsym_handle, "ret_qsym_handle");
    std::map<std::string, CalibRange> table;
    if (num_layers > 0) {
      NotNull(layer_names, "layer_names");
      NotNull(min_ranges, "min_ranges");
      NotNull(max_ranges, "max_ranges");
    }
    for (uint32_t i = 0; i < num_layers; ++i)
      table[NotNull(layer_names[i], "layer_names")] = CalibRange{min_ranges[i], max_ranges[i]};
    *ret_qsym_handle = NewSymbol(SetCalibTable(qsym, table));
  });
}
// MXNet's oneDNN backends (predict/onednn_fusion.h), as quantize_model_mkldnn and quantize_net
// call sym.get_backend_symbol and Gluon's optimize_for partitions: the graph fused, the arrays as
// they are (no new ones).
int MXGenBackendSubgraph(SymbolHandle sym_handle, const char* backend, SymbolHandle* ret_sym_handle) {
  return Guarded(__func__, [&] {
    const Symbol& sym = SymbolOf(sym_handle, "sym_handle");
    NotNull(ret_sym_handle, "ret_sym_handle");
    *ret_sym_handle = NewSymbol(OneDnnBackendSymbol(sym, CString(backend, "backend")));
  });
}
int MXOptimizeForBackend(SymbolHandle sym_handle, const char* backend_name, const int dev_type,
                         SymbolHandle* ret_sym_handle, const mx_uint, NDArrayHandle*, const mx_uint, NDArrayHandle*,
                         const mx_uint, const char**, const char**, const uint32_t, const char**, const int64_t*,
                         const uint32_t*, const uint32_t, const char**, const int*, const uint32_t, const char**,
                         const int*, bool, int* new_args_cnt, NDArrayHandle** new_args_handle,
                         char*** new_arg_names_handle, int* new_aux_cnt, NDArrayHandle** new_aux_handle,
                         char*** new_aux_names_handle) {
  return Guarded(__func__, [&] {
    const Symbol& sym = SymbolOf(sym_handle, "sym_handle");
    NotNull(ret_sym_handle, "ret_sym_handle");
    if (dev_type != 1)
      throw Error(StrCat("MXOptimizeForBackend: device type ", dev_type, " (symbind computes on the CPU, type 1)"));
    Symbol fused = OneDnnBackendSymbol(sym, CString(backend_name, "backend_name"));
    for (int* count : {NotNull(new_args_cnt, "new_args_cnt"), NotNull(new_aux_cnt, "new_aux_cnt")}) *count = 0;
    *NotNull(new_args_handle, "new_args_handle") = nullptr;
    *NotNull(new_aux_handle, "new_aux_handle") = nullptr;
    *NotNull(new_arg_names_handle, "new_arg_names_handle") = nullptr;
    *NotNull(new_aux_names_handle, "new_aux_names_handle") = nullptr;
    *ret_sym_handle = NewSymbol(std::move(fused));
  });
}
