// Copying between one array and its parts along an axis: the kernel of Concat and SliceChannel
// (and of any op that joins or splits along an axis).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

// Moves data between one array viewed as (outer, sum_i mid_i, inner) and parts viewed as
// (outer, mid_i, inner). join: parts -> whole (written or added per `req[0]`);
// otherwise whole -> each part (per `req[i]`). A part written already in its place (an
// executor planned it inside the whole: Op::join_axis) is not copied onto itself; one that
// starts at its place starts there because it was so planned, its outer slices the whole's
// row apart (axis 1 at batch > 1: Op::strided_output), and is skipped whole.
inline void ConcatCopy(const NDArray& whole, const std::vector<NDArray>& parts, int axis, bool join,
                       const std::vector<OpReq>& req) {
  AxisLayout w = LayoutAround(whole.shape(), axis);
  std::vector<int64_t> offset(parts.size() + 1, 0), width(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    width[i] = parts[i].shape()[axis] * w.inner;
    offset[i + 1] = offset[i] + width[i];
  }
  int64_t row = w.n * w.inner;
  float* big = whole.fdata();
  // Joined parts that start at their place (planned there, images `row` apart): nothing to copy.
  std::vector<char> placed(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) placed[i] = join && parts[i].fdata() == big + offset[i];
  int64_t tasks = w.outer * static_cast<int64_t>(parts.size());
  ParallelFor(tasks, std::max<int64_t>(1, kElementwiseGrain / (row / static_cast<int64_t>(parts.size()) + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t t = b; t < e; ++t) {
                  int64_t o = t / static_cast<int64_t>(parts.size());
                  size_t i = static_cast<size_t>(t % static_cast<int64_t>(parts.size()));
                  OpReq r = join ? req[0] : req[i];
                  if (r == OpReq::kNull || width[i] == 0) continue;
                  float* whole_row = big + o * row + offset[i];
                  float* part_row = parts[i].fdata() + o * width[i];
                  float* dst = join ? whole_row : part_row;
                  const float* src = join ? part_row : whole_row;
                  if (r == OpReq::kWrite && (placed[i] || src == dst)) continue;
                  if (r == OpReq::kAdd)
                    for (int64_t j = 0; j < width[i]; ++j) dst[j] += src[j];
                  else
                    std::copy(src, src + width[i], dst);
                }
              });
}

}  // namespace symbind
