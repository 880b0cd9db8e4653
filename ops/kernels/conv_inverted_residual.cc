// The inverted residual block in bands of output rows (see conv_inverted_residual.h).
#include <symbind/ops/kernels/conv_inverted_residual.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <symbind/core/scratch.h>
#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/kernels/conv_depthwise.h>
#include <symbind/ops/kernels/gemm_kernels.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

namespace {
// The parts one image's rows are cut into on several threads, one per thread (see
// InvertedResidualFusionPays).
constexpr int64_t kPartsPerImage = 2;

ConvDims DepthwiseDims(const InvertedResidualDims& d) { return {d.batch, d.hidden_c, d.hidden_c, d.hidden_c}; }
ConvGeom DepthwiseGeom(const InvertedResidualDims& d) {
  return ConvGeom::Planar(d.height, d.width, d.kernel, d.stride, d.pad);
}

// y[f, positions] += x[f, positions] for `channels` planes, `count` positions from `offset`.
void AddResidual(const float* x, float* y, int64_t channels, int64_t plane, int64_t offset, int64_t count) {
  for (int64_t f = 0; f < channels; ++f) {
    const float* __restrict xs = x + f * plane + offset;
    float* __restrict ys = y + f * plane + offset;
    for (int64_t j = 0; j < count; ++j) ys[j] += xs[j];
  }
}
}  // namespace

bool InvertedResidualFusionApplies(const InvertedResidualDims& d, const InvertedResidualWeights& w) {
  if (!DepthwiseApplies(DepthwiseDims(d), DepthwiseGeom(d))) return false;
  if (d.residual &&
      !(d.stride == 1 && d.out_c == d.in_c && d.out_height() == d.height && d.out_width() == d.width))
    return false;
  return PackedGemmApplies({d.batch, d.in_c, d.hidden_c, 1}, ConvGeom::Planar(d.height, d.width, 1, 1, 0), w.expand) &&
         PackedGemmApplies({d.batch, d.hidden_c, d.out_c, 1}, ConvGeom::Planar(d.out_height(), d.out_width(), 1, 1, 0),
                           w.project);
}

bool InvertedResidualFusionPays(const InvertedResidualDims& d) {
  // Several images: one task per image keeps its expanded rows in cache instead of sending the
  // whole batch's expanded tensor (8 x 4.8 MB for MobileNet v2's first block) through memory.
  // One image on two threads: each takes one part of its rows, recomputing the expanded rows it
  // shares with the part before, and the block needs one synchronisation instead of three. One
  // image on one thread stays unfused: the bands' small products cost more than the expanded
  // rows kept in cache save; on four threads, four parts cost more CPU time than two (hence
  // kPartsPerImage). On AVX2, one image on two threads runs faster unfused than in planes: the
  // unfused depthwise kernels see the whole layer (flat chunks for narrow planes), the bands
  // cannot; channels-last bands beat both there.
  return d.batch > 1 || InvertedResidualChannelsLastPays(d) ||
         (UsableThreads() == kPartsPerImage && ActiveIsa() == KernelIsa::kAvx512);
}

void InvertedResidualForward(const float* x, const InvertedResidualWeights& w, float* y,
                             const InvertedResidualDims& d, OpReq req) {
  if (req == OpReq::kNull) return;
  if (FastPathsEnabled() && req != OpReq::kAdd && InvertedResidualFusionApplies(d, w) && InvertedResidualFusionPays(d))
    return InvertedResidualFused(x, w, y, d);
  InvertedResidualUnfused(x, w, y, d, req);
}

void InvertedResidualUnfused(const float* x, const InvertedResidualWeights& w, float* y,
                             const InvertedResidualDims& d, OpReq req) {
  if (req == OpReq::kNull) return;
  const ConvGeom pointwise = ConvGeom::Planar(d.height, d.width, 1, 1, 0), depthwise = DepthwiseGeom(d);
  const ConvGeom projection = ConvGeom::Planar(depthwise.out[1], depthwise.out[2], 1, 1, 0);
  const int64_t hidden_in = d.batch * d.hidden_c * pointwise.out_size();
  const int64_t hidden_out = d.batch * d.hidden_c * depthwise.out_size();
  const int64_t out_plane = projection.out_size(), out_size = d.batch * d.out_c * out_plane;
  const ScratchBuffer expanded(hidden_in), filtered(hidden_out);
  ConvForward(x, w.expand_w, w.expand_b, expanded.data(), {d.batch, d.in_c, d.hidden_c, 1}, pointwise,
              OpReq::kWrite, w.expand, d.expand_act);
  ConvForward(expanded.data(), w.depthwise_w, w.depthwise_b, filtered.data(), DepthwiseDims(d), depthwise,
              OpReq::kWrite, w.depthwise, d.depthwise_act);
  ScratchBuffer sum(req == OpReq::kAdd ? out_size : 0);
  float* out = req == OpReq::kAdd ? sum.data() : y;  // under kAdd the block's output is added to y
  ConvForward(filtered.data(), w.project_w, w.project_b, out, {d.batch, d.hidden_c, d.out_c, 1}, projection,
              OpReq::kWrite, w.project);
  if (d.residual)  // as elemwise_add(projection, x)
    ParallelFor(d.batch * d.out_c, GrainFor(out_plane), [&](int64_t p0, int64_t p1) {
      AddResidual(x + p0 * out_plane, out + p0 * out_plane, p1 - p0, out_plane, 0, out_plane);
    });
  if (req == OpReq::kAdd) AssignWithReq(y, out, out_size, req);
}

