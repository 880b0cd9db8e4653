// _contrib_DeformableConvolution (Dai et al. 2017) and _contrib_ModulatedDeformableConvolution
// (DCNv2, Zhu et al. 2019): a 2-D convolution whose kernel taps are moved by learned
// per-position offsets and read by bilinear interpolation; DCNv2 also scales each tap by a
// learned mask. Computed as a deformable im2col followed by the grouped GEMM of Convolution;
// the gradients cover data, offset, (mask,) weight and bias. Each keeps MXNet 1.9.1's border
// rule: v1 reads 0 for taps outside [0, size) and clamps a tap in the last row or column to it;
// DCNv2 reads taps inside (-1, size) and blends in zeros for the corners outside the image
// (MXNet 1.9.1 computes DCNv2's gradients on GPUs only; here they run on the CPU).
#include <cmath>
#include <optional>
#include <vector>

#include <symbind/ops/nn/conv_util.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

namespace {
using namespace conv;

// kModulated: DCNv2's parameters (v1's and im2col_step).
template <bool kModulated>
struct DeformConvParams : ConvFields, Parameter<DeformConvParams<kModulated>> {
  static constexpr const char* kName = kModulated ? "ModulatedDeformableConvolution" : "DeformableConvolution";
  int num_deformable_group;
  int im2col_step = 64;
  static void Declare(ParamDeclarer<DeformConvParams>& d) {
    using P = DeformConvParams;
    ConvFieldSpec spec = ConvolutionFieldSpec("(h, w) or (d, h, w)");
    spec.workspace = "Maximum temperal workspace allowed for convolution (MB). Accepted and ignored.";
    DeclareConvWindow(d, spec);
    DeclareConvFilters(d, spec);
    d.field("num_deformable_group", &P::num_deformable_group).set_default(1).lower_bound(1)
        .describe("Number of deformable group partitions.");
    DeclareConvWorkspaceAndBias(d, spec);
    if constexpr (kModulated)
      d.field("im2col_step", &P::im2col_step).set_default(64).lower_bound(1)
          .describe("Maximum number of images per im2col computation; The total batch size should be "
                    "divisable by this value. Accepted and ignored (one image at a time).");
    DeclareLayout(d, {kNCW, kNCHW, kNCDHW},
                  "Set layout for input, output and weight. Empty for default layout: NCW for "
                  "1d, NCHW for 2d and NCDHW for 3d. Only NCHW is supported.");
  }
  static DeformConvParams Parse(const KwArgs& kw) {
    DeformConvParams p = Parameter<DeformConvParams>::Parse(kw);
    if (p.kernel.ndim() != 2)
      throw ParamError(StrCat(kName, ": only 2-D kernels (h, w) are supported, got kernel ",
                              p.kernel.ToStringAsWritten()));
    NormalizeSpatialParams(kName, &p.kernel, &p.stride, &p.dilate, &p.pad);
    CheckChannelFirstLayout(kName, p.layout, 2);
    return p;
  }
};
using DeformableConvolutionParam = DeformConvParams<false>;
using ModulatedDeformableConvolutionParam = DeformConvParams<true>;

// The inputs of each: data, offset, (mask,) weight, (bias).
struct DeformInputs {
  int data = 0, offset = 1, mask = -1, weight = 2, bias = 3;
};
constexpr DeformInputs InputsOf(bool modulated) {
  return modulated ? DeformInputs{0, 1, 2, 3, 4} : DeformInputs{};
}

template <bool kModulated>
void InferShapeDeformConv(const NodeAttrs& attrs, std::vector<TShape>* in,
                          std::vector<TShape>* out) {
  using P = DeformConvParams<kModulated>;
  const auto& p = attrs.param<P>();
  const DeformInputs at = InputsOf(kModulated);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat(P::kName, ": data should be 4D in batch-num_filter-y-x, got ", d));
  const int64_t C = d[1];
  if (C >= 0 && (C % p.num_group != 0 || C % p.num_deformable_group != 0))
    throw ShapeError(StrCat(P::kName, ": input channels (", C, ") must be divisible "
                            "by num_group (", p.num_group, ") and num_deformable_group (",
                            p.num_deformable_group, ")"));
  if (p.num_filter % p.num_group != 0)
    throw ShapeError(StrCat(P::kName, ": num_filter (", p.num_filter,
                            ") must be divisible by num_group (", p.num_group, ")"));
  ShapeAssignCheck(in, static_cast<size_t>(at.weight), TShape({p.num_filter, C >= 0 ? C / p.num_group : -1, p.kernel[0],
                                  p.kernel[1]}));
  if (!p.no_bias) ShapeAssignCheck(in, static_cast<size_t>(at.bias), TShape({p.num_filter}));
  int64_t o[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t x = d[2 + i];
    const int64_t dk = DilatedKernel(P::kName, p.kernel[i], p.dilate[i], i);
    if (x < 0) {
      o[i] = -1;
      continue;
    }
    const int64_t padded = PaddedSize(P::kName, x, p.pad[i], i);
    if (dk > padded)
      throw ShapeError(StrCat(P::kName, ": kernel size exceeds input: dilated kernel ",
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
      dshape[2 + i] = CheckedAdd(os[2 + i], DilatedKernel(P::kName, p.kernel[i], p.dilate[i], i) - 1,
                                 P::kName, ": input size from output in spatial dim ", i) - 2 * p.pad[i];
  ShapeAssignCheck(in, 0, dshape);
  const int64_t taps = p.kernel[0] * p.kernel[1] * p.num_deformable_group;
  ShapeAssignCheck(in, static_cast<size_t>(at.offset), TShape({os[0], 2 * taps, os[2], os[3]}));
  if (kModulated) ShapeAssignCheck(in, static_cast<size_t>(at.mask), TShape({os[0], taps, os[2], os[3]}));
}

// The sizes of one problem.
struct DeformGeom {
  int64_t N, C, H, W, F, OH, OW, KH, KW, G, DG;
  int64_t sh, sw, ph, pw, dh, dw;
  bool modulated;  // DCNv2: taps scaled by the mask, its border rule
  int64_t P() const { return OH * OW; }
  int64_t ColRows() const { return C * KH * KW; }
};
template <bool kModulated>
DeformGeom MakeDeformGeom(const DeformConvParams<kModulated>& p, const TShape& d, const TShape& o) {
  return {d[0], d[1], d[2], d[3], p.num_filter, o[2], o[3], p.kernel[0], p.kernel[1],
          p.num_group, p.num_deformable_group, p.stride[0], p.stride[1], p.pad[0], p.pad[1],
          p.dilate[0], p.dilate[1], kModulated};
}

// One bilinear tap at (y, x) of an H x W plane: its four corners (top-left, top-right,
// bottom-left, bottom-right; -1 for a corner that reads zero) and fractions. v1 clamps a tap in
// the last row or column (both corners of that axis are the same pixel, fraction 0, so the value
// does not move with that coordinate); DCNv2 drops the corners outside the image.
struct Tap {
  bool valid = false;
  int64_t corner[4] = {-1, -1, -1, -1};
  float ly = 0, lx = 0;
  float Weight(int k) const { return (k < 2 ? 1 - ly : ly) * (k % 2 == 0 ? 1 - lx : lx); }
  float Value(const float* plane) const {
    float v = 0;
    for (int k = 0; k < 4; ++k)
      if (corner[k] >= 0) v += Weight(k) * plane[corner[k]];
    return v;
  }
  // d(value)/dy and d(value)/dx.
  void Slopes(const float* plane, float* dy, float* dx) const {
    float v[4];
    for (int k = 0; k < 4; ++k) v[k] = corner[k] >= 0 ? plane[corner[k]] : 0.f;
    *dy = (1 - lx) * (v[2] - v[0]) + lx * (v[3] - v[1]);
    *dx = (1 - ly) * (v[1] - v[0]) + ly * (v[3] - v[2]);
  }
};
Tap TapAt(float y, float x, int64_t H, int64_t W, bool modulated) {
  Tap t;
  const float h = static_cast<float>(H), w = static_cast<float>(W);
  const bool inside = modulated ? y > -1.f && x > -1.f && y < h && x < w : y >= 0.f && x >= 0.f && y < h && x < w;
  if (!inside) return t;
  t.valid = true;
  int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  t.ly = y - static_cast<float>(y0);
  t.lx = x - static_cast<float>(x0);
  if (!modulated) {
    if (y0 >= H - 1) y1 = y0 = H - 1, t.ly = 0;
    if (x0 >= W - 1) x1 = x0 = W - 1, t.lx = 0;
  }
  const int64_t ys[2] = {y0, y1}, xs[2] = {x0, x1};
  for (int k = 0; k < 4; ++k) {
    const int64_t yy = ys[k / 2], xx = xs[k % 2];
    if (yy >= 0 && yy < H && xx >= 0 && xx < W) t.corner[k] = yy * W + xx;
  }
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
  return TapAt(y, x, g.H, g.W, g.modulated);
}

// DCNv2's mask of kernel element (i, j) at output position k for deformable group `group`
// (1 without a mask).
float MaskFor(const DeformGeom& g, const float* mask_n, int64_t group, int64_t i, int64_t j, int64_t k) {
  return mask_n ? mask_n[((group * g.KH + i) * g.KW + j) * g.P() + k] : 1.f;
}

// col (C*KH*KW, OH*OW) of image n: row (c, i, j) holds the deformed tap values (times the mask).
void DeformIm2Col(const DeformGeom& g, const float* x_n, const float* offset_n, const float* mask_n, float* col) {
  const int64_t P = g.P(), per_group = g.C / g.DG;
  ParallelFor(g.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const float* plane = x_n + c * g.H * g.W;
      for (int64_t i = 0; i < g.KH; ++i)
        for (int64_t j = 0; j < g.KW; ++j) {
          float* row = col + ((c * g.KH + i) * g.KW + j) * P;
          for (int64_t k = 0; k < P; ++k) {
            const Tap t = TapFor(g, offset_n, c / per_group, i, j, k);
            row[k] = t.valid ? t.Value(plane) * MaskFor(g, mask_n, c / per_group, i, j, k) : 0.0f;
          }
        }
    }
  });
}

template <bool kModulated>
void ForwardDeformConv(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<DeformConvParams<kModulated>>();
  constexpr DeformInputs at = InputsOf(kModulated);
  const DeformGeom g = MakeDeformGeom(p, in[at.data].shape(), out[0].shape());
  const int64_t P = g.P(), Fg = g.F / g.G, Kg = g.ColRows() / g.G, taps = g.KH * g.KW * g.DG * P;
  std::vector<float> col(static_cast<size_t>(g.ColRows() * P));
  const float* w = in[at.weight].fdata();
  for (int64_t n = 0; n < g.N; ++n) {
    DeformIm2Col(g, in[at.data].fdata() + n * g.C * g.H * g.W, in[at.offset].fdata() + n * 2 * taps,
                 kModulated ? in[at.mask].fdata() + n * taps : nullptr, col.data());
    float* y_n = out[0].fdata() + n * g.F * P;
    for (int64_t grp = 0; grp < g.G; ++grp)
      Gemm(false, false, Fg, P, Kg, 1.0f, w + grp * Fg * Kg, Kg, col.data() + grp * Kg * P, P,
           req[0] == OpReq::kAdd ? 1.0f : 0.0f, y_n + grp * Fg * P, P);
    if (!p.no_bias) {
      const float* bias = in[at.bias].fdata();
      for (int64_t f = 0; f < g.F; ++f)
        for (int64_t k = 0; k < P; ++k) y_n[f * P + k] += bias[f];
    }
  }
}

template <bool kModulated>
void BackwardDeformConv(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<DeformConvParams<kModulated>>();
  constexpr DeformInputs at = InputsOf(kModulated);
  const DeformGeom g = MakeDeformGeom(p, a.inputs[at.data].shape(), a.out_grads[0].shape());
  const int64_t P = g.P(), Fg = g.F / g.G, Kg = g.ColRows() / g.G, per_group = g.C / g.DG;
  const int64_t taps = g.KH * g.KW * g.DG * P;
  const float* w = a.inputs[at.weight].fdata();
  const OpReq req_data = a.req[at.data], req_off = a.req[at.offset], req_w = a.req[at.weight];
  const OpReq req_mask = kModulated ? a.req[at.mask] : OpReq::kNull;
  for (int i : {at.data, at.offset, at.mask})
    if (i >= 0 && (a.req[i] == OpReq::kWrite || a.req[i] == OpReq::kWriteInplace)) a.in_grads[i].Fill(0.0f);
  std::vector<float> col(static_cast<size_t>(g.ColRows() * P)), dcol(col.size());
  std::vector<float> dw(static_cast<size_t>(a.inputs[at.weight].Size()), 0.0f);
  for (int64_t n = 0; n < g.N; ++n) {
    const float* x_n = a.inputs[at.data].fdata() + n * g.C * g.H * g.W;
    const float* off_n = a.inputs[at.offset].fdata() + n * 2 * taps;
    const float* mask_n = kModulated ? a.inputs[at.mask].fdata() + n * taps : nullptr;
    const float* dy_n = a.out_grads[0].fdata() + n * g.F * P;
    if (req_w != OpReq::kNull) {  // dW_g += dy_g x col_g^T
      DeformIm2Col(g, x_n, off_n, mask_n, col.data());
      for (int64_t grp = 0; grp < g.G; ++grp)
        Gemm(false, true, Fg, Kg, P, 1.0f, dy_n + grp * Fg * P, P, col.data() + grp * Kg * P, P,
             1.0f, dw.data() + grp * Fg * Kg, Kg);
    }
    if (req_data == OpReq::kNull && req_off == OpReq::kNull && req_mask == OpReq::kNull) continue;
    for (int64_t grp = 0; grp < g.G; ++grp)  // dcol_g = W_g^T x dy_g
      Gemm(true, false, Kg, P, Fg, 1.0f, w + grp * Fg * Kg, Kg, dy_n + grp * Fg * P, P, 0.0f,
           dcol.data() + grp * Kg * P, P);
    if (req_data != OpReq::kNull) {  // channel c scatters into its own plane only
      float* dx_n = a.in_grads[at.data].fdata() + n * g.C * g.H * g.W;
      ParallelFor(g.C, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          float* plane = dx_n + c * g.H * g.W;
          for (int64_t i = 0; i < g.KH; ++i)
            for (int64_t j = 0; j < g.KW; ++j) {
              const float* drow = dcol.data() + ((c * g.KH + i) * g.KW + j) * P;
              for (int64_t k = 0; k < P; ++k) {
                const Tap t = TapFor(g, off_n, c / per_group, i, j, k);
                if (!t.valid) continue;
                const float d = drow[k] * MaskFor(g, mask_n, c / per_group, i, j, k);
                for (int q = 0; q < 4; ++q)
                  if (t.corner[q] >= 0) plane[t.corner[q]] += d * t.Weight(q);
              }
            }
        }
      });
    }
    if (req_off != OpReq::kNull || req_mask != OpReq::kNull) {  // each (group, i, j) owns its planes
      float* doff_n = req_off != OpReq::kNull ? a.in_grads[at.offset].fdata() + n * 2 * taps : nullptr;
      float* dmask_n = req_mask != OpReq::kNull ? a.in_grads[at.mask].fdata() + n * taps : nullptr;
      ParallelFor(g.DG * g.KH * g.KW, 1, [&](int64_t b, int64_t e) {
        for (int64_t gij = b; gij < e; ++gij) {
          const int64_t grp = gij / (g.KH * g.KW), i = (gij / g.KW) % g.KH, j = gij % g.KW;
          for (int64_t k = 0; k < P; ++k) {
            const Tap t = TapFor(g, off_n, grp, i, j, k);
            if (!t.valid) continue;
            const float m = MaskFor(g, mask_n, grp, i, j, k);
            float sy = 0, sx = 0, sm = 0;
            for (int64_t c = grp * per_group; c < (grp + 1) * per_group; ++c) {
              const float* plane = x_n + c * g.H * g.W;
              const float d = dcol[static_cast<size_t>(((c * g.KH + i) * g.KW + j) * P + k)];
              float dy, dx;
              t.Slopes(plane, &dy, &dx);
              sy += d * dy;
              sx += d * dx;
              if (dmask_n) sm += d * t.Value(plane);
            }
            if (doff_n) {
              float* dh = doff_n + (grp * 2 * g.KH * g.KW + 2 * (i * g.KW + j)) * P;
              dh[k] += m * sy;
              dh[P + k] += m * sx;
            }
            if (dmask_n) dmask_n[((grp * g.KH + i) * g.KW + j) * P + k] += sm;
          }
        }
      });
    }
  }
  if (req_w != OpReq::kNull) AssignWithReq(a.in_grads[at.weight].fdata(), dw.data(), a.inputs[at.weight].Size(), req_w);
  if (!p.no_bias && a.req[at.bias] != OpReq::kNull)
    BiasBackward(a.out_grads[0].fdata(), a.in_grads[at.bias].fdata(), g.N, g.F, P, a.req[at.bias]);
}

