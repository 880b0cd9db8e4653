// Convolution (1-D, 2-D, 3-D, grouped, dilated) by im2col + GEMM, and the shared convolution
// kernels declared in conv_util.h.
#include <algorithm>
#include <cstring>
#include <vector>

#include <symbind/ops/conv_util.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace conv {

// ---------------------------------------------------------------------------------------------
// im2col / col2im

void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, int64_t r0, int64_t r1,
            int64_t ld, float* col) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t OH = g.out[1], OW = g.out[2];
  for (int64_t c = c0; c < c1; ++c) {
    const float* plane = img + c * D * H * W;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t row = ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
          float* dst = col + (row - c0 * g.k_size()) * ld;
          const int64_t off = kw * g.d[2] - g.p[2];
          for (int64_t r = r0; r < r1; ++r, dst += OW) {
            const int64_t od = r / OH, oh = r % OH;
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (id < 0 || id >= D || ih < 0 || ih >= H) {
              std::fill(dst, dst + OW, 0.0f);
              continue;
            }
            const float* src = plane + (id * H + ih) * W;
            if (g.s[2] == 1 && off >= 0 && off + OW <= W) {  // interior row: a plain copy
              std::copy(src + off, src + off + OW, dst);
              continue;
            }
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t iw = ow * g.s[2] + off;
              dst[ow] = (iw >= 0 && iw < W) ? src[iw] : 0.0f;
            }
          }
        }
  }
}

void Im2Col(const float* img, const ConvGeom& g, int64_t c0, int64_t c1, float* col) {
  Im2Col(img, g, c0, c1, 0, g.out[0] * g.out[1], g.out_size(), col);
}

void Col2ImAdd(const float* col, const ConvGeom& g, int64_t c0, int64_t c1, float* img) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int64_t osize = g.out_size();
  for (int64_t c = c0; c < c1; ++c) {
    float* plane = img + c * D * H * W;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t row = ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
          const float* src = col + (row - c0 * g.k_size()) * osize;
          for (int64_t od = 0; od < OD; ++od) {
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < OH; ++oh, src += OW) {
              const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
              if (id < 0 || id >= D || ih < 0 || ih >= H) continue;
              float* dst = plane + (id * H + ih) * W;
              const int64_t off = kw * g.d[2] - g.p[2];
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t iw = ow * g.s[2] + off;
                if (iw >= 0 && iw < W) dst[iw] += src[ow];
              }
            }
          }
        }
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels. Work is split over images when the batch has several (each task owning its column
// buffer), otherwise over channels for im2col/col2im and inside the GEMM. Chunking depends only
// on the problem, so results are identical for any thread count.

namespace {
// Channels per im2col/col2im task when one image is processed at a time.
int64_t ChannelGrain(const ConvGeom& g) {
  const int64_t per_channel = std::max<int64_t>(1, g.k_size() * g.out_size());
  return std::max<int64_t>(1, kElementwiseGrain / per_channel);
}

void Im2ColParallel(const float* img, const ConvGeom& g, int64_t channels, bool parallel,
                    float* col) {
  if (!parallel) return Im2Col(img, g, 0, channels, col);
  ParallelFor(channels, ChannelGrain(g), [&](int64_t c0, int64_t c1) {
    Im2Col(img, g, c0, c1, col + c0 * g.k_size() * g.out_size());
  });
}

// Runs fn(n, parallel_inside) for every image: across images when there are several.
template <typename F>
void ForEachImage(int64_t batch, const F& fn) {
  if (batch == 1) {
    fn(int64_t{0}, true);
    return;
  }
  ParallelFor(batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) fn(i, false);
  });
}
}  // namespace

