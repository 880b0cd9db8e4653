#include "invoke.h"

#include <map>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/core/symbol.h>

#include "kernel_call.h"

namespace symbind {

namespace {

// Variable names no op's auto-created inputs ("<node>_<argument>") can take.
std::string InputVariable(size_t i) { return StrCat("\x01input", i); }

constexpr const char* kNodeName = "imperative";

std::string Where(const std::string& op_name) { return StrCat("Invoke('", op_name, "')"); }

// Where new outputs live, as MXNet places them: with the first input, else on the op's `ctx`
// parameter (creation ops); a GPU context computes on the CPU and its arrays report cpu(id).
Context OutputContext(const std::vector<const NDArray*>& inputs, const KwArgs& params) {
  if (!inputs.empty()) return inputs[0]->ctx();
  Context c;
  auto it = params.find("ctx");
  if (it == params.end() || !Context::Parse(it->second, &c)) return Context::CPU();
  return c.dev_type == Context::kGPU ? Context::CPU(c.dev_id) : c;
}

}  // namespace

std::vector<NDArray> Invoke(const std::string& op_name, KwArgs params, const InvokeInputs& inputs,
                            const std::vector<NDArray>& outputs, const InvokeOptions& options) {
  const Op& op = OpRegistry::Global().Get(op_name);
  // As in MXNet, an op creating an array (no inputs) takes its shape from the output given.
  if (inputs.positional.empty() && inputs.named.empty() && !outputs.empty() &&
      !outputs[0].is_none() && op.schema->Find("shape") && !params.count("shape"))
    params["shape"] = outputs[0].shape().ToString();

  std::vector<const NDArray*> arrays;
  std::vector<Symbol> positional;
  std::vector<std::pair<std::string, Symbol>> named;
  for (const NDArray& a : inputs.positional) {
    positional.push_back(Symbol::Variable(InputVariable(arrays.size())));
    arrays.push_back(&a);
  }
  for (const auto& kv : inputs.named) {
    named.emplace_back(kv.first, Symbol::Variable(InputVariable(arrays.size())));
    arrays.push_back(&kv.second);
  }
  std::map<std::string, size_t> index_of;
  std::map<std::string, TShape> shapes;
  std::map<std::string, DType> types;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i]->is_none())
      throw Error(StrCat(Where(op_name), ": input ", i, " is an empty NDArray"));
    index_of[InputVariable(i)] = i;
    shapes[InputVariable(i)] = arrays[i]->shape();
    types[InputVariable(i)] = arrays[i]->dtype();
  }

  const Graph graph(Symbol::Create(op.name, kNodeName, params, named, positional));
  const uint32_t node_id = static_cast<uint32_t>(graph.num_nodes() - 1);
  const Graph::NodeInfo& node = graph.node(node_id);
  const NodeAttrs& attrs = node.node->attrs;

  // Symbol::Create has checked the input count and names; every input is one of ours unless
  // the op created it (an argument not given).
  std::vector<NDArray> node_inputs;
  std::vector<size_t> input_source;
  for (const Graph::EntryRef& e : node.inputs) {
    const std::string& var = graph.node(e.node_id).node->name();
    auto it = index_of.find(var);
    if (it == index_of.end())
      throw Error(StrCat(Where(op_name), ": input '", var.substr(std::string(kNodeName).size() + 1),
                         "' not given; the op takes ", JoinNames(op.ListArguments(attrs)),
                         op.ListAuxStates(attrs).empty() ? "" : " and aux states ",
                         JoinNames(op.ListAuxStates(attrs))));
    node_inputs.push_back(*arrays[it->second]);
    input_source.push_back(it->second);
  }
  const std::vector<TShape> entry_shapes = InferEntryShapes(graph, shapes);
  // An op whose output shapes depend on its inputs' values (boolean_mask) reads them here.
  const std::vector<TShape> value_shapes =
      op.value_dependent_shape ? op.value_dependent_shape(attrs, node_inputs) : std::vector<TShape>{};
  const std::vector<int> entry_types = InferEntryTypes(graph, types);
  const uint32_t num_outputs = graph.num_node_outputs(node_id);
  const size_t visible = static_cast<size_t>(op.NumVisibleOutputs(attrs));
  if (outputs.size() > visible)
    throw Error(StrCat(Where(op_name), ": ", outputs.size(), " output arrays given, the op has ",
                       visible));

  std::vector<NDArray> node_outputs, results;
  std::vector<OpReq> req(num_outputs, OpReq::kWrite);
  const Context out_ctx = OutputContext(arrays, params);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    const TShape& inferred_shape = entry_shapes[graph.entry_id(node_id, i)];
    TShape shape = inferred_shape;
    if (i < value_shapes.size() && !UnifyShapes(value_shapes[i], inferred_shape, &shape))
      throw ShapeError(StrCat(Where(op_name), ": output ", i, " has shape ", value_shapes[i].ToString(),
                              " for these input values, which contradicts the inferred ",
                              inferred_shape.ToString()));
    if (!shape.is_known())
      throw ShapeError(StrCat(Where(op_name), ": the shape of output ", i,
                              " cannot be inferred from the inputs (got ", shape.ToString(), ")"));
    const NDArray* given = i < outputs.size() && !outputs[i].is_none() ? &outputs[i] : nullptr;
    // An op with nothing to infer from (a sampler without dtype) takes the output's dtype.
    const int inferred = entry_types[graph.entry_id(node_id, i)];
    const DType dtype = inferred >= 0 ? static_cast<DType>(inferred)
                        : given       ? given->dtype()
                                      : DType::kFloat32;
    if (given && given->shape() != shape)
      throw ShapeError(StrCat(Where(op_name), ": output ", i, " has shape ", shape.ToString(),
                              ", the array given has ", given->shape().ToString()));
    if (given && given->dtype() != dtype)
      throw TypeError(StrCat(Where(op_name), ": output ", i, " has dtype ", DTypeName(dtype),
                         ", the array given has ", DTypeName(given->dtype())));
    bool aliased = false;
    for (const NDArray& in : node_inputs) aliased |= given && given->SharesStorageWith(in);
    node_outputs.push_back(given && !aliased ? *given : NDArray(shape, dtype, out_ctx));
  }

  OpContext ctx;
  ctx.seed = options.seed;
  ctx.is_train = options.is_train;
  // A failure while computing is kept for the caller when it asks (compute_error): the outputs
  // are returned as they are, neither recorded nor copied into the arrays given.
  bool computed = true;
  try {
    CallForward(op, ctx, attrs, node_inputs, req, node_outputs);
  } catch (...) {
    if (!options.compute_error) throw;
    *options.compute_error = std::current_exception();
    computed = false;
  }
  if (computed && options.record) {
    options.record->attrs = attrs;
    options.record->inputs = node_inputs;
    options.record->input_source = input_source;
    options.record->outputs = node_outputs;
  }

  for (size_t i = 0; i < visible; ++i) {
    const bool given = i < outputs.size() && !outputs[i].is_none();
    if (computed && given && !outputs[i].SharesStorageWith(node_outputs[i])) {
      NDArray dst = outputs[i];
      node_outputs[i].CopyTo(&dst);
    }
    results.push_back(given ? outputs[i] : node_outputs[i]);
  }
  return results;
}

}  // namespace symbind
