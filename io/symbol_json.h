// MXNet symbol JSON ("prefix-symbol.json", mx.sym.load / Symbol.tojson).
//
// Reads every generation MXNet wrote:
//   0.8 legacy: node attributes under "param" (and "attr"), inputs [node, index],
//       "backward_source_id", no mxnet_version. Inputs missing at the end of a node (aux
//       states such as BatchNorm's moving_mean/moving_var, which 0.8 did not store) are
//       created as variables "<node>_<input>", as MXNet's 0.8 -> 0.9 upgrader does.
//   0.9 - 1.x: "attrs" (or "attr"), inputs [node, index, version], arg_nodes,
//       node_row_ptr, heads, attrs.mxnet_version ["int", N].
//   2.0: the same with version 20000.
// Attribute keys wrapped in double underscores ("__shape__", "__init__", "__lr_mult__", ...)
// become Node::user_attrs; the old unwrapped hidden keys (lr_mult, wd_mult, ctx_group,
// force_mirroring, mirror_stage, also "<input>_lr_mult" on an op naming one of its variable
// inputs) are renamed "__key__" as MXNet's upgrader does. Every other key of an op node is an
// operator parameter, parsed by the registered op.
//
// Errors: malformed JSON or structure throws IOError (with the byte position of a JSON syntax
// error, or the node index and name); an unknown operator throws IOError naming node and op;
// bad parameters throw ParamError prefixed with the node name.
//
// Save writes the MXNet 1.x layout (mxnet_version 10600) in MXNet's topological order.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <symbind/core/symbol.h>

namespace symbind {

// The mxnet_version symbind writes (MXNet 1.6's layout: every input listed).
constexpr int kSymbolWriteVersion = 10600;

// A graph as model files store it, shared by the JSON and .symbind readers so that both apply
// the same checks and MXNet upgrade rules.
struct GraphEntryRecord {
  uint64_t node = 0, index = 0;  // node index in file order, output index
};
struct GraphNodeRecord {
  std::string op, name;  // op "null": a variable
  std::map<std::string, std::string> attrs;
  std::vector<GraphEntryRecord> inputs;
};

// Builds a Symbol node by node in file order; each input must name an earlier node. Throws
// IOError prefixed with `error_prefix` (unknown op, bad reference, duplicate variable, input
// count) or ParamError (bad parameter), naming the node index and name.
class SymbolAssembler {
 public:
  SymbolAssembler(int mxnet_version, std::string error_prefix);
  void AddNode(const GraphNodeRecord& node);
  Symbol Finish(const std::vector<GraphEntryRecord>& heads) const;

 private:
  [[noreturn]] void Fail(const std::string& what) const;
  NodeEntry Entry(const GraphEntryRecord& e, const std::string& where) const;
  int version_;
  std::string prefix_;
  std::vector<std::shared_ptr<Node>> built_;
  std::map<std::string, size_t> variable_index_;
};

Symbol LoadSymbolJSON(const std::string& json);
Symbol LoadSymbolFile(const std::string& path);
// numpy_shape_semantics (MXNet's numpy shape mode was on) records "is_np_shape": ["int", 1] in
// the file's attrs, as MXNet 1.6+ writes it.
std::string SaveSymbolJSON(const Symbol& symbol, bool numpy_shape_semantics = false);
void SaveSymbolFile(const std::string& path, const Symbol& symbol);

// The mxnet_version a JSON text declares (800 for 0.8 files without one); throws IOError on
// malformed JSON.
int SymbolJSONVersion(const std::string& json);

}  // namespace symbind
