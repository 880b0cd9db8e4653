// _contrib_MultiBoxPrior: SSD anchor boxes for every position of a feature map.
#include <algorithm>
#include <cmath>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
struct MultiBoxPriorParam : Parameter<MultiBoxPriorParam> {
  std::vector<float> sizes;
  std::vector<float> ratios;
  bool clip;
  std::vector<float> steps;
  std::vector<float> offsets;
  static void Declare(ParamDeclarer<MultiBoxPriorParam>& d) {
    // A size or ratio <= 0 makes boxes of no or negative extent (sqrt of a negative ratio: NaN).
    auto positive = [](const std::vector<float>& v) {
      return !v.empty() && std::all_of(v.begin(), v.end(), [](float x) { return x > 0; });
    };
    d.field("sizes", &MultiBoxPriorParam::sizes).set_default({1.0f})
        .require(positive, "a non-empty tuple of numbers > 0")
        .describe("List of sizes of generated MultiBoxPriores.");
    d.field("ratios", &MultiBoxPriorParam::ratios).set_default({1.0f})
        .require(positive, "a non-empty tuple of numbers > 0")
        .describe("List of aspect ratios of generated MultiBoxPriores.");
    d.field("clip", &MultiBoxPriorParam::clip).set_default(false)
        .describe("Whether to clip out-of-boundary boxes.");
    d.field("steps", &MultiBoxPriorParam::steps).set_default({-1.0f, -1.0f})
        .require([](const std::vector<float>& v) { return v.size() == 2 && v[0] * v[1] >= 0; },
                 "(step_y, step_x), both positive or both non-positive")
        .describe("Priorbox step across y and x, -1 for auto calculation.");
    d.field("offsets", &MultiBoxPriorParam::offsets).set_default({0.5f, 0.5f})
        .require([](const std::vector<float>& v) {
          return v.size() == 2 && v[0] >= 0 && v[0] <= 1 && v[1] >= 0 && v[1] <= 1;
        }, "(offset_y, offset_x), each in [0, 1]")
        .describe("Priorbox center offsets, y and x respectively");
  }
  int64_t AnchorsPerPosition() const {
    return static_cast<int64_t>(sizes.size() + ratios.size()) - 1;
  }
};

void InferShapeMultiBoxPrior(const NodeAttrs& attrs, std::vector<TShape>* in,
                             std::vector<TShape>* out) {
  const auto& p = attrs.param<MultiBoxPriorParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 4)
    throw ShapeError(StrCat("MultiBoxPrior: input data should be 4D (batch, channel, y, x), got ", d));
  if (d[2] < 0 || d[3] < 0) return;
  if (d[2] == 0 || d[3] == 0)
    throw ShapeError(StrCat("MultiBoxPrior: input height and width must be > 0, got ", d));
  const int64_t positions = CheckedMul(d[2], d[3], "MultiBoxPrior: positions of ", d);
  ShapeAssignCheck(out, 0, TShape({1, CheckedMul(positions, p.AnchorsPerPosition(),
                                                 "MultiBoxPrior: anchors"), 4}));
}

void ForwardMultiBoxPrior(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<MultiBoxPriorParam>();
  const int64_t H = in[0].shape()[2], W = in[0].shape()[3];
  float step_y = p.steps[0], step_x = p.steps[1];
  if (step_y <= 0 || step_x <= 0) {  // auto: the feature map spans [0, 1]
    step_y = 1.0f / static_cast<float>(H);
    step_x = 1.0f / static_cast<float>(W);
  }
  float* y = out[0].fdata();
  const int64_t A = p.AnchorsPerPosition();
  ParallelFor(H, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, W * A)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float cy = (static_cast<float>(r) + p.offsets[0]) * step_y;
      for (int64_t c = 0; c < W; ++c) {
        const float cx = (static_cast<float>(c) + p.offsets[1]) * step_x;
        float* box = y + (r * W + c) * A * 4;
        auto emit = [&](float size, float ratio) {
          const float w = size * static_cast<float>(H) / static_cast<float>(W) * ratio / 2;
          const float h = size / ratio / 2;
          const float v[4] = {cx - w, cy - h, cx + w, cy + h};
          for (int k = 0; k < 4; ++k) {
            const float b = p.clip ? std::min(std::max(v[k], 0.0f), 1.0f) : v[k];
            box[k] = req[0] == OpReq::kAdd ? box[k] + b : b;
          }
          box += 4;
        };
        // Every size with the first ratio, then the first size with every other ratio.
        const float first_ratio = std::sqrt(p.ratios[0]);
        for (float s : p.sizes) emit(s, first_ratio);
        for (size_t j = 1; j < p.ratios.size(); ++j) emit(p.sizes[0], std::sqrt(p.ratios[j]));
      }
    }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_MultiBoxPrior)
    .add_alias("_npx_multibox_prior")
    .describe("Generates prior (anchor) boxes [xmin, ymin, xmax, ymax] in [0, 1] image "
              "coordinates for every position of the input's feature map: each size with the "
              "first ratio, then the first size with each further ratio; output (1, H*W*"
              "(len(sizes)+len(ratios)-1), 4). The data gradient is zero.")
    .set_params<MultiBoxPriorParam>()
    .set_infer_shape(InferShapeMultiBoxPrior)
    .set_forward(ForwardMultiBoxPrior)
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kWrite || a.req[0] == OpReq::kWriteInplace) a.in_grads[0].Fill(0.0f);
    });

}  // namespace symbind
