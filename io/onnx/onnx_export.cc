// MXNet graph -> ONNX ModelProto. Each op node becomes one or a few ONNX nodes; shapes come
// from symbind's own shape inference for the given input shapes, so MXNet's shape codes and
// reference inputs are written as the concrete values they stand for.
#include <algorithm>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <symbind/core/graph.h>
#include <symbind/core/param.h>

#include "onnx.h"
#include "onnx_tensor.h"

namespace symbind {

namespace {
using onnx::AttributeProto;
using onnx::NodeProto;

// An op node's parameters with every default filled in, read by name.
class NodeParams {
 public:
  explicit NodeParams(const NodeAttrs& a)
      : kw_(a.parsed.schema && a.parsed.value ? a.parsed.schema->ToKwArgs(a.parsed.value.get()) : a.dict) {}
  template <typename T>
  T Get(const std::string& key) const {
    T v{};
    auto it = kw_.find(key);
    if (it == kw_.end()) throw ParamError(StrCat("parameter ", key, " missing"));
    if (!ParamValue<T>::Parse(it->second, &v)) throw ParamError(StrCat("parameter ", key, "='", it->second, "' unreadable"));
    return v;
  }
  std::string Str(const std::string& key) const {
    auto it = kw_.find(key);
    return it == kw_.end() ? std::string() : it->second;
  }
  bool IsNone(const std::string& key) const {
    auto it = kw_.find(key);
    return it == kw_.end() || it->second == "None" || it->second.empty();
  }

 private:
  KwArgs kw_;
};

std::vector<int64_t> Dims(const TShape& s) { return s.ndim_known() ? s.dims() : std::vector<int64_t>{}; }

// Normalises a possibly negative axis for rank `ndim`.
int64_t Axis(int64_t axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

class Exporter;

// What a converter sees of one op node.
struct NodeCtx {
  const Node& node;
  NodeParams params;
  std::vector<std::string> in;      // tensor names of the inputs
  std::vector<TShape> in_shapes;
  std::vector<std::string> out;     // tensor names to produce
  std::vector<TShape> out_shapes;
  const std::string& name() const { return node.name(); }
};

using Converter = std::function<void(Exporter&, const NodeCtx&)>;

class Exporter {
 public:
  Exporter(const Model& model, const OnnxExportOptions& options) : model_(model), opset_(options.opset) {
    if (opset_ < kOnnxExportMinOpset || opset_ > kOnnxExportMaxOpset)
      throw ParamError(StrCat("ONNX export: opset ", opset_, " is not supported (", kOnnxExportMinOpset, "-",
                              kOnnxExportMaxOpset, ")"));
    input_shapes_ = options.input_shapes.empty() ? model.input_shapes : options.input_shapes;
  }

  int opset() const { return opset_; }

  std::string Run();

  // A tensor name not used yet, from `base`.
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; !used_.insert(name).second; ++i) name = StrCat(base, "_", i);
    return name;
  }
  NodeProto* AddNode(const std::string& op_type, const std::string& node_name,
                     const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    NodeProto* n = graph()->add_node();
    n->set_op_type(op_type);
    n->set_name(Fresh(node_name));
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return n;
  }
  // One-input one-output node writing a fresh tensor; returns its name.
  std::string Chain(const std::string& op_type, const std::string& node_name, const std::vector<std::string>& inputs,
                    NodeProto** made = nullptr) {
    const std::string out = Fresh(node_name + "_" + op_type);
    NodeProto* n = AddNode(op_type, node_name, inputs, {out});
    if (made) *made = n;
    return out;
  }
  std::string Initializer(const std::string& base, const NDArray& a) {
    const std::string name = Fresh(base);
    onnx_io::ToTensorProto(a, name, graph()->add_initializer());
    return name;
  }
  std::string ConstInt64(const std::string& base, const std::vector<int64_t>& values) {
    NDArray a(TShape({static_cast<int64_t>(values.size())}), DType::kInt64);
    std::copy(values.begin(), values.end(), a.data<int64_t>());
    return Initializer(base, a);
  }
  std::string ConstFloat(const std::string& base, const std::vector<float>& values, const TShape& shape) {
    return Initializer(base, NDArray(shape, values));
  }
  std::string ScalarFloat(const std::string& base, float v) { return ConstFloat(base, {v}, TShape(std::vector<int64_t>{})); }
  // The parameter array behind tensor `name`, when it is an initializer from the model.
  const NDArray* Param(const std::string& name) const {
    auto it = params_.find(name);
    return it == params_.end() ? nullptr : &it->second;
  }

  // Reduce ops took axes as an attribute before opset 13 (ReduceSum) / 18 (the rest).
  std::string Reduce(const std::string& op_type, const std::string& node_name, const std::string& input,
                     const std::vector<int64_t>& axes, bool keepdims) {
    NodeProto* n = nullptr;
    const bool axes_input = op_type == "ReduceSum" && opset_ >= 13;
    std::vector<std::string> inputs{input};
    if (axes_input && !axes.empty()) inputs.push_back(ConstInt64(node_name + "_axes", axes));
    const std::string out = Chain(op_type, node_name, inputs, &n);
    if (!axes_input && !axes.empty()) SetInts(n, "axes", axes);
    SetInt(n, "keepdims", keepdims ? 1 : 0);
    return out;
  }

