// _contrib_Proposal and _contrib_MultiProposal: Faster R-CNN's region proposal layer. Anchors
// of every position are moved by the predicted deltas, clipped to the image, small boxes are
// marked, the best rpn_pre_nms_top_n by foreground score go through NMS, and the first
// rpn_post_nms_top_n survivors are the output (repeated cyclically when fewer survive), with
// MXNet 1.9.1's CPU semantics (Proposal is MultiProposal for one image).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
struct ProposalParam : Parameter<ProposalParam> {
  int rpn_pre_nms_top_n;
  int rpn_post_nms_top_n;
  float threshold;
  int rpn_min_size;
  std::vector<float> scales;
  std::vector<float> ratios;
  int feature_stride;
  bool output_score;
  bool iou_loss;
  static void Declare(ParamDeclarer<ProposalParam>& d) {
    d.field("rpn_pre_nms_top_n", &ProposalParam::rpn_pre_nms_top_n).set_default(6000)
        .describe("Number of top scoring boxes to keep before applying NMS to RPN proposals");
    d.field("rpn_post_nms_top_n", &ProposalParam::rpn_post_nms_top_n).set_default(300)
        .lower_bound(1)
        .describe("Number of top scoring boxes to keep after applying NMS to RPN proposals");
    d.field("threshold", &ProposalParam::threshold).set_default(0.7f).set_range(0, 1)
        .describe("NMS value, below which to suppress.");
    d.field("rpn_min_size", &ProposalParam::rpn_min_size).set_default(16)
        .describe("Minimum height or width in proposal");
    auto non_empty = [](const std::vector<float>& v) { return !v.empty(); };
    d.field("scales", &ProposalParam::scales).set_default({4.0f, 8.0f, 16.0f, 32.0f})
        .require(non_empty, "a non-empty tuple")
        .describe("Used to generate anchor windows by enumerating scales");
    d.field("ratios", &ProposalParam::ratios).set_default({0.5f, 1.0f, 2.0f})
        .require(non_empty, "a non-empty tuple")
        .describe("Used to generate anchor windows by enumerating ratios");
    d.field("feature_stride", &ProposalParam::feature_stride).set_default(16).lower_bound(1)
        .describe("The size of the receptive field each unit in the convolution layer of the "
                  "rpn,for example the product of all stride's prior to this layer.");
    d.field("output_score", &ProposalParam::output_score).set_default(false)
        .describe("Add score to outputs");
    d.field("iou_loss", &ProposalParam::iou_loss).set_default(false)
        .describe("Usage of IoU Loss");
  }
  int64_t NumAnchors() const { return static_cast<int64_t>(scales.size() * ratios.size()); }
};

// `multi`: MultiProposal (any batch, outputs per image); otherwise Proposal (batch 1).
void InferShapeProposal(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out,
                        bool multi) {
  const auto& p = attrs.param<ProposalParam>();
  const char* op = multi ? "MultiProposal" : "Proposal";
  const TShape& c = (*in)[0];
  if (!c.is_known()) return;
  if (c.ndim() != 4)
    throw ShapeError(StrCat(op, ": cls_prob must be 4-D (batch, 2 * anchors, h, w), got ", c));
  if (c[1] != 2 * p.NumAnchors())
    throw ShapeError(StrCat(op, ": cls_prob has ", c[1], " channels, expected 2 * len(scales) * "
                            "len(ratios) = ", 2 * p.NumAnchors()));
  if (!multi && c[0] != 1)
    throw ShapeError(StrCat(op, ": only one image per call is supported (use MultiProposal), "
                            "got batch ", c[0]));
  ShapeAssignCheck(in, 1, TShape({c[0], c[1] * 2, c[2], c[3]}));
  ShapeAssignCheck(in, 2, TShape({c[0], 3}));
  const int64_t rows = CheckedMul(c[0], p.rpn_post_nms_top_n, op, ": output rows");
  ShapeAssignCheck(out, 0, TShape({rows, 5}));
  ShapeAssignCheck(out, 1, TShape({rows, 1}));
}

