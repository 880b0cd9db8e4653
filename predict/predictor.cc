#include "predictor.h"

#include <algorithm>

#include <symbind/io/model_file.h>
#include <symbind/ops/kernels/gemm_bf16.h>

#include "graph_rewrites.h"

namespace symbind {

namespace {
bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool IsQuantized(const NDArray& a) { return a.dtype() == DType::kInt8 || a.dtype() == DType::kUint8; }

// The variables every reader of which takes any dtype (Op::ReadsAnyDType: quantized operators'
// int8 weights, index inputs): bound with the dtype they have.
std::set<std::string> ReadInAnyDType(const Graph& g) {
  std::set<std::string> any, float_only;
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node& n = *g.node(nid).node;
    if (n.is_variable()) continue;
    const auto& inputs = g.node(nid).inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Node& in = *g.node(inputs[i].node_id).node;
      if (in.is_variable()) (n.attrs.op->ReadsAnyDType(n.attrs, i) ? any : float_only).insert(in.name());
    }
  }
  for (const std::string& name : float_only) any.erase(name);
  return any;
}

// Float32 arrays as they are (shared), and int8 or uint8 arrays named in `keep_dtype`; others
// converted to float32 once; unused names dropped.
std::map<std::string, NDArray> UsedAsFloat(const std::map<std::string, NDArray>& m,
                                           const std::vector<std::string>& used,
                                           const std::set<std::string>& keep_dtype) {
  std::map<std::string, NDArray> out;
  for (const std::string& name : used) {
    auto it = m.find(name);
    if (it == m.end()) continue;
    const NDArray& a = it->second;
    out[name] = a.dtype() == DType::kFloat32 || (IsQuantized(a) && keep_dtype.count(name)) ? a : a.AsType(DType::kFloat32);
  }
  return out;
}
}  // namespace

Symbol SelectOutputs(const Symbol& symbol, const std::vector<std::string>& names) {
  if (names.empty()) return symbol;
  const auto heads = symbol.ListOutputs();
  Symbol internals;
  std::vector<std::string> internal_names;
  std::vector<Symbol> picked;
  for (const std::string& name : names) {
    if (Contains(heads, name)) {
      picked.push_back(symbol[name]);
      continue;
    }
    if (internal_names.empty()) {
      internals = symbol.GetInternals();
      internal_names = internals.ListOutputs();
    }
    // An op node's name stands for its output "<name>_output", as MXNet's partial-output
    // predictor takes it.
    const std::string internal_name =
        Contains(internal_names, name) ? name : name + "_output";
    if (!Contains(internal_names, internal_name))
      throw Error(StrCat("no output named '", name, "'; outputs: ", JoinNames(heads),
                         "; internal outputs: ", JoinNames(internal_names)));
    picked.push_back(internals[internal_name]);
  }
  return picked.size() == 1 ? picked[0] : Symbol::Group(picked);
}

Predictor::Predictor(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                     const std::map<std::string, NDArray>& aux,
                     const std::map<std::string, TShape>& input_shapes,
                     const PredictorOptions& options)
    : symbol_(SelectOutputs(symbol, options.outputs)), options_(options) {
  if (options_.precision == Precision::kBfloat16 && !Bf16Available()) throw Error("Predictor: " + Bf16Unavailable());
  const Graph graph(symbol_);
  // Only a quantized graph has int8 or uint8 parameters to keep: other binds skip the walk.
  const auto quantized = [](const std::map<std::string, NDArray>& m) {
    return std::any_of(m.begin(), m.end(), [](const auto& kv) { return IsQuantized(kv.second); });
  };
  const std::set<std::string> keep_dtype = quantized(args) || quantized(aux) ? ReadInAnyDType(graph) : std::set<std::string>{};
  PassesResult passes = RunGraphPasses(symbol_, UsedAsFloat(args, graph.ListArguments(), keep_dtype),
                                       UsedAsFloat(aux, graph.ListAuxiliaryStates(), keep_dtype), options_.disabled_passes);
  symbol_ = std::move(passes.symbol);
  args_ = std::move(passes.args);
  aux_ = std::move(passes.aux);
  rewritten_ = std::move(passes.rewritten);
  Bind(input_shapes);
}

std::set<std::string> DisabledPasses(const PassFlags& flags) {
  std::set<std::string> disabled;
  if (flags.no_fold) disabled.insert("fold_batch_norm");
  if (flags.no_fuse)
    disabled.insert({"fuse_activations", "fuse_inverted_residuals", "fuse_residual_adds", "fuse_quantized_activations",
                     "fuse_quantized_inverted_residuals"});
  if (flags.no_fuse_blocks) disabled.insert({"fuse_inverted_residuals", "fuse_quantized_inverted_residuals"});
  if (flags.no_fuse_residuals) disabled.insert("fuse_residual_adds");
  return disabled;
}

const std::vector<std::string>& Predictor::rewritten(const std::string& pass) const {
  static const std::vector<std::string> none;
  auto it = rewritten_.find(pass);
  return it == rewritten_.end() ? none : it->second;
}

std::vector<std::string> Predictor::RewrittenBy(std::initializer_list<const char*> passes) const {
  std::vector<std::string> names;
  for (const char* pass : passes) {
    const auto& r = rewritten(pass);
    names.insert(names.end(), r.begin(), r.end());
  }
  return names;
}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;
Predictor::~Predictor() = default;