  static void SetInt(NodeProto* n, const std::string& key, int64_t v) {
    AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(AttributeProto::INT);
    a->set_i(v);
  }
  static void SetFloat(NodeProto* n, const std::string& key, float v) {
    AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void SetString(NodeProto* n, const std::string& key, const std::string& v) {
    AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(AttributeProto::STRING);
    a->set_s(v);
  }
  static void SetInts(NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
    AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

 private:
  onnx::GraphProto* graph() { return model_proto_.mutable_graph(); }

  const Model& model_;
  int opset_;
  std::map<std::string, TShape> input_shapes_;
  onnx::ModelProto model_proto_;
  std::set<std::string> used_;
  std::map<std::string, NDArray> params_;  // initializer name -> array, for converters that reshape them
};

// ---- converters --------------------------------------------------------------------------

// Kernel, stride, dilation and pads of Convolution / Deconvolution / Pooling for `spatial` dims.
void SetWindowAttrs(NodeProto* n, const NodeParams& p, int spatial, bool dilate) {
  auto filled = [&](const std::string& key, int64_t dflt) {
    std::vector<int64_t> v = Dims(p.Get<TShape>(key));
    if (v.empty()) v.assign(spatial, dflt);
    if (static_cast<int>(v.size()) != spatial) throw ParamError(StrCat(key, " has ", v.size(), " dims, the input ", spatial));
    return v;
  };
  Exporter::SetInts(n, "kernel_shape", filled("kernel", 1));
  Exporter::SetInts(n, "strides", filled("stride", 1));
  if (dilate) Exporter::SetInts(n, "dilations", filled("dilate", 1));
  std::vector<int64_t> pads = filled("pad", 0);
  pads.insert(pads.end(), pads.begin(), pads.end());
  Exporter::SetInts(n, "pads", pads);
}

void RequireLayout(const NodeParams& p) {
  const std::string layout = p.Str("layout");
  if (!layout.empty() && layout != "None" && layout != "NCW" && layout != "NCHW" && layout != "NCDHW")
    throw ParamError("layout " + layout + " (ONNX convolutions are channels-first)");
}

void ConvertConvolution(Exporter& e, const NodeCtx& c) {
  RequireLayout(c.params);
  std::vector<std::string> inputs = c.in;
  NodeProto* n = e.AddNode("Conv", c.name(), inputs, {c.out[0]});
  SetWindowAttrs(n, c.params, c.in_shapes[0].ndim() - 2, true);
  Exporter::SetInt(n, "group", c.params.Get<int64_t>("num_group"));
}

void ConvertDeconvolution(Exporter& e, const NodeCtx& c) {
  RequireLayout(c.params);
  const int spatial = c.in_shapes[0].ndim() - 2;
  NodeProto* n = e.AddNode("ConvTranspose", c.name(), c.in, {c.out[0]});
  SetWindowAttrs(n, c.params, spatial, true);
  Exporter::SetInt(n, "group", c.params.Get<int64_t>("num_group"));
  std::vector<int64_t> adj = Dims(c.params.Get<TShape>("adj"));
  if (!Dims(c.params.Get<TShape>("target_shape")).empty()) {
    // MXNet derives pad and adj from target_shape; the output shape pins them down.
    Exporter::SetInts(n, "output_shape", std::vector<int64_t>(Dims(c.out_shapes[0]).begin() + 2, Dims(c.out_shapes[0]).end()));
    return;
  }
  if (!adj.empty()) Exporter::SetInts(n, "output_padding", adj);
}

void ConvertBatchNorm(Exporter& e, const NodeCtx& c) {
  if (Axis(c.params.Get<int>("axis"), c.in_shapes[0].ndim()) != 1) throw ParamError("axis other than 1");
  std::vector<std::string> inputs = c.in;
  if (c.params.Get<bool>("fix_gamma")) {
    // MXNet uses gamma = 1 whatever the array holds.
    std::vector<float> ones(static_cast<size_t>(c.in_shapes[1].Size()), 1.0f);
    inputs[1] = e.ConstFloat(c.name() + "_gamma_fixed", ones, c.in_shapes[1]);
  }
  NodeProto* n = e.AddNode("BatchNormalization", c.name(), inputs, {c.out[0]});
  Exporter::SetFloat(n, "epsilon", static_cast<float>(c.params.Get<double>("eps")));
  Exporter::SetFloat(n, "momentum", c.params.Get<float>("momentum"));
  for (size_t i = 1; i < c.out.size(); ++i)  // output_mean_var: the moving statistics at inference
    e.AddNode("Identity", c.name(), {c.in[i + 2]}, {c.out[i]});
}

void ConvertPooling(Exporter& e, const NodeCtx& c) {
  RequireLayout(c.params);
  const std::string type = c.params.Str("pool_type");
  const int spatial = c.in_shapes[0].ndim() - 2;
  if (c.params.Get<bool>("global_pool")) {
    if (type == "max") e.AddNode("GlobalMaxPool", c.name(), {c.in[0]}, {c.out[0]});
    else if (type == "avg") e.AddNode("GlobalAveragePool", c.name(), {c.in[0]}, {c.out[0]});
    else if (type == "lp") {
      NodeProto* n = e.AddNode("GlobalLpPool", c.name(), {c.in[0]}, {c.out[0]});
      Exporter::SetInt(n, "p", c.params.IsNone("p_value") ? 2 : c.params.Get<int>("p_value"));
    } else {
      int64_t area = 1;
      for (int i = 2; i < c.in_shapes[0].ndim(); ++i) area *= c.in_shapes[0][i];
      const std::string avg = e.Chain("GlobalAveragePool", c.name(), {c.in[0]});
      e.AddNode("Mul", c.name(), {avg, e.ScalarFloat(c.name() + "_area", static_cast<float>(area))}, {c.out[0]});
    }
    return;
  }
  const std::string convention = c.params.Str("pooling_convention");
  if (convention == "same") throw ParamError("pooling_convention=same");
  const bool ceil = convention == "full";
  auto window = [&](NodeProto* n) {
    SetWindowAttrs(n, c.params, spatial, false);
    if (ceil) Exporter::SetInt(n, "ceil_mode", 1);
  };
  if (type == "max") {
    window(e.AddNode("MaxPool", c.name(), {c.in[0]}, {c.out[0]}));
  } else if (type == "avg" || type == "sum") {
    const bool include_pad = c.params.IsNone("count_include_pad") || c.params.Get<bool>("count_include_pad");
    NodeProto* n = nullptr;
    const std::string avg = type == "avg" ? c.out[0] : e.Fresh(c.name() + "_avg");
    n = e.AddNode("AveragePool", c.name(), {c.in[0]}, {avg});
    window(n);
    Exporter::SetInt(n, "count_include_pad", include_pad || type == "sum" ? 1 : 0);
    if (type == "sum") {
      const TShape k = c.params.Get<TShape>("kernel");
      e.AddNode("Mul", c.name(), {avg, e.ScalarFloat(c.name() + "_area", static_cast<float>(k.Size()))}, {c.out[0]});
    }
  } else {
    NodeProto* n = e.AddNode("LpPool", c.name(), {c.in[0]}, {c.out[0]});
    SetWindowAttrs(n, c.params, spatial, false);
    if (ceil) throw ParamError("lp pooling with pooling_convention=full");
    Exporter::SetInt(n, "p", c.params.IsNone("p_value") ? 2 : c.params.Get<int>("p_value"));
  }
}

void ConvertFullyConnected(Exporter& e, const NodeCtx& c) {
  const bool has_bias = c.in.size() > 2;
  if (c.params.Get<bool>("flatten")) {
    std::string x = c.in[0];
    if (c.in_shapes[0].ndim() != 2) {
      NodeProto* f = nullptr;
      x = e.Chain("Flatten", c.name(), {x}, &f);
      Exporter::SetInt(f, "axis", 1);
    }
    std::vector<std::string> inputs{x, c.in[1]};
    if (has_bias) inputs.push_back(c.in[2]);
    NodeProto* n = e.AddNode("Gemm", c.name(), inputs, {c.out[0]});
    Exporter::SetInt(n, "transB", 1);
    return;
  }
  // flatten=False: the weight applies to the last axis of an N-d input; MatMul wants it as
  // (inputs, units), written transposed when it is a parameter.
  std::string wt;
  if (const NDArray* w = e.Param(c.in[1]); w && w->dtype() == DType::kFloat32) {
    const int64_t units = w->shape()[0], inputs = w->shape()[1];
    NDArray t(TShape({inputs, units}));
    for (int64_t u = 0; u < units; ++u)
      for (int64_t i = 0; i < inputs; ++i) t.fdata()[i * units + u] = w->fdata()[u * inputs + i];
    wt = e.Initializer(c.in[1] + "_T", t);
  } else {
    NodeProto* t = nullptr;
    wt = e.Chain("Transpose", c.name(), {c.in[1]}, &t);
    Exporter::SetInts(t, "perm", {1, 0});
  }
  if (!has_bias) {
    e.AddNode("MatMul", c.name(), {c.in[0], wt}, {c.out[0]});
    return;
  }
  const std::string mm = e.Chain("MatMul", c.name(), {c.in[0], wt});
  e.AddNode("Add", c.name(), {mm, c.in[2]}, {c.out[0]});
}

void ConvertActivationType(Exporter& e, const NodeCtx& c, const std::string& act) {
  static const std::map<std::string, std::string> kOps = {
      {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"softrelu", "Softplus"}, {"softsign", "Softsign"}};
  auto it = kOps.find(act);
  if (it == kOps.end()) throw ParamError("act_type=" + act);
  e.AddNode(it->second, c.name(), {c.in[0]}, {c.out[0]});
}

void ConvertLeakyReLU(Exporter& e, const NodeCtx& c) {
  const std::string act = c.params.Str("act_type");
  const float slope = c.params.Get<float>("slope");
  if (act == "leaky" || act == "rrelu") {
    // rrelu at inference: the mean of its slope range.
    const float alpha = act == "leaky" ? slope : (c.params.Get<float>("lower_bound") + c.params.Get<float>("upper_bound")) / 2;
    Exporter::SetFloat(e.AddNode("LeakyRelu", c.name(), {c.in[0]}, {c.out[0]}), "alpha", alpha);
  } else if (act == "elu") {
    Exporter::SetFloat(e.AddNode("Elu", c.name(), {c.in[0]}, {c.out[0]}), "alpha", slope);
  } else if (act == "selu") {
    e.AddNode("Selu", c.name(), {c.in[0]}, {c.out[0]});
  } else if (act == "prelu") {
    // MXNet's gamma (C) is per channel (axis 1); ONNX broadcasts from the right: (C, 1, ...).
    const int ndim = c.in_shapes[0].ndim();
    std::vector<int64_t> shape(std::max(ndim - 1, 1), 1);
    shape[0] = c.in_shapes[1].Size();
    NodeProto* r = nullptr;
    const std::string gamma = e.Chain("Reshape", c.name(), {c.in[1], e.ConstInt64(c.name() + "_gamma_shape", shape)}, &r);
    e.AddNode("PRelu", c.name(), {c.in[0], gamma}, {c.out[0]});
  } else if (act == "gelu") {
    // 0.5 x (1 + erf(x / sqrt 2)): Gelu itself is opset 20.
    const std::string scaled = e.Chain("Div", c.name(), {c.in[0], e.ScalarFloat(c.name() + "_sqrt2", 1.41421356237f)});
    const std::string erf = e.Chain("Erf", c.name(), {scaled});
    const std::string one = e.Chain("Add", c.name(), {erf, e.ScalarFloat(c.name() + "_one", 1.0f)});
    const std::string half = e.Chain("Mul", c.name(), {c.in[0], e.ScalarFloat(c.name() + "_half", 0.5f)});
    e.AddNode("Mul", c.name(), {half, one}, {c.out[0]});
  } else {
    throw ParamError("act_type=" + act);
  }
}

// Softmax over `axis` of `input` into `output`, as per-axis softmax in every opset: before
// opset 13 ONNX's Softmax flattens from `axis` on, the same only when axis is the last one.
void SoftmaxAlongAxis(Exporter& e, const std::string& name, const std::string& op_type, const std::string& input,
                      const std::string& output, int64_t axis, int ndim) {
  axis = Axis(axis, ndim);
  if (e.opset() >= 13 || axis == ndim - 1) {
    Exporter::SetInt(e.AddNode(op_type, name, {input}, {output}), "axis", axis);
    return;
  }
  std::vector<int64_t> perm(ndim);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm[ndim - 1]);
  NodeProto* n = nullptr;
  const std::string moved = e.Chain("Transpose", name, {input}, &n);
  Exporter::SetInts(n, "perm", perm);
  const std::string soft = e.Chain(op_type, name, {moved}, &n);
  Exporter::SetInt(n, "axis", ndim - 1);
  Exporter::SetInts(e.AddNode("Transpose", name, {soft}, {output}), "perm", perm);
}

// Softmax over all but the first axis (MXNet's instance softmax, SoftmaxOutput without
// multi_output): flatten, softmax, restore the shape.
void SoftmaxPerInstance(Exporter& e, const NodeCtx& c) {
  const TShape& s = c.in_shapes[0];
  if (s.ndim() == 2) {
    SoftmaxAlongAxis(e, c.name(), "Softmax", c.in[0], c.out[0], 1, 2);
    return;
  }
  NodeProto* n = nullptr;
  const std::string flat = e.Chain("Flatten", c.name(), {c.in[0]}, &n);
  Exporter::SetInt(n, "axis", 1);
  const std::string soft = e.Chain("Softmax", c.name(), {flat}, &n);
  Exporter::SetInt(n, "axis", 1);
  e.AddNode("Reshape", c.name(), {soft, e.ConstInt64(c.name() + "_shape", Dims(s))}, {c.out[0]});
}

void ConvertSoftmax(Exporter& e, const NodeCtx& c, const std::string& op_type) {
  if (c.params.Get<std::optional<bool>>("use_length").value_or(false)) throw ParamError("use_length=True");
  std::string x = c.in[0];
  if (!c.params.IsNone("temperature") && c.params.Get<double>("temperature") != 1.0)
    x = e.Chain("Div", c.name(), {x, e.ScalarFloat(c.name() + "_temperature", static_cast<float>(c.params.Get<double>("temperature")))});
  SoftmaxAlongAxis(e, c.name(), op_type, x, c.out[0], c.params.Get<int>("axis"), c.in_shapes[0].ndim());
}

void ConvertSoftmaxOutput(Exporter& e, const NodeCtx& c) {
  const int ndim = c.in_shapes[0].ndim();
  if (c.params.Get<bool>("multi_output")) SoftmaxAlongAxis(e, c.name(), "Softmax", c.in[0], c.out[0], 1, ndim);
  else if (c.params.Get<bool>("preserve_shape")) SoftmaxAlongAxis(e, c.name(), "Softmax", c.in[0], c.out[0], -1, ndim);
  else SoftmaxPerInstance(e, c);
}

void ConvertSoftmaxActivation(Exporter& e, const NodeCtx& c) {
  if (c.params.Str("mode") == "channel")
    SoftmaxAlongAxis(e, c.name(), "Softmax", c.in[0], c.out[0], 1, c.in_shapes[0].ndim());
  else
    SoftmaxPerInstance(e, c);
}

// Slice of `input` along `axes` from `starts` to `ends` (exclusive) with `steps`.
void AddSlice(Exporter& e, const std::string& name, const std::string& input, const std::string& output,
              const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
              const std::vector<int64_t>& steps) {
  e.AddNode("Slice", name, {input, e.ConstInt64(name + "_starts", starts), e.ConstInt64(name + "_ends", ends),
                           e.ConstInt64(name + "_axes", axes), e.ConstInt64(name + "_steps", steps)},
            {output});
}

// Resolved begin/end of MXNet's slice for one axis: None ends run to the edge in the step's direction.
void ConvertSlice(Exporter& e, const NodeCtx& c) {
  const auto begin = c.params.Get<OptIntTuple>("begin"), end = c.params.Get<OptIntTuple>("end");
  const auto step = c.params.Get<OptIntTuple>("step");
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < begin.size(); ++i) {
    const int64_t st = i < step.size() && step[i] ? *step[i] : 1;
    const int64_t dim = c.in_shapes[0][static_cast<int>(i)];
    starts.push_back(begin[i] ? *begin[i] : (st > 0 ? 0 : dim - 1));
    ends.push_back(i < end.size() && end[i] ? *end[i] : (st > 0 ? dim : -dim - 1));
    axes.push_back(static_cast<int64_t>(i));
    steps.push_back(st);
  }
  AddSlice(e, c.name(), c.in[0], c.out[0], starts, ends, axes, steps);
}

void ConvertSliceAxis(Exporter& e, const NodeCtx& c) {
  const int64_t axis = Axis(c.params.Get<int>("axis"), c.in_shapes[0].ndim());
  const int64_t begin = c.params.Get<int64_t>("begin");
  const int64_t end = c.params.IsNone("end") ? c.in_shapes[0][static_cast<int>(axis)] : c.params.Get<int64_t>("end");
  AddSlice(e, c.name(), c.in[0], c.out[0], {begin}, {end}, {axis}, {1});
}

void ConvertSliceChannel(Exporter& e, const NodeCtx& c) {
  const int ndim = c.in_shapes[0].ndim();
  const int64_t axis = Axis(c.params.Get<int>("axis"), ndim);
  const bool squeeze = c.params.Get<bool>("squeeze_axis");
  const int64_t parts = static_cast<int64_t>(c.out.size());
  std::vector<std::string> pieces = c.out;
  if (squeeze)
    for (auto& p : pieces) p = e.Fresh(p + "_unsqueezed");
  const std::vector<int64_t> split(parts, c.in_shapes[0][static_cast<int>(axis)] / parts);
  NodeProto* n = nullptr;
  if (e.opset() >= 13) {
    n = e.AddNode("Split", c.name(), {c.in[0], e.ConstInt64(c.name() + "_split", split)}, pieces);
  } else {
    n = e.AddNode("Split", c.name(), {c.in[0]}, pieces);
    Exporter::SetInts(n, "split", split);
  }
  Exporter::SetInt(n, "axis", axis);
  if (!squeeze) return;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (e.opset() >= 13) {
      e.AddNode("Squeeze", c.name(), {pieces[i], e.ConstInt64(c.name() + "_axes", {axis})}, {c.out[i]});
    } else {
      Exporter::SetInts(e.AddNode("Squeeze", c.name(), {pieces[i]}, {c.out[i]}), "axes", {axis});
    }
  }
}

