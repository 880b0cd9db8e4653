#include <symbind/vision/network.h>

#include <symbind/core/graph.h>
#include <symbind/core/input_roles.h>
#include <symbind/io/model_file.h>

#include <cctype>
#include <filesystem>
#include <set>

namespace symbind {
namespace vision {

Model LoadModelSpec(const std::string& spec) {
  SYMBIND_CHECK(!spec.empty(), "model: empty model name (give PREFIX,EPOCH, SYMBOL.json,PARAMS or MODEL.symbind)");
  const size_t comma = spec.rfind(',');
  if (comma == std::string::npos) {
    if (IsModelFile(spec)) return LoadModelFiles(spec);
    throw IOError("model '" + spec + "': not a .symbind file; name an MXNet checkpoint as PREFIX,EPOCH or a "
                  "symbol and its parameters as SYMBOL.json,PARAMS");
  }
  const std::string first = spec.substr(0, comma), second = spec.substr(comma + 1);
  SYMBIND_CHECK(!first.empty() && !second.empty(), "model '", spec, "': expected PREFIX,EPOCH or SYMBOL.json,PARAMS");
  bool is_epoch = second.size() <= 6;
  for (char c : second) is_epoch = is_epoch && std::isdigit(static_cast<unsigned char>(c));
  if (!is_epoch) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(first, ec))
      throw IOError("model '" + spec + "': '" + second + "' is not an epoch number and '" + first +
                    "' is not a symbol file: name an MXNet checkpoint as PREFIX,EPOCH or a symbol and its "
                    "parameters as SYMBOL.json,PARAMS");
    return LoadModelFiles(first, second);
  }
  return LoadCheckpointFiles(first, std::stoi(second));
}

Network::Network(Model model, const std::string& what, NetworkOptions options)
    : what_(what), model_(std::move(model)), options_(std::move(options)) {
  model_.args = ReadOnlyViews(model_.args);  // held by this network's predictors alone
  model_.aux = ReadOnlyViews(model_.aux);
  if (!options_.input_workspace) options_.input_workspace = std::make_shared<Workspace>();
  std::set<std::string> known;
  for (const auto& kv : model_.args) known.insert(kv.first);
  for (const auto& kv : model_.aux) known.insert(kv.first);
  const InputRoles roles = ClassifyArguments(Graph(model_.symbol), known);
  SYMBIND_CHECK(!roles.data.empty(), what_, ": the model has no data input (every argument has an array in its "
                "parameters)");
  SYMBIND_CHECK(roles.data.size() == 1, what_, ": expected a model with one data input, but ", roles.data.size(),
                " arguments have no array in its parameters (", JoinNames(roles.data),
                "): do the parameters belong to this symbol?");
  input_name_ = roles.data[0];
  loaded_ = true;
}

NDArray Network::Input(const TShape& shape) {
  SYMBIND_CHECK(loaded_, "network not loaded");
  auto it = predictors_.find(shape.dims());
  if (it == predictors_.end()) {
    PredictorOptions options;
    options.outputs = options_.outputs;
    options.workspace = options_.workspace;
    options.input_workspace = options_.input_workspace;
    it = predictors_.emplace(shape.dims(), Predictor(model_.symbol, model_.args, model_.aux,
                                                    {{input_name_, shape}}, options)).first;
  }
  current_ = &it->second;
  return current_->Input(input_name_);
}

const std::vector<NDArray>& Network::Forward() {
  Predictor& p = Current();
  p.Forward();
  return p.Outputs();
}

const std::vector<NDArray>& Network::Forward(const NDArray& data) {
  Input(data.shape());
  current_->SetInput(input_name_, data);
  return Forward();
}

Predictor& Network::Current() const {
  SYMBIND_CHECK(current_ != nullptr, what_, ": no input bound yet");
  return *current_;
}

const NDArray& Network::Output(const std::string& name) const { return Current().Output(name); }
const std::vector<NDArray>& Network::Outputs() const { return Current().Outputs(); }

const std::vector<std::string>& Network::output_names() const {
  static const std::vector<std::string> none;
  return current_ ? current_->output_names() : none;
}

}  // namespace vision
}  // namespace symbind
