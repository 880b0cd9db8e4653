// Pooling: max, avg, sum and Lp pooling over 1-D, 2-D and 3-D windows (NCW, NCHW, NCDHW),
// with MXNet's output-size conventions (valid, full, same) and border arithmetic (pool.h).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include <symbind/ops/kernels/pool.h>
#include <symbind/ops/nn/pooling_param.h>

namespace symbind {

namespace {
using namespace conv;

// What each term is divided by: the window size for avg pooling (clipped to the padded input,
// or to the input without count_include_pad), 1 for sum and lp pooling.
inline float Divisor(const Window& wd, const Window& wh, const Window& ww, bool avg,
                     bool include_pad) {
  if (!avg) return 1.0f;
  const int64_t size = include_pad
                           ? wd.padded_extent * wh.padded_extent * ww.padded_extent
                           : (wd.end - wd.start) * (wh.end - wh.start) * (ww.end - ww.start);
  return static_cast<float>(size);
}

template <int P>
inline float PowP(float a) {
  if constexpr (P == 1) return a;
  else if constexpr (P == 2) return a * a;
  else return a * a * a;
}
template <int P>
inline float RootP(float a) {
  if constexpr (P == 1) return a;
  else if constexpr (P == 2) return std::sqrt(a);
  else return std::cbrt(a);
}
// d out / d in times the head gradient, as MXNet's lp_grad.
template <int P>
inline float LpGrad(float grad, float in, float out) {
  if constexpr (P == 1) return grad;
  else if constexpr (P == 2) return out == 0.0f ? 0.0f : grad * (in / out);
  else {
    const float r = in / out;
    return out == 0.0f ? 0.0f : grad * r * r;
  }
}

// Runs fn(plane) for every (n, c) plane in parallel.
template <typename F>
void ForEachPlane(int64_t planes, int64_t work_per_plane, const F& fn) {
  ParallelFor(planes, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, work_per_plane)),
              [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) fn(i);
              });
}

// Visits every output position of one plane with its three axis windows.
template <typename F>
void ForEachWindow(const ConvGeom& g, bool for_sum, const F& fn) {
  int64_t oi = 0;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const Window wd = AxisWindow(g, 0, od, for_sum);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const Window wh = AxisWindow(g, 1, oh, for_sum);
      for (int64_t ow = 0; ow < g.out[2]; ++ow, ++oi) fn(oi, wd, wh, AxisWindow(g, 2, ow, for_sum));
    }
  }
}

// Avg/sum/lp: sum of x^p / divisor over the window, then the p-th root (MXNet divides each
// term, not the sum). The divisor is 1 for sum and lp pooling.
template <int P>
void PoolSumPlane(const float* x, float* y, const ConvGeom& g, bool avg, bool include_pad,
                  OpReq req) {
  const int64_t H = g.in[1], W = g.in[2];
  ForEachWindow(g, true, [&](int64_t oi, const Window& wd, const Window& wh, const Window& ww) {
    const float div = Divisor(wd, wh, ww, avg, include_pad);
    float sum = 0.0f;
    for (int64_t d = wd.start; d < wd.end; ++d)
      for (int64_t h = wh.start; h < wh.end; ++h)
        for (int64_t w = ww.start; w < ww.end; ++w) sum += PowP<P>(x[(d * H + h) * W + w]) / div;
    const float v = RootP<P>(sum);
    y[oi] = req == OpReq::kAdd ? y[oi] + v : v;
  });
}

template <int P>
void UnpoolSumPlane(const float* dy, const float* x, const float* y, float* dx, const ConvGeom& g,
                    bool avg, bool include_pad) {
  const int64_t H = g.in[1], W = g.in[2];
  ForEachWindow(g, true, [&](int64_t oi, const Window& wd, const Window& wh, const Window& ww) {
    const float div = Divisor(wd, wh, ww, avg, include_pad);
    for (int64_t d = wd.start; d < wd.end; ++d)
      for (int64_t h = wh.start; h < wh.end; ++h)
        for (int64_t w = ww.start; w < ww.end; ++w) {
          const int64_t i = (d * H + h) * W + w;
          dx[i] += LpGrad<P>(dy[oi], x[i], y[oi]) / div;
        }
  });
}

