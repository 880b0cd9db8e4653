// Hand-built .symbind files for the model-file tests and docs/errors.md: a description of a
// model as plain fields (RawModel), written with the generated FlatBuffers builder exactly as
// given, so a test can make any field wrong on purpose.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#ifndef FLATBUFFERS_MAX_ALIGNMENT
#define FLATBUFFERS_MAX_ALIGNMENT 64  // as io/model_file.cc: data aligned to 64 bytes
#endif
#include <flatbuffers/flatbuffers.h>

#include "model_generated.h"

namespace symbind::test {

struct RawEntry {
  uint32_t node, index;
};
struct RawNode {
  std::string op, name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<RawEntry> inputs;
};
struct RawParam {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::string data;  // raw bytes
  bool aligned = true;  // false: data deliberately not on a 64-byte boundary
};
struct RawShape {
  std::string name;
  std::vector<int64_t> dims;
};
struct RawModel {
  uint32_t format_version = 1;
  int32_t mxnet_version = 10600;
  std::vector<RawNode> nodes;
  std::vector<uint32_t> arg_nodes, aux_nodes;
  std::vector<RawEntry> heads;
  std::vector<RawShape> input_shapes;
  std::vector<RawParam> params;
};

inline std::string FloatBytes(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// data (2,3) -> FullyConnected(num_hidden=2) "fc" with fc_weight (2,3) and fc_bias (2).
inline RawModel ValidRawModel() {
  RawModel m;
  m.nodes = {{"null", "data", {}, {}},
             {"null", "fc_weight", {}, {}},
             {"null", "fc_bias", {}, {}},
             {"FullyConnected", "fc", {{"num_hidden", "2"}}, {{0, 0}, {1, 0}, {2, 0}}}};
  m.arg_nodes = {0, 1, 2};
  m.heads = {{3, 0}};
  m.input_shapes = {{"data", {2, 3}}};
  m.params = {{"arg:fc_weight", 0, {2, 3}, FloatBytes({1, 2, 3, 4, 5, 6}), true},
              {"arg:fc_bias", 0, {2}, FloatBytes({0.5f, -0.5f}), true}};
  return m;
}

inline std::string BuildRaw(const RawModel& m, size_t misalign_pad = 0) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<flatbuffers::Vector<uint8_t>>> data;
  for (auto& p : m.params) {
    if (p.aligned) b.ForceVectorAlignment(p.data.size(), 1, 64);
    data.push_back(b.CreateVector(reinterpret_cast<const uint8_t*>(p.data.data()), p.data.size()));
    if (!p.aligned) b.CreateString(std::string(misalign_pad, 'p'));  // shifts what follows
  }
  // Each piece in its own statement, in the order GCC evaluates the arguments of one call (right
  // to left): the bytes then do not depend on the compiler, and the byte offsets in the expected
  // messages (docs/errors.md) hold for every build.
  std::vector<flatbuffers::Offset<fb::Param>> params;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const auto dims = b.CreateVector(m.params[i].dims);
    const auto name = b.CreateString(m.params[i].name);
    params.push_back(fb::CreateParam(b, name, m.params[i].dtype, dims, data[i]));
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (auto& n : m.nodes) {
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    for (auto& kv : n.attrs) {
      const auto value = b.CreateString(kv.second);
      const auto key = b.CreateString(kv.first);
      attrs.push_back(fb::CreateAttr(b, key, value));
    }
    std::vector<fb::Entry> inputs;
    for (auto& e : n.inputs) inputs.emplace_back(e.node, e.index, 0);
    const auto input_vector = b.CreateVectorOfStructs(inputs);
    const auto attr_vector = b.CreateVector(attrs);
    const auto name = b.CreateString(n.name);
    const auto op = b.CreateString(n.op);
    nodes.push_back(fb::CreateNode(b, op, name, attr_vector, input_vector));
  }
  std::vector<fb::Entry> heads;
  for (auto& e : m.heads) heads.emplace_back(e.node, e.index, 0);
  std::vector<flatbuffers::Offset<fb::InputShape>> shapes;
  for (auto& s : m.input_shapes) {
    const auto dims = b.CreateVector(s.dims);
    const auto name = b.CreateString(s.name);
    shapes.push_back(fb::CreateInputShape(b, name, dims));
  }
  const auto param_vector = b.CreateVector(params);
  const auto shape_vector = b.CreateVector(shapes);
  const auto head_vector = b.CreateVectorOfStructs(heads);
  const auto aux_vector = b.CreateVector(m.aux_nodes);
  const auto arg_vector = b.CreateVector(m.arg_nodes);
  const auto node_vector = b.CreateVector(nodes);
  auto root = fb::CreateModel(b, m.format_version, m.mxnet_version, node_vector, arg_vector, aux_vector, head_vector,
                              shape_vector, param_vector);
  fb::FinishModelBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// A file whose first param's data does not start on a 64-byte boundary of the file.
inline std::string MisalignedDataFile() {
  RawModel m = ValidRawModel();
  m.params[0].aligned = false;
  for (size_t pad = 1; pad < 128; ++pad) {
    const std::string s = BuildRaw(m, pad);
    const auto* model = fb::GetModel(s.data());
    for (const fb::Param* p : *model->params())
      if (p->name()->str() == m.params[0].name &&
          (p->data()->data() - reinterpret_cast<const uint8_t*>(s.data())) % 64 != 0)
        return s;
  }
  return std::string();
}

// Byte positions inside a valid file, for corrupting one field in place.
inline size_t PosOf(const std::string& file, const void* p) {
  return static_cast<size_t>(static_cast<const char*>(p) - file.data());
}
inline void PutI32(std::string* file, size_t pos, int32_t v) { std::memcpy(&(*file)[pos], &v, 4); }
inline void PutU32(std::string* file, size_t pos, uint32_t v) { std::memcpy(&(*file)[pos], &v, 4); }

}  // namespace symbind::test
