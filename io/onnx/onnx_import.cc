// ONNX ModelProto -> Symbol + parameters made of symbind's own ops. Nodes are read in the
// order the file lists them (ONNX requires topological order); constant inputs that MXNet
// takes as attributes (shapes, axes, pads, scales, clip bounds) are read from initializers
// and Constant nodes, and shapes an attribute needs come from symbind's shape inference of
// the graph built so far.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include <onnx/checker.h>

#include <symbind/core/graph.h>
#include <symbind/io/regular_file.h>

#include "onnx.h"
#include "onnx_tensor.h"

namespace symbind {

namespace {
using onnx::AttributeProto;
using onnx::NodeProto;

// "(a,b,...)" with negative values as themselves (TShape would print -1 as an unknown dim).
std::string TupleText(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string OptTupleText(const std::vector<std::optional<int64_t>>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + (v[i] ? std::to_string(*v[i]) : std::string("None"));
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string FloatText(float v) { return ParamValue<float>::Print(v); }

std::string NodeLabel(const NodeProto& n) {
  return StrCat(n.name().empty() ? (n.output_size() ? n.output(0) : std::string("(unnamed)")) : n.name(), " (",
                n.op_type(), ")");
}

// A node's attributes by name, each read as the type its op defines.
class Attrs {
 public:
  explicit Attrs(const NodeProto& n) : node_(n) {
    for (const auto& a : n.attribute()) by_name_[a.name()] = &a;
  }
  bool Has(const std::string& key) const { return by_name_.count(key) != 0; }
  int64_t Int(const std::string& key, int64_t dflt) const {
    const AttributeProto* a = Find(key, AttributeProto::INT);
    return a ? a->i() : dflt;
  }
  float Float(const std::string& key, float dflt) const {
    const AttributeProto* a = Find(key, AttributeProto::FLOAT);
    return a ? a->f() : dflt;
  }
  std::string String(const std::string& key, const std::string& dflt) const {
    const AttributeProto* a = Find(key, AttributeProto::STRING);
    return a ? a->s() : dflt;
  }
  std::vector<int64_t> Ints(const std::string& key) const {
    const AttributeProto* a = Find(key, AttributeProto::INTS);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
  }
  std::vector<float> Floats(const std::string& key) const {
    const AttributeProto* a = Find(key, AttributeProto::FLOATS);
    return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
  }
  const AttributeProto* Find(const std::string& key, AttributeProto::AttributeType type) const {
    auto it = by_name_.find(key);
    if (it == by_name_.end()) return nullptr;
    if (it->second->type() != type)
      throw IOError(StrCat("node ", NodeLabel(node_), ": attribute ", key, " has type ",
                           AttributeProto::AttributeType_Name(it->second->type()), ", expected ",
                           AttributeProto::AttributeType_Name(type)));
    return it->second;
  }

 private:
  const NodeProto& node_;
  std::map<std::string, const AttributeProto*> by_name_;
};

class Importer;
using Converter = std::function<std::vector<Symbol>(Importer&, const NodeProto&, const Attrs&)>;
const std::map<std::string, Converter>& Converters();

class Importer {
 public:
  Importer(const onnx::ModelProto& m, std::string model_dir, std::string where)
      : m_(m), model_dir_(std::move(model_dir)), where_(std::move(where)) {}

  Model Run();
  int opset() const { return opset_; }

  // Throws ParamError naming every node whose op symbind does not import.
  static void RequireSupportedOps(const onnx::GraphProto& g, const std::string& where) {
    std::vector<std::string> unsupported;
    for (const auto& n : g.node())
      if ((!n.domain().empty() && n.domain() != "ai.onnx") ||
          (n.op_type() != "Constant" && !Converters().count(n.op_type())))
        unsupported.push_back(NodeLabel(n) + (n.domain().empty() ? "" : " in domain " + n.domain()));
    if (!unsupported.empty())
      throw ParamError(StrCat(where, ": ", unsupported.size(), " node(s) with ops symbind does not import: ",
                              JoinNames(unsupported)));
  }

  // The symbol of tensor `name`: a node output, a data input, or a constant as a parameter
  // (`aux`: a BatchNorm statistic).
  Symbol Tensor(const std::string& name, bool aux = false) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    auto c = consts_.find(name);
    if (c == consts_.end()) throw IOError(StrCat("tensor ", name, " is used before any node produces it"));
    Symbol v = Symbol::Variable(name);
    (aux ? model_.aux : model_.args)[name] = c->second;
    known_[name] = c->second.shape();
    values_[name] = v;
    return v;
  }
  Symbol In(const NodeProto& n, int i, bool aux = false) {
    if (!HasIn(n, i)) throw ParamError(StrCat("input ", i, " missing"));
    return Tensor(n.input(i), aux);
  }
  static bool HasIn(const NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }
  // The constant behind input `i` (initializer or Constant node output); ParamError otherwise.
  const NDArray& ConstIn(const NodeProto& n, int i) {
    if (!HasIn(n, i)) throw ParamError(StrCat("input ", i, " missing"));
    auto c = consts_.find(n.input(i));
    if (c == consts_.end())
      throw ParamError(StrCat("input ", i, " (", n.input(i), ") must be a constant (an initializer or Constant)"));
    return c->second;
  }
  bool IsConst(const NodeProto& n, int i) const { return HasIn(n, i) && consts_.count(n.input(i)); }

  // The inferred shape of a symbol's single output (unknown input dims as 1).
  TShape ShapeOf(const Symbol& s) {
    const ShapeInferResult r = InferShapePartial(s, known_);
    if (r.out_shapes.empty() || !r.out_shapes[0].is_known())
      throw ShapeError("an input shape this conversion needs cannot be inferred");
    return r.out_shapes[0];
  }
  int RankOf(const Symbol& s) { return ShapeOf(s).ndim(); }
  // True when both shapes are inferred and equal.
  bool KnownShapesEqual(const Symbol& a, const Symbol& b) {
    const ShapeInferResult r = InferShapePartial(Symbol::Group({a, b}), known_);
    return r.out_shapes.size() == 2 && r.out_shapes[0].is_known() && r.out_shapes[0] == r.out_shapes[1];
  }

  // An op node named after the ONNX node.
  Symbol Op(const std::string& op, const NodeProto& n, const KwArgs& params, const std::vector<Symbol>& inputs,
            const std::vector<std::pair<std::string, Symbol>>& named = {}) {
    return Symbol::Create(op, Fresh(BaseName(n)), params, named, inputs);
  }
  // A new parameter array (a transposed or reshaped weight).
  Symbol NewParam(const std::string& base, const NDArray& a) {
    const std::string name = Fresh(base);
    model_.args[name] = a;
    known_[name] = a.shape();
    return Symbol::Variable(name);
  }
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; !names_.insert(name).second; ++i) name = StrCat(base, "_", i);
    return name;
  }