// The column window of every output position along the width axis.
std::vector<Window> ColumnWindows(const ConvGeom& g) {
  std::vector<Window> cols;
  for (int64_t ow = 0; ow < g.out[2]; ++ow) cols.push_back(AxisWindow(g, 2, ow, false));
  return cols;
}

// Max: padding never wins (windows are clipped to the input); an empty window gives -FLT_MAX
// like MXNet's MinValue.
void PoolMaxPlane(const float* x, float* y, const ConvGeom& g, OpReq req) {
  const int64_t H = g.in[1], W = g.in[2];
  if (g.in[0] == 1 && g.k[0] == 1) {
    // 2-D: per output row, the column-wise max over the window's rows (contiguous, vectorised),
    // then the max over each window's columns of that row.
    const std::vector<Window> cols = ColumnWindows(g);
    std::vector<float> row(static_cast<size_t>(W));
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const Window wh = AxisWindow(g, 1, oh, false);
      std::fill(row.begin(), row.end(), -FLT_MAX);
      for (int64_t h = wh.start; h < wh.end; ++h) {
        const float* src = x + h * W;
        for (int64_t w = 0; w < W; ++w) row[w] = std::max(row[w], src[w]);
      }
      float* out = y + oh * g.out[2];
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        float m = -FLT_MAX;
        for (int64_t w = cols[ow].start; w < cols[ow].end; ++w) m = std::max(m, row[w]);
        out[ow] = req == OpReq::kAdd ? out[ow] + m : m;
      }
    }
    return;
  }
  ForEachWindow(g, false, [&](int64_t oi, const Window& wd, const Window& wh, const Window& ww) {
    float m = -FLT_MAX;
    for (int64_t d = wd.start; d < wd.end; ++d)
      for (int64_t h = wh.start; h < wh.end; ++h)
        for (int64_t w = ww.start; w < ww.end; ++w) m = std::max(m, x[(d * H + h) * W + w]);
    y[oi] = req == OpReq::kAdd ? y[oi] + m : m;
  });
}

// The gradient goes to the first element of the window (in scan order) equal to the output,
// as MXNet's unpool does; none when no element matches.
void UnpoolMaxPlane(const float* dy, const float* x, const float* y, float* dx, const ConvGeom& g) {
  const int64_t H = g.in[1], W = g.in[2];
  if (g.in[0] == 1 && g.k[0] == 1) {  // 2-D: the same scan without the depth axis
    // The window is scanned backwards keeping the last match, i.e. the first in scan order,
    // with a select instead of a branch on the data (which mispredicted about once per window).
    const std::vector<Window> cols = ColumnWindows(g);
    for (int64_t oh = 0, oi = 0; oh < g.out[1]; ++oh) {
      const Window wh = AxisWindow(g, 1, oh, false);
      for (int64_t ow = 0; ow < g.out[2]; ++ow, ++oi) {
        const float target = y[oi];
        int64_t first = -1;
        for (int64_t h = wh.end - 1; h >= wh.start; --h)
          for (int64_t w = cols[ow].end - 1; w >= cols[ow].start; --w) first = x[h * W + w] == target ? h * W + w : first;
        if (first >= 0) dx[first] += dy[oi];
      }
    }
    return;
  }
  ForEachWindow(g, false, [&](int64_t oi, const Window& wd, const Window& wh, const Window& ww) {
    for (int64_t d = wd.start; d < wd.end; ++d)
      for (int64_t h = wh.start; h < wh.end; ++h)
        for (int64_t w = ww.start; w < ww.end; ++w) {
          const int64_t i = (d * H + h) * W + w;
          if (x[i] == y[oi]) {
            dx[i] += dy[oi];
            return;
          }
        }
  });
}

