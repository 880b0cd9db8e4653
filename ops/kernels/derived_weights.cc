#include <symbind/ops/kernels/derived_weights.h>

#include <cstring>

#include <symbind/core/error.h>

namespace symbind {

namespace {
// Filled by the registrars' static initialisers, read-only afterwards.
std::vector<FormCodec>& Codecs() {
  static std::vector<FormCodec> codecs;
  return codecs;
}
}  // namespace

FormCodecRegistrar::FormCodecRegistrar(const FormCodec& codec) { Codecs().push_back(codec); }

const FormCodec* FindFormCodec(std::type_index type) {
  for (const FormCodec& c : Codecs())
    if (c.type == type) return &c;
  return nullptr;
}

const FormCodec* FindFormCodec(const std::string& name) {
  for (const FormCodec& c : Codecs())
    if (name == c.name) return &c;
  return nullptr;
}

SavedForm SavePackedPanels(const std::vector<PackedGemmA>& parts) {
  SavedForm saved;
  saved.header.push_back(static_cast<int64_t>(parts.size()));
  for (const PackedGemmA& a : parts) {
    saved.header.insert(saved.header.end(), {a.rows(), a.depth(), a.mr(), static_cast<int64_t>(a.tiling())});
    saved.arrays.push_back(FloatSpan{a.data(), a.floats()});
  }
  return saved;
}

std::unique_ptr<std::vector<PackedGemmA>> LoadPackedPanels(const std::vector<int64_t>& header,
                                                           const std::vector<FloatSpan>& arrays,
                                                           const std::shared_ptr<const void>& keep) {
  if (header.empty() || header[0] < 0 || header.size() != 1 + 4 * static_cast<size_t>(header[0]) ||
      arrays.size() != static_cast<size_t>(header[0]))
    throw Error(StrCat("packed panels: a header of ", header.size(), " integers and ", arrays.size(),
                       " arrays do not describe a list of panels"));
  auto parts = std::make_unique<std::vector<PackedGemmA>>();
  for (size_t i = 0; i < arrays.size(); ++i) {
    const int64_t* h = header.data() + 1 + 4 * i;
    if (h[2] < 1 || h[2] > 64 || (h[3] != static_cast<int64_t>(GemmTiling::kWide) && h[3] != static_cast<int64_t>(GemmTiling::kTall)))
      throw Error(StrCat("packed panels: part ", i, " has panel height ", h[2], " and tiling ", h[3]));
    auto view = PackedGemmA::View(h[0], h[1], static_cast<int>(h[2]), static_cast<GemmTiling>(h[3]), arrays[i].data,
                                  arrays[i].size, keep);
    if (!view) return nullptr;
    parts->push_back(*view);
  }
  return parts;
}

void CheckPackedPanels(const std::vector<PackedGemmA>& parts, size_t count, int64_t rows, int64_t depth,
                       GemmTiling tiling, const char* what) {
  bool fits = parts.size() == count;
  for (size_t i = 0; fits && i < parts.size(); ++i)
    fits = parts[i].rows() == rows && parts[i].depth() == depth && parts[i].tiling() == tiling;
  if (!fits)
    throw Error(StrCat(what, ": the stored form does not fit the layer (", count, " x ", rows, " x ", depth,
                       " panels expected); the model file is damaged"));
}

}  // namespace symbind
