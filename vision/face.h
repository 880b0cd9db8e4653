// A detected face, shared by the detectors (RetinaFaceDetector, MtcnnDetector), the aligner
// and the symbind-faces app, and drawing faces onto an image.
//
//   std::vector<Face> faces = detector.Detect(image);
//   for (const Face& f : faces) printf("%.1f %.1f %.1f %.1f %.3f\n", f.x1, f.y1, f.x2, f.y2, f.score);
//   DrawFaces(&image, faces);
//   SavePNG("faces.png", image);
#pragma once
#include <symbind/io/image.h>

#include <array>
#include <vector>

namespace symbind {
namespace vision {

struct Face {
  // Box corners in image pixels, inclusive (width = x2 - x1 + 1), and the detector's score.
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0, score = 0;
  // Five landmarks: left eye, right eye, nose, left and right mouth corner (as seen in the
  // image). Meaningful only when has_landmarks.
  bool has_landmarks = false;
  std::array<double, 5> px{}, py{};
};

// Intersection over union of two boxes (inclusive corners, as Nms).
double BoxIoU(const Face& a, const Face& b);

// Draws the faces (boxes, landmarks when present, scores) onto `image`.
void DrawFaces(Image* image, const std::vector<Face>& faces);

}  // namespace vision
}  // namespace symbind