template <bool kModulated>
Op& RegisterDeformConv(Op& op) {
  using P = DeformConvParams<kModulated>;
  constexpr DeformInputs at = InputsOf(kModulated);
  return op.set_params<P>()
      .set_arguments([](const NodeAttrs& a) {
        std::vector<std::string> names = kModulated ? std::vector<std::string>{"data", "offset", "mask", "weight"}
                                                    : std::vector<std::string>{"data", "offset", "weight"};
        if (!a.param<P>().no_bias) names.push_back("bias");
        return names;
      })
      .add_argument_doc("data", "Input data: (batch, channel, height, width).")
      .add_argument_doc("offset", "Sampling offsets: (batch, 2*kh*kw*num_deformable_group, out_h, out_w).")
      .add_argument_doc("weight", "Weight matrix: (num_filter, channel/num_group, kh, kw).")
      .add_argument_doc("bias", "Bias parameter: (num_filter,); absent when no_bias.")
      .set_infer_shape(InferShapeDeformConv<kModulated>)
      .set_mac_count([](const NodeAttrs&, const std::vector<TShape>& in, const std::vector<TShape>& out) {
        return WeightRowMacs(out[0], in[at.weight]);
      })
      .set_forward(ForwardDeformConv<kModulated>)
      .set_backward(BackwardDeformConv<kModulated>);
}
}  // namespace