// Ops whose output is the input reshaped: the inferred output shape is the ONNX shape.
void ConvertToInferredShape(Exporter& e, const NodeCtx& c) {
  e.AddNode("Reshape", c.name(), {c.in[0], e.ConstInt64(c.name() + "_shape", Dims(c.out_shapes[0]))}, {c.out[0]});
}

void ConvertFlatten(Exporter& e, const NodeCtx& c) {
  Exporter::SetInt(e.AddNode("Flatten", c.name(), {c.in[0]}, {c.out[0]}), "axis", 1);
}

void ConvertTranspose(Exporter& e, const NodeCtx& c) {
  std::vector<int64_t> perm = Dims(c.params.Get<TShape>("axes"));
  const int ndim = c.in_shapes[0].ndim();
  if (perm.empty())
    for (int i = ndim - 1; i >= 0; --i) perm.push_back(i);
  for (auto& p : perm) p = Axis(p, ndim);
  Exporter::SetInts(e.AddNode("Transpose", c.name(), {c.in[0]}, {c.out[0]}), "perm", perm);
}

void ConvertConcat(Exporter& e, const NodeCtx& c) {
  Exporter::SetInt(e.AddNode("Concat", c.name(), c.in, {c.out[0]}), "axis",
                   Axis(c.params.Get<int>("dim"), c.in_shapes[0].ndim()));
}

