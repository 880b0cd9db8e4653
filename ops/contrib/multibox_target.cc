// _contrib_MultiBoxTarget: SSD's training targets. Matches anchors to ground-truth boxes (each
// box's best anchor first, then every anchor above overlap_threshold), encodes the matched
// boxes as regression targets and picks negatives (all, or by hard negative mining), with
// MXNet 1.9.1's CPU semantics.
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/box_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
struct MultiBoxTargetParam : Parameter<MultiBoxTargetParam> {
  float overlap_threshold;
  float ignore_label;
  float negative_mining_ratio;
  float negative_mining_thresh;
  int minimum_negative_samples;
  std::vector<float> variances;
  static void Declare(ParamDeclarer<MultiBoxTargetParam>& d) {
    d.field("overlap_threshold", &MultiBoxTargetParam::overlap_threshold).set_default(0.5f)
        .describe("Anchor-GT overlap threshold to be regarded as a positive match.");
    d.field("ignore_label", &MultiBoxTargetParam::ignore_label).set_default(-1.0f)
        .describe("Label for ignored anchors.");
    d.field("negative_mining_ratio", &MultiBoxTargetParam::negative_mining_ratio).set_default(-1.0f)
        .describe("Max negative to positive samples ratio, use -1 to disable mining");
    d.field("negative_mining_thresh", &MultiBoxTargetParam::negative_mining_thresh).set_default(0.5f)
        .describe("Threshold used for negative mining.");
    d.field("minimum_negative_samples", &MultiBoxTargetParam::minimum_negative_samples).set_default(0)
        .describe("Minimum number of negative samples. Accepted and ignored, as by MXNet's CPU "
                  "kernel (only its GPU kernel reads it).");
    d.field("variances", &MultiBoxTargetParam::variances)
        .set_default({0.1f, 0.1f, 0.2f, 0.2f})
        .require([](const std::vector<float>& v) { return v.size() == 4; }, "a tuple of 4 values")
        .describe("Variances to be encoded in box regression target.");
    // MXNet checks this in the forward of any image with a ground truth.
    d.check([](const MultiBoxTargetParam& p) {
              return !(p.negative_mining_ratio > 0) || p.negative_mining_thresh > 0;
            },
            "negative_mining_thresh must be > 0 when negative mining is on (negative_mining_ratio > 0)",
            {"negative_mining_ratio", "negative_mining_thresh"});
  }
};

void InferShapeMultiBoxTarget(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& a = (*in)[0];
  const TShape& l = (*in)[1];
  const TShape& c = (*in)[2];
  if (!a.is_known() || !l.is_known()) return;
  auto fail = [&](const std::string& what) {
    throw ShapeError(StrCat("MultiBoxTarget: ", what, " (anchor ", a, ", label ", l, ", cls_pred ", c, ")"));
  };
  if (a.ndim() != 3 || a[0] != 1 || a[2] != 4)
    fail("anchor must be (1, anchors, 4): [xmin, ymin, xmax, ymax] shared by the batch");
  if (a[1] <= 0) fail("the number of anchors must be > 0");
  if (l.ndim() != 3 || l[1] <= 0 || l[2] < 5)
    fail("label must be (batch, labels > 0, width >= 5): [class, xmin, ymin, xmax, ymax, ...]");
  if (c.is_known()) {
    if (c.ndim() != 3 || c[1] <= 0) fail("cls_pred must be (batch, classes > 0, anchors)");
    if (c[2] != a[1]) fail("cls_pred and anchor disagree on the number of anchors");
    if (c[0] != l[0]) fail("cls_pred and label disagree on the batch size");
  }
  ShapeAssignCheck(out, 0, TShape({l[0], a[1] * 4}));
  ShapeAssignCheck(out, 1, TShape({l[0], a[1] * 4}));
  ShapeAssignCheck(out, 2, TShape({l[0], a[1]}));
}

// Regression target of ground truth g (corners) against anchor a, as MXNet encodes it.
void EncodeBox(const float* a, const float* g, const std::vector<float>& v, float* t) {
  const float aw = a[2] - a[0], ah = a[3] - a[1];
  const float ax = (a[0] + a[2]) * 0.5f, ay = (a[1] + a[3]) * 0.5f;
  const float gw = g[2] - g[0], gh = g[3] - g[1];
  const float gx = (g[0] + g[2]) * 0.5f, gy = (g[1] + g[3]) * 0.5f;
  t[0] = (gx - ax) / aw / v[0];
  t[1] = (gy - ay) / ah / v[1];
  t[2] = std::log(gw / aw) / v[2];
  t[3] = std::log(gh / ah) / v[3];
}

