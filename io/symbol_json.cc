#include "symbol_json.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include <symbind/core/graph.h>

#include "file_kind.h"
#include "ndarray_file.h"
#include "regular_file.h"

namespace symbind {

namespace {

using json = nlohmann::json;

constexpr int kLegacyVersion = 800;    // 0.8.0: no mxnet_version in the file
constexpr int kUpgradeVersion = 900;   // files before 0.9.0 lack aux-state inputs
constexpr int kInitializerVersion = 904;  // files before 0.9.4 lack the inputs' "__init__"
constexpr int kMaxJSONDepth = 64;      // symbol files nest 5 deep; refuse absurd nesting
const char* const kHiddenKeys[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring",
                                   "mirror_stage"};

[[noreturn]] void Fail(const std::string& what) { throw IOError("symbol JSON: " + what); }

std::string NodeWhere(size_t i, const std::string& name) {
  return StrCat("node ", i, " '", name, "'");
}

bool IsWrapped(const std::string& k) {
  return k.size() > 4 && k.compare(0, 2, "__") == 0 && k.compare(k.size() - 2, 2, "__") == 0;
}

// Refuses nesting deeper than kMaxJSONDepth before nlohmann's recursive parser sees the text.
// A linear pre-scan: nlohmann's callback parser, the other way to bound depth, rescans the
// parent container at every object end, which made large files quadratic.
void CheckJSONDepth(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        Fail(StrCat("nesting deeper than ", kMaxJSONDepth, " levels (at byte ", i, ")"));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

json ParseText(const std::string& text) {
  CheckJSONDepth(text);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    Fail(StrCat("malformed JSON at byte ", e.byte, ": ", e.what()));
  } catch (const json::exception& e) {
    // Not only syntax: a number like 2E400 overflows (out_of_range), found by fuzzing.
    Fail(StrCat("malformed JSON: ", e.what()));
  }
}

int VersionOf(const json& root) {
  if (!root.contains("attrs")) return kLegacyVersion;
  const json& attrs = root["attrs"];
  if (!attrs.is_object() || !attrs.contains("mxnet_version")) return kLegacyVersion;
  const json& v = attrs["mxnet_version"];
  if (!v.is_array() || v.size() != 2 || !v[1].is_number_integer())
    Fail("attrs.mxnet_version must be [\"int\", <version>]; got " + v.dump());
  return v[1].get<int>();
}

// A string-valued attribute; numbers and booleans are accepted in their JSON spelling.
std::string AttrString(const json& v, const std::string& where, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  Fail(StrCat(where, ": attribute '", key, "' must be a string; got ", v.dump()));
}

// One [node, index(, version)] as numbers; the references are checked by SymbolAssembler.
GraphEntryRecord EntryRecord(const json& e, const std::string& where) {
  if (!e.is_array() || e.size() < 2 || e.size() > 3)
    Fail(StrCat(where, ": expected [node, index] or [node, index, version]; got ", e.dump()));
  for (auto& x : e)
    if (!x.is_number_unsigned())
      Fail(StrCat(where, ": entry ", e.dump(), " must hold non-negative integers"));
  return GraphEntryRecord{e[0].get<uint64_t>(), e[1].get<uint64_t>()};
}

// Renames MXNet's old unwrapped hidden keys. Returns the keys meant for an input variable
// ("weight_lr_mult" -> input "weight", "__lr_mult__") separately.
struct HiddenForInput {
  std::string input, key, value;
};

void ApplyHiddenKeys(KwArgs* dict, bool is_variable, std::vector<HiddenForInput>* for_inputs) {
  KwArgs out;
  for (auto& kv : *dict) {
    const std::string& k = kv.first;
    bool done = false;
    for (const char* hk : kHiddenKeys) {
      const std::string key = hk;
      if (k == key) {
        out["__" + key + "__"] = kv.second;
        done = true;
      } else if (!is_variable && k.size() > key.size() + 1 &&
                 k.compare(k.size() - key.size(), key.size(), key) == 0 &&
                 k[k.size() - key.size() - 1] == '_') {
        for_inputs->push_back({k.substr(0, k.size() - key.size() - 1), key, kv.second});
        done = true;
      }
      if (done) break;
    }
    if (!done) out[kv.first] = kv.second;
  }
  *dict = std::move(out);
}

constexpr const char* kSubgraphsKey = "subgraphs";

GraphNodeRecord NodeRecord(const json& jn, size_t i) {
  if (!jn.is_object()) Fail(StrCat("node ", i, " is not an object"));
  if (!jn.contains("op") || !jn["op"].is_string())
    Fail(StrCat("node ", i, " has no \"op\" string"));
  if (!jn.contains("name") || !jn["name"].is_string())
    Fail(StrCat("node ", i, " has no \"name\" string"));
  GraphNodeRecord r;
  r.op = jn["op"].get<std::string>();
  r.name = jn["name"].get<std::string>();
  const std::string where = NodeWhere(i, r.name);
  // A nested graph (MXNet's oneDNN subgraph ops) travels as the node's parameter "subgraphs",
  // its JSON text, which the op parses; ops without such a parameter refuse it.
  if (jn.contains("subgraphs") && !jn["subgraphs"].empty()) {
    if (!jn["subgraphs"].is_array()) Fail(where + ": \"subgraphs\" must be an array");
    r.attrs[kSubgraphsKey] = jn["subgraphs"].dump();
  }
  for (const char* field : {"param", "attr", "attrs"}) {
    if (!jn.contains(field)) continue;
    const json& a = jn[field];
    if (a.is_null()) continue;
    if (!a.is_object()) Fail(StrCat(where, ": \"", field, "\" must be an object"));
    for (auto it = a.begin(); it != a.end(); ++it)
      r.attrs[it.key()] = AttrString(it.value(), where, it.key());
  }
  const json empty = json::array();
  const json& jin = jn.contains("inputs") ? jn["inputs"] : empty;
  if (!jin.is_array()) Fail(where + ": \"inputs\" must be an array");
  for (size_t k = 0; k < jin.size(); ++k)
    r.inputs.push_back(EntryRecord(jin[k], StrCat(where, " input ", k)));
  return r;
}

json EntryJSON(const Graph::EntryRef& e) { return json::array({e.node_id, e.index, 0}); }

}  // namespace

SymbolAssembler::SymbolAssembler(int mxnet_version, std::string error_prefix)
    : version_(mxnet_version), prefix_(std::move(error_prefix)) {}

void SymbolAssembler::Fail(const std::string& what) const { throw IOError(prefix_ + what); }

NodeEntry SymbolAssembler::Entry(const GraphEntryRecord& e, const std::string& where) const {
  if (e.node >= built_.size())
    Fail(StrCat(where, " references node ", e.node, ", which is missing or not defined before it"));
  const auto& src = built_[static_cast<size_t>(e.node)];
  const int n_out = src->num_outputs();
  if (e.index >= static_cast<uint64_t>(n_out))
    Fail(StrCat(where, " uses output ", e.index, " of node ", e.node, " '", src->name(),
                "', which has ", n_out, " output", n_out == 1 ? "" : "s"));
  return NodeEntry{src, static_cast<uint32_t>(e.index)};
}

void SymbolAssembler::AddNode(const GraphNodeRecord& r) {
  const size_t i = built_.size();
  auto node = std::make_shared<Node>();
  node->attrs.name = r.name;
  const std::string where = NodeWhere(i, r.name);
  KwArgs dict = r.attrs;
  const bool is_variable = r.op == "null";
  std::vector<HiddenForInput> for_inputs;
  ApplyHiddenKeys(&dict, is_variable, &for_inputs);

  if (is_variable) {
    if (!r.inputs.empty())
      Fail(StrCat(where, ": a variable (op \"null\") has ", r.inputs.size(), " inputs"));
    node->user_attrs = std::move(dict);
    // Arguments are bound by name, so two variables of one name would be ambiguous.
    auto [it, inserted] = variable_index_.emplace(r.name, i);
    if (!inserted)
      Fail(StrCat(where, ": variable name '", r.name, "' is already used by node ", it->second,
                  " (variable names must be unique)"));
    built_.push_back(std::move(node));
    return;
  }

  const Op* op = OpRegistry::Global().Find(r.op);
  if (!op) Fail(StrCat(where, ": unknown operator '", r.op, "'"));
  node->attrs.op = op;
  for (auto& kv : dict) {
    if (IsWrapped(kv.first)) node->user_attrs[kv.first] = kv.second;
    else node->attrs.dict[kv.first] = kv.second;
  }
  if (!op->key_var_num_args.empty() && !node->attrs.dict.count(op->key_var_num_args))
    node->attrs.dict[op->key_var_num_args] = std::to_string(r.inputs.size());
  try {
    op->ParseAttrs(&node->attrs);
  } catch (const ParamError& e) {
    throw ParamError(where + ": " + e.what());
  }

  for (size_t k = 0; k < r.inputs.size(); ++k)
    node->inputs.push_back(Entry(r.inputs[k], StrCat(where, " input ", k)));

  std::vector<std::string> names = op->ListArguments(node->attrs);
  const size_t num_args = names.size();
  for (auto& a : op->ListAuxStates(node->attrs)) names.push_back(a);
  if (node->inputs.size() < names.size() && version_ < kUpgradeVersion) {
    // 0.8 files do not list aux states (and may omit trailing inputs): add them as MXNet's
    // upgrader does.
    for (size_t k = node->inputs.size(); k < names.size(); ++k) {
      auto var = std::make_shared<Node>();
      var->attrs.name = node->attrs.name + "_" + names[k];
      node->inputs.push_back(NodeEntry{var, 0});
      // Bound by name like any other variable, so its name must be free too.
      auto [it, inserted] = variable_index_.emplace(var->attrs.name, i);
      if (!inserted)
        Fail(StrCat(where, ": the variable the 0.8 upgrade adds for a missing input, '", var->attrs.name,
                    "' is already used by node ", it->second, " (variable names must be unique)"));
    }
  }
  if (node->inputs.size() != names.size()) {
    Fail(StrCat(where, " (", op->name, ") has ", node->inputs.size(), " inputs but the operator ",
                "takes ", names.size(), " (", JoinNames(names), ")"));
  }
  if (op->file_input_order) {  // the file lists the inputs in MXNet's order
    const std::vector<size_t> order = op->file_input_order(node->attrs);
    std::vector<NodeEntry> ours(order.size());
    for (size_t k = 0; k < order.size(); ++k) ours[k] = node->inputs.at(order[k]);
    node->inputs = std::move(ours);
  }
  if (version_ < kInitializerVersion) SetDefaultInitializers(node.get());
  for (auto& h : for_inputs) {
    auto it = std::find(names.begin(), names.begin() + static_cast<long>(num_args), h.input);
    const size_t k = static_cast<size_t>(it - names.begin());
    if (k < num_args && node->inputs[k].node->is_variable())
      node->inputs[k].node->user_attrs["__" + h.key + "__"] = h.value;
    else
      node->user_attrs[h.input + "_" + h.key] = h.value;
  }
  built_.push_back(std::move(node));
}

Symbol SymbolAssembler::Finish(const std::vector<GraphEntryRecord>& heads) const {
  if (heads.empty()) Fail("\"heads\" is empty: the symbol has no outputs");
  std::vector<NodeEntry> entries;
  for (size_t k = 0; k < heads.size(); ++k) entries.push_back(Entry(heads[k], StrCat("head ", k)));
  return Symbol::FromEntries(std::move(entries));
}

int SymbolJSONVersion(const std::string& text) {
  json root = ParseText(text);
  if (!root.is_object()) Fail("the top level is not an object");
  return VersionOf(root);
}

Symbol LoadSymbolJSON(const std::string& text) {
  const json root = ParseText(text);
  if (!root.is_object()) Fail("the top level is not an object");
  const int version = VersionOf(root);
  if (!root.contains("nodes") || !root["nodes"].is_array()) Fail("no \"nodes\" array");
  if (!root.contains("heads") || !root["heads"].is_array()) Fail("no \"heads\" array");
  const json& nodes = root["nodes"];
  SymbolAssembler assembler(version, "symbol JSON: ");
  for (size_t i = 0; i < nodes.size(); ++i) assembler.AddNode(NodeRecord(nodes[i], i));
  std::vector<GraphEntryRecord> heads;
  const json& jheads = root["heads"];
  for (size_t k = 0; k < jheads.size(); ++k) heads.push_back(EntryRecord(jheads[k], StrCat("head ", k)));
  return assembler.Finish(heads);
}

Symbol LoadSymbolFile(const std::string& path) {
  // Symbol files are kilobytes to tens of megabytes; refuse absurd ones before reading them.
  constexpr uint64_t kMaxSymbolFileBytes = uint64_t{1} << 30;
  if (const uint64_t size = RegularFile(path).size(); size > kMaxSymbolFileBytes)
    throw IOError(StrCat(path, ": symbol JSON of ", size, " bytes is larger than the ",
                         kMaxSymbolFileBytes, " bytes supported"));
  const std::string text = ReadFileToString(path);
  const std::string wrong_kind =
      WrongFileKindMessage(path, DetectFileKind(text.data(), text.size()), FileKind::kSymbolJson);
  if (!wrong_kind.empty()) throw IOError(wrong_kind);
  try {
    return LoadSymbolJSON(text);
  } catch (const IOError& e) {
    throw IOError(path + ": " + e.what());
  } catch (const ParamError& e) {
    throw ParamError(path + ": " + e.what());
  }
}

std::string SaveSymbolJSON(const Symbol& symbol, bool numpy_shape_semantics) {
  const Graph g(symbol);
  json nodes = json::array();
  for (uint32_t i = 0; i < g.num_nodes(); ++i) {
    const Node& n = *g.node(i).node;
    json jn;
    jn["op"] = n.is_variable() ? std::string("null") : n.attrs.op->name;
    jn["name"] = n.name();
    json attrs = json::object();
    for (auto& kv : n.attrs.dict) {
      if (kv.first == kSubgraphsKey) {
        jn["subgraphs"] = json::parse(kv.second, nullptr, /*allow_exceptions=*/false);
        continue;
      }
      attrs[kv.first] = kv.second;
    }
    for (auto& kv : n.user_attrs) attrs[kv.first] = kv.second;
    if (!attrs.empty()) jn["attrs"] = attrs;
    json inputs = json::array();
    const auto& ins = g.node(i).inputs;
    if (!n.is_variable() && n.attrs.op->file_input_order) {  // written in MXNet's order
      const std::vector<size_t> order = n.attrs.op->file_input_order(n.attrs);
      std::vector<json> in_file(ins.size());
      for (size_t k = 0; k < ins.size(); ++k) in_file.at(order.at(k)) = EntryJSON(ins[k]);
      inputs = in_file;
    } else {
      for (auto& e : ins) inputs.push_back(EntryJSON(e));
    }
    jn["inputs"] = inputs;
    nodes.push_back(jn);
  }
  json heads = json::array();
  for (auto& h : g.heads()) heads.push_back(EntryJSON(h));
  json root;
  root["nodes"] = nodes;
  root["arg_nodes"] = g.arg_nodes();
  root["node_row_ptr"] = g.row_ptr();
  root["heads"] = heads;
  root["attrs"] = {{"mxnet_version", json::array({"int", kSymbolWriteVersion})}};
  if (numpy_shape_semantics) root["attrs"]["is_np_shape"] = json::array({"int", 1});
  try {
    return root.dump(2);
  } catch (const json::exception& e) {
    throw Error(StrCat("SaveSymbolJSON: names and attribute values must be valid UTF-8: ", e.what()));
  }
}

void SaveSymbolFile(const std::string& path, const Symbol& symbol) {
  WriteStringToFile(path, SaveSymbolJSON(symbol));
}

}  // namespace symbind