void ConvertCrop(Exporter& e, const NodeCtx& c) {
  const TShape& in = c.in_shapes[0];
  const TShape& out = c.out_shapes[0];
  int64_t y = 0, x = 0;
  if (c.params.Get<bool>("center_crop")) {
    y = (in[2] - out[2]) / 2;
    x = (in[3] - out[3]) / 2;
  } else {
    const TShape offset = c.params.Get<TShape>("offset");
    y = offset[0];
    x = offset[1];
  }
  AddSlice(e, c.name(), c.in[0], c.out[0], {y, x}, {y + out[2], x + out[3]}, {2, 3}, {1, 1});
}

void ConvertUpSampling(Exporter& e, const NodeCtx& c) {
  if (c.params.Str("sample_type") != "nearest") throw ParamError("sample_type=" + c.params.Str("sample_type"));
  if (c.in.size() != 1) throw ParamError("more than one input");
  const float s = static_cast<float>(c.params.Get<int>("scale"));
  const std::string scales = e.ConstFloat(c.name() + "_scales", {1, 1, s, s}, TShape({4}));
  // roi is unused by nearest resizing, but an input ONNX requires before opset 13.
  const std::string roi = e.opset() >= 13 ? "" : e.ConstFloat(c.name() + "_roi", {}, TShape({0}));
  NodeProto* n = e.AddNode("Resize", c.name(), {c.in[0], roi, scales}, {c.out[0]});
  Exporter::SetString(n, "mode", "nearest");
  Exporter::SetString(n, "coordinate_transformation_mode", "asymmetric");
  Exporter::SetString(n, "nearest_mode", "floor");
}