 private:
  static std::string BaseName(const NodeProto& n) {
    if (!n.name().empty()) return n.name();
    return n.output_size() && !n.output(0).empty() ? n.output(0) : n.op_type();
  }

  const onnx::ModelProto& m_;
  std::string model_dir_, where_;
  int opset_ = 0;
  Model model_;
  std::map<std::string, NDArray> consts_;
  std::map<std::string, Symbol> values_;
  std::map<std::string, TShape> known_;
  std::set<std::string> names_;
};

// ---- converters --------------------------------------------------------------------------

Symbol Activation(Importer& im, const NodeProto& n, const std::string& act, const Symbol& x) {
  return im.Op("Activation", n, {{"act_type", act}}, {x});
}

// Kernel, stride, dilation and symmetric pads of a windowed op over `spatial` dims; asymmetric
// pads (ONNX allows them, MXNet does not) and auto_pad SAME are resolved against the input
// shape by `pad_before` (nullopt: none needed).
struct Window {
  std::vector<int64_t> kernel, stride, dilate, pad, pad_begin, pad_end;
  bool asymmetric() const { return pad_begin != pad_end; }
};

Window ReadWindow(Importer& im, const NodeProto& n, const Attrs& a, const Symbol& x, std::vector<int64_t> kernel,
                  bool ceil_mode) {
  Window w;
  w.kernel = kernel;
  const size_t spatial = kernel.size();
  w.stride = a.Ints("strides");
  if (w.stride.empty()) w.stride.assign(spatial, 1);
  w.dilate = a.Ints("dilations");
  if (w.dilate.empty()) w.dilate.assign(spatial, 1);
  const std::vector<int64_t> pads = a.Ints("pads");
  const std::string auto_pad = a.String("auto_pad", "NOTSET");
  if (w.stride.size() != spatial || w.dilate.size() != spatial || (!pads.empty() && pads.size() != 2 * spatial))
    throw IOError(StrCat("node ", NodeLabel(n), ": strides, dilations or pads do not match the kernel's ", spatial, " dims"));
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (ceil_mode) throw ParamError("auto_pad with ceil_mode");
    const TShape s = im.ShapeOf(x);
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = s[static_cast<int>(i) + 2], out = (in + w.stride[i] - 1) / w.stride[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + (kernel[i] - 1) * w.dilate[i] + 1 - in);
      const int64_t small = total / 2, large = total - small;
      w.pad_begin.push_back(auto_pad == "SAME_UPPER" ? small : large);
      w.pad_end.push_back(auto_pad == "SAME_UPPER" ? large : small);
    }
  } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
    for (size_t i = 0; i < spatial; ++i) {
      w.pad_begin.push_back(pads.empty() || auto_pad == "VALID" ? 0 : pads[i]);
      w.pad_end.push_back(pads.empty() || auto_pad == "VALID" ? 0 : pads[i + spatial]);
    }
  } else {
    throw ParamError("auto_pad=" + auto_pad);
  }
  w.pad = w.pad_begin;
  return w;
}

// Explicit zero (or `value`) padding for asymmetric pads; the window op then pads nothing.
Symbol PadExplicitly(Importer& im, const NodeProto& n, const Symbol& x, Window* w, float value) {
  if (w->kernel.size() != 2 && w->kernel.size() != 3) throw ParamError("asymmetric pads on a 1-D window");
  std::vector<int64_t> width{0, 0, 0, 0};
  for (size_t i = 0; i < w->kernel.size(); ++i) {
    width.push_back(w->pad_begin[i]);
    width.push_back(w->pad_end[i]);
  }
  w->pad.assign(w->kernel.size(), 0);
  return im.Op("Pad", n, {{"mode", "constant"}, {"pad_width", TupleText(width)}, {"constant_value", FloatText(value)}},
               {x});
}

