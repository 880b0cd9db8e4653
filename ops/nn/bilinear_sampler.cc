// BilinearSampler: samples NCHW data at a normalised (x, y) grid, zero outside (MXNet's op).
#include <optional>

#include <symbind/ops/nn/sampling_util.h>

namespace symbind {

namespace {
struct BilinearSamplerParam : Parameter<BilinearSamplerParam> {
  std::optional<bool> cudnn_off;
  static void Declare(ParamDeclarer<BilinearSamplerParam>& d) {
    d.field("cudnn_off", &BilinearSamplerParam::cudnn_off).set_default(std::nullopt)
        .describe("whether to turn cudnn off. Accepted and ignored (no cuDNN).");
  }
};

void InferShapeBilinearSampler(const NodeAttrs&, std::vector<TShape>* in,
                               std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  const TShape& g = (*in)[1];
  if (!d.is_known() || !g.is_known()) return;
  if (d.ndim() != 4)
    throw ShapeError(StrCat("BilinearSampler: data should be 4D in batch-num_filter-y-x, got ", d));
  if (g.ndim() != 4 || g[1] != 2)
    throw ShapeError(StrCat("BilinearSampler: grid should be 4D in batch-2-y-x, got ", g));
  if (g[0] != d[0])
    throw ShapeError(StrCat("BilinearSampler: grid batch ", g[0], " differs from data batch ", d[0]));
  if (g[2] <= 0 || g[3] <= 0)
    throw ShapeError(StrCat("BilinearSampler: grid has an empty target size: ", g));
  ShapeAssignCheck(out, 0, TShape({d[0], d[1], g[2], g[3]}));
  ShapeAssignCheck(out, 1, TShape({g[0], g[2], g[3], 2}));
}

void ForwardBilinearSampler(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const TShape& d = in[0].shape();
  const TShape& o = out[0].shape();
  sampling::BilinearSampleForward(in[0].fdata(), in[1].fdata(), out[0].fdata(), d[0], d[1], d[2],
                                  d[3], o[2], o[3], req[0]);
  if (req[1] != OpReq::kNull) out[1].Fill(0.0f);  // MXNet leaves it unwritten
}

void BackwardBilinearSampler(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull && a.req[1] == OpReq::kNull) return;
  const TShape& d = a.inputs[0].shape();
  const TShape& o = a.out_grads[0].shape();
  for (size_t i = 0; i < 2; ++i)
    if (a.req[i] == OpReq::kWrite || a.req[i] == OpReq::kWriteInplace) a.in_grads[i].Fill(0.0f);
  sampling::BilinearSampleBackward(
      a.inputs[0].fdata(), a.inputs[1].fdata(), a.out_grads[0].fdata(),
      InGradOrNull(a, 0), InGradOrNull(a, 1), d[0], d[1], d[2], d[3], o[2],
      o[3]);
}
}  // namespace

SYMBIND_REGISTER_OP(BilinearSampler)
    .describe("Applies bilinear sampling to an NCHW input: output[n, c, y, x] interpolates data "
              "at (grid[n, 0, y, x], grid[n, 1, y, x]), normalised to [-1, 1]; points outside "
              "the input read zero. The second output (tmp) is hidden and unused.")
    .set_params<BilinearSamplerParam>()
    .set_arguments({"data", "grid"})
    .set_outputs({"output", "tmp"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeBilinearSampler)
    .set_forward(ForwardBilinearSampler)
    .set_backward(BackwardBilinearSampler);

}  // namespace symbind
