#include "file_kind.h"

#include <cstdint>
#include <cstring>

#include <symbind/core/error.h>

#include "model_file.h"
#include "regular_file.h"

namespace symbind {

namespace {

// ONNX files are protobuf ModelProto messages, which start with field 1 (ir_version, a small
// varint: tag 0x08) followed by another field's tag: opset_import (0x42), producer_name (0x12),
// graph (0x3a) and the rest are all length-delimited fields numbered 2-20.
bool LooksLikeOnnx(const uint8_t* p, size_t n) {
  if (n < 3 || p[0] != 0x08 || p[1] == 0 || p[1] > 0x7f) return false;
  const uint8_t next = p[2];
  return (next & 0x07) == 2 && (next >> 3) >= 2 && (next >> 3) <= 20;
}

}  // namespace

FileKind DetectFileKind(const void* data, size_t size) {
  if (data == nullptr || size == 0) return FileKind::kUnknown;
  const auto* p = static_cast<const uint8_t*>(data);
  if (size >= 8) {
    uint64_t magic;
    std::memcpy(&magic, p, sizeof(magic));
    if (magic == 0x112) return FileKind::kParams;  // the NDArray list magic
  }
  if (IsModelBuffer(data, size)) return FileKind::kSymbindModel;
  if (size >= 6 && std::memcmp(p, "\x93NUMPY", 6) == 0) return FileKind::kNpy;
  if (size >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF) return FileKind::kJpeg;
  if (size >= 8 && std::memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) return FileKind::kPng;
  if (LooksLikeOnnx(p, size)) return FileKind::kOnnx;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(p[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' ? FileKind::kSymbolJson : FileKind::kUnknown;
  }
  return FileKind::kUnknown;
}

FileKind DetectFileKindOfPath(const std::string& path) {
  const std::string head = RegularFile(path).ReadHead(64);
  return DetectFileKind(head.data(), head.size());
}

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kSymbolJson: return "MXNet symbol JSON";
    case FileKind::kParams: return "an MXNet .params file";
    case FileKind::kSymbindModel: return "a .symbind model";
    case FileKind::kOnnx: return "an ONNX model";
    case FileKind::kNpy: return "a .npy array";
    case FileKind::kJpeg: return "a JPEG image";
    case FileKind::kPng: return "a PNG image";
    case FileKind::kUnknown: break;
  }
  return "a file of unknown format";
}

std::string WrongFileKindMessage(const std::string& path, FileKind got, FileKind expected) {
  if (got == FileKind::kUnknown || got == expected) return "";
  std::string hint;
  if (got == FileKind::kSymbindModel)
    hint = " (a .symbind model holds the symbol and its parameters: give it alone, or load it with LoadModel)";
  else if (got == FileKind::kParams && expected == FileKind::kSymbolJson)
    hint = " (give the symbol JSON first, then the .params file)";
  else if (got == FileKind::kSymbolJson && expected == FileKind::kParams)
    hint = " (give the symbol JSON first, then the .params file)";
  return StrCat(path, ": this is ", FileKindName(got), ", not ", FileKindName(expected),
                ": symbind reads MXNet symbol JSON, .params and .symbind models", hint);
}

}  // namespace symbind