void Predictor::Bind(const std::map<std::string, TShape>& input_shapes) {
  Graph graph(symbol_);
  std::set<std::string> parameter_names;
  for (auto& kv : args_) parameter_names.insert(kv.first);
  // Roles from what the caller gave: the parameters' names, the inputs' shapes; the rest is missing.
  InputRoles roles = ClassifyArguments(graph, parameter_names, ParameterSource::kNamesOnly);

  for (auto& [name, shape] : input_shapes) {
    if (Contains(roles.labels, name)) continue;  // a label's shape is inferred; accepted
    // The message names the likely inputs: without parameters, graph position tells them.
    if (!Contains(roles.data, name))
      throw Error(StrCat("'", name, "' is given an input shape but is not an input of the graph",
                         Contains(roles.parameters, name) ? " (it is a parameter)" : "",
                         "; inputs: ", JoinNames(ClassifyArguments(graph, parameter_names).data)));
  }
  std::vector<std::string> missing, inputs;
  for (auto& name : roles.data) (input_shapes.count(name) ? inputs : missing).push_back(name);
  const std::vector<std::string> aux_names = graph.ListAuxiliaryStates();
  for (auto& name : aux_names)
    if (!aux_.count(name)) missing.push_back(name);
  if (!missing.empty() && !options_.allow_missing)
    throw Error(StrCat("arguments not in the parameters and not given as inputs: ", JoinNames(missing),
                       args_.empty() && aux_.empty() ? " (no parameters were given)" : "",
                       "; give the parameters and the inputs' shapes, or allow missing arguments "
                       "(--allow-missing, PredictorOptions::allow_missing) to fill them from N(0,1)"));
  filled_ = missing;
  roles.data = inputs;
  for (auto& name : missing)
    if (!Contains(aux_names, name)) roles.parameters.push_back(name);
  roles_ = std::move(roles);

  // SimpleBind allocates the inputs (zeroed) with everything else, after one memory check.
  BindOptions bind_options;
  bind_options.seed = options_.seed;
  bind_options.grads = GradPolicy::kNone;
  bind_options.workspace = options_.workspace;
  bind_options.input_workspace = options_.input_workspace;
  for (auto& name : roles_.data) {
    bind_options.shapes[name] = input_shapes.at(name);
    bind_options.zeroed.insert(name);
  }
  try {
    exec_ = SimpleBind(symbol_, Context::CPU(), args_, {}, {}, aux_, bind_options);
    exec_->set_precision(options_.precision);
    exec_->set_compact_weights(options_.compact_weights);
    exec_->set_int8_even_weights(options_.int8_even_weights);
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(OutOfMemoryMessage("Predictor: binding"));
  }
  output_names_ = symbol_.ListOutputs();
}

Executor& Predictor::Bound(const char* call) const {
  if (!exec_)
    throw Error(StrCat("Predictor::", call, ": this predictor was moved from and holds no model "
                       "(use the predictor it was moved into)"));
  return *exec_;
}

Predictor Predictor::Reshape(const std::map<std::string, TShape>& input_shapes) const {
  Bound("Reshape");
  Predictor p;
  p.symbol_ = symbol_;
  p.args_ = args_;
  p.aux_ = aux_;
  p.options_ = options_;
  p.rewritten_ = rewritten_;
  p.Bind(input_shapes);
  return p;
}

NDArray Predictor::Input(const std::string& name) const {
  const Executor& exec = Bound("Input");
  if (!Contains(roles_.data, name))
    throw Error(StrCat("'", name, "' is not an input of the predictor; inputs: ", JoinNames(roles_.data)));
  const auto& names = exec.graph().ListArguments();
  return exec.arg_arrays()[std::find(names.begin(), names.end(), name) - names.begin()];
}

void Predictor::SetInput(const std::string& name, const NDArray& value) {
  NDArray dst = Input(name);
  if (value.shape() != dst.shape())
    throw ShapeError(StrCat("input '", name, "' has shape ", dst.shape(), " but the value given has shape ",
                            value.shape(), " (Reshape the predictor for other shapes)"));
  value.CopyTo(&dst);
}

void Predictor::Forward() { Bound("Forward").Forward(false); }

const std::vector<NDArray>& Predictor::Outputs() const { return Bound("Outputs").outputs(); }

const NDArray& Predictor::Output(size_t index) const {
  const auto& outputs = Bound("Output").outputs();
  if (index >= outputs.size())
    throw Error(StrCat("output ", index, " requested but the predictor has ", outputs.size(),
                       " outputs: ", JoinNames(output_names_)));
  return outputs[index];
}

const NDArray& Predictor::Output(const std::string& name) const {
  const auto& outputs = Bound("Output").outputs();
  auto it = std::find(output_names_.begin(), output_names_.end(), name);
  if (it == output_names_.end())
    throw Error(StrCat("no output named '", name, "'; outputs: ", JoinNames(output_names_)));
  return outputs[it - output_names_.begin()];
}

Predictor LoadPredictor(const std::string& prefix, int epoch,
                        const std::map<std::string, TShape>& input_shapes,
                        const PredictorOptions& options) {
  const Model model = LoadCheckpointFiles(prefix, epoch);
  return Predictor(model.symbol, model.args, model.aux, input_shapes, options);
}

std::map<std::string, NDArray> ReadOnlyViews(const std::map<std::string, NDArray>& arrays) {
  std::map<std::string, NDArray> views;
  for (const auto& [name, array] : arrays) views.emplace(name, ReadOnlyView(array, "parameter '" + name + "'"));
  return views;
}

}  // namespace symbind