void ConvForward(const float* x, const float* w, const float* bias, float* y, const ConvDims& n,
                 const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const float beta = req == OpReq::kAdd ? 1.0f : 0.0f;
  auto add_bias = [&](float* yi, int64_t begin, int64_t end) {
    if (bias)
      for (int64_t f = 0; f < n.out_c; ++f)
        for (float *o = yi + f * osize + begin, *e = yi + f * osize + end; o < e; ++o) *o += bias[f];
  };
  if (g.is_pointwise()) {  // the image is its own column buffer
    ForEachImage(n.batch, [&](int64_t i, bool) {
      float* yi = y + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(false, false, fg, osize, kdim, 1.0f, w + gr * fg * kdim, kdim,
             x + i * n.in_c * isize + gr * kdim * osize, osize, beta, yi + gr * fg * osize, osize);
      add_bias(yi, 0, osize);
    });
    return;
  }
  // Output rows are cut into tiles whose column buffer stays in cache (~512 KB, but at least
  // ~1024 columns so the weights are not re-packed too often): im2col and the GEMM share it
  // instead of streaming a whole-image buffer through memory (MTCNN P-Net conv3: 70 -> 12 ms).
  // Tiles of every image run in parallel; their size depends only on the problem.
  const int64_t rows = g.out[0] * g.out[1], OW = g.out[2];
  constexpr int64_t kTileFloats = int64_t{1} << 17, kMinTileCols = 1024;
  const int64_t rows_per_tile = std::clamp<int64_t>(
      std::max(kTileFloats / std::max<int64_t>(1, kdim * OW), (kMinTileCols + OW - 1) / OW), 1, rows);
  const int64_t tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  // Tiny outputs (below 128 positions; measured on MTCNN R/O-Net against 100, 500, 1024):
  // several images side by side in one column buffer make one wider GEMM, whose
  // (filters, images * positions) result is then copied into each image's planes.
  constexpr int64_t kBatchedBelow = 128;
  if (tiles == 1 && osize < kBatchedBelow && n.batch > 1) {
    const int64_t per_task = std::min(n.batch, (kMinTileCols + osize - 1) / osize);
    const int64_t tasks = (n.batch + per_task - 1) / per_task;
    ParallelFor(tasks, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> col(static_cast<size_t>(kdim * per_task * osize));
      std::vector<float> prod(static_cast<size_t>(fg * per_task * osize));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t i0 = t * per_task, i1 = std::min(n.batch, i0 + per_task);
        const int64_t ncols = (i1 - i0) * osize;
        for (int64_t gr = 0; gr < n.groups; ++gr) {
          for (int64_t i = i0; i < i1; ++i)
            Im2Col(x + i * n.in_c * isize, g, gr * cg, (gr + 1) * cg, 0, rows, ncols,
                   col.data() + (i - i0) * osize);
          Gemm(false, false, fg, ncols, kdim, 1.0f, w + gr * fg * kdim, kdim, col.data(), ncols, 0.0f,
               prod.data(), ncols);
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t f = 0; f < fg; ++f)
              AssignWithReq(y + (i * n.out_c + gr * fg + f) * osize,
                            prod.data() + f * ncols + (i - i0) * osize, osize, req);
        }
        for (int64_t i = i0; i < i1; ++i) add_bias(y + i * n.out_c * osize, 0, osize);
      }
    });
    return;
  }
  ParallelFor(n.batch * tiles, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float> col(static_cast<size_t>(kdim * rows_per_tile * OW));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i = t / tiles, r0 = (t % tiles) * rows_per_tile, r1 = std::min(rows, r0 + rows_per_tile);
      const int64_t ncols = (r1 - r0) * OW;
      const float* xi = x + i * n.in_c * isize;
      float* yi = y + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr) {
        Im2Col(xi, g, gr * cg, (gr + 1) * cg, r0, r1, ncols, col.data());
        Gemm(false, false, fg, ncols, kdim, 1.0f, w + gr * fg * kdim, kdim, col.data(), ncols, beta,
             yi + gr * fg * osize + r0 * OW, osize);
      }
      add_bias(yi, r0 * OW, r1 * OW);
    }
  });
}

