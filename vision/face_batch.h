// A recognition-style model run over aligned face crops in batches, shared by FaceEmbedder and
// FaceAttributes: each crop is resized to the input size if needed, written as
// (value - mean[c]) * scale in RGB or BGR order, optionally followed by its mirror image, and
// the batch's output rows handed back per crop.
//
//   FaceBatchNetwork net(LoadModelSpec("model,0"), "embedder", FaceInputOptions{});
//   net.Run(crops, /*flip=*/true, [&](size_t face, bool flipped, const float* row, size_t n) { ... });
#pragma once
#include <symbind/io/image.h>
#include <symbind/vision/network.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace symbind {
namespace vision {

struct FaceInputOptions {
  int width = 112, height = 112;  // the model's input size
  // InsightFace's exports read RGB 0..255 and normalise inside the graph.
  bool bgr = false;
  std::array<float, 3> mean{{0, 0, 0}};  // in the tensor's channel order
  float scale = 1.0f;
  int max_batch = 16;  // crops (mirror images included) per forward
  // Output to read: a head or internal output by name ("fc1" stands for "fc1_output");
  // when the model has no such output, its last output.
  std::string output = "fc1";
};

class FaceBatchNetwork {
 public:
  using RowFn = std::function<void(size_t face, bool flipped, const float* row, size_t size)>;
  FaceBatchNetwork() = default;
  // `what` names the network in errors. Throws symbind::Error for bad options.
  FaceBatchNetwork(Model model, const std::string& what, const FaceInputOptions& options);
  // Runs every crop (and its mirror image when `flip`) and calls `row` for each, in order.
  // Batches are padded to a power of two (up to max_batch) so that predictors are reused.
  void Run(const std::vector<const Image*>& crops, bool flip, const RowFn& row);
  const std::string& output_name() const { return output_; }
  const FaceInputOptions& options() const { return options_; }
  size_t num_predictors() const { return net_.num_predictors(); }

 private:
  void Write(const Image& crop, bool flip, float* dst);

  FaceInputOptions options_;
  std::string output_;
  Network net_;
  std::vector<float> resized_;  // reused between calls
};

}  // namespace vision
}  // namespace symbind