template <typename F>
void DispatchP(int p, const F& f) {
  switch (p) {
    case 1: f(std::integral_constant<int, 1>()); break;
    case 2: f(std::integral_constant<int, 2>()); break;
    default: f(std::integral_constant<int, 3>()); break;
  }
}

void ForwardPool(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<PoolingParam>();
  if (req[0] == OpReq::kNull) return;
  const TShape& ds = in[0].shape();
  const ConvGeom g = PoolGeom(p, ds, out[0].shape());
  const int64_t planes = ds[0] * ds[1], isize = g.in_size(), osize = g.out_size();
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  const bool max = p.pool_type == kMax;
  if (p.global_pool && p.pool_type == kAvg && FastPathsEnabled()) {
    GlobalAvgPoolForward(x, y, planes, isize, req[0] == OpReq::kAdd);
    return;
  }
  if ((max || p.pool_type == kAvg) && FastPathsEnabled() && Pool2dFastApplies(g)) {
    Pool2dForward(x, y, planes, g, max, p.CountIncludePad(), req[0] == OpReq::kAdd);
    return;
  }
  const int64_t work = std::max(isize, osize * g.k_size());
  if (max) {
    ForEachPlane(planes, work, [&](int64_t i) { PoolMaxPlane(x + i * isize, y + i * osize, g, req[0]); });
    return;
  }
  DispatchP(p.P(), [&](auto pc) {
    constexpr int P = decltype(pc)::value;
    ForEachPlane(planes, work, [&](int64_t i) {
      PoolSumPlane<P>(x + i * isize, y + i * osize, g, p.pool_type == kAvg, p.CountIncludePad(),
                      req[0]);
    });
  });
}

void BackwardPool(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<PoolingParam>();
  if (a.req[0] == OpReq::kNull) return;
  const TShape& ds = a.inputs[0].shape();
  const ConvGeom g = PoolGeom(p, ds, a.out_grads[0].shape());
  const int64_t planes = ds[0] * ds[1], isize = g.in_size(), osize = g.out_size();
  const float* x = a.inputs[0].fdata();
  const float* y = a.outputs[0].fdata();
  const float* dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  const bool add = a.req[0] == OpReq::kAdd;
  const int64_t work = std::max(isize, osize * g.k_size());
  if (p.pool_type == kMax) {
    ForEachPlane(planes, work, [&](int64_t i) {
      if (!add) std::fill(dx + i * isize, dx + (i + 1) * isize, 0.0f);
      UnpoolMaxPlane(dy + i * osize, x + i * isize, y + i * osize, dx + i * isize, g);
    });
    return;
  }
  DispatchP(p.P(), [&](auto pc) {
    constexpr int P = decltype(pc)::value;
    ForEachPlane(planes, work, [&](int64_t i) {
      if (!add) std::fill(dx + i * isize, dx + (i + 1) * isize, 0.0f);
      UnpoolSumPlane<P>(dy + i * osize, x + i * isize, y + i * osize, dx + i * isize, g,
                        p.pool_type == kAvg, p.CountIncludePad());
    });
  });
}
}  // namespace

SYMBIND_REGISTER_OP(Pooling)
    .describe(R"(Performs max, average, sum or Lp pooling on 1-D, 2-D or 3-D windows of NCW,
NCHW or NCDHW input.

Output sizes: valid: floor((x+2*p-k)/s)+1; full: ceil((x+2*p-k)/s)+1; same (1-D only, no
pad): ceil(x/s). global_pool pools over the whole spatial extent. For avg pooling with
count_include_pad (default) the divisor is the window clipped to the padded input; without
it, only the valid elements are counted. Lp pooling computes (sum x^p)^(1/p), p in {1,2,3}.)")
    .set_params<PoolingParam>()
    .add_argument_doc("data", "Input data to the pooling operator: (batch, channel, [depth,] height, width).")
    .set_infer_shape(InferShapePool)
    .set_forward(ForwardPool)
    .set_backward(BackwardPool);

}  // namespace symbind