void ConvertClip(Exporter& e, const NodeCtx& c) {
  e.AddNode("Clip", c.name(),
            {c.in[0], e.ScalarFloat(c.name() + "_min", c.params.Get<float>("a_min")),
             e.ScalarFloat(c.name() + "_max", c.params.Get<float>("a_max"))},
            {c.out[0]});
}

void ConvertPad(Exporter& e, const NodeCtx& c) {
  const std::vector<int64_t> width = Dims(c.params.Get<TShape>("pad_width"));
  const size_t ndim = width.size() / 2;
  std::vector<int64_t> pads(width.size());
  for (size_t i = 0; i < ndim; ++i) {
    pads[i] = width[2 * i];
    pads[i + ndim] = width[2 * i + 1];
  }
  std::string mode = c.params.Str("mode");
  if (mode != "constant" && mode != "edge" && mode != "reflect") throw ParamError("mode=" + mode);
  std::vector<std::string> inputs{c.in[0], e.ConstInt64(c.name() + "_pads", pads)};
  if (mode == "constant")
    inputs.push_back(e.ScalarFloat(c.name() + "_value", static_cast<float>(c.params.Get<double>("constant_value"))));
  Exporter::SetString(e.AddNode("Pad", c.name(), inputs, {c.out[0]}), "mode", mode);
}

