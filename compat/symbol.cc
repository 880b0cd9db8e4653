#include "mxnet-cpp/symbol.h"

#include <algorithm>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/io/symbol_json.h>

#include "compat_internal.h"
#include "mxnet-cpp/executor.h"
#include "mxnet-cpp/operator.h"

namespace mxnet {
namespace cpp {

namespace {
symbind::Symbol Binary(const char* op, const Symbol& a, const Symbol& b) {
  return symbind::Symbol::Create(op, "", {}, {}, {a.native(), b.native()});
}
symbind::Symbol Scalar(const char* op, const Symbol& a, mx_float s) {
  return symbind::Symbol::Create(op, "", {{"scalar", detail::ParamString(s)}}, {}, {a.native()});
}
std::vector<mx_uint> ToDims(const symbind::TShape& s) {
  std::vector<mx_uint> d;
  if (!s.is_known()) return d;
  for (auto v : s.dims()) d.push_back(static_cast<mx_uint>(v));
  return d;
}
}  // namespace

Symbol::Symbol(const char* name) : s_(symbind::Symbol::Variable(name)) {}
Symbol::Symbol(const std::string& name) : s_(symbind::Symbol::Variable(name)) {}

Symbol Symbol::operator+(const Symbol& r) const { return Symbol(Binary("elemwise_add", *this, r)); }
Symbol Symbol::operator-(const Symbol& r) const { return Symbol(Binary("elemwise_sub", *this, r)); }
Symbol Symbol::operator*(const Symbol& r) const { return Symbol(Binary("elemwise_mul", *this, r)); }
Symbol Symbol::operator/(const Symbol& r) const { return Symbol(Binary("elemwise_div", *this, r)); }
Symbol Symbol::operator+(mx_float s) const { return Symbol(Scalar("_plus_scalar", *this, s)); }
Symbol Symbol::operator-(mx_float s) const { return Symbol(Scalar("_minus_scalar", *this, s)); }
Symbol Symbol::operator*(mx_float s) const { return Symbol(Scalar("_mul_scalar", *this, s)); }
Symbol Symbol::operator/(mx_float s) const { return Symbol(Scalar("_div_scalar", *this, s)); }
Symbol operator+(mx_float l, const Symbol& r) { return r + l; }
Symbol operator-(mx_float l, const Symbol& r) { return Symbol(Scalar("_rminus_scalar", r, l)); }
Symbol operator*(mx_float l, const Symbol& r) { return r * l; }
Symbol operator/(mx_float l, const Symbol& r) { return Symbol(Scalar("_rdiv_scalar", r, l)); }

Symbol Symbol::Copy() const { return Symbol(s_.Copy()); }

Symbol Symbol::Variable(const std::string& name) { return Symbol(symbind::Symbol::Variable(name)); }
Symbol Symbol::operator[](int index) const { return Symbol(s_[static_cast<size_t>(index)]); }
Symbol Symbol::operator[](const std::string& index) const { return Symbol(s_[index]); }
Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  std::vector<symbind::Symbol> v;
  for (auto& s : symbols) v.push_back(s.s_);
  return Symbol(symbind::Symbol::Group(v));
}
Symbol Symbol::Load(const std::string& file_name) { return Symbol(symbind::LoadSymbolFile(file_name)); }
Symbol Symbol::LoadJSON(const std::string& json_str) { return Symbol(symbind::LoadSymbolJSON(json_str)); }
void Symbol::Save(const std::string& file_name) const { symbind::SaveSymbolFile(file_name, s_); }
std::string Symbol::ToJSON() const { return symbind::SaveSymbolJSON(s_); }
Symbol Symbol::GetInternals() const { return Symbol(s_.GetInternals()); }
Symbol Symbol::GetChildren() const { return Symbol(s_.GetChildren()); }
std::vector<std::string> Symbol::ListArguments() const { return s_.ListArguments(); }
std::vector<std::string> Symbol::ListOutputs() const { return s_.ListOutputs(); }
std::vector<std::string> Symbol::ListAuxiliaryStates() const { return s_.ListAuxiliaryStates(); }
std::vector<std::string> Symbol::ListInputs() const { return s_.ListInputs(); }

std::map<std::string, std::string> Symbol::ListAttributes() const {
  std::map<std::string, std::string> out;
  if (s_.NumOutputs() != 1) return out;
  const auto& node = *s_.outputs()[0].node;
  out = node.user_attrs;
  for (auto& kv : node.attrs.dict) out[kv.first] = kv.second;
  return out;
}
void Symbol::SetAttribute(const std::string& key, const std::string& value) { s_.SetAttr(key, value); }
void Symbol::SetAttributes(const std::map<std::string, std::string>& attrs) {
  for (auto& kv : attrs) s_.SetAttr(kv.first, kv.second);
}
std::string Symbol::GetName() const { return s_.GetName(); }

void Symbol::InferShape(const std::map<std::string, std::vector<mx_uint>>& arg_shapes,
                        std::vector<std::vector<mx_uint>>* in_shape,
                        std::vector<std::vector<mx_uint>>* aux_shape,
                        std::vector<std::vector<mx_uint>>* out_shape) const {
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : arg_shapes)
    known[kv.first] = symbind::TShape(std::vector<int64_t>(kv.second.begin(), kv.second.end()));
  symbind::ShapeInferResult r = symbind::InferShapePartial(s_, known);
  auto fill = [](const std::vector<symbind::TShape>& src, std::vector<std::vector<mx_uint>>* dst) {
    if (!dst) return;
    dst->clear();
    for (auto& s : src) dst->push_back(ToDims(s));
  };
  fill(r.arg_shapes, in_shape);
  fill(r.aux_shapes, aux_shape);
  fill(r.out_shapes, out_shape);
}

