// SpatialTransformer: an affine sampling grid per image from `loc`, then bilinear sampling of
// the data on it (MXNet's op; only transform_type=affine and sampler_type=bilinear exist there).
#include <optional>

#include <symbind/ops/nn/sampling_util.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

namespace {
struct SpatialTransformerParam : Parameter<SpatialTransformerParam> {
  TShape target_shape;
  int transform_type;
  int sampler_type;
  std::optional<bool> cudnn_off;
  static void Declare(ParamDeclarer<SpatialTransformerParam>& d) {
    d.field("target_shape", &SpatialTransformerParam::target_shape).set_default(TShape({0, 0}))
        .describe("output shape(h, w) of spatial transformer: (y, x)");
    d.field("transform_type", &SpatialTransformerParam::transform_type).add_enum("affine", 0)
        .describe("transformation type");
    d.field("sampler_type", &SpatialTransformerParam::sampler_type).add_enum("bilinear", 0)
        .describe("sampling type");
    d.field("cudnn_off", &SpatialTransformerParam::cudnn_off).set_default(std::nullopt)
        .describe("whether to turn cudnn off. Accepted and ignored (no cuDNN).");
  }
};

void InferShapeSpatialTransformer(const NodeAttrs& attrs, std::vector<TShape>* in,
                                  std::vector<TShape>* out) {
  const auto& p = attrs.param<SpatialTransformerParam>();
  const TShape& d = (*in)[0];
  const TShape& l = (*in)[1];
  if (!d.is_known() || !l.is_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("SpatialTransformer: data should be 4D in batch-num_filter-y-x, got ", d));
  if (l.ndim() != 2 || l[1] != 6 || l[0] != d[0])
    throw ShapeError(StrCat("SpatialTransformer: loc should be (batch, 6) = (", d[0], ", 6), got ", l));
  if (p.target_shape.ndim() != 2 || p.target_shape[0] <= 0 || p.target_shape[1] <= 0)
    throw ShapeError(StrCat("SpatialTransformer: target_shape must be (H, W) with H, W > 0, got ",
                            p.target_shape.ToStringAsWritten()));
  const int64_t H = p.target_shape[0], W = p.target_shape[1];
  const int64_t P = CheckedMul(H, W, "SpatialTransformer: target size");
  ShapeAssignCheck(out, 0, TShape({d[0], d[1], H, W}));
  ShapeAssignCheck(out, 1, TShape({3, P}));
  ShapeAssignCheck(out, 2, TShape({d[0], 2, P}));
}

void ForwardSpatialTransformer(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                               const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const TShape& d = in[0].shape();
  const TShape& o = out[0].shape();
  const int64_t N = d[0], H = o[2], W = o[3], P = H * W;
  float* dst = out[1].fdata();
  float* src_grid = out[2].fdata();
  sampling::AffineTargetGrid(H, W, dst);
  // grid_src[n] (2, HW) = loc[n] (2, 3) x grid_dst (3, HW)
  Gemm(false, false, 2 * N, P, 3, 1.0f, in[1].fdata(), 3, dst, P, 0.0f, src_grid, P);
  sampling::BilinearSampleForward(in[0].fdata(), src_grid, out[0].fdata(), N, d[1], d[2], d[3], H,
                                  W, req[0]);
}

void BackwardSpatialTransformer(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull && a.req[1] == OpReq::kNull) return;
  const TShape& d = a.inputs[0].shape();
  const TShape& o = a.out_grads[0].shape();
  const int64_t N = d[0], H = o[2], W = o[3], P = H * W;
  if (a.req[0] == OpReq::kWrite || a.req[0] == OpReq::kWriteInplace) a.in_grads[0].Fill(0.0f);
  std::vector<float> grid_grad(static_cast<size_t>(N * 2 * P), 0.0f);
  sampling::BilinearSampleBackward(a.inputs[0].fdata(), a.outputs[2].fdata(),
                                   a.out_grads[0].fdata(),
                                   InGradOrNull(a, 0),
                                   grid_grad.data(), N, d[1], d[2], d[3], H, W);
  if (a.req[1] != OpReq::kNull)  // d loc[n] (2, 3) = d grid_src[n] (2, HW) x grid_dst^T
    Gemm(false, true, 2 * N, 3, P, 1.0f, grid_grad.data(), P, a.outputs[1].fdata(), P,
         a.req[1] == OpReq::kAdd ? 1.0f : 0.0f, a.in_grads[1].fdata(), 3);
}
}  // namespace

SYMBIND_REGISTER_OP(SpatialTransformer)
    .describe("Applies a spatial transformer: the affine matrix loc[n] (2x3) maps the target "
              "grid of (x, y, 1) columns normalised to [-1, 1] to source points, where the data "
              "is sampled bilinearly (zero outside). Outputs grid_dst and grid_src are hidden.")
    .set_params<SpatialTransformerParam>()
    .set_arguments({"data", "loc"})
    .set_outputs({"output", "grid_dst", "grid_src"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeSpatialTransformer)
    .set_forward(ForwardSpatialTransformer)
    .set_backward(BackwardSpatialTransformer);

}  // namespace symbind