void ConvertL2Normalization(Exporter& e, const NodeCtx& c) {
  const std::string mode = c.params.Str("mode");
  const int ndim = c.in_shapes[0].ndim();
  std::vector<int64_t> axes;
  if (mode == "channel") axes = {1};
  for (int i = mode == "instance" ? 1 : 2; mode != "channel" && i < ndim; ++i) axes.push_back(i);
  // x / sqrt(sum(x^2) + eps): ONNX's LpNormalization has no eps.
  const std::string squares = e.Chain("Mul", c.name(), {c.in[0], c.in[0]});
  const std::string sum = e.Reduce("ReduceSum", c.name(), squares, axes, true);
  const std::string plus = e.Chain("Add", c.name(), {sum, e.ScalarFloat(c.name() + "_eps", c.params.Get<float>("eps"))});
  const std::string norm = e.Chain("Sqrt", c.name(), {plus});
  e.AddNode("Div", c.name(), {c.in[0], norm}, {c.out[0]});
}

// mean / sum / max / min / prod over MXNet's axis (None: all; exclude: the others).
Converter ReduceConverter(const std::string& op_type) {
  return [op_type](Exporter& e, const NodeCtx& c) {
    const int ndim = c.in_shapes[0].ndim();
    std::set<int64_t> named;
    if (!c.params.IsNone("axis"))
      for (int64_t a : Dims(c.params.Get<TShape>("axis"))) named.insert(Axis(a, ndim));
    std::vector<int64_t> axes;
    for (int i = 0; i < ndim; ++i) {
      const bool in = c.params.IsNone("axis") || named.count(i);
      if (in != (c.params.Get<bool>("exclude") && !c.params.IsNone("axis"))) axes.push_back(i);
    }
    const std::string out = e.Reduce(op_type, c.name(), c.in[0], axes, c.params.Get<bool>("keepdims"));
    e.AddNode("Identity", c.name(), {out}, {c.out[0]});
  };
}

Converter Simple(const std::string& op_type) {
  return [op_type](Exporter& e, const NodeCtx& c) { e.AddNode(op_type, c.name(), c.in, {c.out[0]}); };
}

// x op scalar (or scalar op x when `reversed`).
Converter ScalarConverter(const std::string& op_type, bool reversed) {
  return [op_type, reversed](Exporter& e, const NodeCtx& c) {
    const std::string s = e.ScalarFloat(c.name() + "_scalar", c.params.Get<float>("scalar"));
    e.AddNode(op_type, c.name(), reversed ? std::vector<std::string>{s, c.in[0]} : std::vector<std::string>{c.in[0], s},
              {c.out[0]});
  };
}

void ConvertLRN(Exporter& e, const NodeCtx& c) {
  NodeProto* n = e.AddNode("LRN", c.name(), {c.in[0]}, {c.out[0]});
  Exporter::SetFloat(n, "alpha", c.params.Get<float>("alpha"));
  Exporter::SetFloat(n, "beta", c.params.Get<float>("beta"));
  Exporter::SetFloat(n, "bias", c.params.Get<float>("knorm"));
  Exporter::SetInt(n, "size", c.params.Get<int64_t>("nsize"));
}

void ConvertInstanceNorm(Exporter& e, const NodeCtx& c) {
  Exporter::SetFloat(e.AddNode("InstanceNormalization", c.name(), c.in, {c.out[0]}), "epsilon",
                     c.params.Get<float>("eps"));
}

void ConvertExpandDims(Exporter& e, const NodeCtx& c) {
  const int64_t axis = Axis(c.params.Get<int>("axis"), c.in_shapes[0].ndim() + 1);
  if (e.opset() >= 13) e.AddNode("Unsqueeze", c.name(), {c.in[0], e.ConstInt64(c.name() + "_axes", {axis})}, {c.out[0]});
  else Exporter::SetInts(e.AddNode("Unsqueeze", c.name(), {c.in[0]}, {c.out[0]}), "axes", {axis});
}

