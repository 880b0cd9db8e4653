#include "mxnet-cpp/ndarray.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/invoke.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/train/initializer.h>

#include "compat_internal.h"
#include "mxnet-cpp/operator.h"

namespace mxnet {
namespace cpp {

namespace {

symbind::TShape ToTShape(const std::vector<mx_uint>& s) {
  return symbind::TShape(std::vector<int64_t>(s.begin(), s.end()));
}

const symbind::NDArray& Checked(const symbind::NDArray& a, const char* what) {
  if (a.is_none()) throw symbind::Error(std::string("NDArray::") + what + " on an empty NDArray");
  return a;
}

float* F(const symbind::NDArray& a, const char* what) { return Checked(a, what).fdata(); }

// Arithmetic runs the registered ops, as MXNet's cpp-package does (Operator("_plus") ...).
NDArray Arithmetic(const char* op, const NDArray& x, const NDArray& y) {
  return NDArray(symbind::Invoke(op, {}, {Checked(x.native(), "arithmetic"), Checked(y.native(), "arithmetic")})[0]);
}
NDArray Arithmetic(const char* op, const NDArray& x, mx_float scalar) {
  return NDArray(symbind::Invoke(op, {{"scalar", detail::ParamString(scalar)}}, {Checked(x.native(), "arithmetic")})[0]);
}
void InplaceArithmetic(const char* op, NDArray& x, const NDArray& y) {
  symbind::Invoke(op, {}, {Checked(x.native(), "arithmetic"), Checked(y.native(), "arithmetic")}, {x.native()});
}
void InplaceArithmetic(const char* op, NDArray& x, mx_float scalar) {
  symbind::Invoke(op, {{"scalar", detail::ParamString(scalar)}}, {Checked(x.native(), "arithmetic")}, {x.native()});
}

}  // namespace

NDArray::NDArray() = default;

NDArray::NDArray(const std::vector<mx_uint>& shape, const Context& context, bool, int dtype)
    : a_(ToTShape(shape), static_cast<symbind::DType>(dtype), context.native()) {}

NDArray::NDArray(const Shape& shape, const Context& context, bool, int dtype)
    : a_(shape.ToTShape(), static_cast<symbind::DType>(dtype), context.native()) {}

NDArray::NDArray(const mx_float* data, size_t size)
    : a_(symbind::TShape({static_cast<int64_t>(size)})) {
  std::copy(data, data + size, a_.fdata());
}

NDArray::NDArray(const mx_float* data, const Shape& shape, const Context& context)
    : a_(shape.ToTShape(), symbind::DType::kFloat32, context.native()) {
  std::copy(data, data + a_.Size(), a_.fdata());
}

NDArray::NDArray(const std::vector<mx_float>& data, const Shape& shape, const Context& context)
    : a_(shape.ToTShape(), symbind::DType::kFloat32, context.native()) {
  if (data.size() != static_cast<size_t>(a_.Size()))
    throw symbind::Error("NDArray: " + std::to_string(data.size()) +
                             " values given for shape " + a_.shape().ToString());
  std::copy(data.begin(), data.end(), a_.fdata());
}

NDArray::NDArray(const std::vector<mx_float>& data)
    : a_(symbind::TShape({static_cast<int64_t>(data.size())})) {
  std::copy(data.begin(), data.end(), a_.fdata());
}

NDArray NDArray::operator+(mx_float s) const { return Arithmetic("_plus_scalar", *this, s); }
NDArray NDArray::operator-(mx_float s) const { return Arithmetic("_minus_scalar", *this, s); }
NDArray NDArray::operator*(mx_float s) const { return Arithmetic("_mul_scalar", *this, s); }
NDArray NDArray::operator/(mx_float s) const { return Arithmetic("_div_scalar", *this, s); }
NDArray NDArray::operator%(mx_float s) const { return Arithmetic("_mod_scalar", *this, s); }
NDArray NDArray::operator+(const NDArray& r) const { return Arithmetic("elemwise_add", *this, r); }
NDArray NDArray::operator-(const NDArray& r) const { return Arithmetic("elemwise_sub", *this, r); }
NDArray NDArray::operator*(const NDArray& r) const { return Arithmetic("elemwise_mul", *this, r); }
NDArray NDArray::operator/(const NDArray& r) const { return Arithmetic("elemwise_div", *this, r); }
NDArray NDArray::operator%(const NDArray& r) const { return Arithmetic("broadcast_mod", *this, r); }

NDArray& NDArray::operator=(mx_float s) {
  Checked(a_, "operator=").Fill(s);
  return *this;
}
NDArray& NDArray::operator+=(mx_float s) { InplaceArithmetic("_plus_scalar", *this, s); return *this; }
NDArray& NDArray::operator-=(mx_float s) { InplaceArithmetic("_minus_scalar", *this, s); return *this; }
NDArray& NDArray::operator*=(mx_float s) { InplaceArithmetic("_mul_scalar", *this, s); return *this; }
NDArray& NDArray::operator/=(mx_float s) { InplaceArithmetic("_div_scalar", *this, s); return *this; }
NDArray& NDArray::operator%=(mx_float s) { InplaceArithmetic("_mod_scalar", *this, s); return *this; }
NDArray& NDArray::operator+=(const NDArray& r) { InplaceArithmetic("elemwise_add", *this, r); return *this; }
NDArray& NDArray::operator-=(const NDArray& r) { InplaceArithmetic("elemwise_sub", *this, r); return *this; }
NDArray& NDArray::operator*=(const NDArray& r) { InplaceArithmetic("elemwise_mul", *this, r); return *this; }
NDArray& NDArray::operator/=(const NDArray& r) { InplaceArithmetic("elemwise_div", *this, r); return *this; }
NDArray& NDArray::operator%=(const NDArray& r) { InplaceArithmetic("broadcast_mod", *this, r); return *this; }

NDArray NDArray::ArgmaxChannel() {
  const auto& s = Checked(a_, "ArgmaxChannel").shape();
  if (s.ndim() != 2) throw symbind::Error("NDArray::ArgmaxChannel needs a 2-D array, got " + s.ToString());
  symbind::NDArray out(symbind::TShape({s[0]}));
  const float* x = a_.fdata();
  for (int64_t i = 0; i < s[0]; ++i) {
    const float* row = x + i * s[1];
    out.fdata()[i] = static_cast<float>(std::max_element(row, row + s[1]) - row);
  }
  return NDArray(out);
}

void NDArray::SyncCopyFromCPU(const mx_float* data, size_t size) {
  Checked(a_, "SyncCopyFromCPU");
  if (size > static_cast<size_t>(a_.Size()))
    throw symbind::Error("NDArray::SyncCopyFromCPU: " + std::to_string(size) +
                             " values for an array of " + std::to_string(a_.Size()));
  a_.SyncCopyFromCPU(data, size);
}
void NDArray::SyncCopyFromCPU(const std::vector<mx_float>& data) { SyncCopyFromCPU(data.data(), data.size()); }

void NDArray::SyncCopyToCPU(mx_float* data, size_t size) {
  Checked(a_, "SyncCopyToCPU");
  size_t n = size ? size : static_cast<size_t>(a_.Size());
  a_.SyncCopyToCPU(data, std::min(n, static_cast<size_t>(a_.Size())));
}
void NDArray::SyncCopyToCPU(std::vector<mx_float>* data, size_t size) {
  Checked(a_, "SyncCopyToCPU");
  size_t n = size ? size : static_cast<size_t>(a_.Size());
  data->resize(n);
  SyncCopyToCPU(data->data(), n);
}

NDArray NDArray::CopyTo(NDArray* other) const {
  Checked(a_, "CopyTo");
  if (other->IsNone()) {
    *other = Copy();
  } else {
    a_.CopyTo(&other->a_);
  }
  return *other;
}

NDArray NDArray::Copy(const Context&) const { return Copy(); }
NDArray NDArray::Copy() const { return NDArray(Checked(a_, "Copy").Copy()); }

size_t NDArray::Offset(size_t h, size_t w) const {
  const auto& s = a_.shape();
  return h * static_cast<size_t>(s[s.ndim() - 1]) + w;
}
size_t NDArray::Offset(size_t c, size_t h, size_t w) const {
  const auto& s = a_.shape();
  int n = s.ndim();
  return (c * static_cast<size_t>(s[n - 2]) + h) * static_cast<size_t>(s[n - 1]) + w;
}
mx_float NDArray::At(size_t h, size_t w) const { return Checked(a_, "At").GetFlat(static_cast<int64_t>(Offset(h, w))); }
mx_float NDArray::At(size_t c, size_t h, size_t w) const {
  return Checked(a_, "At").GetFlat(static_cast<int64_t>(Offset(c, h, w)));
}
NDArray NDArray::At(size_t index) const { return NDArray(Checked(a_, "At").At(static_cast<int64_t>(index))); }
NDArray NDArray::Slice(mx_uint begin, mx_uint end) const { return NDArray(Checked(a_, "Slice").Slice(begin, end)); }
NDArray NDArray::Reshape(const Shape& s) const {
  const symbind::NDArray& a = Checked(a_, "Reshape");
  // Shape keeps dims unsigned: -1 arrives as 0xFFFFFFFF.
  std::vector<int64_t> dims;
  for (size_t i = 0; i < s.ndim(); ++i) dims.push_back(static_cast<int32_t>(s[i]));
  return NDArray(a.Reshape(compat::ResolveReshape(a.shape(), dims)));
}

void NDArray::SampleGaussian(mx_float mu, mx_float sigma, NDArray* out) {
  Checked(out->a_, "SampleGaussian");
  compat::WithRandom([&](std::mt19937_64& rng) { symbind::FillGaussian(out->a_, mu, sigma, rng); });
}

void NDArray::SampleUniform(mx_float begin, mx_float end, NDArray* out) {
  Checked(out->a_, "SampleUniform");
  compat::WithRandom([&](std::mt19937_64& rng) { symbind::FillUniform(out->a_, begin, end, rng); });
}

namespace {
void FromFile(const symbind::NDArrayFile& f, std::vector<NDArray>* list,
              std::map<std::string, NDArray>* map) {
  if (list) {
    list->clear();
    for (auto& a : f.arrays) list->push_back(NDArray(a));
  }
  if (map) {
    map->clear();
    for (size_t i = 0; i < f.names.size(); ++i) (*map)[f.names[i]] = NDArray(f.arrays[i]);
  }
}
}  // namespace

void NDArray::Load(const std::string& file_name, std::vector<NDArray>* array_list,
                   std::map<std::string, NDArray>* array_map) {
  FromFile(symbind::LoadNDArrayFile(file_name), array_list, array_map);
}
std::map<std::string, NDArray> NDArray::LoadToMap(const std::string& file_name) {
  std::map<std::string, NDArray> m;
  Load(file_name, nullptr, &m);
  return m;
}
std::vector<NDArray> NDArray::LoadToList(const std::string& file_name) {
  std::vector<NDArray> v;
  Load(file_name, &v, nullptr);
  return v;
}
void NDArray::LoadFromBuffer(const void* buffer, size_t size, std::vector<NDArray>* array_list,
                             std::map<std::string, NDArray>* array_map) {
  FromFile(symbind::LoadNDArrayBuffer(buffer, size), array_list, array_map);
}
std::map<std::string, NDArray> NDArray::LoadFromBufferToMap(const void* buffer, size_t size) {
  std::map<std::string, NDArray> m;
  LoadFromBuffer(buffer, size, nullptr, &m);
  return m;
}
std::vector<NDArray> NDArray::LoadFromBufferToList(const void* buffer, size_t size) {
  std::vector<NDArray> v;
  LoadFromBuffer(buffer, size, &v, nullptr);
  return v;
}
void NDArray::Save(const std::string& file_name, const std::map<std::string, NDArray>& array_map) {
  std::map<std::string, symbind::NDArray> m;
  for (auto& kv : array_map) m[kv.first] = kv.second.native();
  symbind::SaveNDArrays(file_name, m);
}
void NDArray::Save(const std::string& file_name, const std::vector<NDArray>& array_list) {
  symbind::SaveNDArrays(file_name, compat::Natives(array_list), {});
}

size_t NDArray::Size() const { return static_cast<size_t>(a_.Size()); }
std::vector<mx_uint> NDArray::GetShape() const {
  std::vector<mx_uint> s;
  if (a_.is_none()) return s;
  for (auto d : a_.shape().dims()) s.push_back(static_cast<mx_uint>(d));
  return s;
}
int NDArray::GetDType() const { return static_cast<int>(a_.dtype()); }
const mx_float* NDArray::GetData() const { return F(a_, "GetData"); }
Context NDArray::GetContext() const { return Context::cpu(a_.ctx().dev_id); }

std::ostream& operator<<(std::ostream& out, const NDArray& ndarray) {
  if (ndarray.IsNone()) return out << "[empty NDArray]";
  // MXNet prints the values row by row (rows of the last axis), then the shape.
  std::vector<float> v = ndarray.native().ToVector();
  auto shape = ndarray.GetShape();
  size_t cols = shape.empty() ? 1 : shape.back();
  out << '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i && cols && i % cols == 0) out << "]\n[";
    else if (i) out << ',';
    out << v[i];
  }
  out << "]\n<NDArray ";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "x" : "") << shape[i];
  return out << " @cpu(" << ndarray.GetContext().GetDeviceId() << ")>";
}

namespace compat {

// MXNet's NDArray reshape follows the Reshape op's rule (0 keeps a dim, -1 infers one, -2,
// -3, -4 ...): the shape is inferred through that op, so the rule lives in one place.
symbind::TShape ResolveReshape(const symbind::TShape& from, const std::vector<int64_t>& dims) {
  // An empty target is a 0-dimensional array (the Reshape op reads "()" as "no target").
  if (dims.empty()) {
    if (from.Size() != 1)
      throw symbind::ShapeError(symbind::StrCat("cannot reshape an array of shape ", from.ToString(), " (",
                                                from.Size(), " elements) into shape ()"));
    return symbind::TShape(std::vector<int64_t>());
  }
  std::string spec = "(";
  for (size_t i = 0; i < dims.size(); ++i) spec += (i ? "," : "") + std::to_string(dims[i]);
  spec += dims.size() == 1 ? ",)" : ")";
  const symbind::Symbol reshape = symbind::Symbol::Create(
      "Reshape", "reshape", {{"shape", spec}}, {{"data", symbind::Symbol::Variable("data")}});
  return symbind::InferShape(reshape, {{"data", from}}).out_shapes[0];
}

}  // namespace compat

}  // namespace cpp
}  // namespace mxnet