// The base anchors (x1, y1, x2, y2) of one position: every ratio, then every scale within it.
std::vector<float> BaseAnchors(const ProposalParam& p) {
  const float base = static_cast<float>(p.feature_stride);
  const float w = base, h = base;  // of the base box [0, 0, stride-1, stride-1]
  const float cx = 0.5f * (w - 1.0f), cy = 0.5f * (h - 1.0f);
  std::vector<float> a;
  for (float ratio : p.ratios)
    for (float scale : p.scales) {
      const float size_ratio = std::floor(w * h / ratio);
      const float nw = std::floor(std::sqrt(size_ratio) + 0.5f) * scale;
      const float nh = std::floor((nw / scale * ratio) + 0.5f) * scale;
      a.insert(a.end(), {cx - 0.5f * (nw - 1.0f), cy - 0.5f * (nh - 1.0f), cx + 0.5f * (nw - 1.0f),
                         cy + 0.5f * (nh - 1.0f)});
    }
  return a;
}

// Proposals of image b into (rows of) out_rois / out_scores.
void ProposeImage(const ProposalParam& p, const float* scores, const float* deltas,
                  const float* info, int64_t b, int64_t A, int64_t H, int64_t W,
                  const std::vector<float>& base, float* out_rois, float* out_scores) {
  const int64_t count = A * H * W;
  if (count == 0) throw Error(StrCat("Proposal: image ", b, " has no anchors (feature map ", H, " x ", W, ")"));
  const float im_h = info[0], im_w = info[1], scale = info[2];
  if (!(im_h >= 0 && im_h < 1e9f && im_w >= 0 && im_w < 1e9f))
    throw Error(StrCat("Proposal: im_info of image ", b, " must hold the image height and width, got ",
                       im_h, " x ", im_w));
  const int64_t real_h = static_cast<int64_t>(im_h / static_cast<float>(p.feature_stride));
  const int64_t real_w = static_cast<int64_t>(im_w / static_cast<float>(p.feature_stride));
  if (real_h > H || real_w > W)
    throw Error(StrCat("Proposal: im_info of image ", b, " (", im_h, " x ", im_w, ") needs a ",
                       real_h, " x ", real_w, " feature map at stride ", p.feature_stride,
                       ", but the scores are ", H, " x ", W));
  // Boxes in (h, w, anchor) order: x1, y1, x2, y2, score.
  std::vector<float> boxes(static_cast<size_t>(count * 5));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w)
      for (int64_t a = 0; a < A; ++a) {
        float* bx = boxes.data() + ((h * W + w) * A + a) * 5;
        const float sx = static_cast<float>(w * p.feature_stride);
        const float sy = static_cast<float>(h * p.feature_stride);
        const float x1 = base[a * 4] + sx, y1 = base[a * 4 + 1] + sy;
        const float x2 = base[a * 4 + 2] + sx, y2 = base[a * 4 + 3] + sy;
        const int64_t plane = H * W, at = h * W + w;
        const float d0 = deltas[(a * 4) * plane + at], d1 = deltas[(a * 4 + 1) * plane + at];
        const float d2 = deltas[(a * 4 + 2) * plane + at], d3 = deltas[(a * 4 + 3) * plane + at];
        float px1, py1, px2, py2;
        if (p.iou_loss) {
          px1 = x1 + d0; py1 = y1 + d1; px2 = x2 + d2; py2 = y2 + d3;
        } else {
          const float bw = x2 - x1 + 1.0f, bh = y2 - y1 + 1.0f;
          const float cx = x1 + 0.5f * (bw - 1.0f), cy = y1 + 0.5f * (bh - 1.0f);
          const float pcx = d0 * bw + cx, pcy = d1 * bh + cy;
          const float pw = std::exp(d2) * bw, ph = std::exp(d3) * bh;
          px1 = pcx - 0.5f * (pw - 1.0f); py1 = pcy - 0.5f * (ph - 1.0f);
          px2 = pcx + 0.5f * (pw - 1.0f); py2 = pcy + 0.5f * (ph - 1.0f);
        }
        bx[0] = std::max(std::min(px1, im_w - 1.0f), 0.0f);
        bx[1] = std::max(std::min(py1, im_h - 1.0f), 0.0f);
        bx[2] = std::max(std::min(px2, im_w - 1.0f), 0.0f);
        bx[3] = std::max(std::min(py2, im_h - 1.0f), 0.0f);
        bx[4] = (h >= real_h || w >= real_w) ? -1.0f : scores[(A + a) * plane + at];
        // Too small: grown by min_size and scored -1 (so it sorts last), as MXNet does.
        const float min_size = static_cast<float>(p.rpn_min_size) * scale;
        if (bx[2] - bx[0] + 1.0f < min_size || bx[3] - bx[1] + 1.0f < min_size) {
          bx[0] -= min_size / 2; bx[1] -= min_size / 2;
          bx[2] += min_size / 2; bx[3] += min_size / 2;
          bx[4] = -1.0f;
        }
      }
  const int64_t pre = std::min<int64_t>(p.rpn_pre_nms_top_n > 0 ? p.rpn_pre_nms_top_n : count, count);
  const int64_t post = std::min<int64_t>(p.rpn_post_nms_top_n, pre);
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  auto score = [&](int64_t i) {
    const float s = boxes[static_cast<size_t>(i * 5 + 4)];
    return std::isnan(s) ? -std::numeric_limits<float>::infinity() : s;
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return score(i) > score(j); });
  order.resize(static_cast<size_t>(pre));
  auto box = [&](int64_t k) { return boxes.data() + order[static_cast<size_t>(k)] * 5; };
  std::vector<float> area(static_cast<size_t>(pre));
  for (int64_t k = 0; k < pre; ++k)
    area[k] = (box(k)[2] - box(k)[0] + 1) * (box(k)[3] - box(k)[1] + 1);
  std::vector<char> suppressed(static_cast<size_t>(pre), 0);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < pre && static_cast<int64_t>(keep.size()) < post; ++i) {
    if (suppressed[i]) continue;
    keep.push_back(i);
    const float* bi = box(i);
    for (int64_t j = i + 1; j < pre; ++j) {
      if (suppressed[j]) continue;
      const float* bj = box(j);
      const float w = std::max(0.0f, std::min(bi[2], bj[2]) - std::max(bi[0], bj[0]) + 1.0f);
      const float h = std::max(0.0f, std::min(bi[3], bj[3]) - std::max(bi[1], bj[1]) + 1.0f);
      const float inter = w * h;
      if (inter / (area[i] + area[j] - inter) > p.threshold) suppressed[j] = 1;
    }
  }
  for (int64_t i = 0; i < p.rpn_post_nms_top_n; ++i) {
    const float* bk = box(keep[static_cast<size_t>(i) % keep.size()]);
    float* r = out_rois + i * 5;
    r[0] = static_cast<float>(b);
    std::copy(bk, bk + 4, r + 1);
    out_scores[i] = bk[4];
  }
}

