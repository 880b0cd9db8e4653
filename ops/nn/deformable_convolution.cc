// _contrib_DeformableConvolution (Dai et al. 2017): a 2-D convolution whose kernel taps are
// moved by learned per-position offsets and read by bilinear interpolation. Computed as a
// deformable im2col followed by the grouped GEMM of Convolution; the gradients cover data,
// offset, weight and bias, with MXNet 1.9.1's sampling rules (taps outside [0, size) read 0; a
// tap in the last row or column clamps to it).
#include <cmath>
#include <optional>
#include <vector>

#include <symbind/ops/nn/conv_util.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

namespace {
using namespace conv;

struct DeformableConvolutionParam : ConvFields, Parameter<DeformableConvolutionParam> {
  int num_deformable_group;
  static void Declare(ParamDeclarer<DeformableConvolutionParam>& d) {
    using P = DeformableConvolutionParam;
    ConvFieldSpec spec = ConvolutionFieldSpec("(h, w) or (d, h, w)");
    spec.workspace = "Maximum temperal workspace allowed for convolution (MB). Accepted and ignored.";
    DeclareConvWindow(d, spec);
    DeclareConvFilters(d, spec);
    d.field("num_deformable_group", &P::num_deformable_group).set_default(1).lower_bound(1)
        .describe("Number of deformable group partitions.");
    DeclareConvWorkspaceAndBias(d, spec);
    DeclareLayout(d, {kNCW, kNCHW, kNCDHW},
                  "Set layout for input, output and weight. Empty for default layout: NCW for "
                  "1d, NCHW for 2d and NCDHW for 3d. Only NCHW is supported.");
  }
  static DeformableConvolutionParam Parse(const KwArgs& kw) {
    DeformableConvolutionParam p = Parameter<DeformableConvolutionParam>::Parse(kw);
    if (p.kernel.ndim() != 2)
      throw ParamError(StrCat("DeformableConvolution: only 2-D kernels (h, w) are supported, "
                              "got kernel ", p.kernel.ToStringAsWritten()));
    NormalizeSpatialParams("DeformableConvolution", &p.kernel, &p.stride, &p.dilate, &p.pad);
    CheckChannelFirstLayout("DeformableConvolution", p.layout, 2);
    return p;
  }
};

void InferShapeDeformConv(const NodeAttrs& attrs, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  const auto& p = attrs.param<DeformableConvolutionParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("DeformableConvolution: data should be 4D in batch-num_filter-y-x, "
                            "got ", d));
  const int64_t C = d[1];
  if (C >= 0 && (C % p.num_group != 0 || C % p.num_deformable_group != 0))
    throw ShapeError(StrCat("DeformableConvolution: input channels (", C, ") must be divisible "
                            "by num_group (", p.num_group, ") and num_deformable_group (",
                            p.num_deformable_group, ")"));
  if (p.num_filter % p.num_group != 0)
    throw ShapeError(StrCat("DeformableConvolution: num_filter (", p.num_filter,
                            ") must be divisible by num_group (", p.num_group, ")"));
  ShapeAssignCheck(in, 2, TShape({p.num_filter, C >= 0 ? C / p.num_group : -1, p.kernel[0],
                                  p.kernel[1]}));
  if (!p.no_bias) ShapeAssignCheck(in, 3, TShape({p.num_filter}));
  int64_t o[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t x = d[2 + i];
    const int64_t dk = DilatedKernel("DeformableConvolution", p.kernel[i], p.dilate[i], i);
    if (x < 0) {
      o[i] = -1;
      continue;
    }
    const int64_t padded = PaddedSize("DeformableConvolution", x, p.pad[i], i);
    if (dk > padded)
      throw ShapeError(StrCat("DeformableConvolution: kernel size exceeds input: dilated kernel ",
                              dk, " is larger than the padded input ", padded, " in spatial dim ",
                              i, "; data shape ", d));
    o[i] = (padded - dk) / p.stride[i] + 1;
  }
  ShapeAssignCheck(out, 0, TShape({d[0], p.num_filter, o[0], o[1]}));
  // Like MXNet: the batch flows back from the output, and a spatial dim when its stride is 1.
  const TShape& os = (*out)[0];
  TShape dshape = d;
  dshape[0] = os[0];
  for (int i = 0; i < 2; ++i)
    if (os[2 + i] >= 0 && p.stride[i] == 1)
      dshape[2 + i] = CheckedAdd(os[2 + i], DilatedKernel("DeformableConvolution", p.kernel[i], p.dilate[i], i) - 1,
                                 "DeformableConvolution: input size from output in spatial dim ", i) - 2 * p.pad[i];
  ShapeAssignCheck(in, 0, dshape);
  ShapeAssignCheck(in, 1, TShape({os[0], 2 * p.kernel[0] * p.kernel[1] * p.num_deformable_group,
                                  os[2], os[3]}));
}