const std::map<std::string, Converter>& Converters() {
  static const std::map<std::string, Converter> kTable = [] {
    std::map<std::string, Converter> t;
    t["Convolution"] = ConvertConvolution;
    t["Deconvolution"] = ConvertDeconvolution;
    t["BatchNorm"] = ConvertBatchNorm;
    t["Pooling"] = ConvertPooling;
    t["FullyConnected"] = ConvertFullyConnected;
    t["Activation"] = [](Exporter& e, const NodeCtx& c) { ConvertActivationType(e, c, c.params.Str("act_type")); };
    t["LeakyReLU"] = ConvertLeakyReLU;
    t["softmax"] = [](Exporter& e, const NodeCtx& c) { ConvertSoftmax(e, c, "Softmax"); };
    t["log_softmax"] = [](Exporter& e, const NodeCtx& c) { ConvertSoftmax(e, c, "LogSoftmax"); };
    t["SoftmaxOutput"] = ConvertSoftmaxOutput;
    t["SoftmaxActivation"] = ConvertSoftmaxActivation;
    t["Concat"] = ConvertConcat;
    t["slice"] = ConvertSlice;
    t["slice_axis"] = ConvertSliceAxis;
    t["SliceChannel"] = ConvertSliceChannel;
    t["Reshape"] = ConvertToInferredShape;
    t["reshape_like"] = ConvertToInferredShape;
    t["squeeze"] = ConvertToInferredShape;
    t["Flatten"] = ConvertFlatten;
    t["transpose"] = ConvertTranspose;
    t["expand_dims"] = ConvertExpandDims;
    t["Crop"] = ConvertCrop;
    t["UpSampling"] = ConvertUpSampling;
    t["clip"] = ConvertClip;
    t["Pad"] = ConvertPad;
    t["L2Normalization"] = ConvertL2Normalization;
    t["LRN"] = ConvertLRN;
    t["InstanceNorm"] = ConvertInstanceNorm;
    t["mean"] = ReduceConverter("ReduceMean");
    t["sum"] = ReduceConverter("ReduceSum");
    t["max"] = ReduceConverter("ReduceMax");
    t["min"] = ReduceConverter("ReduceMin");
    t["prod"] = ReduceConverter("ReduceProd");
    for (const char* identity : {"Dropout", "_copy", "BlockGrad"}) t[identity] = Simple("Identity");
    const std::pair<const char*, const char*> kElementwise[] = {
        {"elemwise_add", "Add"}, {"elemwise_sub", "Sub"}, {"elemwise_mul", "Mul"}, {"elemwise_div", "Div"},
        {"broadcast_add", "Add"}, {"broadcast_sub", "Sub"}, {"broadcast_mul", "Mul"}, {"broadcast_div", "Div"},
        {"broadcast_maximum", "Max"}, {"broadcast_minimum", "Min"}, {"broadcast_power", "Pow"},
        {"_maximum", "Max"}, {"_minimum", "Min"}, {"_power", "Pow"}, {"add_n", "Sum"},
        {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"exp", "Exp"}, {"log", "Log"},
        {"sqrt", "Sqrt"}, {"abs", "Abs"}, {"negative", "Neg"}, {"reciprocal", "Reciprocal"},
        {"floor", "Floor"}, {"ceil", "Ceil"}, {"sin", "Sin"}, {"cos", "Cos"}, {"tan", "Tan"},
        {"erf", "Erf"}, {"softsign", "Softsign"}, {"sign", "Sign"},
    };
    for (const auto& [mx, onnx_op] : kElementwise) t[mx] = Simple(onnx_op);
    const std::tuple<const char*, const char*, bool> kScalar[] = {
        {"_plus_scalar", "Add", false}, {"_minus_scalar", "Sub", false}, {"_rminus_scalar", "Sub", true},
        {"_mul_scalar", "Mul", false},  {"_div_scalar", "Div", false},   {"_rdiv_scalar", "Div", true},
        {"_power_scalar", "Pow", false}, {"_rpower_scalar", "Pow", true}, {"_maximum_scalar", "Max", false},
        {"_minimum_scalar", "Min", false},
    };
    for (const auto& [mx, onnx_op, reversed] : kScalar) t[mx] = ScalarConverter(onnx_op, reversed);
    t["hard_sigmoid"] = [](Exporter& e, const NodeCtx& c) {
      NodeProto* n = e.AddNode("HardSigmoid", c.name(), {c.in[0]}, {c.out[0]});
      Exporter::SetFloat(n, "alpha", c.params.Get<float>("alpha"));
      Exporter::SetFloat(n, "beta", c.params.Get<float>("beta"));
    };
    return t;
  }();
  return kTable;
}

// ---- the graph ---------------------------------------------------------------------------

