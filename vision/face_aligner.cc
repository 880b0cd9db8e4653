#include <symbind/vision/face_aligner.h>

#include <cmath>

namespace symbind {
namespace vision {

SimilarityTransform SimilarityTransform::Inverse() const {
  const double d = a * a + b * b;
  SYMBIND_CHECK(d > 0, "similarity transform: not invertible (zero scale)");
  SimilarityTransform inv;
  inv.a = a / d;
  inv.b = -b / d;
  inv.tx = -(inv.a * tx - inv.b * ty);
  inv.ty = -(inv.b * tx + inv.a * ty);
  return inv;
}

SimilarityTransform EstimateSimilarity(const std::array<double, 5>& src_x, const std::array<double, 5>& src_y,
                                       const std::array<double, 5>& dst_x, const std::array<double, 5>& dst_y) {
  const int n = 5;
  double mx = 0, my = 0, mu = 0, mv = 0;
  for (int i = 0; i < n; ++i) mx += src_x[i], my += src_y[i], mu += dst_x[i], mv += dst_y[i];
  mx /= n, my /= n, mu /= n, mv /= n;
  // With centred points, minimising sum |(a x - b y, b x + a y) - (u, v)|^2 gives
  // a = sum(x u + y v) / sum(x^2 + y^2), b = sum(x v - y u) / sum(x^2 + y^2).
  double norm = 0, dot = 0, cross = 0;
  for (int i = 0; i < n; ++i) {
    const double x = src_x[i] - mx, y = src_y[i] - my, u = dst_x[i] - mu, v = dst_y[i] - mv;
    norm += x * x + y * y;
    dot += x * u + y * v;
    cross += x * v - y * u;
  }
  SYMBIND_CHECK(norm > 0 && std::isfinite(norm), "face alignment: the five landmarks coincide (or are not finite)");
  SimilarityTransform t;
  t.a = dot / norm;
  t.b = cross / norm;
  t.tx = mu - (t.a * mx - t.b * my);
  t.ty = mv - (t.b * mx + t.a * my);
  return t;
}

void WarpSimilarity(const Image& image, const SimilarityTransform& transform, Image* out) {
  SYMBIND_CHECK(image.width > 0 && image.height > 0 && image.channels >= 1 && image.channels <= 4,
                "face alignment: need a non-empty image of 1..4 channels, got ", image.width, "x", image.height, "x",
                image.channels);
  SYMBIND_CHECK(out->width > 0 && out->height > 0, "face alignment: empty output size");
  const int c = image.channels;
  out->channels = c;
  out->pixels.assign(static_cast<size_t>(out->width) * out->height * c, 0);
  const SimilarityTransform inv = transform.Inverse();
  for (int y = 0; y < out->height; ++y)
    for (int x = 0; x < out->width; ++x) {
      double sx, sy;
      inv.Apply(x, y, &sx, &sy);
      if (!(sx > -1 && sy > -1 && sx < image.width && sy < image.height)) continue;  // all four taps outside
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      const float fx = static_cast<float>(sx - x0), fy = static_cast<float>(sy - y0);
      uint8_t* dst = out->at(x, y);
      for (int k = 0; k < c; ++k) {
        auto tap = [&](int px, int py) -> float {
          if (px < 0 || py < 0 || px >= image.width || py >= image.height) return 0.0f;
          return image.at(px, py)[k];
        };
        const float top = (1 - fx) * tap(x0, y0) + fx * tap(x0 + 1, y0);
        const float bottom = (1 - fx) * tap(x0, y0 + 1) + fx * tap(x0 + 1, y0 + 1);
        const float v = (1 - fy) * top + fy * bottom;
        dst[k] = static_cast<uint8_t>(std::lround(std::min(255.0f, std::max(0.0f, v))));
      }
    }
}

FaceAligner::FaceAligner(int size) : size_(size) {
  SYMBIND_CHECK(size > 0 && size <= 4096, "face alignment: output size ", size, " is not in 1..4096");
  for (int i = 0; i < 5; ++i) {
    template_x_[i] = kArcFaceTemplateX[i] * size / 112.0;
    template_y_[i] = kArcFaceTemplateY[i] * size / 112.0;
  }
}

SimilarityTransform FaceAligner::Transform(const Face& face) const {
  SYMBIND_CHECK(face.has_landmarks, "face alignment: the face has no landmarks (use a detector with landmark heads)");
  return EstimateSimilarity(face.px, face.py, template_x_, template_y_);
}

Image FaceAligner::Align(const Image& image, const Face& face) const {
  Image out;
  Align(image, face, &out);
  return out;
}

void FaceAligner::Align(const Image& image, const Face& face, Image* out) const {
  out->width = size_;
  out->height = size_;
  WarpSimilarity(image, Transform(face), out);
}

}  // namespace vision
}  // namespace symbind
