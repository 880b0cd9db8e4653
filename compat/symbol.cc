#include "mxnet-cpp/symbol.h"

#include <algorithm>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/executor.h>
#include <symbind/io/symbol_json.h>

#include <mxnet/c_api_symbind.h>

#include "compat_internal.h"
#include "mxnet-cpp/executor.h"
#include "mxnet-cpp/operator.h"

namespace mxnet {
namespace cpp {

namespace {
symbind::Symbol Binary(const char* op, const Symbol& a, const Symbol& b) {
  return symbind::Symbol::Create(op, "", {}, {}, {compat::Native(a), compat::Native(b)});
}
symbind::Symbol Scalar(const char* op, const Symbol& a, mx_float s) {
  return symbind::Symbol::Create(op, "", {{"scalar", detail::ParamString(s)}}, {}, {compat::Native(a)});
}
std::vector<mx_uint> ToDims(const symbind::TShape& s) {
  std::vector<mx_uint> d;
  if (!s.is_known()) return d;
  for (auto v : s.dims()) d.push_back(static_cast<mx_uint>(v));
  return d;
}
}  // namespace

Symbol::Symbol() try : impl_(std::make_shared<SymbolImpl>()) {} SYMBIND_CPP_RECORD_ERRORS
Symbol::Symbol(const char* name) try : Symbol() { impl_->symbol = symbind::Symbol::Variable(name); } SYMBIND_CPP_RECORD_ERRORS
Symbol::Symbol(const std::string& name) try : Symbol() {
  impl_->symbol = symbind::Symbol::Variable(name);
} SYMBIND_CPP_RECORD_ERRORS

mx_uint Symbol::GetNumOutputs() const try { return static_cast<mx_uint>(impl_->symbol.NumOutputs()); } SYMBIND_CPP_RECORD_ERRORS
bool Symbol::IsEmpty() const try { return impl_->symbol.NumOutputs() == 0; } SYMBIND_CPP_RECORD_ERRORS
SymbolHandle Symbol::GetHandle() const try {
  if (!impl_->handle) impl_->handle.reset(symbind::capi::NewSymbolHandle(impl_->symbol), MXSymbolFree);
  return impl_->handle.get();
} SYMBIND_CPP_RECORD_ERRORS

Symbol Symbol::operator+(const Symbol& r) const try { return compat::Wrap(Binary("elemwise_add", *this, r)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator-(const Symbol& r) const try { return compat::Wrap(Binary("elemwise_sub", *this, r)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator*(const Symbol& r) const try { return compat::Wrap(Binary("elemwise_mul", *this, r)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator/(const Symbol& r) const try { return compat::Wrap(Binary("elemwise_div", *this, r)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator+(mx_float s) const try { return compat::Wrap(Scalar("_plus_scalar", *this, s)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator-(mx_float s) const try { return compat::Wrap(Scalar("_minus_scalar", *this, s)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator*(mx_float s) const try { return compat::Wrap(Scalar("_mul_scalar", *this, s)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator/(mx_float s) const try { return compat::Wrap(Scalar("_div_scalar", *this, s)); } SYMBIND_CPP_RECORD_ERRORS
Symbol operator+(mx_float l, const Symbol& r) try { return r + l; } SYMBIND_CPP_RECORD_ERRORS
Symbol operator-(mx_float l, const Symbol& r) try { return compat::Wrap(Scalar("_rminus_scalar", r, l)); } SYMBIND_CPP_RECORD_ERRORS
Symbol operator*(mx_float l, const Symbol& r) try { return r * l; } SYMBIND_CPP_RECORD_ERRORS
Symbol operator/(mx_float l, const Symbol& r) try { return compat::Wrap(Scalar("_rdiv_scalar", r, l)); } SYMBIND_CPP_RECORD_ERRORS

Symbol Symbol::Copy() const try { return compat::Wrap(impl_->symbol.Copy()); } SYMBIND_CPP_RECORD_ERRORS

Symbol Symbol::Variable(const std::string& name) try { return compat::Wrap(symbind::Symbol::Variable(name)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator[](int index) const try { return compat::Wrap(impl_->symbol[static_cast<size_t>(index)]); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::operator[](const std::string& index) const try { return compat::Wrap(impl_->symbol[index]); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::Group(const std::vector<Symbol>& symbols) try {
  std::vector<symbind::Symbol> v;
  for (auto& s : symbols) v.push_back(s.impl_->symbol);
  return compat::Wrap(symbind::Symbol::Group(v));
} SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::Load(const std::string& file_name) try { return compat::Wrap(symbind::LoadSymbolFile(file_name)); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::LoadJSON(const std::string& json_str) try { return compat::Wrap(symbind::LoadSymbolJSON(json_str)); } SYMBIND_CPP_RECORD_ERRORS
void Symbol::Save(const std::string& file_name) const try { symbind::SaveSymbolFile(file_name, impl_->symbol); } SYMBIND_CPP_RECORD_ERRORS
std::string Symbol::ToJSON() const try { return symbind::SaveSymbolJSON(impl_->symbol); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::GetInternals() const try { return compat::Wrap(impl_->symbol.GetInternals()); } SYMBIND_CPP_RECORD_ERRORS
Symbol Symbol::GetChildren() const try { return compat::Wrap(impl_->symbol.GetChildren()); } SYMBIND_CPP_RECORD_ERRORS
std::vector<std::string> Symbol::ListArguments() const try { return impl_->symbol.ListArguments(); } SYMBIND_CPP_RECORD_ERRORS
std::vector<std::string> Symbol::ListOutputs() const try { return impl_->symbol.ListOutputs(); } SYMBIND_CPP_RECORD_ERRORS
std::vector<std::string> Symbol::ListAuxiliaryStates() const try { return impl_->symbol.ListAuxiliaryStates(); } SYMBIND_CPP_RECORD_ERRORS
std::vector<std::string> Symbol::ListInputs() const try { return impl_->symbol.ListInputs(); } SYMBIND_CPP_RECORD_ERRORS

std::map<std::string, std::string> Symbol::ListAttributes() const try {
  std::map<std::string, std::string> out;
  if (impl_->symbol.NumOutputs() != 1) return out;
  const auto& node = *impl_->symbol.outputs()[0].node;
  out = node.user_attrs;
  for (auto& kv : node.attrs.dict) out[kv.first] = kv.second;
  return out;
} SYMBIND_CPP_RECORD_ERRORS
void Symbol::SetAttribute(const std::string& key, const std::string& value) try { impl_->symbol.SetAttr(key, value); } SYMBIND_CPP_RECORD_ERRORS
void Symbol::SetAttributes(const std::map<std::string, std::string>& attrs) try {
  for (auto& kv : attrs) impl_->symbol.SetAttr(kv.first, kv.second);
} SYMBIND_CPP_RECORD_ERRORS
std::string Symbol::GetName() const try { return impl_->symbol.GetName(); } SYMBIND_CPP_RECORD_ERRORS

void Symbol::InferShape(const std::map<std::string, std::vector<mx_uint>>& arg_shapes,
                        std::vector<std::vector<mx_uint>>* in_shape,
                        std::vector<std::vector<mx_uint>>* aux_shape,
                        std::vector<std::vector<mx_uint>>* out_shape) const try {
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : arg_shapes)
    known[kv.first] = symbind::TShape(std::vector<int64_t>(kv.second.begin(), kv.second.end()));
  symbind::ShapeInferResult r = symbind::InferShapePartial(impl_->symbol, known);
  auto fill = [](const std::vector<symbind::TShape>& src, std::vector<std::vector<mx_uint>>* dst) {
    if (!dst) return;
    dst->clear();
    for (auto& s : src) dst->push_back(ToDims(s));
  };
  fill(r.arg_shapes, in_shape);
  fill(r.aux_shapes, aux_shape);
  fill(r.out_shapes, out_shape);
} SYMBIND_CPP_RECORD_ERRORS

void Symbol::InferExecutorArrays(const Context& context, std::vector<NDArray>* arg_arrays,
                                 std::vector<NDArray>* grad_arrays,
                                 std::vector<OpReqType>* grad_reqs,
                                 std::vector<NDArray>* aux_arrays,
                                 const std::map<std::string, NDArray>& args_map,
                                 const std::map<std::string, NDArray>& arg_grad_store,
                                 const std::map<std::string, OpReqType>& grad_req_type,
                                 const std::map<std::string, NDArray>& aux_map) const try {
  const auto arg_names = ListArguments();
  const auto aux_names = ListAuxiliaryStates();
  std::map<std::string, symbind::TShape> known;
  for (auto& kv : args_map)
    if (std::find(arg_names.begin(), arg_names.end(), kv.first) != arg_names.end())
      known[kv.first] = compat::Native(kv.second).shape();
  for (auto& kv : aux_map) known[kv.first] = compat::Native(kv.second).shape();
  symbind::ShapeInferResult r = symbind::InferShape(impl_->symbol, known);  // throws naming the unknowns
  auto ctx = compat::Native(context);
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const auto& name = arg_names[i];
    auto a = args_map.find(name);
    arg_arrays->push_back(a != args_map.end() ? a->second
                                              : compat::Wrap(symbind::NDArray(r.arg_shapes[i], symbind::DType::kFloat32, ctx)));
    auto g = arg_grad_store.find(name);
    grad_arrays->push_back(g != arg_grad_store.end()
                               ? g->second
                               : compat::Wrap(symbind::NDArray(r.arg_shapes[i], symbind::DType::kFloat32, ctx)));
    auto q = grad_req_type.find(name);
    grad_reqs->push_back(q != grad_req_type.end() ? q->second
                                                  : static_cast<OpReqType>(symbind::GradReqByName(name)));
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto a = aux_map.find(aux_names[i]);
    aux_arrays->push_back(a != aux_map.end()
                              ? a->second
                              : compat::Wrap(symbind::NDArray(r.aux_shapes[i], symbind::DType::kFloat32, ctx)));
  }
} SYMBIND_CPP_RECORD_ERRORS

void Symbol::InferArgsMap(const Context& context, std::map<std::string, NDArray>* args_map,
                          const std::map<std::string, NDArray>& known_args) const try {
  std::map<std::string, symbind::NDArray> native_map, known;
  for (auto& kv : *args_map) native_map[kv.first] = compat::Native(kv.second);
  for (auto& kv : known_args) known[kv.first] = compat::Native(kv.second);
  symbind::InferArgsMap(impl_->symbol, compat::Native(context), &native_map, known);
  for (auto& kv : native_map)
    if (!args_map->count(kv.first)) (*args_map)[kv.first] = compat::Wrap(kv.second);
} SYMBIND_CPP_RECORD_ERRORS

Executor* Symbol::SimpleBind(const Context& context, const std::map<std::string, NDArray>& args_map,
                             const std::map<std::string, NDArray>& arg_grad_store,
                             const std::map<std::string, OpReqType>& grad_req_type,
                             const std::map<std::string, NDArray>& aux_map) try {
  // As MXNet's cpp-package: every argument gets a gradient array (written only where the
  // request is not null), then Bind.
  std::vector<NDArray> args, grads, aux;
  std::vector<OpReqType> reqs;
  InferExecutorArrays(context, &args, &grads, &reqs, &aux, args_map, arg_grad_store, grad_req_type,
                      aux_map);
  return new Executor(*this, context, args, grads, reqs, aux);
} SYMBIND_CPP_RECORD_ERRORS

Executor* Symbol::Bind(const Context& context, const std::vector<NDArray>& arg_arrays,
                       const std::vector<NDArray>& grad_arrays,
                       const std::vector<OpReqType>& grad_reqs,
                       const std::vector<NDArray>& aux_arrays,
                       const std::map<std::string, Context>& group_to_ctx,
                       Executor* shared_exec) try {
  return new Executor(*this, context, arg_arrays, grad_arrays, grad_reqs, aux_arrays, group_to_ctx,
                      shared_exec);
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
