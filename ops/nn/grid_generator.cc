// GridGenerator: the sampling grid BilinearSampler reads, from an affine matrix per image or
// from an optical flow field (MXNet's op).
#include <symbind/ops/nn/sampling_util.h>
#include <symbind/ops/kernels/gemm.h>

namespace symbind {

namespace {
enum GridTransform { kAffine = 0, kWarp = 1 };

struct GridGeneratorParam : Parameter<GridGeneratorParam> {
  int transform_type;
  TShape target_shape;
  static void Declare(ParamDeclarer<GridGeneratorParam>& d) {
    d.field("transform_type", &GridGeneratorParam::transform_type)
        .add_enum("affine", kAffine).add_enum("warp", kWarp)
        .describe("The type of transformation. For `affine`, input data should be an affine matrix "
                  "of size (batch, 6). For `warp`, input data should be an optical flow of size "
                  "(batch, 2, h, w).");
    d.field("target_shape", &GridGeneratorParam::target_shape).set_default(TShape({0, 0}))
        .describe("Specifies the output shape (H, W). This is required if transformation type is "
                  "`affine`. If transformation type is `warp`, this parameter is ignored.");
  }
};

void InferShapeGridGenerator(const NodeAttrs& attrs, std::vector<TShape>* in,
                             std::vector<TShape>* out) {
  const auto& p = attrs.param<GridGeneratorParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (p.transform_type == kAffine) {
    if (d.ndim() != 2 || (d[1] >= 0 && d[1] != 6))
      throw ShapeError(StrCat("GridGenerator: with transform_type=affine, data is the affine "
                              "matrix of shape (batch, 6), got ", d));
    if (p.target_shape.ndim() != 2 || p.target_shape[0] <= 0 || p.target_shape[1] <= 0)
      throw ShapeError(StrCat("GridGenerator: transform_type=affine needs target_shape (H, W) "
                              "with H, W > 0, got ", p.target_shape.ToStringAsWritten()));
    const int64_t H = p.target_shape[0], W = p.target_shape[1];
    ShapeAssignCheck(out, 0, TShape({d[0], 2, H, W}));
    ShapeAssignCheck(out, 1, TShape({3, CheckedMul(H, W, "GridGenerator: target size")}));
    return;
  }
  if (d.ndim() != 4 || (d[1] >= 0 && d[1] != 2))
    throw ShapeError(StrCat("GridGenerator: with transform_type=warp, data is the optical flow "
                            "of shape (batch, 2, H, W), got ", d));
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, TShape({2, d[2], d[3]}));
}

void ForwardGridGenerator(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<GridGeneratorParam>();
  const TShape& o = out[0].shape();
  const int64_t N = o[0], H = o[2], W = o[3], P = H * W;
  float* dst = out[1].fdata();
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  if (p.transform_type == kAffine) {
    sampling::AffineTargetGrid(H, W, dst);  // kept for the gradient even when out[0] is not
    if (req[0] == OpReq::kNull) return;
    // out[n] (2, HW) = theta[n] (2, 3) x dst (3, HW)
    Gemm(false, false, 2 * N, P, 3, 1.0f, x, 3, dst, P, req[0] == OpReq::kAdd ? 1.0f : 0.0f, y, P);
    return;
  }
  for (int64_t k = 0; k < P; ++k) {
    dst[k] = static_cast<float>(k % W);
    dst[P + k] = static_cast<float>(k / W);
  }
  if (req[0] == OpReq::kNull) return;
  const float half_w = (static_cast<float>(W) - 1.0f) / 2.0f;
  const float half_h = (static_cast<float>(H) - 1.0f) / 2.0f;
  MapWithReq(y, out[0].Size(), req[0], [&](int64_t i) {
    const int64_t c = (i / P) % 2, k = i % P;
    return (x[i] + dst[c * P + k]) / (c == 0 ? half_w : half_h) - 1.0f;
  });
}

void BackwardGridGenerator(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<GridGeneratorParam>();
  const TShape& o = a.out_grads[0].shape();
  const int64_t N = o[0], H = o[2], W = o[3], P = H * W;
  const float* dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  if (p.transform_type == kAffine) {
    // d theta[n] (2, 3) = dy[n] (2, HW) x dst^T (HW, 3)
    Gemm(false, true, 2 * N, 3, P, 1.0f, dy, P, a.outputs[1].fdata(), P,
         a.req[0] == OpReq::kAdd ? 1.0f : 0.0f, dx, 3);
    return;
  }
  const float half_w = (static_cast<float>(W) - 1.0f) / 2.0f;
  const float half_h = (static_cast<float>(H) - 1.0f) / 2.0f;
  MapWithReq(dx, a.in_grads[0].Size(), a.req[0], [&](int64_t i) {
    return dy[i] / ((i / P) % 2 == 0 ? half_w : half_h);
  });
}
}  // namespace

SYMBIND_REGISTER_OP(GridGenerator)
    .describe("Generates a sampling grid for BilinearSampler. affine: grid[n] = theta[n] (2x3) "
              "times the target grid of (x, y, 1) columns normalised to [-1, 1]; warp: grid = "
              "(flow + pixel coordinates) / ((size - 1) / 2) - 1. The second output (grid_dst, "
              "the target grid) is hidden.")
    .set_params<GridGeneratorParam>()
    .set_outputs({"output", "grid_dst"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeGridGenerator)
    .set_forward(ForwardGridGenerator)
    .set_backward(BackwardGridGenerator);

}  // namespace symbind
