#include "mxnet-cpp/ndarray.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <symbind/core/graph.h>
#include <symbind/executor/invoke.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/train/initializer.h>

#include <mxnet/c_api_symbind.h>

#include "compat_internal.h"
#include "mxnet-cpp/initializer.h"
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
  return compat::Wrap(symbind::Invoke(op, {}, {Checked(compat::Native(x), "arithmetic"), Checked(compat::Native(y), "arithmetic")})[0]);
}
NDArray Arithmetic(const char* op, const NDArray& x, mx_float scalar) {
  return compat::Wrap(symbind::Invoke(op, {{"scalar", detail::ParamString(scalar)}}, {Checked(compat::Native(x), "arithmetic")})[0]);
}
void InplaceArithmetic(const char* op, NDArray& x, const NDArray& y) {
  symbind::Invoke(op, {}, {Checked(compat::Native(x), "arithmetic"), Checked(compat::Native(y), "arithmetic")}, {compat::Native(x)});
}
void InplaceArithmetic(const char* op, NDArray& x, mx_float scalar) {
  symbind::Invoke(op, {{"scalar", detail::ParamString(scalar)}}, {Checked(compat::Native(x), "arithmetic")}, {compat::Native(x)});
}

}  // namespace

NDArray::NDArray() try : impl_(std::make_shared<NDArrayImpl>()) {} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const std::vector<mx_uint>& shape, const Context& context, bool, int dtype)
    try : NDArray() {
  impl_->array = symbind::NDArray(ToTShape(shape), static_cast<symbind::DType>(dtype),
                                  compat::Native(context));
} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const Shape& shape, const Context& context, bool, int dtype) try : NDArray() {
  impl_->array = symbind::NDArray(compat::ToTShape(shape), static_cast<symbind::DType>(dtype),
                                  compat::Native(context));
} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const mx_float* data, size_t size) try : NDArray() {
  impl_->array = symbind::NDArray(symbind::TShape({static_cast<int64_t>(size)}));
  std::copy(data, data + size, impl_->array.fdata());
} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const mx_float* data, const Shape& shape, const Context& context) try : NDArray() {
  impl_->array = symbind::NDArray(compat::ToTShape(shape), symbind::DType::kFloat32,
                                  compat::Native(context));
  std::copy(data, data + impl_->array.Size(), impl_->array.fdata());
} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const std::vector<mx_float>& data, const Shape& shape, const Context& context)
    try : NDArray() {
  impl_->array = symbind::NDArray(compat::ToTShape(shape), symbind::DType::kFloat32,
                                  compat::Native(context));
  if (data.size() != static_cast<size_t>(impl_->array.Size()))
    throw symbind::Error("NDArray: " + std::to_string(data.size()) +
                             " values given for shape " + impl_->array.shape().ToString());
  std::copy(data.begin(), data.end(), impl_->array.fdata());
} SYMBIND_CPP_RECORD_ERRORS

NDArray::NDArray(const std::vector<mx_float>& data) try : NDArray() {
  impl_->array = symbind::NDArray(symbind::TShape({static_cast<int64_t>(data.size())}));
  std::copy(data.begin(), data.end(), impl_->array.fdata());
} SYMBIND_CPP_RECORD_ERRORS

bool NDArray::IsNone() const try { return impl_->array.is_none(); } SYMBIND_CPP_RECORD_ERRORS

NDArrayHandle NDArray::GetHandle() const try {
  if (!impl_->handle) impl_->handle.reset(symbind::capi::NewNDArrayHandle(impl_->array), MXNDArrayFree);
  return impl_->handle.get();
} SYMBIND_CPP_RECORD_ERRORS