std::vector<Symbol> ImportConv(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  const TShape wshape = im.ShapeOf(im.In(n, 1));
  std::vector<int64_t> kernel = a.Ints("kernel_shape");
  if (kernel.empty()) kernel.assign(wshape.dims().begin() + 2, wshape.dims().end());
  Window w = ReadWindow(im, n, a, x, kernel, false);
  if (w.asymmetric()) x = PadExplicitly(im, n, x, &w, 0.0f);
  const bool transposed = n.op_type() == "ConvTranspose";
  const int64_t group = a.Int("group", 1);
  KwArgs p{{"kernel", TupleText(w.kernel)}, {"stride", TupleText(w.stride)}, {"dilate", TupleText(w.dilate)},
           {"pad", TupleText(w.pad)}, {"num_group", std::to_string(group)},
           {"num_filter", std::to_string(transposed ? wshape[1] * group : wshape[0])},
           {"no_bias", Importer::HasIn(n, 2) ? "False" : "True"}};
  std::vector<Symbol> inputs{x, im.In(n, 1)};
  if (Importer::HasIn(n, 2)) inputs.push_back(im.In(n, 2));
  if (!transposed) return {im.Op("Convolution", n, p, inputs)};
  if (a.String("auto_pad", "NOTSET") != "NOTSET" && a.String("auto_pad", "NOTSET") != "VALID")
    throw ParamError("auto_pad " + a.String("auto_pad", "") + " on ConvTranspose");
  if (w.asymmetric()) throw ParamError("asymmetric pads");
  if (a.Has("output_shape")) throw ParamError("output_shape");
  const std::vector<int64_t> adj = a.Ints("output_padding");
  if (!adj.empty()) p["adj"] = TupleText(adj);
  return {im.Op("Deconvolution", n, p, inputs)};
}

std::vector<Symbol> ImportBatchNorm(Importer& im, const NodeProto& n, const Attrs& a) {
  if (a.Int("training_mode", 0) != 0 || n.output_size() > 1) throw ParamError("training mode");
  if (a.Int("spatial", 1) != 1) throw ParamError("spatial=0");
  KwArgs p{{"eps", FloatText(a.Float("epsilon", 1e-5f))}, {"momentum", FloatText(a.Float("momentum", 0.9f))},
           {"fix_gamma", "False"}, {"use_global_stats", "True"}};
  return {im.Op("BatchNorm", n, p, {},
                {{"data", im.In(n, 0)}, {"gamma", im.In(n, 1)}, {"beta", im.In(n, 2)},
                 {"moving_mean", im.In(n, 3, true)}, {"moving_var", im.In(n, 4, true)}})};
}

std::vector<Symbol> ImportPool(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  const bool is_max = n.op_type() == "MaxPool";
  if (n.output_size() > 1) throw ParamError("the Indices output");
  if (a.Int("storage_order", 0) != 0) throw ParamError("storage_order=1");
  const bool ceil = a.Int("ceil_mode", 0) != 0;
  Window w = ReadWindow(im, n, a, x, a.Ints("kernel_shape"), ceil);
  if (w.kernel.empty()) throw IOError(StrCat("node ", NodeLabel(n), ": no kernel_shape"));
  if (std::any_of(w.dilate.begin(), w.dilate.end(), [](int64_t d) { return d != 1; })) throw ParamError("dilations");
  const bool include_pad = a.Int("count_include_pad", 0) != 0;
  if (w.asymmetric()) {
    if (ceil || (!is_max && !include_pad)) throw ParamError("asymmetric pads");
    x = PadExplicitly(im, n, x, &w, is_max ? -std::numeric_limits<float>::infinity() : 0.0f);
  }
  KwArgs p{{"kernel", TupleText(w.kernel)}, {"stride", TupleText(w.stride)}, {"pad", TupleText(w.pad)},
           {"pool_type", is_max ? "max" : "avg"}, {"pooling_convention", ceil ? "full" : "valid"}};
  if (!is_max) p["count_include_pad"] = include_pad ? "True" : "False";
  return {im.Op("Pooling", n, p, {x})};
}

std::vector<Symbol> ImportGlobalPool(Importer& im, const NodeProto& n, const Attrs&) {
  const std::string type = n.op_type() == "GlobalMaxPool" ? "max" : "avg";
  return {im.Op("Pooling", n, {{"global_pool", "True"}, {"pool_type", type}, {"kernel", "(1,1)"}}, {im.In(n, 0)})};
}

// A 2-D float constant transposed.
NDArray Transposed(const NDArray& a) {
  const int64_t r = a.shape()[0], c = a.shape()[1];
  NDArray t(TShape({c, r}));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t.fdata()[j * r + i] = a.fdata()[i * c + j];
  return t;
}

std::vector<Symbol> ImportGemm(Importer& im, const NodeProto& n, const Attrs& a) {
  const float alpha = a.Float("alpha", 1), beta = a.Float("beta", 1);
  const bool trans_a = a.Int("transA", 0) != 0, trans_b = a.Int("transB", 0) != 0;
  const bool has_c = Importer::HasIn(n, 2);
  // FullyConnected when B (and C) are float constants: the common Linear layer.
  if (!trans_a && alpha == 1 && (beta == 1 || !has_c) && im.IsConst(n, 1) && im.ConstIn(n, 1).dtype() == DType::kFloat32 &&
      im.ConstIn(n, 1).shape().ndim() == 2 && (!has_c || im.IsConst(n, 2))) {
    const NDArray& b = im.ConstIn(n, 1);
    const int64_t units = trans_b ? b.shape()[0] : b.shape()[1];
    const bool bias_fits = has_c && im.ConstIn(n, 2).Size() == units &&
                           (im.ConstIn(n, 2).shape().ndim() == 1 || im.ConstIn(n, 2).shape()[0] == 1);
    if (!has_c || bias_fits) {
      std::vector<Symbol> inputs{im.In(n, 0), trans_b ? im.In(n, 1) : im.NewParam(n.input(1) + "_T", Transposed(b))};
      if (has_c) inputs.push_back(im.ConstIn(n, 2).shape().ndim() == 1
                                      ? im.In(n, 2)
                                      : im.NewParam(n.input(2) + "_1d", im.ConstIn(n, 2).Reshape(TShape({units}))));
      return {im.Op("FullyConnected", n,
                    {{"num_hidden", std::to_string(units)}, {"no_bias", has_c ? "False" : "True"}, {"flatten", "True"}},
                    inputs)};
    }
  }
  Symbol y = im.Op("dot", n, {{"transpose_a", trans_a ? "True" : "False"}, {"transpose_b", trans_b ? "True" : "False"}},
                   {im.In(n, 0), im.In(n, 1)});
  if (alpha != 1) y = im.Op("_mul_scalar", n, {{"scalar", FloatText(alpha)}}, {y});
  if (!has_c) return {y};
  Symbol c = im.In(n, 2);
  if (beta != 1) c = im.Op("_mul_scalar", n, {{"scalar", FloatText(beta)}}, {c});
  return {im.Op("broadcast_add", n, {}, {y, c})};
}