// Softmax probability of class 0 (the background) at anchor j of one image's (classes, anchors)
// predictions, in MXNet's order of operations.
float BackgroundProb(const float* pred, int64_t C, int64_t A, int64_t j) {
  float mx = pred[j];
  for (int64_t k = 1; k < C; ++k) mx = std::max(mx, pred[k * A + j]);
  float sum = 0.0f;
  for (int64_t k = 0; k < C; ++k) sum += std::exp(pred[k * A + j] - mx);
  return std::exp(pred[j] - mx) / sum;
}

constexpr int8_t kIgnored = -1, kNegative = 0, kPositive = 1;

// One image's anchor states and matched ground truths. Returns false when mining wants more
// negatives than there are anchors below negative_mining_thresh (MXNet's CHECK fails there).
bool MatchImage(const MultiBoxTargetParam& p, const float* anchors, int64_t A, const float* label, int64_t valid,
                int64_t width, const float* pred, int64_t C, std::vector<int8_t>* state,
                std::vector<int64_t>* match) {
  state->assign(static_cast<size_t>(A), kIgnored);
  match->assign(static_cast<size_t>(A), -1);
  if (valid == 0) return true;  // no ground truth: every anchor keeps ignore_label
  std::vector<float> iou(static_cast<size_t>(A * valid));
  for (int64_t j = 0; j < A; ++j)
    for (int64_t k = 0; k < valid; ++k)
      iou[j * valid + k] = box::IntersectionOverUnion(anchors + j * 4, label + k * width + 1, box::kCorner);
  auto& st = *state;
  auto& m = *match;
  std::vector<float> best_iou(static_cast<size_t>(A), -1.0f);  // -1: not computed yet
  int64_t positives = 0;
  // Each ground truth takes its best free anchor, the globally best pair first; ties go to the
  // lower anchor, then the lower box. Overlaps must exceed 1e-6.
  std::vector<char> gt_done(static_cast<size_t>(valid), 0);
  for (int64_t round = 0; round < valid; ++round) {
    float best = 1e-6f;
    int64_t bj = -1, bk = -1;
    for (int64_t j = 0; j < A; ++j) {
      if (st[j] == kPositive) continue;
      for (int64_t k = 0; k < valid; ++k)
        if (!gt_done[k] && iou[j * valid + k] > best) {
          best = iou[j * valid + k];
          bj = j;
          bk = k;
        }
    }
    if (bj < 0) break;
    st[bj] = kPositive;
    m[bj] = bk;
    best_iou[bj] = best;
    gt_done[bk] = 1;
    ++positives;
  }
  // The best ground truth of every other anchor (matched boxes included; ties to the lower).
  auto best_of = [&](int64_t j) {
    float bi = -1.0f;
    for (int64_t k = 0; k < valid; ++k)
      if (iou[j * valid + k] > bi) {
        bi = iou[j * valid + k];
        m[j] = k;
      }
    best_iou[j] = bi;
  };
  if (p.overlap_threshold > 0) {
    for (int64_t j = 0; j < A; ++j) {
      if (st[j] == kPositive) continue;
      best_of(j);
      if (best_iou[j] > p.overlap_threshold) {
        st[j] = kPositive;
        ++positives;
      }
    }
  }
  if (!(p.negative_mining_ratio > 0)) {
    for (int8_t& s : st)
      if (s != kPositive) s = kNegative;
    return true;
  }
  // Hard negative mining: ratio * positives negatives (truncated, at most the other anchors),
  // the anchors below negative_mining_thresh with the lowest background probability (the
  // highest background loss), ties in anchor order.
  const int64_t others = A - positives;
  const float want = static_cast<float>(positives) * p.negative_mining_ratio;
  const int64_t negatives = want >= static_cast<float>(others) ? others : static_cast<int64_t>(want);
  if (negatives <= 0) return true;
  std::vector<std::pair<float, int64_t>> candidates;
  for (int64_t j = 0; j < A; ++j) {
    if (st[j] == kPositive) continue;
    if (best_iou[j] < 0) best_of(j);
    if (best_iou[j] < p.negative_mining_thresh) candidates.emplace_back(BackgroundProb(pred, C, A, j), j);
  }
  if (static_cast<int64_t>(candidates.size()) < negatives) return false;
  // A NaN probability sorts last, so the order stays a strict weak ordering.
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& x, const auto& y) {
    if (std::isnan(x.first)) return false;
    return std::isnan(y.first) || x.first < y.first;
  });
  for (int64_t i = 0; i < negatives; ++i) st[candidates[static_cast<size_t>(i)].second] = kNegative;
  return true;
}