void ConvBackwardData(const float* dy, const float* w, float* dx, const ConvDims& n,
                      const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const bool pointwise = g.is_pointwise();
  ForEachImage(n.batch, [&](int64_t i, bool parallel) {
    const float* dyi = dy + i * n.out_c * osize;
    float* dxi = dx + i * n.in_c * isize;
    if (pointwise) {  // col2im is the identity: write the GEMM straight into dx
      const float beta = req == OpReq::kAdd ? 1.0f : 0.0f;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(true, false, kdim, osize, fg, 1.0f, w + gr * fg * kdim, kdim, dyi + gr * fg * osize,
             osize, beta, dxi + gr * kdim * osize, osize);
      return;
    }
    std::vector<float> col(static_cast<size_t>(n.in_c * ks * osize));
    for (int64_t gr = 0; gr < n.groups; ++gr)
      Gemm(true, false, kdim, osize, fg, 1.0f, w + gr * fg * kdim, kdim, dyi + gr * fg * osize,
           osize, 0.0f, col.data() + gr * kdim * osize, osize);
    if (req != OpReq::kAdd) std::fill(dxi, dxi + n.in_c * isize, 0.0f);
    if (!parallel) return Col2ImAdd(col.data(), g, 0, n.in_c, dxi);
    ParallelFor(n.in_c, ChannelGrain(g), [&](int64_t c0, int64_t c1) {
      Col2ImAdd(col.data() + c0 * ks * osize, g, c0, c1, dxi);
    });
  });
}

void ConvBackwardWeight(const float* dy, const float* x, float* dw, const ConvDims& n,
                        const ConvGeom& g, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t isize = g.in_size(), osize = g.out_size(), ks = g.k_size();
  const int64_t cg = n.in_c / n.groups, fg = n.out_c / n.groups, kdim = cg * ks;
  const int64_t wsize = n.out_c * kdim;
  const bool pointwise = g.is_pointwise();
  // The batch is cut into a fixed number of chunks (a function of the problem size only, at
  // most 8 and with partial buffers of at most ~64 MB); each accumulates its partial gradient,
  // and the partials are summed in chunk order.
  const int64_t kPartialBudget = int64_t{1} << 24;  // floats
  const int64_t chunks =
      std::max<int64_t>(1, std::min({n.batch, int64_t{8}, kPartialBudget / std::max<int64_t>(1, wsize)}));
  const int64_t per_chunk = (n.batch + chunks - 1) / chunks;
  std::vector<float> partial(static_cast<size_t>(chunks > 1 ? chunks * wsize : 0));
  auto run_chunk = [&](int64_t ch, bool parallel) {
    float* acc = chunks > 1 ? partial.data() + ch * wsize : dw;
    float beta = (chunks == 1 && req == OpReq::kAdd) ? 1.0f : 0.0f;
    std::vector<float> buf;
    if (!pointwise) buf.resize(static_cast<size_t>(n.in_c * ks * osize));
    for (int64_t i = ch * per_chunk; i < std::min(n.batch, (ch + 1) * per_chunk); ++i) {
      const float* col = x + i * n.in_c * isize;
      if (!pointwise) {
        Im2ColParallel(col, g, n.in_c, parallel, buf.data());
        col = buf.data();
      }
      const float* dyi = dy + i * n.out_c * osize;
      for (int64_t gr = 0; gr < n.groups; ++gr)
        Gemm(false, true, fg, kdim, osize, 1.0f, dyi + gr * fg * osize, osize,
             col + gr * kdim * osize, osize, beta, acc + gr * fg * kdim, kdim);
      beta = 1.0f;
    }
  };
  if (chunks == 1) {
    run_chunk(0, true);
    return;
  }
  ParallelFor(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) run_chunk(c, false);
  });
  MapWithReq(dw, wsize, req, [&](int64_t j) {
    float s = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(c * wsize + j)];
    return s;
  });
}

