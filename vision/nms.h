// Non-maximum suppression over scored boxes, shared by the face detectors.
//
//   std::vector<size_t> keep = Nms(boxes, 0.4);        // IoU above 0.4 suppresses
//   std::vector<size_t> keep = Nms(boxes, 0.7, true);   // overlap over the smaller area
//
// `B` is any type with double-convertible members x1, y1, x2, y2 (inclusive pixel corners)
// and score, as vision::Face.
#pragma once
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace symbind {
namespace vision {

// Repeatedly keeps the highest-scoring box (among equal scores, the later one: scores are
// sorted stably and taken from the back, as MTCNN's and py-faster-rcnn's NumPy code does for
// ties) and drops every other whose overlap with it exceeds `threshold`; overlap is
// intersection over union, or over the smaller area when `min_mode`. Areas use inclusive
// coordinates ((x2 - x1 + 1) * (y2 - y1 + 1)). Returns the kept indices, best first.
template <typename B>
std::vector<size_t> Nms(const std::vector<B>& boxes, double threshold, bool min_mode = false) {
  std::vector<size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return boxes[a].score < boxes[b].score; });
  auto area = [](const B& b) { return (b.x2 - b.x1 + 1.0) * (b.y2 - b.y1 + 1.0); };
  std::vector<size_t> keep, rest;
  while (!order.empty()) {
    const size_t i = order.back();
    order.pop_back();
    keep.push_back(i);
    const B& a = boxes[i];
    rest.clear();
    for (size_t j : order) {
      const B& b = boxes[j];
      const double w = std::max(0.0, std::min<double>(a.x2, b.x2) - std::max<double>(a.x1, b.x1) + 1);
      const double h = std::max(0.0, std::min<double>(a.y2, b.y2) - std::max<double>(a.y1, b.y1) + 1);
      const double inter = w * h;
      const double overlap =
          min_mode ? inter / std::min(area(a), area(b)) : inter / (area(a) + area(b) - inter);
      if (!(overlap > threshold)) rest.push_back(j);
    }
    order.swap(rest);
  }
  return keep;
}

}  // namespace vision
}  // namespace symbind
