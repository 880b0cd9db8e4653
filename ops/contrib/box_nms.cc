// _contrib_box_nms: greedy non-maximum suppression over boxes stored as rows of the last two
// axes, with MXNet 1.9.1's semantics (per-batch topk on the valid boxes, class-aware unless
// force_suppress, background and valid_thresh filtering, corner/center formats) and its
// gradient: each kept row's head gradient flows back to the input row it came from.
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/contrib/box_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using box::kCenter;
using box::kCorner;
using box::Area;
using box::Overlap1D;

struct BoxNMSParam : Parameter<BoxNMSParam> {
  float overlap_thresh;
  float valid_thresh;
  int topk;
  int coord_start;
  int score_index;
  int id_index;
  int background_id;
  bool force_suppress;
  int in_format;
  int out_format;
  static void Declare(ParamDeclarer<BoxNMSParam>& d) {
    d.field("overlap_thresh", &BoxNMSParam::overlap_thresh).set_default(0.5f).set_range(0, 1)
        .describe("Overlapping(IoU) threshold to suppress object with smaller score.");
    d.field("valid_thresh", &BoxNMSParam::valid_thresh).set_default(0.0f)
        .describe("Filter input boxes to those whose scores greater than valid_thresh.");
    d.field("topk", &BoxNMSParam::topk).set_default(-1)
        .describe("Apply nms to topk boxes with descending scores, -1 to no restriction.");
    d.field("coord_start", &BoxNMSParam::coord_start).set_default(2)
        .describe("Start index of the consecutive 4 coordinates.");
    d.field("score_index", &BoxNMSParam::score_index).set_default(1)
        .describe("Index of the scores/confidence of boxes.");
    d.field("id_index", &BoxNMSParam::id_index).set_default(-1)
        .describe("Optional, index of the class categories, -1 to disable.");
    d.field("background_id", &BoxNMSParam::background_id).set_default(-1)
        .describe("Optional, id of the background class which will be ignored in nms.");
    d.field("force_suppress", &BoxNMSParam::force_suppress).set_default(false)
        .describe("Optional, if set false and id_index is provided, nms will only apply to boxes "
                  "belongs to the same category");
    box::BoxFormatField(d.field("in_format", &BoxNMSParam::in_format), kCorner, "The input box");
    box::BoxFormatField(d.field("out_format", &BoxNMSParam::out_format), kCorner, "The output box");
  }
};

void InferShapeBoxNMS(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<BoxNMSParam>();
  const TShape& s = (*in)[0];
  if (!s.ndim_known()) return;
  if (s.ndim() < 2)
    throw ShapeError(StrCat("box_nms: input must have dim >= 2, the last two dimensions are "
                            "num_box and box_width; got ", s));
  const int64_t width = s[s.ndim() - 1];
  if (width >= 0) {
    const int64_t expected = p.id_index >= 0 ? 6 : 5;
    if (width < expected)
      throw ShapeError(StrCat("box_nms: the last dimension must have at least ", expected,
                              " elements (score, 4 coordinates", p.id_index >= 0 ? ", id" : "",
                              "), got ", width));
    const int cs = p.coord_start, ce = p.coord_start + 3;
    if (p.score_index < 0 || p.score_index >= width)
      throw ShapeError(StrCat("box_nms: score_index ", p.score_index, " is out of range [0, ", width, ")"));
    if (p.score_index >= cs && p.score_index <= ce)
      throw ShapeError(StrCat("box_nms: score_index ", p.score_index, " conflicts with coordinates [",
                              cs, ", ", ce, "]"));
    if (cs < 0 || ce >= width)
      throw ShapeError(StrCat("box_nms: coordinates [", cs, ", ", ce, "] are out of range [0, ", width, ")"));
    if (p.id_index >= 0) {
      if (p.id_index >= width)
        throw ShapeError(StrCat("box_nms: id_index ", p.id_index, " is out of range [0, ", width, ")"));
      if (p.id_index >= cs && p.id_index <= ce)
        throw ShapeError(StrCat("box_nms: id_index ", p.id_index, " conflicts with coordinates [",
                                cs, ", ", ce, "]"));
      if (p.id_index == p.score_index)
        throw ShapeError(StrCat("box_nms: id_index ", p.id_index, " conflicts with score_index ",
                                p.score_index));
    }
  }
  TShape record = s;
  record[s.ndim() - 1] = 1;
  ShapeAssignCheck(out, 0, s);
  ShapeAssignCheck(out, 1, record);
}

// MXNet converts only rows whose first coordinate is >= 0 (so the -1 filler rows stay -1).
void ConvertFormat(float* box, int to) {
  if (box[0] < 0) return;
  const float a = box[0], b = box[1], c = box[2], d = box[3];
  if (to == kCenter) {
    box[0] = (a + c) / 2; box[1] = (b + d) / 2; box[2] = c - a; box[3] = d - b;
  } else {
    box[0] = a - c / 2; box[1] = b - d / 2; box[2] = a + c / 2; box[3] = b + d / 2;
  }
}

