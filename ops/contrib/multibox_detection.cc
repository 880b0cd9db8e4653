// _contrib_MultiBoxDetection: SSD's output layer. Decodes box regressions against anchors,
// picks each anchor's best non-background class, and applies per-class (or forced) NMS, with
// MXNet 1.9.1's CPU semantics.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
struct MultiBoxDetectionParam : Parameter<MultiBoxDetectionParam> {
  bool clip;
  float threshold;
  int background_id;
  float nms_threshold;
  bool force_suppress;
  std::vector<float> variances;
  int nms_topk;
  static void Declare(ParamDeclarer<MultiBoxDetectionParam>& d) {
    d.field("clip", &MultiBoxDetectionParam::clip).set_default(true)
        .describe("Clip out-of-boundary boxes.");
    d.field("threshold", &MultiBoxDetectionParam::threshold).set_default(0.01f)
        .describe("Threshold to be a positive prediction.");
    d.field("background_id", &MultiBoxDetectionParam::background_id).set_default(0)
        .describe("Background id. Accepted and ignored, as by MXNet's CPU kernel: class 0 is "
                  "the background.");
    d.field("nms_threshold", &MultiBoxDetectionParam::nms_threshold).set_default(0.5f)
        .describe("Non-maximum suppression threshold.");
    d.field("force_suppress", &MultiBoxDetectionParam::force_suppress).set_default(false)
        .describe("Suppress all detections regardless of class_id.");
    d.field("variances", &MultiBoxDetectionParam::variances)
        .set_default({0.1f, 0.1f, 0.2f, 0.2f})
        .require([](const std::vector<float>& v) { return v.size() == 4; }, "a tuple of 4 values")
        .describe("Variances to be decoded from box regression output.");
    d.field("nms_topk", &MultiBoxDetectionParam::nms_topk).set_default(-1)
        .describe("Keep maximum top k detections before nms, -1 for no limit.");
  }
};

void InferShapeMultiBoxDetection(const NodeAttrs&, std::vector<TShape>* in,
                                 std::vector<TShape>* out) {
  const TShape& c = (*in)[0];
  const TShape& l = (*in)[1];
  const TShape& a = (*in)[2];
  if (!c.is_known() || !l.is_known() || !a.is_known()) return;
  auto fail = [&](const std::string& what) {
    throw ShapeError(StrCat("MultiBoxDetection: ", what, " (cls_prob ", c, ", loc_pred ", l,
                            ", anchor ", a, ")"));
  };
  if (c.ndim() != 3) fail("cls_prob must be 3-D (batch, classes, anchors)");
  if (l.ndim() != 2) fail("loc_pred must be 2-D (batch, anchors * 4)");
  if (a.ndim() != 3 || a[2] != 4) fail("anchor must be 3-D (1, anchors, 4)");
  if (a[1] <= 0) fail("the number of anchors must be > 0");
  if (c[2] != a[1]) fail("cls_prob and anchor disagree on the number of anchors");
  if (l[1] != c[2] * 4) fail("loc_pred must hold 4 values per anchor");
  if (l[0] != c[0]) fail("cls_prob and loc_pred disagree on the batch size");
  ShapeAssignCheck(out, 0, TShape({c[0], a[1], 6}));
}

