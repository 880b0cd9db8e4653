// _contrib_Proposal and _contrib_MultiProposal: a hand-computed case (anchor grid, ordering,
// cyclic fill), a naive reference on random inputs (regression, clipping, min size, padding,
// NMS, pre/post top n), MultiProposal against Proposal per image, and errors.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Rows [x1, y1, x2, y2, score] of one image, as MXNet's CPU Proposal defines them.
std::vector<std::array<float, 5>> NaivePropose(const NDArray& cls, const NDArray& deltas, const NDArray& info,
                                               int64_t n, const std::vector<float>& scales,
                                               const std::vector<float>& ratios, int stride, int min_size,
                                               int pre_n, int post_n, float thresh) {
  const int64_t A2 = cls.shape()[1], A = A2 / 2, H = cls.shape()[2], W = cls.shape()[3];
  const float im_h = info.GetFlat(n * 3), im_w = info.GetFlat(n * 3 + 1), sc = info.GetFlat(n * 3 + 2);
  std::vector<std::array<float, 4>> base;
  for (float r : ratios)
    for (float s : scales) {
      const float size = float(stride * stride), c = 0.5f * (stride - 1);
      const float w = std::floor(std::sqrt(std::floor(size / r)) + 0.5f) * s;
      const float h = std::floor(w / s * r + 0.5f) * s;
      base.push_back({c - 0.5f * (w - 1), c - 0.5f * (h - 1), c + 0.5f * (w - 1), c + 0.5f * (h - 1)});
    }
  std::vector<std::array<float, 5>> boxes;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w)
      for (int64_t a = 0; a < A; ++a) {
        auto d = [&](int k) { return deltas.GetFlat(((n * 4 * A + a * 4 + k) * H + h) * W + w); };
        const float x1 = base[a][0] + w * stride, y1 = base[a][1] + h * stride;
        const float bw = base[a][2] - base[a][0] + 1, bh = base[a][3] - base[a][1] + 1;
        const float cx = x1 + 0.5f * (bw - 1) + d(0) * bw, cy = y1 + 0.5f * (bh - 1) + d(1) * bh;
        const float pw = std::exp(d(2)) * bw, ph = std::exp(d(3)) * bh;
        auto clampx = [&](float v) { return std::max(std::min(v, im_w - 1), 0.0f); };
        auto clampy = [&](float v) { return std::max(std::min(v, im_h - 1), 0.0f); };
        std::array<float, 5> b = {clampx(cx - 0.5f * (pw - 1)), clampy(cy - 0.5f * (ph - 1)),
                                  clampx(cx + 0.5f * (pw - 1)), clampy(cy + 0.5f * (ph - 1)),
                                  cls.GetFlat(((n * A2 + A + a) * H + h) * W + w)};
        if (h >= int64_t(im_h / stride) || w >= int64_t(im_w / stride)) b[4] = -1;
        const float m = min_size * sc;
        if (b[2] - b[0] + 1 < m || b[3] - b[1] + 1 < m) {
          b[0] -= m / 2; b[1] -= m / 2; b[2] += m / 2; b[3] += m / 2; b[4] = -1;
        }
        boxes.push_back(b);
      }
  std::stable_sort(boxes.begin(), boxes.end(), [](const auto& a, const auto& b) { return a[4] > b[4]; });
  boxes.resize(std::min<size_t>(boxes.size(), size_t(pre_n)));
  std::vector<std::array<float, 5>> kept;
  for (const auto& b : boxes) {
    if (int(kept.size()) >= std::min<int>(post_n, int(boxes.size()))) break;
    bool keep = true;
    for (const auto& k : kept) {
      const float iw = std::max(0.0f, std::min(b[2], k[2]) - std::max(b[0], k[0]) + 1);
      const float ih = std::max(0.0f, std::min(b[3], k[3]) - std::max(b[1], k[1]) + 1);
      const float inter = iw * ih;
      const float ua = (b[2] - b[0] + 1) * (b[3] - b[1] + 1) + (k[2] - k[0] + 1) * (k[3] - k[1] + 1) - inter;
      if (inter / ua > thresh) keep = false;
    }
    if (keep) kept.push_back(b);
  }
  std::vector<std::array<float, 5>> out;
  for (int i = 0; i < post_n; ++i) out.push_back(kept[size_t(i) % kept.size()]);
  return out;
}

void RequireRows(const NDArray& rois, const NDArray& scores, int64_t first_row, int64_t batch,
                 const std::vector<std::array<float, 5>>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t r = first_row + int64_t(i);
    CAPTURE(r);
    REQUIRE(rois.GetFlat(r * 5) == float(batch));
    for (int k = 0; k < 4; ++k) REQUIRE(rois.GetFlat(r * 5 + 1 + k) == Approx(want[i][k]).margin(1e-4));
    REQUIRE(scores.GetFlat(r) == Approx(want[i][4]).margin(1e-6));
  }
}
}  // namespace

