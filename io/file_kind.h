// Recognises model and data file formats by their first bytes, so that a loader given the
// wrong kind of file (an ONNX model, a .params file where JSON is expected, two arguments
// swapped) can name what it got instead of failing deep inside its own parser.
#pragma once
#include <cstddef>
#include <string>

namespace symbind {

enum class FileKind { kUnknown, kSymbolJson, kParams, kSymbindModel, kOnnx, kNpy, kJpeg, kPng };

// The format whose signature the first `size` bytes of a file carry.
FileKind DetectFileKind(const void* data, size_t size);
// The format of the file at `path` from its first bytes. Throws IOError when `path` cannot be
// read or is not a regular file (RegularFile).
FileKind DetectFileKindOfPath(const std::string& path);

// "an ONNX model", "MXNet symbol JSON", ... for messages.
const char* FileKindName(FileKind kind);

// "`path`: this is <kind>, not <expected>: symbind reads MXNet symbol JSON, .params and
// .symbind models[; hint]". Returns "" for kUnknown and for `expected` itself.
std::string WrongFileKindMessage(const std::string& path, FileKind got, FileKind expected);

}  // namespace symbind