// The sizes of one problem.
struct DeformGeom {
  int64_t N, C, H, W, F, OH, OW, KH, KW, G, DG;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t P() const { return OH * OW; }
  int64_t ColRows() const { return C * KH * KW; }
};
DeformGeom MakeDeformGeom(const DeformableConvolutionParam& p, const TShape& d, const TShape& o) {
  return {d[0], d[1], d[2], d[3], p.num_filter, o[2], o[3], p.kernel[0], p.kernel[1],
          p.num_group, p.num_deformable_group, p.stride[0], p.stride[1], p.pad[0], p.pad[1],
          p.dilate[0], p.dilate[1]};
}

// One bilinear tap at (y, x) of an H x W plane: corners, fractions, and whether y or x is
// clamped to the last row or column (where the value does not move with that coordinate).
struct Tap {
  bool valid = false;
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  float ly = 0, lx = 0;
  bool clamp_y = false, clamp_x = false;
};
Tap TapAt(float y, float x, int64_t H, int64_t W) {
  Tap t;
  if (!(y >= 0 && x >= 0 && y < static_cast<float>(H) && x < static_cast<float>(W))) return t;
  t.valid = true;
  t.y0 = static_cast<int64_t>(std::floor(y));
  t.x0 = static_cast<int64_t>(std::floor(x));
  t.clamp_y = t.y0 >= H - 1;
  t.clamp_x = t.x0 >= W - 1;
  t.y1 = t.clamp_y ? H - 1 : t.y0 + 1;
  t.x1 = t.clamp_x ? W - 1 : t.x0 + 1;
  t.ly = t.clamp_y ? 0.0f : y - static_cast<float>(t.y0);
  t.lx = t.clamp_x ? 0.0f : x - static_cast<float>(t.x0);
  return t;
}

// The tap of kernel element (i, j) at output position k, for deformable group g of image n.
Tap TapFor(const DeformGeom& g, const float* offset_n, int64_t group, int64_t i, int64_t j,
           int64_t k) {
  const int64_t P = g.P();
  const float* off = offset_n + (group * 2 * g.KH * g.KW + 2 * (i * g.KW + j)) * P;
  const int64_t oh = k / g.OW, ow = k % g.OW;
  const float y = static_cast<float>(oh * g.sh - g.ph + i * g.dh) + off[k];
  const float x = static_cast<float>(ow * g.sw - g.pw + j * g.dw) + off[P + k];
  return TapAt(y, x, g.H, g.W);
}

// col (C*KH*KW, OH*OW) of image n: row (c, i, j) holds the deformed tap values.
void DeformIm2Col(const DeformGeom& g, const float* x_n, const float* offset_n, float* col) {
  const int64_t P = g.P(), per_group = g.C / g.DG;
  ParallelFor(g.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const float* plane = x_n + c * g.H * g.W;
      for (int64_t i = 0; i < g.KH; ++i)
        for (int64_t j = 0; j < g.KW; ++j) {
          float* row = col + ((c * g.KH + i) * g.KW + j) * P;
          for (int64_t k = 0; k < P; ++k) {
            const Tap t = TapFor(g, offset_n, c / per_group, i, j, k);
            if (!t.valid) {
              row[k] = 0.0f;
              continue;
            }
            const float v00 = plane[t.y0 * g.W + t.x0], v01 = plane[t.y0 * g.W + t.x1];
            const float v10 = plane[t.y1 * g.W + t.x0], v11 = plane[t.y1 * g.W + t.x1];
            row[k] = (1 - t.ly) * ((1 - t.lx) * v00 + t.lx * v01) + t.ly * ((1 - t.lx) * v10 + t.lx * v11);
          }
        }
    }
  });
}