std::vector<Symbol> ImportMatMul(Importer& im, const NodeProto& n, const Attrs&) {
  const int ra = im.RankOf(im.In(n, 0)), rb = im.RankOf(im.In(n, 1));
  if (ra == 2 && rb == 2) return {im.Op("dot", n, {}, {im.In(n, 0), im.In(n, 1)})};
  if (rb == 2) {
    // A weight on the last axis: FullyConnected(flatten=False) takes it as (units, inputs).
    const bool const_b = im.IsConst(n, 1) && im.ConstIn(n, 1).dtype() == DType::kFloat32;
    const Symbol weight = const_b ? im.NewParam(n.input(1) + "_T", Transposed(im.ConstIn(n, 1)))
                                  : im.Op("transpose", n, {}, {im.In(n, 1)});
    return {im.Op("FullyConnected", n,
                  {{"num_hidden", std::to_string(im.ShapeOf(im.In(n, 1))[1])}, {"no_bias", "True"}, {"flatten", "False"}},
                  {im.In(n, 0), weight})};
  }
  if (ra == 3 && rb == 3) return {im.Op("batch_dot", n, {}, {im.In(n, 0), im.In(n, 1)})};
  throw ParamError(StrCat("ranks ", ra, " and ", rb));
}

std::vector<Symbol> ImportPRelu(Importer& im, const NodeProto& n, const Attrs&) {
  Symbol x = im.In(n, 0);
  const TShape xs = im.ShapeOf(x);
  if (im.IsConst(n, 1) && xs.ndim() >= 2 && im.ConstIn(n, 1).dtype() == DType::kFloat32) {
    // MXNet's per-channel gamma when the slope varies along axis 1 only (or is one value).
    const NDArray& slope = im.ConstIn(n, 1);
    const TShape& ss = slope.shape();
    const int64_t channels = xs[1];
    bool per_channel = slope.Size() == 1 || (slope.Size() == channels && ss.ndim() == xs.ndim() - 1 && ss[0] == channels);
    if (per_channel) {
      NDArray gamma(TShape({channels}));
      for (int64_t c = 0; c < channels; ++c) gamma.fdata()[c] = slope.fdata()[slope.Size() == 1 ? 0 : c];
      return {im.Op("LeakyReLU", n, {{"act_type", "prelu"}},
                    {x, im.NewParam(n.input(1) + "_gamma", gamma)})};
    }
  }
  // relu(x) + slope * min(x, 0), with ONNX's broadcasting.
  Symbol neg = im.Op("_minimum_scalar", n, {{"scalar", "0"}}, {x});
  return {im.Op("broadcast_add", n, {},
                {Activation(im, n, "relu", x), im.Op("broadcast_mul", n, {}, {im.In(n, 1), neg})})};
}

std::vector<Symbol> ImportSoftmax(Importer& im, const NodeProto& n, const Attrs& a) {
  const std::string op = n.op_type() == "Softmax" ? "softmax" : "log_softmax";
  Symbol x = im.In(n, 0);
  if (im.opset() >= 13) return {im.Op(op, n, {{"axis", std::to_string(a.Int("axis", -1))}}, {x})};
  // Before opset 13: softmax of the input flattened to 2-D at `axis`.
  const TShape s = im.ShapeOf(x);
  int64_t axis = a.Int("axis", 1);
  if (axis < 0) axis += s.ndim();
  if (axis == s.ndim() - 1) return {im.Op(op, n, {{"axis", "-1"}}, {x})};
  const int64_t rows = s.ProdDims(0, static_cast<int>(axis));
  Symbol flat = im.Op("Reshape", n, {{"shape", TupleText({rows, -1})}}, {x});
  Symbol soft = im.Op(op, n, {{"axis", "-1"}}, {flat});
  return {im.Op("Reshape", n, {{"shape", s.ToString()}}, {soft})};
}

std::vector<Symbol> ImportConcat(Importer& im, const NodeProto& n, const Attrs& a) {
  std::vector<Symbol> inputs;
  for (int i = 0; i < n.input_size(); ++i) inputs.push_back(im.In(n, i));
  return {im.Op("Concat", n, {{"dim", std::to_string(a.Int("axis", 0))}, {"num_args", std::to_string(inputs.size())}},
                inputs)};
}

std::vector<Symbol> ImportSplit(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  const TShape s = im.ShapeOf(x);
  int64_t axis = a.Int("axis", 0);
  if (axis < 0) axis += s.ndim();
  std::vector<int64_t> split = im.opset() >= 13 && Importer::HasIn(n, 1) ? onnx_io::Int64Values(im.ConstIn(n, 1))
                                                                          : a.Ints("split");
  const int64_t parts = n.output_size(), dim = s[static_cast<int>(axis)];
  if (split.empty()) {
    if (dim % parts != 0) throw ParamError(StrCat("axis of ", dim, " into ", parts, " parts"));
    Symbol sliced = im.Op("SliceChannel", n, {{"num_outputs", std::to_string(parts)}, {"axis", std::to_string(axis)}}, {x});
    std::vector<Symbol> outs;
    for (int64_t i = 0; i < parts; ++i) outs.push_back(sliced[static_cast<size_t>(i)]);
    return outs;
  }
  std::vector<Symbol> outs;
  int64_t begin = 0;
  for (int64_t len : split) {
    outs.push_back(im.Op("slice_axis", n,
                         {{"axis", std::to_string(axis)}, {"begin", std::to_string(begin)}, {"end", std::to_string(begin + len)}},
                         {x}));
    begin += len;
  }
  return outs;
}