void ForwardMultiBoxTarget(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<MultiBoxTargetParam>();
  const int64_t A = in[0].shape()[1];
  const int64_t B = in[1].shape()[0], L = in[1].shape()[1], W = in[1].shape()[2];
  const int64_t C = in[2].shape()[1];
  const float* anchors = in[0].fdata();
  const float* labels = in[1].fdata();
  const float* preds = in[2].fdata();
  // Ground truths are the rows before the first of class -1, which must be all -1 (padding).
  std::vector<int64_t> valid(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const float* lb = labels + b * L * W;
    int64_t n = 0;
    while (n < L && lb[n * W] != -1.0f) ++n;
    if (n < L)
      for (int k = 1; k < 5; ++k)
        if (lb[n * W + k] != -1.0f)
          throw Error(StrCat("MultiBoxTarget: label row ", n, " of image ", b, " has class -1 (padding), ",
                             "so its box must be -1 too, got [", lb[n * W + 1], ", ", lb[n * W + 2], ", ",
                             lb[n * W + 3], ", ", lb[n * W + 4], "]"));
    valid[static_cast<size_t>(b)] = n;
  }
  std::vector<float> loc(static_cast<size_t>(B * A * 4), 0.0f), mask(loc.size(), 0.0f);
  std::vector<float> cls(static_cast<size_t>(B * A), p.ignore_label);
  std::vector<char> short_of_negatives(static_cast<size_t>(B), 0);
  ParallelFor(B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<int8_t> state;
    std::vector<int64_t> match;
    for (int64_t b = b0; b < b1; ++b) {
      const float* lb = labels + b * L * W;
      if (!MatchImage(p, anchors, A, lb, valid[static_cast<size_t>(b)], W, preds + b * C * A, C, &state, &match)) {
        short_of_negatives[static_cast<size_t>(b)] = 1;
        continue;
      }
      for (int64_t j = 0; j < A; ++j) {
        const size_t o = static_cast<size_t>(b * A + j);
        if (state[j] == kPositive) {
          const float* g = lb + match[j] * W;
          cls[o] = g[0] + 1.0f;  // class 0 is the background
          std::fill(mask.begin() + o * 4, mask.begin() + o * 4 + 4, 1.0f);
          EncodeBox(anchors + j * 4, g + 1, p.variances, loc.data() + o * 4);
        } else if (state[j] == kNegative) {
          cls[o] = 0.0f;
        }
      }
    }
  });
  for (int64_t b = 0; b < B; ++b)
    if (short_of_negatives[static_cast<size_t>(b)])
      throw Error(StrCat("MultiBoxTarget: image ", b, ": negative mining (negative_mining_ratio ",
                         p.negative_mining_ratio, ") wants more negatives than there are unmatched anchors "
                         "overlapping less than negative_mining_thresh ", p.negative_mining_thresh));
  MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return loc[static_cast<size_t>(i)]; });
  MapWithReq(out[1].fdata(), out[1].Size(), req[1], [&](int64_t i) { return mask[static_cast<size_t>(i)]; });
  MapWithReq(out[2].fdata(), out[2].Size(), req[2], [&](int64_t i) { return cls[static_cast<size_t>(i)]; });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_MultiBoxTarget)
    .add_alias("_npx_multibox_target")
    .describe("Computes SSD training targets per anchor. Ground truths are the label rows before "
              "the first of class -1. Each ground truth first takes its best free anchor (the best "
              "remaining pair first, overlap > 1e-6); with overlap_threshold > 0, every other anchor "
              "whose best overlap exceeds it matches that box too. Matched anchors get class "
              "label + 1, loc_mask 1 and loc_target ((gx - ax) / aw / v0, (gy - ay) / ah / v1, "
              "log(gw / aw) / v2, log(gh / ah) / v3) in center form. With negative_mining_ratio > 0, "
              "ratio * positives of the unmatched anchors overlapping less than "
              "negative_mining_thresh, those with the lowest softmax background probability in "
              "cls_pred, get class 0; without mining every unmatched anchor does. The rest (and "
              "every anchor of an image without ground truth) get ignore_label. Zero gradient.")
    .set_params<MultiBoxTargetParam>()
    .set_arguments({"anchor", "label", "cls_pred"})
    .add_argument_doc("anchor", "Generated anchor boxes.")
    .add_argument_doc("label", "Object detection labels.")
    .add_argument_doc("cls_pred", "Class predictions.")
    .set_outputs({"loc_target", "loc_mask", "cls_target"})
    .set_infer_shape(InferShapeMultiBoxTarget)
    .set_forward(ForwardMultiBoxTarget)
    .set_zero_gradient();

}  // namespace symbind