// (batches, boxes per batch, box width) of the input viewed as 3-D.
struct BoxDims {
  int64_t batches, boxes, width;
  explicit BoxDims(const TShape& s)
      : batches(s.ndim() <= 2 ? 1 : s.ProdDims(0, s.ndim() - 2)),
        boxes(s[s.ndim() - 2]),
        width(s[s.ndim() - 1]) {}
};

void ForwardBoxNMS(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<OpReq>&, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<BoxNMSParam>();
  const BoxDims dims(in[0].shape());
  const int64_t B = dims.batches, N = dims.boxes, K = dims.width;
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  float* record = out[1].fdata();
  const int64_t topk = p.topk < 0 ? N : std::min<int64_t>(N, p.topk);
  if (topk < 1) {  // nothing to suppress: the input as is, every row recorded in place
    std::copy(x, x + B * N * K, y);
    for (int64_t i = 0; i < B * N; ++i) record[i] = static_cast<float>(i);
    return;
  }
  const int cs = p.coord_start;
  ParallelFor(B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<int64_t> order;
    std::vector<char> suppressed;
    std::vector<float> area;
    for (int64_t b = b0; b < b1; ++b) {
      const float* rows = x + b * N * K;
      order.clear();
      for (int64_t i = 0; i < N; ++i) {
        const float* r = rows + i * K;
        bool valid = r[p.score_index] > p.valid_thresh;
        if (p.id_index >= 0) valid = valid && r[p.id_index] != static_cast<float>(p.background_id);
        if (valid) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return rows[i * K + p.score_index] > rows[j * K + p.score_index];
      });
      if (static_cast<int64_t>(order.size()) > topk) order.resize(static_cast<size_t>(topk));
      const size_t n = order.size();
      suppressed.assign(n, 0);
      area.resize(n);
      for (size_t i = 0; i < n; ++i) area[i] = Area(rows + order[i] * K + cs, p.in_format);
      for (size_t i = 0; i < n; ++i) {
        if (suppressed[i]) continue;
        const float* ri = rows + order[i] * K;
        for (size_t j = i + 1; j < n; ++j) {
          if (suppressed[j]) continue;
          const float* rj = rows + order[j] * K;
          if (!p.force_suppress && p.id_index >= 0 &&
              std::trunc(ri[p.id_index]) != std::trunc(rj[p.id_index]))
            continue;
          const float inter = Overlap1D(ri[cs], ri[cs + 2], rj[cs], rj[cs + 2], p.in_format) *
                              Overlap1D(ri[cs + 1], ri[cs + 3], rj[cs + 1], rj[cs + 3], p.in_format);
          const float iou = inter / (area[i] + area[j] - inter);
          if (iou > p.overlap_thresh) suppressed[j] = 1;
        }
      }
      float* out_rows = y + b * N * K;
      float* out_record = record + b * N;
      std::fill(out_rows, out_rows + N * K, -1.0f);
      std::fill(out_record, out_record + N, -1.0f);
      int64_t count = 0;
      for (size_t i = 0; i < n; ++i) {
        if (suppressed[i]) continue;
        std::copy(rows + order[i] * K, rows + order[i] * K + K, out_rows + count * K);
        out_record[count] = static_cast<float>(b * N + order[i]);
        ++count;
      }
      if (p.in_format != p.out_format)
        for (int64_t i = 0; i < N; ++i) ConvertFormat(out_rows + i * K + cs, p.out_format);
    }
  });
}

void BackwardBoxNMS(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const BoxDims dims(a.inputs[0].shape());
  const int64_t rows = dims.batches * dims.boxes, K = dims.width;
  const float* dy = a.out_grads[0].fdata();
  const float* record = a.outputs[1].fdata();
  float* dx = a.in_grads[0].fdata();
  if (a.req[0] != OpReq::kAdd) a.in_grads[0].Fill(0.0f);
  // Each input row is recorded at most once, so rows scatter without conflicts.
  ParallelFor(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, K)),
              [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (record[i] < 0) continue;
      const int64_t src = static_cast<int64_t>(record[i]);
      for (int64_t k = 0; k < K; ++k) dx[src * K + k] += dy[i * K + k];
    }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_box_nms)
    .set_monitor_numbered_inputs()
    .add_alias("_contrib_box_non_maximum_suppression")
    .describe("Applies non-maximum suppression to boxes (rows of the last axis: by default "
              "[id, score, xmin, ymin, xmax, ymax], any leading axes are batches). Boxes with "
              "score <= valid_thresh or (with id_index) the background id are dropped; the topk "
              "highest of the rest are visited by descending score and each suppresses later "
              "boxes (of its class unless force_suppress) whose IoU exceeds overlap_thresh. The "
              "kept boxes come first, in descending score, and the other rows are -1. The "
              "hidden second output records each kept row's input position; the gradient "
              "follows the kept rows back, suppressed rows get zero.")
    .set_params<BoxNMSParam>()
    .set_outputs({"output0", "output1"})  // nnvm's default names for two outputs
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferShapeBoxNMS)
    .set_forward(ForwardBoxNMS)
    .set_backward(BackwardBoxNMS);

}  // namespace symbind
