// The (height, width, channels) images of MXNet's OpenCV operators (`_cvimresize`,
// `_cvcopyMakeBorder`): the shape and dtype checks they share, and OpenCV's border rule.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {
namespace cv_image {

// Throws ShapeError unless `s` is (height, width, channels) with 1 to 4 channels.
inline void CheckImageShape(const TShape& s, const char* op) {
  if (s.ndim() != 3 || s[2] < 1 || s[2] > 4)
    throw ShapeError(StrCat(op, ": the image must be (height, width, channels) with 1 to 4 channels, got ", s));
}

// Type inference: the output has the image's dtype, one of `allowed`.
inline void InferImageType(std::vector<int>* in, std::vector<int>* out, const std::vector<DType>& allowed,
                           const char* op) {
  InferSameType(NodeAttrs(), in, out);
  const int t = (*in)[0];
  if (t < 0) return;
  for (DType a : allowed)
    if (static_cast<int>(a) == t) return;
  std::string names;
  for (DType a : allowed) names += StrCat(names.empty() ? "" : ", ", DTypeName(a));
  throw TypeError(StrCat(op, ": images of dtype ", DTypeName(static_cast<DType>(t)), " are not supported (",
                         names, ")"));
}

// OpenCV's border types (cv::BorderTypes) that copyMakeBorder takes.
enum Border { kConstant = 0, kReplicate = 1, kReflect = 2, kWrap = 3, kReflect101 = 4 };

// The source index for position p (possibly outside [0, n)) under `border` (not kConstant),
// as OpenCV's borderInterpolate: replicate aaa|abc|ccc, reflect cba|abc|cba, wrap bc|abc|ab,
// reflect-101 cb|abc|ba.
inline int64_t BorderIndex(int64_t p, int64_t n, int border) {
  if (p >= 0 && p < n) return p;
  if (border == kReplicate) return p < 0 ? 0 : n - 1;
  if (border == kWrap) return ((p % n) + n) % n;
  if (n == 1) return 0;
  const int64_t delta = border == kReflect101 ? 1 : 0;
  while (p < 0 || p >= n) p = p < 0 ? -p - 1 + delta : 2 * n - p - 1 - delta;
  return p;
}

}  // namespace cv_image
}  // namespace symbind