std::string Exporter::Run() {
  const Graph g(model_.symbol);
  std::map<std::string, TShape> known = input_shapes_;
  for (const auto* arrays : {&model_.args, &model_.aux})
    for (const auto& [name, a] : *arrays) known.emplace(name, a.shape());
  const ShapeInferResult shapes = InferShapePartial(g, known);
  const auto& entry_shapes = shapes.entry_shapes;

  // Every op without an ONNX form, and then every node whose settings have none, at once.
  std::vector<std::string> unsupported;
  for (const auto& info : g.nodes())
    if (!info.node->is_variable() && !Converters().count(info.node->attrs.op->name))
      unsupported.push_back(StrCat(info.node->name(), " (", info.node->attrs.op->name, ")"));
  if (!unsupported.empty())
    throw ParamError(StrCat("ONNX export: ", unsupported.size(), " node(s) have no ONNX form: ", JoinNames(unsupported)));

  model_proto_.set_ir_version(opset_ >= 15 ? 8 : 7);
  model_proto_.set_producer_name("symbind");
  auto* op = model_proto_.add_opset_import();
  op->set_domain("");
  op->set_version(opset_);
  graph()->set_name(model_.symbol.NumOutputs() ? EntryName(model_.symbol.outputs()[0]) : "symbind");

  // Tensor names: variables keep theirs, op outputs are named as ListOutputs names them.
  std::vector<std::string> tensor(g.num_entries());
  std::set<uint32_t> used_vars;
  for (uint32_t nid : g.arg_nodes()) {
    const std::string& name = g.node(nid).node->name();
    const std::string& tname = tensor[g.entry_id(nid, 0)] = Fresh(name);
    for (const auto* arrays : {&model_.args, &model_.aux})
      if (arrays->count(name)) params_[tname] = arrays->at(name);
  }
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const auto& info = g.node(nid);
    if (info.node->is_variable()) continue;
    for (uint32_t i = 0; i < g.num_node_outputs(nid); ++i)
      tensor[g.entry_id(nid, i)] = Fresh(EntryName(NodeEntry{info.node, i}));
  }
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const auto& info = g.node(nid);
    if (info.node->is_variable()) continue;
    const std::string& op_name = info.node->attrs.op->name;
    try {
      NodeCtx c{*info.node, NodeParams(info.node->attrs), {}, {}, {}, {}};
      size_t num_inputs = info.inputs.size();
      if (op_name == "SoftmaxOutput") num_inputs = 1;  // the label is training-only
      for (size_t i = 0; i < num_inputs; ++i) {
        const uint32_t eid = g.entry_id(info.inputs[i]);
        c.in.push_back(tensor[eid]);
        c.in_shapes.push_back(entry_shapes[eid]);
        if (g.node(info.inputs[i].node_id).node->is_variable()) used_vars.insert(info.inputs[i].node_id);
        if (!entry_shapes[eid].is_known())
          throw ShapeError(StrCat("the shape of input ", tensor[eid], " is not known; give the data shapes (--shape)"));
      }
      const uint32_t num_out = op_name == "BatchNorm" && !c.params.Get<bool>("output_mean_var") ? 1 : g.num_node_outputs(nid);
      for (uint32_t i = 0; i < num_out; ++i) {
        c.out.push_back(tensor[g.entry_id(nid, i)]);
        c.out_shapes.push_back(entry_shapes[g.entry_id(nid, i)]);
      }
      Converters().at(op_name)(*this, c);
    } catch (const Error& err) {
      unsupported.push_back(StrCat(info.node->name(), " (", op_name, "): ", err.what()));
    }
  }
  if (!unsupported.empty())
    throw ParamError(StrCat("ONNX export: ", unsupported.size(), " node(s) have no ONNX form: ", JoinNames(unsupported)));

  // Variables: parameters become initializers, the rest graph inputs.
  auto value_info = [&](onnx::ValueInfoProto* v, const std::string& name, const TShape& shape, DType dtype) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx_io::OnnxElemType(dtype));
    auto* s = t->mutable_shape();
    for (int i = 0; i < shape.ndim(); ++i) s->add_dim()->set_dim_value(shape[i]);
  };
  // Parameters the converters replaced (a fixed gamma, a transposed weight) are left out.
  std::set<std::string> referenced;
  for (const auto& n : graph()->node()) referenced.insert(n.input().begin(), n.input().end());
  std::vector<std::string> missing;
  for (uint32_t nid : g.arg_nodes()) {
    if (!used_vars.count(nid)) continue;
    const std::string& name = g.node(nid).node->name();
    const std::string& tname = tensor[g.entry_id(nid, 0)];
    if (const NDArray* param = Param(tname)) {
      if (referenced.count(tname)) onnx_io::ToTensorProto(*param, tname, graph()->add_initializer());
      continue;
    }
    const TShape& s = entry_shapes[g.entry_id(nid, 0)];
    if (!s.is_known()) missing.push_back(name);
    else value_info(graph()->add_input(), tname, s, DType::kFloat32);
  }
  if (!missing.empty())
    throw ShapeError(StrCat("ONNX export: no shape for input(s) ", JoinNames(missing), ": give --shape NAME=D0,D1,..."));

  std::set<std::string> outputs;
  for (const auto& h : g.heads()) {
    const uint32_t eid = g.entry_id(h);
    std::string name = tensor[eid];
    if (g.node(h.node_id).node->is_variable() || !outputs.insert(name).second) {
      const std::string copy = Fresh(name + "_output");
      AddNode("Identity", name, {name}, {copy});
      name = copy;
      outputs.insert(name);
    }
    value_info(graph()->add_output(), name, entry_shapes[eid], DType::kFloat32);
  }

  // check_model with full_check, as ONNX's Python API runs it: the checker, then strict shape
  // inference with type checks.
  try {
    onnx::checker::check_model(model_proto_);
    onnx::ModelProto inferred = model_proto_;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& err) {
    throw Error(StrCat("ONNX export: the model fails ONNX's checker: ", err.what()));
  }
  std::string bytes;
  if (!model_proto_.SerializeToString(&bytes)) throw IOError("ONNX export: the model cannot be serialized (over 2 GB?)");
  return bytes;
}

}  // namespace

std::string SaveOnnxToString(const Model& model, const OnnxExportOptions& options) {
  return Exporter(model, options).Run();
}

void SaveOnnx(const std::string& path, const Model& model, const OnnxExportOptions& options) {
  const std::string bytes = SaveOnnxToString(model, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw IOError("cannot write " + path);
}

std::vector<std::string> OnnxExportedOps() { return onnx_io::SortedKeys(Converters()); }

}  // namespace symbind