[[maybe_unused]] static Op& deformable_convolution =
    RegisterDeformConv<false>(OpRegistry::Global().Register("_contrib_DeformableConvolution"))
        .describe("Deformable convolution (2-D): tap (i, j) of the kernel at output position (y, x) "
                  "reads the data bilinearly at (y*stride - pad + i*dilate + offset_h, x*stride - "
                  "pad + j*dilate + offset_w), offsets from the `offset` input (batch, 2*kh*kw*"
                  "num_deformable_group, out_h, out_w); taps outside the input read zero. Grouped "
                  "like Convolution; differentiable in data, offset, weight and bias.");

[[maybe_unused]] static Op& modulated_deformable_convolution =
    RegisterDeformConv<true>(OpRegistry::Global().Register("_contrib_ModulatedDeformableConvolution"))
        .describe("Modulated deformable convolution (DCNv2, 2-D): as DeformableConvolution, each tap "
                  "also scaled by the `mask` input (batch, kh*kw*num_deformable_group, out_h, out_w); "
                  "a tap at (y, x) in (-1, height) x (-1, width) reads the four pixels around it, "
                  "those outside the image as zero. Differentiable in data, offset, mask, weight and "
                  "bias.")
        .add_argument_doc("mask", "Modulation of each tap: (batch, kh*kw*num_deformable_group, out_h, out_w).");

}  // namespace symbind
