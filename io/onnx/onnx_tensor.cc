#include "onnx_tensor.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>

#include <symbind/core/error.h>
#include <symbind/io/regular_file.h>

namespace symbind::onnx_io {

namespace {
using TP = onnx::TensorProto;

struct TypePair {
  DType dtype;
  int onnx;
};
constexpr TypePair kTypes[] = {
    {DType::kFloat32, TP::FLOAT}, {DType::kFloat64, TP::DOUBLE}, {DType::kFloat16, TP::FLOAT16},
    {DType::kUint8, TP::UINT8},   {DType::kInt32, TP::INT32},    {DType::kInt8, TP::INT8},
    {DType::kInt64, TP::INT64},   {DType::kBool, TP::BOOL},      {DType::kBFloat16, TP::BFLOAT16},
};

// Copies the typed repeated field `values` into `out` as `T` (ONNX stores int8/uint8/int16/
// float16/bool in int32_data, uint32/uint64 in uint64_data).
template <typename T, typename Field>
void CopyTyped(const Field& values, const NDArray& out) {
  T* dst = static_cast<T*>(out.raw_data());
  for (int i = 0; i < values.size(); ++i) dst[i] = static_cast<T>(values.Get(i));
}

template <typename Field>
void CopyFloat16Bits(const Field& values, const NDArray& out) {
  auto* dst = static_cast<uint16_t*>(out.raw_data());
  for (int i = 0; i < values.size(); ++i) dst[i] = static_cast<uint16_t>(values.Get(i));
}

// The "location" of an external-data tensor.
std::string ExternalLocation(const TP& t) {
  for (const auto& kv : t.external_data())
    if (kv.key() == "location") return kv.value();
  return "";
}
}  // namespace

std::string ExternalDataPath(const TP& t, const std::string& model_dir) {
  const std::string location = ExternalLocation(t);
  if (model_dir.empty())
    throw IOError(StrCat("tensor ", t.name(), ": external data (", location,
                         ") is read only for a model loaded from a file, from that file's folder"));
  namespace fs = std::filesystem;
  const fs::path rel(location);
  if (location.empty() || rel.is_absolute() || rel.has_root_name())
    throw IOError(StrCat("tensor ", t.name(), ": external data location '", location,
                         "' must be a relative path inside the model's folder"));
  // Canonical paths: a ".." or a symlink that leaves the folder is caught as well.
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::path(model_dir), ec);
  const fs::path file = fs::weakly_canonical(fs::path(model_dir) / rel, ec);
  const auto [dir_end, file_it] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  if (ec || dir_end != dir.end() || file_it == file.end())
    throw IOError(StrCat("tensor ", t.name(), ": external data location '", location,
                         "' is outside the model's folder ", model_dir, "; refused"));
  return file.string();
}

namespace {
// The bytes of an external-data tensor, read from inside `model_dir`.
std::string ReadExternal(const TP& t, const std::string& model_dir, size_t want) {
  const std::string path = ExternalDataPath(t, model_dir);
  const std::string location = ExternalLocation(t);
  uint64_t offset = 0;
  int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() != "offset" && kv.key() != "length") continue;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(kv.value().c_str(), &end, 10);
    if (kv.value().empty() || *end != '\0' || kv.value()[0] == '-')
      throw IOError(StrCat("tensor ", t.name(), ": external data ", kv.key(), " '", kv.value(), "' is not a number"));
    if (kv.key() == "offset") offset = v;
    else length = static_cast<int64_t>(v);
  }
  if (length >= 0 && static_cast<size_t>(length) != want)
    throw IOError(StrCat("tensor ", t.name(), ": external data length ", length, " but its shape needs ", want, " bytes"));
  RegularFile f(path);
  if (offset > f.size() || f.size() - offset < want)
    throw IOError(StrCat("tensor ", t.name(), ": external data file ", location, " holds ", f.size(),
                         " bytes, too few for ", want, " bytes at offset ", offset));
  std::string bytes(want, '\0');
  size_t done = 0;
  while (done < want) {
    const ssize_t n = pread(f.fd(), bytes.data() + done, want - done, static_cast<off_t>(offset + done));
    if (n <= 0) throw IOError(StrCat("tensor ", t.name(), ": cannot read external data from ", location));
    done += static_cast<size_t>(n);
  }
  return bytes;
}
}  // namespace

int OnnxElemType(DType dtype) {
  for (const auto& p : kTypes)
    if (p.dtype == dtype) return p.onnx;
  throw TypeError(StrCat("dtype ", DTypeName(dtype), " has no ONNX tensor type"));
}