void BiasBackward(const float* dy, float* db, int64_t batch, int64_t channels, int64_t spatial,
                  OpReq req) {
  if (req == OpReq::kNull) return;
  std::vector<float> sums(static_cast<size_t>(channels));
  ParallelFor(channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, batch * spatial)),
              [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                  double s = 0;
                  for (int64_t i = 0; i < batch; ++i) {
                    // Float partial sums over 8 lanes vectorise; rows are summed in double.
                    const float* row = dy + (i * channels + c) * spatial;
                    float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    int64_t o = 0;
                    for (; o + 8 <= spatial; o += 8)
                      for (int l = 0; l < 8; ++l) lanes[l] += row[o + l];
                    double r = 0;
                    for (int l = 0; l < 8; ++l) r += lanes[l];
                    for (; o < spatial; ++o) r += row[o];
                    s += r;
                  }
                  sums[static_cast<size_t>(c)] = static_cast<float>(s);
                }
              });
  AssignWithReq(db, sums.data(), channels, req);
}

}  // namespace conv

// ---------------------------------------------------------------------------------------------
// The Convolution operator.

namespace {
using namespace conv;

struct ConvolutionParam : Parameter<ConvolutionParam> {
  TShape kernel, stride, dilate, pad;
  int num_filter;
  int num_group;
  int64_t workspace;
  bool no_bias;
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  std::optional<int> layout;
  static void Declare(ParamDeclarer<ConvolutionParam>& d) {
    d.field("kernel", &ConvolutionParam::kernel)
        .describe("Convolution kernel size: (w,), (h, w) or (d, h, w)");
    d.field("stride", &ConvolutionParam::stride).set_default(TShape(std::vector<int64_t>{}))
        .describe("Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.");
    d.field("dilate", &ConvolutionParam::dilate).set_default(TShape(std::vector<int64_t>{}))
        .describe("Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.");
    d.field("pad", &ConvolutionParam::pad).set_default(TShape(std::vector<int64_t>{}))
        .describe("Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to no padding.");
    d.field("num_filter", &ConvolutionParam::num_filter).lower_bound(1)
        .describe("Convolution filter(channel) number");
    d.field("num_group", &ConvolutionParam::num_group).set_default(1).lower_bound(1)
        .describe("Number of group partitions.");
    d.field("workspace", &ConvolutionParam::workspace).set_default(1024).lower_bound(0)
        .describe("Maximum temporary workspace allowed (MB) in convolution. Accepted and ignored "
                  "(the CPU kernel sizes its buffers itself).");
    d.field("no_bias", &ConvolutionParam::no_bias).set_default(false)
        .describe("Whether to disable bias parameter.");
    DeclareCudnnAndLayout(d);
  }
  // MXNet's ConvolutionParamParser: fills stride/dilate/pad defaults and checks their lengths.
  static ConvolutionParam Parse(const KwArgs& kw) {
    ConvolutionParam p = Parameter<ConvolutionParam>::Parse(kw);
    NormalizeSpatialParams("Convolution", &p.kernel, &p.stride, &p.dilate, &p.pad);
    CheckChannelFirstLayout("Convolution", p.layout, p.kernel.ndim());
    return p;
  }
};

const char* DataRankHint(int spatial) {
  switch (spatial) {
    case 1: return "3D in batch-num_filter-x";
    case 2: return "4D in batch-num_filter-y-x";
    default: return "5D in batch-num_filter-depth-y-x";
  }
}

void InferShapeConv(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<ConvolutionParam>();
  const int ns = p.kernel.ndim();
  TShape dshape = (*in)[0];
  if (!dshape.ndim_known()) return;  // MXNet infers nothing without the data's rank
  if (dshape.ndim() != ns + 2)
    throw ShapeError(StrCat("Convolution: input data should be ", DataRankHint(ns), " for a ",
                            ns, "-D kernel ", p.kernel, ", got data shape ", dshape));
  const int64_t C = dshape[1];
  if (C >= 0 && C % p.num_group != 0)
    throw ShapeError(StrCat("Convolution: input channels (", C, ") must be divisible by num_group (",
                            p.num_group, "); data shape ", dshape));
  if (p.num_filter % p.num_group != 0)
    throw ShapeError(StrCat("Convolution: num_filter (", p.num_filter,
                            ") must be divisible by num_group (", p.num_group, ")"));
  std::vector<int64_t> w = {p.num_filter, C >= 0 ? C / p.num_group : -1};
  for (int i = 0; i < ns; ++i) w.push_back(p.kernel[i]);
  ShapeAssignCheck(in, 1, TShape(w));
  if (!p.no_bias) ShapeAssignCheck(in, 2, TShape({p.num_filter}));

  std::vector<int64_t> o = {dshape[0], p.num_filter};
  for (int i = 0; i < ns; ++i) {
    const int64_t x = dshape[2 + i];
    const int64_t dk = DilatedKernel("Convolution", p.kernel[i], p.dilate[i], i);
    if (x < 0) {
      o.push_back(-1);
      continue;
    }
    const int64_t padded = PaddedSize("Convolution", x, p.pad[i], i);
    if (dk > padded)
      throw ShapeError(StrCat("Convolution: kernel size exceeds input: dilated kernel ", dk,
                              " (kernel ", p.kernel, ", dilate ", p.dilate, ") is larger than the "
                              "padded input ", padded, " (pad ", p.pad,
                              ") in spatial dim ", i, "; data shape ", dshape));
    o.push_back((padded - dk) / p.stride[i] + 1);
  }
  ShapeAssignCheck(out, 0, TShape(o));
  // Like MXNet: the batch always flows back from the output, and a spatial dim when its stride
  // is 1.
  const TShape& os = (*out)[0];
  dshape[0] = os[0];
  for (int i = 0; i < ns; ++i)
    if (os[2 + i] >= 0 && p.stride[i] == 1)
      dshape[2 + i] = CheckedAdd(os[2 + i], DilatedKernel("Convolution", p.kernel[i], p.dilate[i], i) - 1,
                                 "Convolution: input size from output in spatial dim ", i) - 2 * p.pad[i];
  ShapeAssignCheck(in, 0, dshape);
}

struct ConvSetup {
  ConvDims dims;
  ConvGeom geom;
};
ConvSetup Setup(const ConvolutionParam& p, const TShape& data, const TShape& outp) {
  return {{data[0], data[1], p.num_filter, p.num_group},
          MakeGeom(data, outp, p.kernel, p.stride, p.dilate, p.pad)};
}

void ForwardConv(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<ConvolutionParam>();
  auto s = Setup(p, in[0].shape(), out[0].shape());
  ConvForward(in[0].fdata(), in[1].fdata(), p.no_bias ? nullptr : in[2].fdata(), out[0].fdata(),
              s.dims, s.geom, req[0]);
}

void BackwardConv(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<ConvolutionParam>();
  auto s = Setup(p, a.inputs[0].shape(), a.out_grads[0].shape());
  const float* dy = a.out_grads[0].fdata();
  ConvBackwardData(dy, a.inputs[1].fdata(), a.in_grads[0].is_none() ? nullptr : a.in_grads[0].fdata(),
                   s.dims, s.geom, a.req[0]);
  ConvBackwardWeight(dy, a.inputs[0].fdata(), a.in_grads[1].is_none() ? nullptr : a.in_grads[1].fdata(),
                     s.dims, s.geom, a.req[1]);
  if (!p.no_bias)
    BiasBackward(dy, a.in_grads[2].is_none() ? nullptr : a.in_grads[2].fdata(), s.dims.batch,
                 p.num_filter, s.geom.out_size(), a.req[2]);
}
}  // namespace

SYMBIND_REGISTER_OP(Convolution)
    .describe(R"(Computes 1-D, 2-D or 3-D convolution on (N+2)-D input (NCW, NCHW or NCDHW).

out[n,i] = bias[i] + sum_j data[n,j] * weight[i,j] (cross-correlation). With
f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1 the output spatial sizes are f over each dim.
weight: (num_filter, channel/num_group, kernel...), bias: (num_filter,).
With num_group g the channels are split into g groups, each convolved with its own slice of
the filters, and the results concatenated.)")
    .set_params<ConvolutionParam>()
    .set_arguments(DataWeightBiasArguments<ConvolutionParam>)
    .set_infer_shape(InferShapeConv)
    .set_forward(ForwardConv)
    .set_backward(BackwardConv);

}  // namespace symbind
