// Face embeddings from any InsightFace-style recognition export (ArcFace ResNets,
// MobileFaceNet, ...): 112x112 aligned crops in, the output `fc1` (or the model's last output)
// L2-normalised, optionally averaged with the mirror image's embedding before normalising.
//
//   FaceEmbedder embedder(LoadModelSpec("model-r100-ii/model,0"));
//   std::vector<float> a = embedder.Embed(aligner.Align(image_a, face_a));
//   std::vector<float> b = embedder.Embed(aligner.Align(image_b, face_b));
//   bool same = CosineSimilarity(a, b) >= kSameFaceThreshold;
#pragma once
#include <symbind/vision/face_batch.h>

#include <vector>

namespace symbind {
namespace vision {

struct FaceEmbedderOptions {
  FaceInputOptions input;
  bool flip = false;  // average with the embedding of the mirror image (InsightFace's test-time flip)
};

// Cosine similarity at or above which symbind-faces compare calls two embeddings the same
// person: a common operating point for ArcFace-family models on aligned crops; measure your
// model's on pairs of your own and pass symbind-faces --same-threshold.
constexpr double kSameFaceThreshold = 0.3;

// Cosine similarity of two vectors of the same size (the dot product for normalised ones).
double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b);

class FaceEmbedder {
 public:
  explicit FaceEmbedder(Model model, const FaceEmbedderOptions& options = {});
  // One unit-length embedding per crop, in order; crops are batched.
  std::vector<std::vector<float>> Embed(const std::vector<Image>& crops);
  std::vector<float> Embed(const Image& crop);
  const FaceEmbedderOptions& options() const { return options_; }
  const std::string& output_name() const { return net_.output_name(); }
  size_t num_predictors() const { return net_.num_predictors(); }

 private:
  FaceEmbedderOptions options_;
  FaceBatchNetwork net_;
};

}  // namespace vision
}  // namespace symbind
