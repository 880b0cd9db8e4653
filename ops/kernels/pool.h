// Pooling windows and the 2-D max/avg fast path. The window arithmetic follows MXNet's pool.h;
// ops/nn/pooling.cc uses it for its general (1-D/2-D/3-D, every pool type) path too.
#pragma once

#include <algorithm>
#include <cstdint>

#include <symbind/ops/kernels/im2col.h>

namespace symbind {
namespace conv {

// One output position's window along one axis: [start, end) clipped to the input, and the
// extent clipped only to the padded input (the avg divisor with padding).
struct Window {
  int64_t start, end, padded_extent;
};
inline Window AxisWindow(const ConvGeom& g, int a, int64_t o, bool for_sum) {
  int64_t start = o * g.s[a] - g.p[a];
  int64_t end = std::min(start + g.k[a], for_sum ? g.in[a] + g.p[a] : g.in[a]);
  const int64_t padded_extent = end - start;
  start = std::max<int64_t>(start, 0);
  end = std::min(end, g.in[a]);
  return {start, end, padded_extent};
}

// The fast path covers planar (2-D) windows of 2x2 or 3x3 with column stride 1 or 2.
bool Pool2dFastApplies(const ConvGeom& g);
// Max or avg pooling of `planes` planes (x: planes * in_size, y: planes * out_size), in parallel
// over planes. Gives the same bits as the general path: every output folds its in-image
// elements in (row, column) order, avg dividing each term by the window size (clipped to the
// padded input, or to the input without include_pad); max starts from -FLT_MAX and ignores NaN.
// One exception: max takes the window's columns, then its rows, so where the maximum is zero
// and the window holds both +0 and -0, the sign may differ from the general path's (the first
// zero in row order). `add`: y +=.
void Pool2dForward(const float* x, float* y, int64_t planes, const ConvGeom& g, bool max,
                   bool include_pad, bool add);

// Global avg pooling of `planes` planes of `size` elements each: the sum of x / size. The terms
// go to 16 partial sums (element i to sum i % 16) added pairwise at the end, a fixed order for
// every ISA and thread count; MXNet sums in one sequence, so results differ from it by rounding
// (about 1e-7 relative), not by more.
void GlobalAvgPoolForward(const float* x, float* y, int64_t planes, int64_t size, bool add);

}  // namespace conv
}  // namespace symbind