TEST_CASE("Proposal: hand-computed anchors, ordering and cyclic fill", "[ops][Proposal]") {
  // One anchor per position (4x4 at stride 4), zero deltas: the anchors themselves.
  NDArray cls(TShape({1, 2, 2, 2}), {0, 0, 0, 0, 0.2f, 0.9f, 0.5f, 0.7f});
  NDArray deltas(TShape({1, 4, 2, 2}));
  deltas.Fill(0.0f);
  NDArray info(TShape({1, 3}), {8, 8, 1});
  KwArgs p = {{"scales", "(1,)"}, {"ratios", "(1,)"}, {"feature_stride", "4"}, {"rpn_min_size", "1"},
              {"rpn_post_nms_top_n", "6"}, {"output_score", "True"}};
  auto exec = BindSingleOp("_contrib_Proposal", p, {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", info}},
                           {}, OpReq::kNull);
  exec->Forward(false);
  REQUIRE(exec->outputs().size() == 2);  // output_score shows the scores
  NDArray want(TShape({6, 5}), {0, 4, 0, 7, 3, 0, 4, 4, 7, 7, 0, 0, 4, 3, 7, 0, 0, 0, 3, 3,
                                0, 4, 0, 7, 3, 0, 4, 4, 7, 7});
  RequireClose(exec->outputs()[0], want, 1e-6f, 0, "rois");
  RequireClose(exec->outputs()[1], NDArray(TShape({6, 1}), {0.9f, 0.7f, 0.5f, 0.2f, 0.9f, 0.7f}), 0, 0, "scores");
  p.erase("output_score");
  REQUIRE(BindSingleOp("_contrib_Proposal", p, {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", info}},
                       {}, OpReq::kNull)->outputs().size() == 1);
}

TEST_CASE("MultiProposal: naive reference per image, and Proposal agrees", "[ops][Proposal]") {
  const int64_t B = 2, A = 6, H = 5, W = 6;
  NDArray cls = RandomArray(TShape({B, 2 * A, H, W}), 21, 0.0f, 1.0f);
  NDArray deltas = RandomArray(TShape({B, 4 * A, H, W}), 22, -0.3f, 0.3f);
  // Image 1 is smaller than the feature map covers: its padded positions score -1.
  NDArray info(TShape({B, 3}), {80, 96, 1.0f, 50, 70, 0.5f});
  KwArgs p = {{"scales", "(2, 4)"}, {"ratios", "(0.5, 1, 2)"}, {"feature_stride", "16"},
              {"rpn_pre_nms_top_n", "60"}, {"rpn_post_nms_top_n", "12"}, {"threshold", "0.6"},
              {"rpn_min_size", "8"}, {"output_score", "True"}};
  auto exec = BindSingleOp("_contrib_MultiProposal", p, {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", info}},
                           {}, OpReq::kNull);
  exec->Forward(false);
  REQUIRE(exec->outputs()[0].shape() == TShape({B * 12, 5}));
  for (int64_t n = 0; n < B; ++n)
    RequireRows(exec->outputs()[0], exec->outputs()[1], n * 12, n,
                NaivePropose(cls, deltas, info, n, {2, 4}, {0.5f, 1, 2}, 16, 8, 60, 12, 0.6f));
  // Proposal on image 1 alone gives MultiProposal's rows for it (with batch index 0).
  NDArray cls1 = cls.At(1).Reshape(TShape({1, 2 * A, H, W})).Copy();
  NDArray del1 = deltas.At(1).Reshape(TShape({1, 4 * A, H, W})).Copy();
  NDArray info1 = info.At(1).Reshape(TShape({1, 3})).Copy();
  auto single = BindSingleOp("_contrib_Proposal", p, {{"cls_prob", cls1}, {"bbox_pred", del1}, {"im_info", info1}},
                             {}, OpReq::kNull);
  single->Forward(false);
  for (int64_t r = 0; r < 12; ++r)
    for (int k = 1; k < 5; ++k)
      REQUIRE(single->outputs()[0].GetFlat(r * 5 + k) == exec->outputs()[0].GetFlat((12 + r) * 5 + k));
}

TEST_CASE("Proposal: shapes and errors", "[ops][Proposal]") {
  auto infer = [](const char* op, const TShape& c) {
    return InferShape(SingleOpSymbol(op, {{"rpn_post_nms_top_n", "10"}}), {{"op_cls_prob", c}});
  };
  REQUIRE_NOTHROW(infer("_contrib_MultiProposal", TShape({3, 24, 4, 4})));
  REQUIRE_THROWS_WITH(infer("_contrib_Proposal", TShape({2, 24, 4, 4})),
                      Catch::Contains("only one image per call is supported"));
  REQUIRE_THROWS_WITH(infer("_contrib_Proposal", TShape({1, 20, 4, 4})),
                      Catch::Contains("cls_prob has 20 channels, expected 2 * len(scales) * len(ratios) = 24"));
  NDArray cls = RandomArray(TShape({1, 2, 2, 2}), 1, 0.0f, 1.0f), deltas(TShape({1, 4, 2, 2}));
  deltas.Fill(0.0f);
  REQUIRE_THROWS_WITH(RunForward("_contrib_Proposal", {{"scales", "(1,)"}, {"ratios", "(1,)"}, {"feature_stride", "4"}},
                                 {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", NDArray(TShape({1, 3}), {16, 8, 1})}}),
                      Catch::Contains("needs a 4 x 2 feature map"));
}
