// Tensors between NDArray and onnx::TensorProto, for the exporter and the importer (private to
// libsymbind_onnx: it includes ONNX's protobuf classes).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <symbind/core/ndarray.h>

namespace symbind::onnx_io {

// ONNX's TensorProto::DataType for a symbind dtype; throws TypeError for one ONNX lacks.
int OnnxElemType(DType dtype);
// The symbind dtype of an ONNX element type; throws TypeError naming `what` for others.
DType DTypeOfOnnx(int elem_type, const std::string& what);

// `array` as an initializer named `name` (raw little-endian data).
void ToTensorProto(const NDArray& array, const std::string& name, onnx::TensorProto* tensor);

// A copy of the tensor's data. External data is read from `model_dir` only: a location that is
// absolute, leaves the folder or is a link out of it is refused, as is any when `model_dir` is
// empty (a model read from memory). Throws IOError naming the tensor for a shape that does not
// match its data, negative or overflowing dims and unsupported types.
NDArray FromTensorProto(const onnx::TensorProto& tensor, const std::string& model_dir);

// The file an external-data tensor's location names inside `model_dir`; IOError for one that
// is absolute or leaves the folder, and for any when `model_dir` is empty.
std::string ExternalDataPath(const onnx::TensorProto& tensor, const std::string& model_dir);

// The values of an integer or float tensor as int64 / float (shape inputs, scales, pads).
std::vector<int64_t> Int64Values(const NDArray& array);
std::vector<float> FloatValues(const NDArray& array);

// The keys of a converter table, sorted (the op lists OnnxExportedOps / OnnxImportedOps give).
template <typename Map>
std::vector<std::string> SortedKeys(const Map& table) {
  std::vector<std::string> names;
  for (const auto& kv : table) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace symbind::onnx_io