DType DTypeOfOnnx(int elem_type, const std::string& what) {
  for (const auto& p : kTypes)
    if (p.onnx == elem_type) return p.dtype;
  const char* name = TP::DataType_IsValid(elem_type) ? TP::DataType_Name(static_cast<TP::DataType>(elem_type)).c_str()
                                                      : "an unknown type";
  throw TypeError(StrCat(what, ": ONNX element type ", elem_type, " (", name, ") is not supported"));
}

void ToTensorProto(const NDArray& array, const std::string& name, TP* tensor) {
  tensor->set_name(name);
  tensor->set_data_type(OnnxElemType(array.dtype()));
  for (int i = 0; i < array.shape().ndim(); ++i) tensor->add_dims(array.shape()[i]);
  tensor->set_raw_data(array.raw_data(), array.bytes());
}

NDArray FromTensorProto(const TP& t, const std::string& model_dir) {
  const std::string what = StrCat("tensor ", t.name().empty() ? std::string("(unnamed)") : t.name());
  if (!t.has_data_type()) throw IOError(what + ": no data_type");
  const DType dtype = DTypeOfOnnx(t.data_type(), what);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) throw IOError(StrCat(what, ": negative dimension ", d));
    if (__builtin_mul_overflow(count, d, &count) || count > (int64_t{1} << 40))
      throw IOError(StrCat(what, ": dimensions ", TShape(dims).ToString(), " are too large"));
  }
  if (dims.size() > 32) throw IOError(StrCat(what, ": ", dims.size(), " dimensions"));
  const size_t bytes = static_cast<size_t>(count) * DTypeSize(dtype);
  std::string external;
  const std::string* raw = nullptr;
  if (t.data_location() == TP::EXTERNAL) {
    external = ReadExternal(t, model_dir, bytes);
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  NDArray out(TShape(dims), dtype);
  if (raw) {
    if (raw->size() != bytes)
      throw IOError(StrCat(what, ": raw_data holds ", raw->size(), " bytes, its shape ", TShape(dims).ToString(),
                           " of ", DTypeName(dtype), " needs ", bytes));
    if (bytes) std::memcpy(out.raw_data(), raw->data(), bytes);
    return out;
  }
  auto check_count = [&](int64_t n) {
    if (n != count)
      throw IOError(StrCat(what, ": holds ", n, " values, its shape ", TShape(dims).ToString(), " needs ", count));
  };
  switch (dtype) {
    case DType::kFloat32: check_count(t.float_data_size()); CopyTyped<float>(t.float_data(), out); break;
    case DType::kFloat64: check_count(t.double_data_size()); CopyTyped<double>(t.double_data(), out); break;
    case DType::kInt64: check_count(t.int64_data_size()); CopyTyped<int64_t>(t.int64_data(), out); break;
    case DType::kInt32: check_count(t.int32_data_size()); CopyTyped<int32_t>(t.int32_data(), out); break;
    case DType::kInt8: check_count(t.int32_data_size()); CopyTyped<int8_t>(t.int32_data(), out); break;
    case DType::kUint8: check_count(t.int32_data_size()); CopyTyped<uint8_t>(t.int32_data(), out); break;
    case DType::kBool: check_count(t.int32_data_size()); CopyTyped<bool>(t.int32_data(), out); break;
    case DType::kFloat16:
    case DType::kBFloat16: check_count(t.int32_data_size()); CopyFloat16Bits(t.int32_data(), out); break;
  }
  return out;
}

namespace {
// The values of a numeric array converted to T.
template <typename T>
std::vector<T> ValuesAs(const NDArray& a) {
  std::vector<T> v(static_cast<size_t>(a.Size()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (a.dtype()) {
      case DType::kInt64: v[i] = static_cast<T>(a.data<int64_t>()[i]); break;
      case DType::kInt32: v[i] = static_cast<T>(a.data<int32_t>()[i]); break;
      case DType::kFloat32: v[i] = static_cast<T>(a.data<float>()[i]); break;
      case DType::kFloat64: v[i] = static_cast<T>(a.data<double>()[i]); break;
      case DType::kBool: v[i] = static_cast<T>(a.data<bool>()[i]); break;
      case DType::kInt8: v[i] = static_cast<T>(a.data<int8_t>()[i]); break;
      case DType::kUint8: v[i] = static_cast<T>(a.data<uint8_t>()[i]); break;
      default: throw TypeError(StrCat("expected a numeric tensor, got ", DTypeName(a.dtype())));
    }
  }
  return v;
}
}  // namespace

std::vector<int64_t> Int64Values(const NDArray& a) { return ValuesAs<int64_t>(a); }
std::vector<float> FloatValues(const NDArray& a) { return ValuesAs<float>(a); }

}  // namespace symbind::onnx_io
