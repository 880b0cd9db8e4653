// ONNX models both ways, in libsymbind_onnx (built when Debian's libonnx-dev is found; the
// CLI and tests link it, libsymbind itself does not depend on ONNX or protobuf). The op
// mapping tables, opsets and what is lossy: docs/onnx.md.
//
// Export writes the inference form of a model: Dropout is the identity, loss heads
// (SoftmaxOutput) are their softmax, labels are dropped, MXNet's shape codes (Reshape's
// 0/-1/-2/-3/-4, Crop's reference input) are resolved for the input shapes given. The file
// passes onnx::checker::check_model and strict shape inference before it is written.
//
// Import gives a Symbol whose ops are symbind's own, so a loaded ONNX model binds, rewrites
// and runs as one loaded from MXNet files. Initializers become parameters (BatchNorm's mean
// and variance aux states), graph inputs that are not initializers become data arguments
// (with their static shapes in Model::input_shapes). External tensor data is read only from
// files inside the model's own folder; an in-memory buffer may not refer to any.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <symbind/io/model_file.h>

namespace symbind {

// Opsets of the default ONNX domain each direction handles.
constexpr int kOnnxExportMinOpset = 11, kOnnxExportMaxOpset = 17, kOnnxExportDefaultOpset = 13;
constexpr int kOnnxImportMinOpset = 9, kOnnxImportMaxOpset = 17;

struct OnnxExportOptions {
  int opset = kOnnxExportDefaultOpset;
  // Shapes of the data inputs; when empty, the model's stored input_shapes.
  std::map<std::string, TShape> input_shapes;
};

// The serialized ModelProto. Throws ParamError listing every node whose op (or op setting)
// has no ONNX form, ShapeError when an input shape is missing.
std::string SaveOnnxToString(const Model& model, const OnnxExportOptions& options = {});
void SaveOnnx(const std::string& path, const Model& model, const OnnxExportOptions& options = {});

// Throws IOError for a file that is not a valid ONNX model, ParamError listing every node
// whose op (or attribute) symbind does not map.
Model LoadOnnx(const std::string& path);
Model LoadOnnxBuffer(const void* data, size_t size, const std::string& where = "ONNX buffer");

// The MXNet ops export maps (canonical names), and the ONNX op types import maps, sorted.
std::vector<std::string> OnnxExportedOps();
std::vector<std::string> OnnxImportedOps();

}  // namespace symbind