NDArray NDArray::operator+(mx_float s) const try { return Arithmetic("_plus_scalar", *this, s); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator-(mx_float s) const try { return Arithmetic("_minus_scalar", *this, s); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator*(mx_float s) const try { return Arithmetic("_mul_scalar", *this, s); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator/(mx_float s) const try { return Arithmetic("_div_scalar", *this, s); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator%(mx_float s) const try { return Arithmetic("_mod_scalar", *this, s); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator+(const NDArray& r) const try { return Arithmetic("elemwise_add", *this, r); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator-(const NDArray& r) const try { return Arithmetic("elemwise_sub", *this, r); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator*(const NDArray& r) const try { return Arithmetic("elemwise_mul", *this, r); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator/(const NDArray& r) const try { return Arithmetic("elemwise_div", *this, r); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::operator%(const NDArray& r) const try { return Arithmetic("broadcast_mod", *this, r); } SYMBIND_CPP_RECORD_ERRORS

NDArray& NDArray::operator=(mx_float s) try {
  Checked(impl_->array, "operator=").Fill(s);
  return *this;
} SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator+=(mx_float s) try { InplaceArithmetic("_plus_scalar", *this, s); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator-=(mx_float s) try { InplaceArithmetic("_minus_scalar", *this, s); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator*=(mx_float s) try { InplaceArithmetic("_mul_scalar", *this, s); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator/=(mx_float s) try { InplaceArithmetic("_div_scalar", *this, s); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator%=(mx_float s) try { InplaceArithmetic("_mod_scalar", *this, s); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator+=(const NDArray& r) try { InplaceArithmetic("elemwise_add", *this, r); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator-=(const NDArray& r) try { InplaceArithmetic("elemwise_sub", *this, r); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator*=(const NDArray& r) try { InplaceArithmetic("elemwise_mul", *this, r); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator/=(const NDArray& r) try { InplaceArithmetic("elemwise_div", *this, r); return *this; } SYMBIND_CPP_RECORD_ERRORS
NDArray& NDArray::operator%=(const NDArray& r) try { InplaceArithmetic("broadcast_mod", *this, r); return *this; } SYMBIND_CPP_RECORD_ERRORS

NDArray NDArray::ArgmaxChannel() try {
  const auto& s = Checked(impl_->array, "ArgmaxChannel").shape();
  if (s.ndim() != 2) throw symbind::Error("NDArray::ArgmaxChannel needs a 2-D array, got " + s.ToString());
  symbind::NDArray out(symbind::TShape({s[0]}));
  const float* x = impl_->array.fdata();
  for (int64_t i = 0; i < s[0]; ++i) {
    const float* row = x + i * s[1];
    out.fdata()[i] = static_cast<float>(std::max_element(row, row + s[1]) - row);
  }
  return compat::Wrap(out);
} SYMBIND_CPP_RECORD_ERRORS

void NDArray::SyncCopyFromCPU(const mx_float* data, size_t size) try {
  Checked(impl_->array, "SyncCopyFromCPU");
  if (size > static_cast<size_t>(impl_->array.Size()))
    throw symbind::Error("NDArray::SyncCopyFromCPU: " + std::to_string(size) +
                             " values for an array of " + std::to_string(impl_->array.Size()));
  impl_->array.SyncCopyFromCPU(data, size);
} SYMBIND_CPP_RECORD_ERRORS
void NDArray::SyncCopyFromCPU(const std::vector<mx_float>& data) try { SyncCopyFromCPU(data.data(), data.size()); } SYMBIND_CPP_RECORD_ERRORS

void NDArray::SyncCopyToCPU(mx_float* data, size_t size) try {
  Checked(impl_->array, "SyncCopyToCPU");
  size_t n = size ? size : static_cast<size_t>(impl_->array.Size());
  impl_->array.SyncCopyToCPU(data, std::min(n, static_cast<size_t>(impl_->array.Size())));
} SYMBIND_CPP_RECORD_ERRORS
void NDArray::SyncCopyToCPU(std::vector<mx_float>* data, size_t size) try {
  Checked(impl_->array, "SyncCopyToCPU");
  size_t n = size ? size : static_cast<size_t>(impl_->array.Size());
  data->resize(n);
  SyncCopyToCPU(data->data(), n);
} SYMBIND_CPP_RECORD_ERRORS

NDArray NDArray::CopyTo(NDArray* other) const try {
  Checked(impl_->array, "CopyTo");
  if (other->IsNone()) {
    *other = Copy();
  } else {
    impl_->array.CopyTo(&compat::Native(*other));
  }
  return *other;
} SYMBIND_CPP_RECORD_ERRORS

NDArray NDArray::Copy(const Context&) const try { return Copy(); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::Copy() const try { return compat::Wrap(Checked(impl_->array, "Copy").Copy()); } SYMBIND_CPP_RECORD_ERRORS

size_t NDArray::Offset(size_t h, size_t w) const try {
  const auto& s = impl_->array.shape();
  return h * static_cast<size_t>(s[s.ndim() - 1]) + w;
} SYMBIND_CPP_RECORD_ERRORS
size_t NDArray::Offset(size_t c, size_t h, size_t w) const try {
  const auto& s = impl_->array.shape();
  int n = s.ndim();
  return (c * static_cast<size_t>(s[n - 2]) + h) * static_cast<size_t>(s[n - 1]) + w;
} SYMBIND_CPP_RECORD_ERRORS
mx_float NDArray::At(size_t h, size_t w) const try { return Checked(impl_->array, "At").GetFlat(static_cast<int64_t>(Offset(h, w))); } SYMBIND_CPP_RECORD_ERRORS
mx_float NDArray::At(size_t c, size_t h, size_t w) const try {
  return Checked(impl_->array, "At").GetFlat(static_cast<int64_t>(Offset(c, h, w)));
} SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::At(size_t index) const try { return compat::Wrap(Checked(impl_->array, "At").At(static_cast<int64_t>(index))); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::Slice(mx_uint begin, mx_uint end) const try { return compat::Wrap(Checked(impl_->array, "Slice").Slice(begin, end)); } SYMBIND_CPP_RECORD_ERRORS
NDArray NDArray::Reshape(const Shape& s) const try {
  const symbind::NDArray& a = Checked(impl_->array, "Reshape");
  // Shape keeps dims unsigned: -1 arrives as 0xFFFFFFFF.
  std::vector<int64_t> dims;
  for (size_t i = 0; i < s.ndim(); ++i) dims.push_back(static_cast<int32_t>(s[i]));
  return compat::Wrap(a.Reshape(symbind::capi::ResolveReshape(a.shape(), dims)));
} SYMBIND_CPP_RECORD_ERRORS

void NDArray::SampleGaussian(mx_float mu, mx_float sigma, NDArray* out) try {
  Checked(compat::Native(*out), "SampleGaussian");
  symbind::capi::WithFrontendRandom([&](std::mt19937_64& rng) { symbind::FillGaussian(compat::Native(*out), mu, sigma, rng); });
} SYMBIND_CPP_RECORD_ERRORS

void NDArray::SampleUniform(mx_float begin, mx_float end, NDArray* out) try {
  Checked(compat::Native(*out), "SampleUniform");
  symbind::capi::WithFrontendRandom([&](std::mt19937_64& rng) { symbind::FillUniform(compat::Native(*out), begin, end, rng); });
} SYMBIND_CPP_RECORD_ERRORS

namespace {
void FromFile(const symbind::NDArrayFile& f, std::vector<NDArray>* list,
              std::map<std::string, NDArray>* map) {
  if (list) {
    list->clear();
    for (auto& a : f.arrays) list->push_back(compat::Wrap(a));
  }
  if (map) {
    map->clear();
    for (size_t i = 0; i < f.names.size(); ++i) (*map)[f.names[i]] = compat::Wrap(f.arrays[i]);
  }
}
}  // namespace

void NDArray::Load(const std::string& file_name, std::vector<NDArray>* array_list,
                   std::map<std::string, NDArray>* array_map) try {
  FromFile(symbind::LoadNDArrayFile(file_name), array_list, array_map);
} SYMBIND_CPP_RECORD_ERRORS
std::map<std::string, NDArray> NDArray::LoadToMap(const std::string& file_name) try {
  std::map<std::string, NDArray> m;
  Load(file_name, nullptr, &m);
  return m;
} SYMBIND_CPP_RECORD_ERRORS
std::vector<NDArray> NDArray::LoadToList(const std::string& file_name) try {
  std::vector<NDArray> v;
  Load(file_name, &v, nullptr);
  return v;
} SYMBIND_CPP_RECORD_ERRORS
void NDArray::LoadFromBuffer(const void* buffer, size_t size, std::vector<NDArray>* array_list,
                             std::map<std::string, NDArray>* array_map) try {
  FromFile(symbind::LoadNDArrayBuffer(buffer, size), array_list, array_map);
} SYMBIND_CPP_RECORD_ERRORS
std::map<std::string, NDArray> NDArray::LoadFromBufferToMap(const void* buffer, size_t size) try {
  std::map<std::string, NDArray> m;
  LoadFromBuffer(buffer, size, nullptr, &m);
  return m;
} SYMBIND_CPP_RECORD_ERRORS
std::vector<NDArray> NDArray::LoadFromBufferToList(const void* buffer, size_t size) try {
  std::vector<NDArray> v;
  LoadFromBuffer(buffer, size, &v, nullptr);
  return v;
} SYMBIND_CPP_RECORD_ERRORS
void NDArray::Save(const std::string& file_name, const std::map<std::string, NDArray>& array_map) try {
  std::map<std::string, symbind::NDArray> m;
  for (auto& kv : array_map) m[kv.first] = compat::Native(kv.second);
  symbind::SaveNDArrays(file_name, m);
} SYMBIND_CPP_RECORD_ERRORS
void NDArray::Save(const std::string& file_name, const std::vector<NDArray>& array_list) try {
  symbind::SaveNDArrays(file_name, compat::Natives(array_list), {});
} SYMBIND_CPP_RECORD_ERRORS

size_t NDArray::Size() const try { return static_cast<size_t>(impl_->array.Size()); } SYMBIND_CPP_RECORD_ERRORS
std::vector<mx_uint> NDArray::GetShape() const try {
  std::vector<mx_uint> s;
  if (impl_->array.is_none()) return s;
  for (auto d : impl_->array.shape().dims()) s.push_back(static_cast<mx_uint>(d));
  return s;
} SYMBIND_CPP_RECORD_ERRORS
int NDArray::GetDType() const try { return static_cast<int>(impl_->array.dtype()); } SYMBIND_CPP_RECORD_ERRORS
const mx_float* NDArray::GetData() const try { return F(impl_->array, "GetData"); } SYMBIND_CPP_RECORD_ERRORS
Context NDArray::GetContext() const try { return Context::cpu(impl_->array.ctx().dev_id); } SYMBIND_CPP_RECORD_ERRORS

std::ostream& operator<<(std::ostream& out, const NDArray& ndarray) try {
  if (ndarray.IsNone()) return out << "[empty NDArray]";
  // MXNet prints the values row by row (rows of the last axis), then the shape.
  std::vector<float> v = compat::Native(ndarray).ToVector();
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
} SYMBIND_CPP_RECORD_ERRORS

namespace detail {
float XavierScale(const std::vector<mx_uint>& shape, int factor_type, float magnitude) try {
  symbind::Xavier x;
  x.factor = factor_type == Xavier::in    ? symbind::Xavier::Factor::kIn
             : factor_type == Xavier::out ? symbind::Xavier::Factor::kOut
                                          : symbind::Xavier::Factor::kAvg;
  x.magnitude = magnitude;
  return x.Scale(ToTShape(shape));
} SYMBIND_CPP_RECORD_ERRORS
}  // namespace detail

}  // namespace cpp
}  // namespace mxnet