std::vector<Symbol> ImportSlice(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  const TShape s = im.ShapeOf(x);
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    starts = a.Ints("starts");
    ends = a.Ints("ends");
    axes = a.Ints("axes");
  } else {
    starts = onnx_io::Int64Values(im.ConstIn(n, 1));
    ends = onnx_io::Int64Values(im.ConstIn(n, 2));
    if (Importer::HasIn(n, 3)) axes = onnx_io::Int64Values(im.ConstIn(n, 3));
    if (Importer::HasIn(n, 4)) steps = onnx_io::Int64Values(im.ConstIn(n, 4));
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw IOError(StrCat("node ", NodeLabel(n), ": starts, ends, axes and steps differ in length"));
  const int ndim = s.ndim();
  std::vector<std::optional<int64_t>> begin(ndim), end(ndim), step(ndim);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (axis < 0 || axis >= ndim) throw IOError(StrCat("node ", NodeLabel(n), ": axis ", axes[i], " out of range"));
    const int64_t dim = s[static_cast<int>(axis)], st = steps[i];
    if (st == 0) throw IOError(StrCat("node ", NodeLabel(n), ": step 0"));
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v < 0 ? v + dim : v, lo), hi); };
    const int64_t b = st > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], 0, dim - 1);
    const int64_t e = st > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
    begin[axis] = b;
    end[axis] = e < 0 ? std::nullopt : std::optional<int64_t>(e);  // -1 with a negative step: through index 0
    step[axis] = st;
  }
  for (int i = 0; i < ndim; ++i)
    if (!step[i]) step[i] = 1;
  return {im.Op("slice", n, {{"begin", OptTupleText(begin)}, {"end", OptTupleText(end)}, {"step", OptTupleText(step)}}, {x})};
}

std::vector<Symbol> ImportReshape(Importer& im, const NodeProto& n, const Attrs& a) {
  const std::vector<int64_t> shape = onnx_io::Int64Values(im.ConstIn(n, 1));
  if (a.Int("allowzero", 0) != 0 && std::count(shape.begin(), shape.end(), 0)) throw ParamError("allowzero with a 0 dim");
  // ONNX's 0 (copy) and -1 (infer) mean what MXNet's codes do.
  return {im.Op("Reshape", n, {{"shape", TupleText(shape)}}, {im.In(n, 0)})};
}

std::vector<Symbol> ImportFlatten(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  int64_t axis = a.Int("axis", 1);
  if (axis == 1) return {im.Op("Flatten", n, {}, {x})};
  const TShape s = im.ShapeOf(x);
  if (axis < 0) axis += s.ndim();
  return {im.Op("Reshape", n, {{"shape", TupleText({s.ProdDims(0, static_cast<int>(axis)), -1})}}, {x})};
}

std::vector<Symbol> ImportTranspose(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("transpose", n, {{"axes", TupleText(a.Ints("perm"))}}, {im.In(n, 0)})};
}

// Axes from the attribute (older opsets) or the constant input `index` (newer ones).
std::vector<int64_t> AxesOf(Importer& im, const NodeProto& n, const Attrs& a, int index) {
  if (a.Has("axes")) return a.Ints("axes");
  if (Importer::HasIn(n, index)) return onnx_io::Int64Values(im.ConstIn(n, index));
  return {};
}

std::vector<Symbol> ImportSqueeze(Importer& im, const NodeProto& n, const Attrs& a) {
  const std::vector<int64_t> axes = AxesOf(im, n, a, 1);
  KwArgs p;
  if (!axes.empty()) p["axis"] = TupleText(axes);
  return {im.Op("squeeze", n, p, {im.In(n, 0)})};
}

std::vector<Symbol> ImportUnsqueeze(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  std::vector<int64_t> axes = AxesOf(im, n, a, 1);
  const int64_t out_rank = im.RankOf(x) + static_cast<int64_t>(axes.size());
  for (auto& ax : axes) ax = ax < 0 ? ax + out_rank : ax;
  std::sort(axes.begin(), axes.end());
  for (int64_t ax : axes) x = im.Op("expand_dims", n, {{"axis", std::to_string(ax)}}, {x});
  return {x};
}

// Variadic element-wise ops folded pairwise with MXNet's broadcasting op, or its elemwise_
// form for equal shapes: the graph rewrites (a residual add fused into the convolution before
// it) look for that, as MXNet models use it.
Converter Broadcast(const std::string& op) {
  return [op](Importer& im, const NodeProto& n, const Attrs&) -> std::vector<Symbol> {
    static const std::map<std::string, std::string> kSameShape = {{"broadcast_add", "elemwise_add"},
        {"broadcast_sub", "elemwise_sub"}, {"broadcast_mul", "elemwise_mul"}, {"broadcast_div", "elemwise_div"}};
    Symbol y = im.In(n, 0);
    for (int i = 1; i < n.input_size(); ++i) {
      const Symbol x = im.In(n, i);
      auto same = kSameShape.find(op);
      const bool elemwise = same != kSameShape.end() && im.KnownShapesEqual(y, x);
      y = im.Op(elemwise ? same->second : op, n, {}, {y, x});
    }
    if (n.op_type() == "Mean" && n.input_size() > 1)
      y = im.Op("_div_scalar", n, {{"scalar", std::to_string(n.input_size())}}, {y});
    return {y};
  };
}