float IoU(const float* a, const float* b) {
  const float w = std::max(0.0f, std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const float h = std::max(0.0f, std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const float i = w * h;
  const float u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0.0f ? 0.0f : i / u;
}

void ForwardMultiBoxDetection(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<NDArray>& in, const std::vector<OpReq>&,
                              const std::vector<NDArray>& out) {
  const auto& p = attrs.param<MultiBoxDetectionParam>();
  const TShape& cs = in[0].shape();
  const int64_t B = cs[0], C = cs[1], A = cs[2];
  const float* cls = in[0].fdata();
  const float* loc = in[1].fdata();
  const float* anchors = in[2].fdata();  // the first (1, A, 4) block, shared by the batch
  float* y = out[0].fdata();
  const std::vector<float>& v = p.variances;
  ParallelFor(B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> rows(static_cast<size_t>(A * 6));
    for (int64_t b = b0; b < b1; ++b) {
      const float* pc = cls + b * C * A;
      const float* pl = loc + b * A * 4;
      for (int64_t i = 0; i < A; ++i) {
        float score = -1;
        int64_t id = 0;
        for (int64_t j = 1; j < C; ++j)
          if (pc[j * A + i] > score) {
            score = pc[j * A + i];
            id = j;
          }
        if (id > 0 && score < p.threshold) id = 0;
        float* r = rows.data() + i * 6;
        r[0] = static_cast<float>(id - 1);
        r[1] = score;
        const float* an = anchors + i * 4;
        const float* d = pl + i * 4;
        const float aw = an[2] - an[0], ah = an[3] - an[1];
        const float ax = (an[0] + an[2]) / 2.f, ay = (an[1] + an[3]) / 2.f;
        const float ox = d[0] * v[0] * aw + ax, oy = d[1] * v[1] * ah + ay;
        const float ow = std::exp(d[2] * v[2]) * aw / 2, oh = std::exp(d[3] * v[3]) * ah / 2;
        const float box[4] = {ox - ow, oy - oh, ox + ow, oy + oh};
        for (int k = 0; k < 4; ++k)
          r[2 + k] = p.clip ? std::max(0.0f, std::min(1.0f, box[k])) : box[k];
      }
      // Detections (class id >= 0) first, in anchor order; the rest of the rows are -1.
      float* po = y + b * A * 6;
      std::fill(po, po + A * 6, -1.0f);
      int64_t valid = 0;
      for (int64_t i = 0; i < A; ++i)
        if (rows[static_cast<size_t>(i * 6)] >= 0) {
          std::copy(rows.begin() + i * 6, rows.begin() + i * 6 + 6, po + valid * 6);
          ++valid;
        }
      if (valid < 1 || p.nms_threshold <= 0 || p.nms_threshold > 1) continue;
      std::vector<int64_t> order(static_cast<size_t>(valid));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return po[i * 6 + 1] > po[j * 6 + 1]; });
      const std::vector<float> unsorted(po, po + valid * 6);
      int64_t keep = valid;
      if (p.nms_topk > 0 && p.nms_topk < keep) {
        // Rows past the top k keep their unsorted contents with the class id set to -1.
        keep = p.nms_topk;
        for (int64_t i = keep; i < valid; ++i) po[i * 6] = -1;
      }
      for (int64_t i = 0; i < keep; ++i)
        std::copy(unsorted.begin() + order[static_cast<size_t>(i)] * 6,
                  unsorted.begin() + order[static_cast<size_t>(i)] * 6 + 6, po + i * 6);
      for (int64_t i = 0; i < keep; ++i) {
        if (po[i * 6] < 0) continue;
        for (int64_t j = i + 1; j < keep; ++j) {
          if (po[j * 6] < 0) continue;
          if ((p.force_suppress || po[i * 6] == po[j * 6]) &&
              IoU(po + i * 6 + 2, po + j * 6 + 2) >= p.nms_threshold)
            po[j * 6] = -1;
        }
      }
    }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_MultiBoxDetection)
    .add_alias("_npx_multibox_detection")
    .describe("Converts SSD predictions to detections [class_id, score, xmin, ymin, xmax, ymax] "
              "per anchor: the best non-background class (class 0 is the background; below "
              "threshold counts as background), boxes decoded from loc_pred against the anchors "
              "with variances (clipped to [0, 1] with clip), then sorted by score and "
              "suppressed per class (any class with force_suppress) at IoU >= nms_threshold. "
              "Suppressed and background rows have class id -1. Gradients are zero.")
    .set_params<MultiBoxDetectionParam>()
    .set_arguments({"cls_prob", "loc_pred", "anchor"})
    .set_infer_shape(InferShapeMultiBoxDetection)
    .set_forward(ForwardMultiBoxDetection)
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      for (size_t i = 0; i < a.in_grads.size(); ++i)
        if (a.req[i] == OpReq::kWrite || a.req[i] == OpReq::kWriteInplace) a.in_grads[i].Fill(0.0f);
    });

}  // namespace symbind
