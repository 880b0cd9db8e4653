// Face alignment for recognition: the similarity transform (rotation, uniform scale,
// translation) taking a face's five landmarks closest, in least squares, to the ArcFace
// template, and the face warped through it, as InsightFace's norm_crop does.
//
//   FaceAligner aligner;                                  // 112x112, ArcFace's template
//   Image crop = aligner.Align(image, faces[0]);          // needs faces[0].has_landmarks
//   std::vector<float> embedding = embedder.Embed(crop);
//
// The transform is the least-squares similarity (Umeyama's, as skimage's
// SimilarityTransform.estimate; in 2-D it has the closed form below). The warp samples the
// source image bilinearly at each output pixel's centre mapped back through the transform,
// with exact weights (cv2.warpAffine's INTER_LINEAR quantises them to 1/32 pixel, so its crops
// differ by up to a few levels), pixels outside the image reading 0, results rounded to 8 bits.
#pragma once
#include <symbind/io/image.h>
#include <symbind/vision/face.h>

#include <array>

namespace symbind {
namespace vision {

// x' = a x - b y + tx, y' = b x + a y + ty.
struct SimilarityTransform {
  double a = 1, b = 0, tx = 0, ty = 0;
  void Apply(double x, double y, double* out_x, double* out_y) const {
    *out_x = a * x - b * y + tx;
    *out_y = b * x + a * y + ty;
  }
  SimilarityTransform Inverse() const;
};

// The least-squares similarity taking `src` points to `dst` points. Throws symbind::Error when
// the source points all coincide.
SimilarityTransform EstimateSimilarity(const std::array<double, 5>& src_x, const std::array<double, 5>& src_y,
                                       const std::array<double, 5>& dst_x, const std::array<double, 5>& dst_y);

// ArcFace's landmark template for a 112x112 crop: left eye, right eye, nose, mouth corners.
constexpr std::array<double, 5> kArcFaceTemplateX{{38.2946, 73.5318, 56.0252, 41.5493, 70.7299}};
constexpr std::array<double, 5> kArcFaceTemplateY{{51.6963, 51.5014, 71.7366, 92.3655, 92.2041}};

// `transform` maps image coordinates to the output's: out(x, y) = image(inverse(x, y)),
// bilinear, 0 outside. `out` keeps its size; its channels become the image's.
void WarpSimilarity(const Image& image, const SimilarityTransform& transform, Image* out);

class FaceAligner {
 public:
  // An output of size x size pixels, the template scaled by size / 112.
  explicit FaceAligner(int size = 112);
  int size() const { return size_; }
  // The transform from `face`'s landmarks to the template. Throws symbind::Error for a face
  // without landmarks.
  SimilarityTransform Transform(const Face& face) const;
  // The aligned face, size x size, with the image's channels.
  Image Align(const Image& image, const Face& face) const;
  // The same into `out` (its pixels reused).
  void Align(const Image& image, const Face& face, Image* out) const;

 private:
  int size_;
  std::array<double, 5> template_x_, template_y_;
};

}  // namespace vision
}  // namespace symbind
