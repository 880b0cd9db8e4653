#include <symbind/vision/face.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace symbind {
namespace vision {

double BoxIoU(const Face& a, const Face& b) {
  const double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1) + 1);
  const double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1) + 1);
  const double inter = w * h;
  const double area_a = (a.x2 - a.x1 + 1) * (a.y2 - a.y1 + 1);
  const double area_b = (b.x2 - b.x1 + 1) * (b.y2 - b.y1 + 1);
  return inter / (area_a + area_b - inter);
}

void DrawFaces(Image* image, const std::vector<Face>& faces) {
  const int t = std::max(1, std::min(image->width, image->height) / 300);
  for (const Face& f : faces) {
    DrawRect(image, static_cast<int>(std::lround(f.x1)), static_cast<int>(std::lround(f.y1)),
             static_cast<int>(std::lround(f.x2)), static_cast<int>(std::lround(f.y2)), 0, 255, 0,
             t);
    if (f.has_landmarks)
      for (int k = 0; k < 5; ++k)
        DrawDot(image, static_cast<float>(f.px[k]), static_cast<float>(f.py[k]), 1.5f * t, 255, 0, 0);
    char label[16];
    std::snprintf(label, sizeof(label), "%.3f", f.score);
    DrawText(image, static_cast<int>(std::lround(f.x1)),
             static_cast<int>(std::lround(f.y1)) - 10 * t, label, 255, 255, 0,
             static_cast<float>(t));
  }
}

}  // namespace vision
}  // namespace symbind