Converter Unary(const std::string& op, KwArgs params = {}) {
  return [op, params](Importer& im, const NodeProto& n, const Attrs&) -> std::vector<Symbol> {
    return {im.Op(op, n, params, {im.In(n, 0)})};
  };
}

std::vector<Symbol> PassThrough(Importer& im, const NodeProto& n, const Attrs&) {
  if (n.op_type() == "Dropout" && n.output_size() > 1 && !n.output(1).empty()) throw ParamError("the mask output");
  // Dropout's training_mode input (opset 12): only a constant false is inference.
  if (n.op_type() == "Dropout" && Importer::HasIn(n, 2) &&
      (!im.IsConst(n, 2) || onnx_io::FloatValues(im.ConstIn(n, 2)).at(0) != 0))
    throw ParamError("training mode");
  return {im.Op("_copy", n, {}, {im.In(n, 0)})};
}

std::vector<Symbol> ImportClip(Importer& im, const NodeProto& n, const Attrs& a) {
  float lo = -std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::max();
  if (im.opset() < 11) {
    lo = a.Float("min", lo);
    hi = a.Float("max", hi);
  } else {
    if (Importer::HasIn(n, 1)) lo = onnx_io::FloatValues(im.ConstIn(n, 1)).at(0);
    if (Importer::HasIn(n, 2)) hi = onnx_io::FloatValues(im.ConstIn(n, 2)).at(0);
  }
  return {im.Op("clip", n, {{"a_min", FloatText(lo)}, {"a_max", FloatText(hi)}}, {im.In(n, 0)})};
}

std::vector<Symbol> ImportPad(Importer& im, const NodeProto& n, const Attrs& a) {
  std::vector<int64_t> pads;
  float value = 0;
  if (im.opset() < 11) {
    pads = a.Ints("pads");
    value = a.Float("value", 0);
  } else {
    pads = onnx_io::Int64Values(im.ConstIn(n, 1));
    if (Importer::HasIn(n, 2)) value = onnx_io::FloatValues(im.ConstIn(n, 2)).at(0);
  }
  const size_t ndim = pads.size() / 2;
  std::vector<int64_t> width;
  for (size_t i = 0; i < ndim; ++i) {
    width.push_back(pads[i]);
    width.push_back(pads[i + ndim]);
  }
  const std::string mode = a.String("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") throw ParamError("mode=" + mode);
  return {im.Op("Pad", n, {{"mode", mode}, {"pad_width", TupleText(width)}, {"constant_value", FloatText(value)}},
                {im.In(n, 0)})};
}

std::vector<Symbol> ImportResize(Importer& im, const NodeProto& n, const Attrs& a) {
  Symbol x = im.In(n, 0);
  if (a.String("mode", "nearest") != "nearest") throw ParamError("mode=" + a.String("mode", "nearest"));
  std::vector<float> scales;
  const bool upsample = n.op_type() == "Upsample";
  const int scales_index = upsample ? 1 : 2;
  if (Importer::HasIn(n, scales_index) && im.ConstIn(n, scales_index).Size() > 0) {
    scales = onnx_io::FloatValues(im.ConstIn(n, scales_index));
  } else if (!upsample && Importer::HasIn(n, 3)) {
    const std::vector<int64_t> sizes = onnx_io::Int64Values(im.ConstIn(n, 3));
    const TShape s = im.ShapeOf(x);
    for (size_t i = 0; i < sizes.size() && i < static_cast<size_t>(s.ndim()); ++i)
      scales.push_back(static_cast<float>(sizes[i]) / static_cast<float>(s[static_cast<int>(i)]));
  }
  // Nearest upsampling by one integer factor on H and W: what UpSampling computes, for the
  // coordinate modes that agree at integer factors.
  const std::string coords = a.String("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = a.String("nearest_mode", "round_prefer_floor");
  const bool coords_ok = upsample || (coords == "asymmetric" && rounding == "floor") ||
                         ((coords == "half_pixel" || coords == "pytorch_half_pixel") && rounding != "floor" && rounding != "ceil");
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1 || scales[2] != scales[3] || scales[2] < 1 ||
      scales[2] != std::floor(scales[2]) || !coords_ok)
    throw ParamError(StrCat("scales other than one integer factor on H and W (or coordinate mode ", coords, "/", rounding, ")"));
  return {im.Op("UpSampling", n,
                {{"scale", std::to_string(static_cast<int>(scales[2]))}, {"sample_type", "nearest"}, {"num_args", "1"}},
                {x})};
}

std::vector<Symbol> ImportLRN(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("LRN", n,
                {{"alpha", FloatText(a.Float("alpha", 1e-4f))}, {"beta", FloatText(a.Float("beta", 0.75f))},
                 {"knorm", FloatText(a.Float("bias", 1))}, {"nsize", std::to_string(a.Int("size", 1))}},
                {im.In(n, 0)})};
}

Converter Reduce(const std::string& op) {
  return [op](Importer& im, const NodeProto& n, const Attrs& a) -> std::vector<Symbol> {
    const std::vector<int64_t> axes = AxesOf(im, n, a, 1);
    if (axes.empty() && a.Int("noop_with_empty_axes", 0) != 0) return {im.Op("_copy", n, {}, {im.In(n, 0)})};
    KwArgs p{{"keepdims", a.Int("keepdims", 1) ? "True" : "False"}};
    if (!axes.empty()) p["axis"] = TupleText(axes);
    return {im.Op(op, n, p, {im.In(n, 0)})};
  };
}

std::vector<Symbol> ImportLeakyRelu(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("LeakyReLU", n, {{"act_type", "leaky"}, {"slope", FloatText(a.Float("alpha", 0.01f))}}, {im.In(n, 0)})};
}

std::vector<Symbol> ImportElu(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("LeakyReLU", n, {{"act_type", "elu"}, {"slope", FloatText(a.Float("alpha", 1))}}, {im.In(n, 0)})};
}