void Symbol::InferExecutorArrays(const Context& context, std::vector<NDArray>* arg_arrays,
                                 std::vector<NDArray>* grad_arrays,
                                 std::vector<OpReqType>* grad_reqs,
                                 std::vector<NDArray>* aux_arrays,
                                 const std::map<std::string, NDArray>& args_map,
                                 const std::map<std::string, NDArray>& arg_grad_store,
                                 const std::map<std::string, OpReqType>& grad_req_type,
                                 const std::map<std::string, NDArray>& aux_map) const {
  const auto arg_names = ListArguments();
  const auto aux_names = ListAuxiliaryStates();
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : args_map)
    if (std::find(arg_names.begin(), arg_names.end(), kv.first) != arg_names.end())
      known[kv.first] = kv.second.native().shape();
  for (auto& kv : aux_map) known[kv.first] = kv.second.native().shape();
  symbind::ShapeInferResult r = symbind::InferShape(s_, known);  // throws naming the unknowns
  auto ctx = context.native();
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const auto& name = arg_names[i];
    auto a = args_map.find(name);
    arg_arrays->push_back(a != args_map.end() ? a->second
                                              : NDArray(symbind::NDArray(r.arg_shapes[i], symbind::DType::kFloat32, ctx)));
    auto g = arg_grad_store.find(name);
    grad_arrays->push_back(g != arg_grad_store.end()
                               ? g->second
                               : NDArray(symbind::NDArray(r.arg_shapes[i], symbind::DType::kFloat32, ctx)));
    auto q = grad_req_type.find(name);
    grad_reqs->push_back(q != grad_req_type.end() ? q->second
                                                  : static_cast<OpReqType>(symbind::GradReqByName(name)));
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto a = aux_map.find(aux_names[i]);
    aux_arrays->push_back(a != aux_map.end()
                              ? a->second
                              : NDArray(symbind::NDArray(r.aux_shapes[i], symbind::DType::kFloat32, ctx)));
  }
}

void Symbol::InferArgsMap(const Context& context, std::map<std::string, NDArray>* args_map,
                          const std::map<std::string, NDArray>& known_args) const {
  std::map<std::string, symbind::NDArray> native_map, known;
  for (auto& kv : *args_map) native_map[kv.first] = kv.second.native();
  for (auto& kv : known_args) known[kv.first] = kv.second.native();
  symbind::InferArgsMap(s_, context.native(), &native_map, known);
  for (auto& kv : native_map)
    if (!args_map->count(kv.first)) (*args_map)[kv.first] = NDArray(kv.second);
}

Executor* Symbol::SimpleBind(const Context& context, const std::map<std::string, NDArray>& args_map,
                             const std::map<std::string, NDArray>& arg_grad_store,
                             const std::map<std::string, OpReqType>& grad_req_type,
                             const std::map<std::string, NDArray>& aux_map) {
  // As MXNet's cpp-package: every argument gets a gradient array (written only where the
  // request is not null), then Bind.
  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  InferExecutorArrays(context, &args, &grads, &reqs, &aux, args_map, arg_grad_store, grad_req_type,
                      aux_map);
  return new Executor(*this, context, args, grads, reqs, aux);
}

Executor* Symbol::Bind(const Context& context, const std::vector<NDArray>& arg_arrays,
                       const std::vector<NDArray>& grad_arrays,
                       const std::vector<OpReqType>& grad_reqs,
                       const std::vector<NDArray>& aux_arrays,
                       const std::map<std::string, Context>& group_to_ctx,
                       Executor* shared_exec) {
  return new Executor(*this, context, arg_arrays, grad_arrays, grad_reqs, aux_arrays, group_to_ctx,
                      shared_exec);
}

}  // namespace cpp
}  // namespace mxnet