InvertedResidualBands PlanInvertedResidualBands(const InvertedResidualDims& d, bool channels_last) {
  // Planes: 1 MB of expanded rows (a band within L2 costs more in per-band overhead, small GEMMs
  // and depthwise calls, than it saves; larger bands gain nothing). Channels-last: 256 KB, within
  // L2 (512 KB on Zen 3), where its bands stay faster than 1 MB ones.
  const int64_t kBandFloats = channels_last ? int64_t{1} << 16 : int64_t{1} << 18;
  const int64_t OH = d.out_height();
  const int64_t rows_fit = kBandFloats / std::max<int64_t>(1, d.hidden_c * d.width);
  InvertedResidualBands p;
  p.band = std::clamp<int64_t>((rows_fit - d.kernel) / d.stride + 1, 1, OH);
  p.buffer_rows = (p.band - 1) * d.stride + d.kernel;
  // One image on one thread in one part: two parts would expand the rows where they meet twice.
  // The bits do not depend on the parts.
  p.parts = d.batch == 1 ? std::min({OH, kPartsPerImage, std::max<int64_t>(1, UsableThreads())}) : 1;
  p.part_rows = (OH + p.parts - 1) / p.parts;
  p.parts = (OH + p.part_rows - 1) / p.part_rows;
  return p;
}

void InvertedResidualFused(const float* x, const InvertedResidualWeights& w, float* y,
                           const InvertedResidualDims& d) {
  if (InvertedResidualChannelsLastPays(d)) return InvertedResidualFusedChannelsLast(x, w, y, d);
  InvertedResidualFusedPlanes(x, w, y, d);
}

void InvertedResidualFusedPlanes(const float* x, const InvertedResidualWeights& w, float* y,
                                 const InvertedResidualDims& d) {
  const int64_t H = d.height, W = d.width, OH = d.out_height(), OW = d.out_width(), K = d.kernel, S = d.stride;
  const InvertedResidualBands plan = PlanInvertedResidualBands(d, false);
  const int64_t R = plan.buffer_rows;
  const auto expand = DerivedPackedConvWeights(w.expand_w, w.expand, 1, d.hidden_c, d.in_c,
                                              ChooseGemmTiling(d.hidden_c, plan.band * S * W));
  const auto project = DerivedPackedConvWeights(w.project_w, w.project, 1, d.out_c, d.hidden_c,
                                               ChooseGemmTiling(d.out_c, plan.band * OW));
  const DepthwisePlaneFn plane = ChooseDepthwisePlane(K, S);
  const std::vector<float> zeros(static_cast<size_t>(W), 0.0f);
  const GemmEpilogue expand_epilogue{w.expand_b, d.expand_act}, project_epilogue{w.project_b, {}};
  ParallelFor(d.batch * plan.parts, 1, [&](int64_t t0, int64_t t1) {
    // Per thread, reused across calls (no task of this loop waits inside another's body).
    thread_local std::vector<float> expanded, filtered;
    if (expanded.size() < static_cast<size_t>(d.hidden_c * R * W)) expanded.resize(static_cast<size_t>(d.hidden_c * R * W));
    if (filtered.size() < static_cast<size_t>(d.hidden_c * plan.band * OW))
      filtered.resize(static_cast<size_t>(d.hidden_c * plan.band * OW));
    float* E = expanded.data();
    float* D = filtered.data();
    for (int64_t t = t0; t < t1; ++t)
      ForEachInvertedResidualBand(d, plan, t, [&](const InvertedResidualBand& b) {
        const float* xi = x + b.image * d.in_c * H * W;
        float* yi = y + b.image * d.out_c * OH * OW;
        // Rows the band before expanded and this one needs move to the front of each plane.
        if (b.kept > 0 && b.shift > 0)
          for (int64_t c = 0; c < d.hidden_c; ++c)
            std::memmove(E + c * R * W, E + c * R * W + b.shift * W, sizeof(float) * static_cast<size_t>(b.kept * W));
        if (b.hi > b.lo + b.kept)
          GemmPackedSerial(expand->groups[0], (b.hi - b.lo - b.kept) * W, xi + (b.lo + b.kept) * W, H * W,
                           E + b.kept * W, R * W, expand_epilogue);
        const int64_t held = std::max(b.kept, b.hi - b.lo), rows = b.o1 - b.o0, columns = rows * OW;
        const DepthwisePlaneArgs args{held, W, b.lo + d.pad - b.o0 * S, d.pad, rows, OW, zeros.data(), d.depthwise_act};
        for (int64_t c = 0; c < d.hidden_c; ++c) {
          DepthwisePlaneArgs channel_args = args;
          channel_args.act = d.depthwise_act.ForRow(c);  // prelu: this channel's slope
          plane(E + c * R * W, channel_args, w.depthwise_w + c * K * K, w.depthwise_b ? w.depthwise_b[c] : 0.0f,
                D + c * columns, false);
        }
        GemmPackedSerial(project->groups[0], columns, D, columns, yi + b.o0 * OW, OH * OW, project_epilogue);
        if (d.residual) AddResidual(xi, yi, d.out_c, OH * OW, b.o0 * OW, columns);
      });
  });
}

}  // namespace conv
}  // namespace symbind