std::vector<Symbol> ImportSelu(Importer& im, const NodeProto& n, const Attrs& a) {
  // gamma * elu_alpha(x): MXNet's selu has the constants fixed.
  Symbol elu = im.Op("LeakyReLU", n, {{"act_type", "elu"}, {"slope", FloatText(a.Float("alpha", 1.67326319217681884765625f))}},
                     {im.In(n, 0)});
  return {im.Op("_mul_scalar", n, {{"scalar", FloatText(a.Float("gamma", 1.05070102214813232421875f))}}, {elu})};
}

std::vector<Symbol> ImportHardSigmoid(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("hard_sigmoid", n, {{"alpha", FloatText(a.Float("alpha", 0.2f))}, {"beta", FloatText(a.Float("beta", 0.5f))}},
                {im.In(n, 0)})};
}

std::vector<Symbol> ImportInstanceNorm(Importer& im, const NodeProto& n, const Attrs& a) {
  return {im.Op("InstanceNorm", n, {{"eps", FloatText(a.Float("epsilon", 1e-5f))}},
                {im.In(n, 0), im.In(n, 1), im.In(n, 2)})};
}

const std::map<std::string, Converter>& Converters() {
  static const std::map<std::string, Converter> kTable = [] {
    std::map<std::string, Converter> t;
    t["Conv"] = ImportConv;
    t["ConvTranspose"] = ImportConv;
    t["BatchNormalization"] = ImportBatchNorm;
    t["MaxPool"] = ImportPool;
    t["AveragePool"] = ImportPool;
    t["GlobalMaxPool"] = ImportGlobalPool;
    t["GlobalAveragePool"] = ImportGlobalPool;
    t["Gemm"] = ImportGemm;
    t["MatMul"] = ImportMatMul;
    t["PRelu"] = ImportPRelu;
    t["LeakyRelu"] = ImportLeakyRelu;
    t["Elu"] = ImportElu;
    t["Selu"] = ImportSelu;
    t["HardSigmoid"] = ImportHardSigmoid;
    t["Softmax"] = ImportSoftmax;
    t["LogSoftmax"] = ImportSoftmax;
    t["Concat"] = ImportConcat;
    t["Split"] = ImportSplit;
    t["Slice"] = ImportSlice;
    t["Reshape"] = ImportReshape;
    t["Flatten"] = ImportFlatten;
    t["Transpose"] = ImportTranspose;
    t["Squeeze"] = ImportSqueeze;
    t["Unsqueeze"] = ImportUnsqueeze;
    t["Identity"] = PassThrough;
    t["Dropout"] = PassThrough;
    t["Clip"] = ImportClip;
    t["Pad"] = ImportPad;
    t["Resize"] = ImportResize;
    t["Upsample"] = ImportResize;
    t["LRN"] = ImportLRN;
    t["InstanceNormalization"] = ImportInstanceNorm;
    for (const auto& [onnx_op, mx] : std::vector<std::pair<const char*, const char*>>{
             {"ReduceMean", "mean"}, {"ReduceSum", "sum"}, {"ReduceMax", "max"}, {"ReduceMin", "min"}, {"ReduceProd", "prod"}})
      t[onnx_op] = Reduce(mx);
    for (const auto& [onnx_op, mx] : std::vector<std::pair<const char*, const char*>>{
             {"Add", "broadcast_add"}, {"Sub", "broadcast_sub"}, {"Mul", "broadcast_mul"}, {"Div", "broadcast_div"},
             {"Pow", "broadcast_power"}, {"Max", "broadcast_maximum"}, {"Min", "broadcast_minimum"},
             {"Sum", "broadcast_add"}, {"Mean", "broadcast_add"}})
      t[onnx_op] = Broadcast(mx);
    for (const auto& [onnx_op, act] : std::vector<std::pair<const char*, const char*>>{
             {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Softplus", "softrelu"}, {"Softsign", "softsign"}})
      t[onnx_op] = Unary("Activation", {{"act_type", act}});
    for (const auto& [onnx_op, mx] : std::vector<std::pair<const char*, const char*>>{
             {"Exp", "exp"}, {"Log", "log"}, {"Sqrt", "sqrt"}, {"Abs", "abs"}, {"Neg", "negative"},
             {"Reciprocal", "reciprocal"}, {"Floor", "floor"}, {"Ceil", "ceil"}, {"Sin", "sin"}, {"Cos", "cos"},
             {"Tan", "tan"}, {"Asin", "arcsin"}, {"Acos", "arccos"}, {"Atan", "arctan"}, {"Sinh", "sinh"},
             {"Cosh", "cosh"}, {"Asinh", "arcsinh"}, {"Acosh", "arccosh"}, {"Atanh", "arctanh"}, {"Erf", "erf"},
             {"Sign", "sign"}})
      t[onnx_op] = Unary(mx);
    return t;
  }();
  return kTable;
}

// ---- the graph ---------------------------------------------------------------------------

Model Importer::Run() {
  for (const auto& op : m_.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = static_cast<int>(op.version());
  if (opset_ < kOnnxImportMinOpset || opset_ > kOnnxImportMaxOpset)
    throw IOError(StrCat(where_, ": ONNX opset ", opset_, " (symbind imports opsets ", kOnnxImportMinOpset, "-",
                         kOnnxImportMaxOpset, ")"));
  const onnx::GraphProto& g = m_.graph();


  for (const auto& t : g.initializer()) {
    consts_[t.name()] = onnx_io::FromTensorProto(t, model_dir_);
    names_.insert(t.name());
  }
  for (const auto& in : g.input()) {
    if (consts_.count(in.name())) continue;
    if (!in.type().has_tensor_type())
      throw IOError(StrCat(where_, ": input ", in.name(), " is not a tensor"));
    const auto& tt = in.type().tensor_type();
    onnx_io::DTypeOfOnnx(tt.elem_type(), "input " + in.name());
    std::vector<int64_t> dims;
    bool fixed = tt.has_shape();
    for (const auto& d : tt.shape().dim()) {
      const bool known = d.has_dim_value() && d.dim_value() > 0;
      if (d.has_dim_value() && (d.dim_value() < 0 || d.dim_value() > (int64_t{1} << 31)))
        throw IOError(StrCat(where_, ": input ", in.name(), " has dimension ", d.dim_value()));
      fixed = fixed && known;
      dims.push_back(known ? d.dim_value() : 1);  // a symbolic batch dim infers as 1
    }
    values_[in.name()] = Symbol::Variable(in.name());
    names_.insert(in.name());
    if (tt.has_shape()) known_[in.name()] = TShape(dims);
    if (fixed) model_.input_shapes[in.name()] = TShape(dims);
  }
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant") {
      if (n.output_size() != 1) throw IOError(StrCat(where_, ": node ", NodeLabel(n), ": a Constant with ", n.output_size(), " outputs"));
      names_.insert(n.output(0));
      const Attrs a(n);
      if (const AttributeProto* v = a.Find("value", AttributeProto::TENSOR)) {
        consts_[n.output(0)] = onnx_io::FromTensorProto(v->t(), model_dir_);
      } else if (const AttributeProto* f = a.Find("value_float", AttributeProto::FLOAT)) {
        consts_[n.output(0)] = NDArray(TShape(std::vector<int64_t>{}), {f->f()});
      } else if (a.Has("value_floats")) {
        const std::vector<float> v = a.Floats("value_floats");
        consts_[n.output(0)] = NDArray(TShape({static_cast<int64_t>(v.size())}), v);
      } else if (a.Has("value_int") || a.Has("value_ints")) {
        std::vector<int64_t> v = a.Has("value_int") ? std::vector<int64_t>{a.Int("value_int", 0)} : a.Ints("value_ints");
        NDArray arr(a.Has("value_int") ? TShape(std::vector<int64_t>{}) : TShape({static_cast<int64_t>(v.size())}),
                    DType::kInt64);
        std::copy(v.begin(), v.end(), arr.data<int64_t>());
        consts_[n.output(0)] = arr;
      } else {
        throw ParamError(StrCat(where_, ": node ", NodeLabel(n), ": a Constant kind symbind does not import"));
      }
      continue;
    }
    std::vector<Symbol> outs;
    try {
      outs = Converters().at(n.op_type())(*this, n, Attrs(n));
    } catch (const ParamError& e) {
      throw ParamError(StrCat(where_, ": node ", NodeLabel(n), ": symbind does not import ", e.what()));
    } catch (const Error& e) {
      throw IOError(StrCat(where_, ": node ", NodeLabel(n), ": ", e.what()));
    }
    for (int i = 0; i < n.output_size() && i < static_cast<int>(outs.size()); ++i)
      if (!n.output(i).empty()) values_[n.output(i)] = outs[static_cast<size_t>(i)];
  }
  std::vector<Symbol> heads;
  for (const auto& out : g.output()) {
    if (!values_.count(out.name()) && consts_.count(out.name()))
      throw ParamError(StrCat(where_, ": output ", out.name(), " is a constant, which symbind does not import"));
    if (!values_.count(out.name())) throw IOError(StrCat(where_, ": no node produces output ", out.name()));
    heads.push_back(values_[out.name()]);
  }
  if (heads.empty()) throw IOError(where_ + ": the graph has no outputs");
  model_.symbol = heads.size() == 1 ? heads[0] : Symbol::Group(heads);
  return model_;
}

Model ImportModelProto(const std::string& bytes, const std::string& model_dir, const std::string& where) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw IOError(StrCat(where, ": ", bytes.size(), " bytes; ONNX protobuf files are at most 2 GB"));
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) throw IOError(where + ": not a valid ONNX model (protobuf parse failed; truncated?)");
  if (!m.has_graph()) throw IOError(where + ": the ONNX model has no graph");
  // Unsupported ops first, all of them named at once (ONNX's checker would stop at the first
  // node it cannot check).
  Importer::RequireSupportedOps(m.graph(), where);
  // External data locations first: ONNX's checker looks for the files relative to the model's
  // folder (or, for a model in memory, the working directory) without confining them to it.
  bool external = false;
  for (const auto& t : m.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      onnx_io::ExternalDataPath(t, model_dir);
      external = true;
    }
  try {
    if (external) onnx::checker::check_model(where);  // a file: the checker knows its folder
    else onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    throw IOError(StrCat(where, ": the ONNX model fails ONNX's checker: ", e.what()));
  }
  return Importer(m, model_dir, where).Run();
}

[[maybe_unused]] const bool registered_with_model_files = (SetOnnxModelLoader(&LoadOnnx), true);

}  // namespace

Model LoadOnnx(const std::string& path) {
  RegularFile f(path);
  const std::string bytes = f.ReadHead(static_cast<size_t>(f.size()));
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ImportModelProto(bytes, dir.empty() ? "." : dir, path);
}

Model LoadOnnxBuffer(const void* data, size_t size, const std::string& where) {
  if (data == nullptr && size != 0) throw IOError(where + ": null buffer");
  return ImportModelProto(std::string(static_cast<const char*>(data), size), "", where);
}

std::vector<std::string> OnnxImportedOps() {
  std::map<std::string, Converter> with_constant = Converters();
  with_constant["Constant"] = nullptr;  // read as a constant input, not converted
  return onnx_io::SortedKeys(with_constant);
}

}  // namespace symbind
