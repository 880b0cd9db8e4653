#include <symbind/vision/face_embedder.h>

#include <cmath>

namespace symbind {
namespace vision {

double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b) {
  SYMBIND_CHECK(a.size() == b.size() && !a.empty(), "cosine similarity: embeddings of sizes ", a.size(), " and ",
                b.size());
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) dot += double(a[i]) * b[i], na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

FaceEmbedder::FaceEmbedder(Model model, const FaceEmbedderOptions& options)
    : options_(options), net_(std::move(model), "face embedder", options.input) {}

std::vector<std::vector<float>> FaceEmbedder::Embed(const std::vector<Image>& crops) {
  std::vector<const Image*> pointers;
  for (const Image& c : crops) pointers.push_back(&c);
  std::vector<std::vector<float>> out(crops.size());
  net_.Run(pointers, options_.flip, [&](size_t face, bool, const float* row, size_t size) {
    std::vector<float>& e = out[face];
    if (e.empty()) e.assign(row, row + size);
    else
      for (size_t i = 0; i < size; ++i) e[i] += row[i];
  });
  for (std::vector<float>& e : out) {
    double norm = 0;
    for (float v : e) norm += double(v) * v;
    norm = std::sqrt(norm);
    if (norm > 0)
      for (float& v : e) v = static_cast<float>(v / norm);
  }
  return out;
}

std::vector<float> FaceEmbedder::Embed(const Image& crop) { return Embed(std::vector<Image>{crop}).at(0); }

}  // namespace vision
}  // namespace symbind
