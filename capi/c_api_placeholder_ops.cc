// Operator names MXNet 1.9.1's Python package needs to exist when it is imported, for
// features symbind does not compute. Each is listed by MXListAllOpNames and described by
// MXSymbolGetAtomicSymbolInfo (variadic, no parameters), so `import mxnet` builds its
// modules; any call or composition with it fails with the reason given here. A name that the
// registry has (because symbind implements it) is not a placeholder.
#include <memory>
#include <string>
#include <vector>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

struct Placeholder {
  const char* name;
  const char* reason;
};

constexpr const char* kNumpyMode = "MXNet's numpy-compatible mode (mx.np / mx.npx) is not supported";
constexpr const char* kCustomOp = "Python custom operators (mx.operator.CustomOp) are not run by symbind";
const Placeholder kPlaceholders[] = {
    {"Custom", kCustomOp},
    {"_npi_Custom", kCustomOp},
    // mx.np / mx.npx functions whose signatures numpy_op_signature.py sets at import.
    {"_np_all", kNumpyMode}, {"_np_any", kNumpyMode}, {"_np_sometrue", kNumpyMode},
    {"_np_cumsum", kNumpyMode}, {"_npx_nonzero", kNumpyMode}, {"_np_repeat", kNumpyMode},
    {"_np_transpose", kNumpyMode}, {"_np_dot", kNumpyMode}, {"_np_sum", kNumpyMode},
    {"_np_copy", kNumpyMode}, {"_np_atleast_1d", kNumpyMode}, {"_np_atleast_2d", kNumpyMode},
    {"_np_atleast_3d", kNumpyMode}, {"_np_reshape", kNumpyMode}, {"_np_roll", kNumpyMode},
    {"_np_trace", kNumpyMode}, {"_np_squeeze", kNumpyMode}, {"_np_max", kNumpyMode},
    {"_np_amax", kNumpyMode}, {"_np_min", kNumpyMode}, {"_np_amin", kNumpyMode},
    {"_np_prod", kNumpyMode}, {"_np_product", kNumpyMode}, {"_np_moveaxis", kNumpyMode},
    {"_np__random_shuffle", kNumpyMode}, {"_npx_constraint_check", kNumpyMode},
    {"_npx_reshape", kNumpyMode}, {"_np_diag", kNumpyMode}, {"_np_diagonal", kNumpyMode},
    {"_np_diagflat", kNumpyMode},
};

std::vector<std::unique_ptr<Op>> MakePlaceholders() {
  std::vector<std::unique_ptr<Op>> ops;
  for (const Placeholder& p : kPlaceholders) {
    if (OpRegistry::Global().Find(p.name)) continue;
    auto op = std::make_unique<Op>();
    op->name = p.name;
    op->description = p.reason;
    op->key_var_num_args = "num_args";
    ops.push_back(std::move(op));
  }
  return ops;
}

const std::vector<std::unique_ptr<Op>>& Owned() {
  static const std::vector<std::unique_ptr<Op>> ops = MakePlaceholders();
  return ops;
}

}  // namespace

const std::vector<const Op*>& PlaceholderOps() {
  static const std::vector<const Op*> ops = [] {
    std::vector<const Op*> out;
    for (const auto& op : Owned()) out.push_back(op.get());
    return out;
  }();
  return ops;
}

bool IsPlaceholder(const Op* op) {
  for (const Op* p : PlaceholderOps())
    if (p == op) return true;
  return false;
}

const Op* FindOpOrPlaceholder(const std::string& name) {
  if (const Op* op = OpRegistry::Global().Find(name)) return op;
  if (const Op* op = FindSparseAlias(name)) return op;
  for (const Op* p : PlaceholderOps())
    if (p->name == name) return p;
  return nullptr;
}

}  // namespace capi
}  // namespace symbind