void ForwardDeformConv(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<DeformableConvolutionParam>();
  const DeformGeom g = MakeDeformGeom(p, in[0].shape(), out[0].shape());
  const int64_t P = g.P(), Fg = g.F / g.G, Kg = g.ColRows() / g.G;
  std::vector<float> col(static_cast<size_t>(g.ColRows() * P));
  const float* w = in[2].fdata();
  for (int64_t n = 0; n < g.N; ++n) {
    DeformIm2Col(g, in[0].fdata() + n * g.C * g.H * g.W, in[1].fdata() + n * 2 * g.KH * g.KW * g.DG * P,
                 col.data());
    float* y_n = out[0].fdata() + n * g.F * P;
    for (int64_t grp = 0; grp < g.G; ++grp)
      Gemm(false, false, Fg, P, Kg, 1.0f, w + grp * Fg * Kg, Kg, col.data() + grp * Kg * P, P,
           req[0] == OpReq::kAdd ? 1.0f : 0.0f, y_n + grp * Fg * P, P);
    if (!p.no_bias) {
      const float* bias = in[3].fdata();
      for (int64_t f = 0; f < g.F; ++f)
        for (int64_t k = 0; k < P; ++k) y_n[f * P + k] += bias[f];
    }
  }
}

void BackwardDeformConv(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<DeformableConvolutionParam>();
  const DeformGeom g = MakeDeformGeom(p, a.inputs[0].shape(), a.out_grads[0].shape());
  const int64_t P = g.P(), Fg = g.F / g.G, Kg = g.ColRows() / g.G, per_group = g.C / g.DG;
  const int64_t off_size = 2 * g.KH * g.KW * g.DG * P;
  const float* w = a.inputs[2].fdata();
  for (size_t i = 0; i < 2; ++i)
    if (a.req[i] == OpReq::kWrite || a.req[i] == OpReq::kWriteInplace) a.in_grads[i].Fill(0.0f);
  std::vector<float> col(static_cast<size_t>(g.ColRows() * P)), dcol(col.size());
  std::vector<float> dw(static_cast<size_t>(a.inputs[2].Size()), 0.0f);
  for (int64_t n = 0; n < g.N; ++n) {
    const float* x_n = a.inputs[0].fdata() + n * g.C * g.H * g.W;
    const float* off_n = a.inputs[1].fdata() + n * off_size;
    const float* dy_n = a.out_grads[0].fdata() + n * g.F * P;
    if (a.req[2] != OpReq::kNull) {  // dW_g += dy_g x col_g^T
      DeformIm2Col(g, x_n, off_n, col.data());
      for (int64_t grp = 0; grp < g.G; ++grp)
        Gemm(false, true, Fg, Kg, P, 1.0f, dy_n + grp * Fg * P, P, col.data() + grp * Kg * P, P,
             1.0f, dw.data() + grp * Fg * Kg, Kg);
    }
    if (a.req[0] == OpReq::kNull && a.req[1] == OpReq::kNull) continue;
    for (int64_t grp = 0; grp < g.G; ++grp)  // dcol_g = W_g^T x dy_g
      Gemm(true, false, Kg, P, Fg, 1.0f, w + grp * Fg * Kg, Kg, dy_n + grp * Fg * P, P, 0.0f,
           dcol.data() + grp * Kg * P, P);
    if (a.req[0] != OpReq::kNull) {  // channel c scatters into its own plane only
      float* dx_n = a.in_grads[0].fdata() + n * g.C * g.H * g.W;
      ParallelFor(g.C, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          float* plane = dx_n + c * g.H * g.W;
          for (int64_t i = 0; i < g.KH; ++i)
            for (int64_t j = 0; j < g.KW; ++j) {
              const float* drow = dcol.data() + ((c * g.KH + i) * g.KW + j) * P;
              for (int64_t k = 0; k < P; ++k) {
                const Tap t = TapFor(g, off_n, c / per_group, i, j, k);
                if (!t.valid) continue;
                const float d = drow[k];
                plane[t.y0 * g.W + t.x0] += d * (1 - t.ly) * (1 - t.lx);
                plane[t.y0 * g.W + t.x1] += d * (1 - t.ly) * t.lx;
                plane[t.y1 * g.W + t.x0] += d * t.ly * (1 - t.lx);
                plane[t.y1 * g.W + t.x1] += d * t.ly * t.lx;
              }
            }
        }
      });
    }
    if (a.req[1] != OpReq::kNull) {  // each (group, i, j) owns two offset planes
      float* doff_n = a.in_grads[1].fdata() + n * off_size;
      ParallelFor(g.DG * g.KH * g.KW, 1, [&](int64_t b, int64_t e) {
        for (int64_t gij = b; gij < e; ++gij) {
          const int64_t grp = gij / (g.KH * g.KW), i = (gij / g.KW) % g.KH, j = gij % g.KW;
          float* dh = doff_n + (grp * 2 * g.KH * g.KW + 2 * (i * g.KW + j)) * P;
          float* dwx = dh + P;
          for (int64_t k = 0; k < P; ++k) {
            const Tap t = TapFor(g, off_n, grp, i, j, k);
            if (!t.valid) continue;
            float sy = 0, sx = 0;
            for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c) {
              const float* plane = x_n + c * g.H * g.W;
              const float d = dcol[static_cast<size_t>(((c * g.KH + i) * g.KW + j) * P + k)];
              const float v00 = plane[t.y0 * g.W + t.x0], v01 = plane[t.y0 * g.W + t.x1];
              const float v10 = plane[t.y1 * g.W + t.x0], v11 = plane[t.y1 * g.W + t.x1];
              if (!t.clamp_y) sy += d * ((1 - t.lx) * (v10 - v00) + t.lx * (v11 - v01));
              if (!t.clamp_x) sx += d * ((1 - t.ly) * (v01 - v00) + t.ly * (v11 - v10));
            }
            dh[k] += sy;
            dwx[k] += sx;
          }
        }
      });
    }
  }
  if (a.req[2] != OpReq::kNull) AssignWithReq(a.in_grads[2].fdata(), dw.data(), a.inputs[2].Size(), a.req[2]);
  if (!p.no_bias && a.req[3] != OpReq::kNull)
    BiasBackward(a.out_grads[0].fdata(), a.in_grads[3].fdata(), g.N, g.F, P, a.req[3]);
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_DeformableConvolution)
    .describe("Deformable convolution (2-D): tap (i, j) of the kernel at output position (y, x) "
              "reads the data bilinearly at (y*stride - pad + i*dilate + offset_h, x*stride - "
              "pad + j*dilate + offset_w), offsets from the `offset` input (batch, 2*kh*kw*"
              "num_deformable_group, out_h, out_w); taps outside the input read zero. Grouped "
              "like Convolution; differentiable in data, offset, weight and bias.")
    .set_params<DeformableConvolutionParam>()
    .set_arguments([](const NodeAttrs& a) {
      return a.param<DeformableConvolutionParam>().no_bias
                 ? std::vector<std::string>{"data", "offset", "weight"}
                 : std::vector<std::string>{"data", "offset", "weight", "bias"};
    })
    .add_argument_doc("data", "Input data: (batch, channel, height, width).")
    .add_argument_doc("offset", "Sampling offsets: (batch, 2*kh*kw*num_deformable_group, out_h, out_w).")
    .add_argument_doc("weight", "Weight matrix: (num_filter, channel/num_group, kh, kw).")
    .add_argument_doc("bias", "Bias parameter: (num_filter,); absent when no_bias.")
    .set_infer_shape(InferShapeDeformConv)
    .set_mac_count([](const NodeAttrs&, const std::vector<TShape>& in,
                      const std::vector<TShape>& out) { return WeightRowMacs(out[0], in[2]); })
    .set_forward(ForwardDeformConv)
    .set_backward(BackwardDeformConv);

}  // namespace symbind
