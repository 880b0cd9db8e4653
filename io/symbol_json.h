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
#include <string>

#include <symbind/core/symbol.h>

namespace symbind {

Symbol LoadSymbolJSON(const std::string& json);
Symbol LoadSymbolFile(const std::string& path);
std::string SaveSymbolJSON(const Symbol& symbol);
void SaveSymbolFile(const std::string& path, const Symbol& symbol);

// The mxnet_version a JSON text declares (800 for 0.8 files without one); throws IOError on
// malformed JSON.
int SymbolJSONVersion(const std::string& json);

}  // namespace symbind
