// One-file models (".symbind"): the graph and every parameter array in one FlatBuffers buffer
// (schema io/model.fbs, layout in docs/formats.md). Loading maps the file read-only and reads
// it in place: parameter NDArrays are views into the mapping (no parsing, no copy), so
// processes serving one model share its weight pages.
//
// Mapped parameters are read-only (NDArray::read_only()): Fill, SetFlat, CopyTo and
// SyncCopyFromCPU into them throw, a training executor binds copies of them, and a stray raw
// write faults (PROT_READ) rather than change the file.
//
// Every file is verified before use (FlatBuffers verifier, then offsets, alignment, dtype
// codes, shape against data length with overflow-checked arithmetic, node references, heads,
// duplicate names); a bad file throws IOError naming the file and what is wrong.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>

namespace symbind {

// Written into every file; readers refuse files of a newer format.
constexpr uint32_t kModelFormatVersion = 1;

// A form a kernel derived from one parameter (PrepackModel, predict/prepack.h), as a codec of
// ops/kernels/derived_weights.h writes it.
struct StoredForm {
  std::string param;              // a name in Model::args or Model::aux
  std::string codec;              // FormCodec::name
  std::vector<int64_t> key;       // the parameter's rank and dims, then the kernel's layout
  std::vector<int64_t> header;
  std::vector<NDArray> arrays;    // float32, 1-D
};

struct Model {
  Symbol symbol;
  std::map<std::string, NDArray> args, aux;  // names without the "arg:" / "aux:" prefix
  std::map<std::string, TShape> input_shapes;  // optional shapes stored with the model
  // Prepacked forms for the instruction set `forms_isa` (GemmIsa()'s names). LoadModel hands
  // them to the parameters' kernels when this process runs that instruction set; forms_in_use
  // counts them (0 for another instruction set or codecs this build lacks).
  std::string forms_isa{};
  std::vector<StoredForm> forms{};
  size_t forms_in_use = 0;
};

// The file image; arrays are written with their data 64-byte aligned within the file.
std::string SaveModelToString(const Model& model);
void SaveModel(const std::string& path, const Model& model);

// Maps `path` read-only; args and aux view the mapping, which lives as long as any of them.
Model LoadModel(const std::string& path);
// Reads a file image from memory (the bytes are copied once into aligned storage that the
// arrays then view). `where` names the source in errors.
Model LoadModelBuffer(const void* data, size_t size, const std::string& where = "model buffer");

// True when `path` starts like a .symbind file (FlatBuffers file identifier "SBMD"). Throws
// IOError when `path` cannot be read or is not a regular file (RegularFile: a FIFO is refused,
// not waited on).
bool IsModelFile(const std::string& path);
// The same for `size` bytes in memory (false for fewer than 8 or a null pointer).
bool IsModelBuffer(const void* data, size_t size);

// The one place tools load a model: a .symbind file or an ONNX model (`params_path` must then
// be empty, the parameters are inside it), or a symbol JSON with an optional MXNet .params file
// holding "arg:" / "aux:" arrays. Arrays of a .symbind or .params file are read-only views of
// the mapped file (write into a Copy()). ONNX needs libsymbind_onnx loaded (it registers itself with
// SetOnnxModelLoader); without it an ONNX file is an IOError saying so.
Model LoadModelFiles(const std::string& model_or_symbol_path, const std::string& params_path = "");
// The same for an MXNet checkpoint: PREFIX-symbol.json and PREFIX-EPOCH.params (4 digits).
Model LoadCheckpointFiles(const std::string& prefix, int epoch);

// How LoadModelFiles reads an ONNX file; set by libsymbind_onnx when it is loaded.
using ModelFileLoader = Model (*)(const std::string& path);
void SetOnnxModelLoader(ModelFileLoader loader);

}  // namespace symbind
