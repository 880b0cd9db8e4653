#include "input_roles.h"

#include <algorithm>
#include <map>

namespace symbind {

InputRole InputRoles::RoleOf(const std::string& name) const {
  auto in = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), name) != v.end(); };
  if (in(data)) return InputRole::kData;
  if (in(labels)) return InputRole::kLabel;
  if (in(parameters)) return InputRole::kParameter;
  throw Error(StrCat("'", name, "' is not an argument of the graph; arguments: ",
                     JoinNames([&] {
                       std::vector<std::string> all = data;
                       all.insert(all.end(), labels.begin(), labels.end());
                       all.insert(all.end(), parameters.begin(), parameters.end());
                       return all;
                     }())));
}

InputRoles ClassifyArguments(const Graph& g, const std::set<std::string>& known_parameters,
                             ParameterSource source) {
  const bool by_position = source == ParameterSource::kNamesOrGraphPosition && known_parameters.empty();
  struct Uses {
    bool only_loss_label = true;
    bool feeds_first_input = false;
  };
  std::map<uint32_t, Uses> uses;  // by variable node id
  for (auto& info : g.nodes()) {
    const Node& n = *info.node;
    if (n.is_variable()) continue;
    const auto names = n.attrs.op->ListArguments(n.attrs);
    for (size_t k = 0; k < info.inputs.size(); ++k) {
      const uint32_t src = info.inputs[k].node_id;
      if (!g.node(src).node->is_variable()) continue;
      Uses& u = uses[src];
      const bool is_label = n.attrs.op->is_loss && k < names.size() && names[k] == "label";
      u.only_loss_label = u.only_loss_label && is_label;
      u.feeds_first_input = u.feeds_first_input || k == 0;
    }
  }
  InputRoles roles;
  for (uint32_t id : g.arg_nodes()) {
    if (g.is_aux_node(id)) continue;
    const std::string& name = g.node(id).node->name();
    auto u = uses.find(id);
    // A head that is a bare variable is read by nobody but the caller: data.
    const bool used = u != uses.end();
    if (used && u->second.only_loss_label) roles.labels.push_back(name);
    else if (known_parameters.count(name)) roles.parameters.push_back(name);
    else if (by_position && used && !u->second.feeds_first_input)
      roles.parameters.push_back(name);
    else roles.data.push_back(name);
  }
  return roles;
}

}  // namespace symbind