void ForwardProposal(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<OpReq>&, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<ProposalParam>();
  const TShape& c = in[0].shape();
  const int64_t B = c[0], A = c[1] / 2, H = c[2], W = c[3];
  const std::vector<float> base = BaseAnchors(p);
  const float* scores = in[0].fdata();
  const float* deltas = in[1].fdata();
  const float* info = in[2].fdata();
  const int64_t post = p.rpn_post_nms_top_n;
  ParallelFor(B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      ProposeImage(p, scores + b * 2 * A * H * W, deltas + b * 4 * A * H * W, info + b * 3, b, A,
                   H, W, base, out[0].fdata() + b * post * 5, out[1].fdata() + b * post);
  });
}

int VisibleOutputs(const NodeAttrs& a) { return a.param<ProposalParam>().output_score ? 2 : 1; }

// Proposal and MultiProposal differ only in the batch rule of their shape inference.
void RegisterProposal(const char* name, const char* doc, bool multi) {
  OpRegistry::Global()
      .Register(name)
      .describe(doc)
      .set_params<ProposalParam>()
      .set_arguments({"cls_prob", "bbox_pred", "im_info"})
      .set_outputs({"output", "score"})
      .set_num_visible_outputs(VisibleOutputs)
      .set_infer_shape([multi](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferShapeProposal(a, in, out, multi);
      })
      .set_forward(ForwardProposal)
      .set_zero_gradient();
}
}  // namespace

SYMBIND_REGISTER_OP_FAMILY(proposal) {
  RegisterProposal("_contrib_Proposal",
                   "Generates region proposals via RPN for one image: rows [0, x1, y1, x2, y2] of "
                   "the rpn_post_nms_top_n best anchors after box regression, clipping, the "
                   "rpn_min_size filter and NMS at `threshold`; with output_score the scores are a "
                   "second output. Gradients are zero.",
                   /*multi=*/false);
  RegisterProposal("_contrib_MultiProposal",
                   "Generates region proposals via RPN for every image of the batch: "
                   "rpn_post_nms_top_n rows [batch_index, x1, y1, x2, y2] per image, as Proposal "
                   "computes them; with output_score the scores are a second output. Gradients "
                   "are zero.",
                   /*multi=*/true);
}

}  // namespace symbind
