// Boxes as MXNet's contrib box operators read them: 4 values in corner format [xmin, ymin, xmax,
// ymax] or center format [x, y, width, height]; overlap and area as bounding_box's (box_nms,
// box_iou, bipartite matching's callers).
#pragma once
#include <algorithm>
#include <string>

namespace symbind {
namespace box {

enum BoxFormat { kCorner = 0, kCenter = 1 };

// A parameter naming a box format, "corner" or "center", as MXNet's box operators declare it;
// `what` begins its description ("The input box").
template <typename Field>
Field& BoxFormatField(Field& field, int default_format, const std::string& what) {
  return field.add_enum("corner", kCorner).add_enum("center", kCenter).set_default(default_format)
      .describe(what + " encoding type. \"corner\" means boxes are encoded as [xmin, ymin, xmax, ymax], "
                "\"center\" means boxes are encodes as [x, y, width, height].");
}

// Length of the overlap of [a0, a1] and [b0, b1] along one axis, given as (start, end) in corner
// format or (center, size) in center format; 0 when they do not overlap.
template <typename T>
T Overlap1D(T a0, T a1, T b0, T b1, int format) {
  if (format == kCenter) {
    const T aw = a1 / 2, bw = b1 / 2;
    const T al = a0 - aw, ar = a0 + aw, bl = b0 - bw, br = b0 + bw;
    a0 = al;
    a1 = ar;
    b0 = bl;
    b1 = br;
  }
  const T w = std::min(a1, b1) - std::max(a0, b0);
  return w > 0 ? w : T(0);
}

// A box's area; 0 for a negative width or height.
template <typename T>
T Area(const T* box, int format) {
  const T w = format == kCorner ? box[2] - box[0] : box[2];
  const T h = format == kCorner ? box[3] - box[1] : box[3];
  return (w < 0 || h < 0) ? T(0) : w * h;
}

// Intersection over union of two boxes; 0 when they do not intersect.
template <typename T>
T IntersectionOverUnion(const T* a, const T* b, int format) {
  const T inter = Overlap1D(a[0], a[2], b[0], b[2], format) * Overlap1D(a[1], a[3], b[1], b[3], format);
  if (inter <= 0) return T(0);
  return inter / (Area(a, format) + Area(b, format) - inter);
}

}  // namespace box
}  // namespace symbind
