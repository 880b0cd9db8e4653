// _contrib_MultiBoxTarget: a naive reference (best-pair matching, threshold matching, hard
// negative mining by background probability), hand-checked cases for each matching rule, label
// padding, mining and its tie break, MXNet's own test case, the zero gradient, and the errors.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
struct Targets {
  NDArray loc, mask, cls;
};

Targets Run(const KwArgs& p, const NDArray& anchor, const NDArray& label, const NDArray& pred) {
  auto exec = BindSingleOp("_contrib_MultiBoxTarget", p, {{"anchor", anchor}, {"label", label}, {"cls_pred", pred}},
                           {}, OpReq::kNull);
  exec->Forward(false);
  return {exec->outputs()[0].Copy(), exec->outputs()[1].Copy(), exec->outputs()[2].Copy()};
}

struct RefParams {
  double overlap = 0.5, ignore = -1, ratio = -1, neg_thresh = 0.5;
  double var[4] = {0.1, 0.1, 0.2, 0.2};
};

double IoU(const double* a, const double* b) {
  const double iw = std::max(0.0, std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const double ih = std::max(0.0, std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - iw * ih;
  return u == 0 ? 0.0 : iw * ih / u;
}

// Targets of image n, as MXNet's CPU kernel documents them.
void NaiveTargets(const RefParams& p, const NDArray& anchor, const NDArray& label, const NDArray& pred, int64_t n,
                  std::vector<double>* loc, std::vector<double>* mask, std::vector<double>* cls) {
  const int64_t A = anchor.shape()[1], L = label.shape()[1], W = label.shape()[2], C = pred.shape()[1];
  auto box_a = [&](int64_t j) {
    std::array<double, 4> b;
    for (int k = 0; k < 4; ++k) b[k] = anchor.GetFlat(j * 4 + k);
    return b;
  };
  auto lab = [&](int64_t g, int k) { return double(label.GetFlat((n * L + g) * W + k)); };
  std::vector<std::array<double, 4>> gts;
  for (int64_t g = 0; g < L && lab(g, 0) != -1; ++g) gts.push_back({lab(g, 1), lab(g, 2), lab(g, 3), lab(g, 4)});
  const int64_t G = int64_t(gts.size());
  loc->assign(size_t(A * 4), 0.0);
  mask->assign(size_t(A * 4), 0.0);
  cls->assign(size_t(A), p.ignore);
  if (G == 0) return;
  std::vector<std::vector<double>> iou(static_cast<size_t>(A), std::vector<double>(static_cast<size_t>(G)));
  for (int64_t j = 0; j < A; ++j)
    for (int64_t g = 0; g < G; ++g) iou[j][g] = IoU(box_a(j).data(), gts[g].data());
  std::vector<int64_t> matched(size_t(A), -1);  // the matched ground truth of a positive
  std::vector<bool> gt_used(size_t(G), false);
  // Best pairs, one per ground truth: the highest overlap among free pairs, lower anchor, then
  // lower box, on ties.
  for (;;) {
    int64_t bj = -1, bg = -1;
    for (int64_t j = 0; j < A; ++j)
      for (int64_t g = 0; g < G; ++g) {
        if (matched[j] >= 0 || gt_used[g] || !(iou[j][g] > 1e-6)) continue;
        if (bj < 0 || iou[j][g] > iou[bj][bg]) bj = j, bg = g;
      }
    if (bj < 0) break;
    matched[bj] = bg;
    gt_used[bg] = true;
  }
  auto argmax = [&](int64_t j) { return int64_t(std::max_element(iou[j].begin(), iou[j].end()) - iou[j].begin()); };
  if (p.overlap > 0)
    for (int64_t j = 0; j < A; ++j)
      if (matched[j] < 0 && iou[j][argmax(j)] > p.overlap) matched[j] = argmax(j);
  const int64_t positives = std::count_if(matched.begin(), matched.end(), [](int64_t m) { return m >= 0; });
  std::vector<int64_t> negatives;
  if (p.ratio > 0) {
    std::vector<std::pair<double, int64_t>> cand;  // (background probability, anchor)
    for (int64_t j = 0; j < A; ++j) {
      if (matched[j] >= 0 || !(iou[j][argmax(j)] < p.neg_thresh)) continue;
      double z = 0;
      for (int64_t c = 0; c < C; ++c) z += std::exp(double(pred.GetFlat((n * C + c) * A + j)));
      cand.push_back({std::exp(double(pred.GetFlat(n * C * A + j))) / z, j});
    }
    std::sort(cand.begin(), cand.end());  // lowest probability first, then lower anchor
    const int64_t want = std::min<int64_t>(int64_t(std::floor(positives * p.ratio)), A - positives);
    REQUIRE(int64_t(cand.size()) >= want);
    for (int64_t i = 0; i < want; ++i) negatives.push_back(cand[i].second);
  } else {
    for (int64_t j = 0; j < A; ++j)
      if (matched[j] < 0) negatives.push_back(j);
  }
  for (int64_t j : negatives) (*cls)[j] = 0;
  for (int64_t j = 0; j < A; ++j) {
    if (matched[j] < 0) continue;
    const auto a = box_a(j);
    const auto& g = gts[matched[j]];
    (*cls)[j] = lab(matched[j], 0) + 1;
    const double aw = a[2] - a[0], ah = a[3] - a[1], gw = g[2] - g[0], gh = g[3] - g[1];
    const double t[4] = {((g[0] + g[2]) - (a[0] + a[2])) / 2 / aw / p.var[0],
                         ((g[1] + g[3]) - (a[1] + a[3])) / 2 / ah / p.var[1], std::log(gw / aw) / p.var[2],
                         std::log(gh / ah) / p.var[3]};
    for (int k = 0; k < 4; ++k) (*loc)[j * 4 + k] = t[k], (*mask)[j * 4 + k] = 1;
  }
}

void RequireMatchesReference(const Targets& got, const RefParams& p, const NDArray& anchor, const NDArray& label,
                             const NDArray& pred) {
  const int64_t B = label.shape()[0], A = anchor.shape()[1];
  REQUIRE(got.loc.shape() == TShape({B, A * 4}));
  REQUIRE(got.mask.shape() == TShape({B, A * 4}));
  REQUIRE(got.cls.shape() == TShape({B, A}));
  for (int64_t n = 0; n < B; ++n) {
    std::vector<double> loc, mask, cls;
    NaiveTargets(p, anchor, label, pred, n, &loc, &mask, &cls);
    for (int64_t j = 0; j < A; ++j) {
      CAPTURE(n, j);
      REQUIRE(got.cls.GetFlat(n * A + j) == float(cls[j]));
      for (int k = 0; k < 4; ++k) {
        REQUIRE(got.mask.GetFlat((n * A + j) * 4 + k) == float(mask[j * 4 + k]));
        REQUIRE(got.loc.GetFlat((n * A + j) * 4 + k) == Approx(loc[j * 4 + k]).margin(1e-5).epsilon(1e-4));
      }
    }
  }
}

NDArray Boxes(int64_t n, const std::vector<float>& v) { return NDArray(TShape({1, n, 4}), v); }
NDArray Labels(int64_t B, int64_t L, int64_t W, const std::vector<float>& v) { return NDArray(TShape({B, L, W}), v); }
std::vector<float> Flat(const NDArray& a) {
  std::vector<float> v(size_t(a.Size()));
  for (int64_t i = 0; i < a.Size(); ++i) v[i] = a.GetFlat(i);
  return v;
}
}  // namespace

TEST_CASE("MultiBoxTarget: naive reference over matching, mining and variances", "[ops][MultiBoxTarget]") {
  const int64_t B = 3, A = 40, L = 5, C = 4;
  NDArray anchor(TShape({1, A, 4})), label(TShape({B, L, 6}));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto box = [&](float* b) {
    const float x = u(rng) * 0.7f, y = u(rng) * 0.7f;
    b[0] = x, b[1] = y, b[2] = x + 0.1f + u(rng) * 0.3f, b[3] = y + 0.1f + u(rng) * 0.3f;
  };
  for (int64_t j = 0; j < A; ++j) {
    float b[4];
    box(b);
    for (int k = 0; k < 4; ++k) anchor.SetFlat(j * 4 + k, b[k]);
  }
  const int64_t valid[B] = {3, 5, 0};  // the rest of each image's rows are padding
  for (int64_t n = 0; n < B; ++n)
    for (int64_t g = 0; g < L; ++g) {
      float row[6] = {-1, -1, -1, -1, -1, -1};
      if (g < valid[n]) {
        row[0] = float(int(u(rng) * 3));
        box(row + 1);
        row[5] = 7;  // columns past the box are not read
      }
      for (int k = 0; k < 6; ++k) label.SetFlat((n * L + g) * 6 + k, row[k]);
    }
  NDArray pred = RandomArray(TShape({B, C, A}), 6, -3.0f, 3.0f);
  struct Case {
    KwArgs kw;
    RefParams ref;
  };
  RefParams mining;
  mining.overlap = 0.3, mining.ratio = 3, mining.neg_thresh = 0.4;
  RefParams no_threshold;
  no_threshold.overlap = 0, no_threshold.ratio = 2.5, no_threshold.neg_thresh = 0.2, no_threshold.ignore = 9;
  RefParams variances;
  variances.var[0] = 0.5, variances.var[1] = 0.25, variances.var[2] = 1, variances.var[3] = 2;
  variances.overlap = 0.2;
  for (const Case& c :
       {Case{{}, RefParams{}},
        Case{{{"overlap_threshold", "0.3"}, {"negative_mining_ratio", "3"}, {"negative_mining_thresh", "0.4"}}, mining},
        Case{{{"overlap_threshold", "0"}, {"negative_mining_ratio", "2.5"}, {"negative_mining_thresh", "0.2"},
              {"ignore_label", "9"}},
             no_threshold},
        Case{{{"overlap_threshold", "0.2"}, {"variances", "(0.5, 0.25, 1, 2)"}}, variances}}) {
    CAPTURE(c.ref.overlap, c.ref.ratio, c.ref.neg_thresh);
    RequireMatchesReference(Run(c.kw, anchor, label, pred), c.ref, anchor, label, pred);
  }
}

TEST_CASE("MultiBoxTarget: the best-overlap rule and the threshold rule", "[ops][MultiBoxTarget]") {
  // g0 (class 2) is a0's box; a1 overlaps it 0.8 (the threshold rule). g1 (class 0) overlaps a2
  // best, 0.356, below the threshold: matched by the best-overlap rule. a3 overlaps g1 0.25.
  NDArray anchor = Boxes(4, {0, 0, 0.5f, 0.5f, 0, 0, 0.4f, 0.5f, 0.5f, 0.5f, 1, 1, 0.6f, 0.6f, 0.9f, 0.9f});
  NDArray label = Labels(1, 2, 5, {2, 0, 0, 0.5f, 0.5f, 0, 0.3f, 0.3f, 0.9f, 0.9f});
  NDArray pred(TShape({1, 3, 4}), std::vector<float>(12, 0.0f));
  Targets t = Run({}, anchor, label, pred);
  REQUIRE(Flat(t.cls) == std::vector<float>{3, 3, 1, 0});
  REQUIRE(Flat(t.mask) == std::vector<float>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  // a0 is g0: zero targets. a1 (center 0.2, width 0.4) to g0 (center 0.25, width 0.5): x by
  // 0.05 / 0.4 / 0.1, width by log(1.25) / 0.2. a2 to g1: centers 0.75 -> 0.6, sizes 0.5 -> 0.6.
  const std::vector<float> want = {0, 0, 0, 0, 1.25f, 0, std::log(1.25f) / 0.2f, 0,
                                   -3, -3, std::log(1.2f) / 0.2f, std::log(1.2f) / 0.2f, 0, 0, 0, 0};
  RequireClose(t.loc, NDArray(TShape({1, 16}), want), 1e-5f, 1e-5f, "loc_target");
  // Above a1's overlap the threshold rule matches nothing more; 0 turns it off.
  REQUIRE(Flat(Run({{"overlap_threshold", "0.9"}}, anchor, label, pred).cls) == std::vector<float>{3, 0, 1, 0});
  REQUIRE(Flat(Run({{"overlap_threshold", "0"}}, anchor, label, pred).cls) == std::vector<float>{3, 0, 1, 0});
  // The threshold rule may pick a box already matched, and picks each anchor's best box.
  REQUIRE(Flat(Run({{"overlap_threshold", "0.2"}}, anchor, label, pred).cls) == std::vector<float>{3, 3, 1, 1});
}

TEST_CASE("MultiBoxTarget: ties go to the lower anchor, then the lower box", "[ops][MultiBoxTarget]") {
  NDArray anchor = Boxes(3, {0.1f, 0.1f, 0.5f, 0.5f, 0.1f, 0.1f, 0.5f, 0.5f, 0.6f, 0.6f, 0.9f, 0.9f});
  NDArray pred(TShape({1, 2, 3}), std::vector<float>(6, 0.0f));
  // One box, two identical anchors: a0 takes it; a1 only by the threshold rule.
  NDArray one = Labels(1, 1, 5, {4, 0.1f, 0.1f, 0.5f, 0.5f});
  REQUIRE(Flat(Run({}, anchor, one, pred).cls) == std::vector<float>{5, 5, 0});
  REQUIRE(Flat(Run({{"overlap_threshold", "0"}}, anchor, one, pred).cls) == std::vector<float>{5, 0, 0});
  // Two identical boxes of classes 4 and 6: a0 takes the first; the second takes a1 (the same
  // overlap); by the threshold rule a1 would take the first box.
  NDArray two = Labels(1, 2, 5, {4, 0.1f, 0.1f, 0.5f, 0.5f, 6, 0.1f, 0.1f, 0.5f, 0.5f});
  REQUIRE(Flat(Run({}, anchor, two, pred).cls) == std::vector<float>{5, 7, 0});
}

TEST_CASE("MultiBoxTarget: label padding and images without ground truth", "[ops][MultiBoxTarget]") {
  NDArray anchor = Boxes(2, {0, 0, 0.4f, 0.4f, 0.5f, 0.5f, 0.9f, 0.9f});
  NDArray pred(TShape({2, 2, 2}), std::vector<float>(8, 0.0f));
  // Rows after the first padding row are not read, even when they hold a box.
  NDArray label = Labels(2, 3, 5,
                         {1, 0, 0, 0.4f, 0.4f, -1, -1, -1, -1, -1, 0, 0.5f, 0.5f, 0.9f, 0.9f,
                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
  Targets t = Run({}, anchor, label, pred);
  REQUIRE(Flat(t.cls) == std::vector<float>{2, 0, -1, -1});
  // An image without ground truth: every anchor ignored (ignore_label), zero targets and masks.
  t = Run({{"ignore_label", "-3"}}, anchor, label, pred);
  REQUIRE(Flat(t.cls) == std::vector<float>{2, 0, -3, -3});
  for (int64_t i = 8; i < 16; ++i) {
    REQUIRE(t.loc.GetFlat(i) == 0.0f);
    REQUIRE(t.mask.GetFlat(i) == 0.0f);
  }
}

TEST_CASE("MultiBoxTarget: hard negative mining", "[ops][MultiBoxTarget]") {
  // a0 is the box; a1 overlaps it 0.444: neither positive (0.5) nor a mining candidate (0.4).
  // a2..a4 do not overlap it; their background probabilities are 0.88, 0.27 and 0.5.
  NDArray anchor = Boxes(5, {0, 0, 0.4f, 0.4f, 0, 0, 0.4f, 0.9f, 0.6f, 0.6f, 0.8f, 0.8f, 0.6f, 0.1f, 0.8f, 0.3f,
                             0.1f, 0.6f, 0.3f, 0.8f});
  NDArray label = Labels(1, 1, 5, {0, 0, 0, 0.4f, 0.4f});
  NDArray pred(TShape({1, 2, 5}), {0, 0, 2, 0, 0, /* class 1: */ 0, 0, 0, 1, 0});
  KwArgs p = {{"negative_mining_ratio", "2.9"}, {"negative_mining_thresh", "0.4"}, {"ignore_label", "-2"}};
  // 1 positive * 2.9 = 2 negatives: the two highest background losses, a3 and a4.
  REQUIRE(Flat(Run(p, anchor, label, pred).cls) == std::vector<float>{1, -2, -2, 0, 0});
  // With a higher mining threshold a1 is a candidate too (background probability 0.5, as a4's):
  // the tie goes to the lower anchor.
  p["negative_mining_thresh"] = "0.5";
  REQUIRE(Flat(Run(p, anchor, label, pred).cls) == std::vector<float>{1, 0, -2, 0, -2});
  // Without mining every unmatched anchor is a negative.
  REQUIRE(Flat(Run({}, anchor, label, pred).cls) == std::vector<float>{1, 0, 0, 0, 0});
  // More negatives wanted than candidates (4 others, 3 below the threshold): MXNet's check fails.
  p = {{"negative_mining_ratio", "10"}, {"negative_mining_thresh", "0.4"}};
  REQUIRE_THROWS_WITH(Run(p, anchor, label, pred),
                      Catch::Contains("image 0: negative mining (negative_mining_ratio 10) wants more negatives"));
}

TEST_CASE("MultiBoxTarget: MXNet's test case", "[ops][MultiBoxTarget]") {
  // tests/python/unittest/test_contrib_operator.py test_multibox_target_op
  NDArray anchor = Boxes(2, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  std::vector<float> p(10);
  std::iota(p.begin(), p.end(), 0.0f);
  NDArray pred(TShape({1, 5, 2}), p);
  NDArray label = Labels(1, 1, 5, {1, 0.1f, 0.1f, 0.5f, 0.6f});
  Targets t = Run({{"overlap_threshold", "0.5"}, {"negative_mining_ratio", "3"}, {"negative_mining_thresh", "0.4"}},
                  anchor, label, pred);
  RequireClose(t.loc, NDArray(TShape({1, 8}), {5.0f, 2.5000005f, 3.4657357f, 4.581454f, 0, 0, 0, 0}), 1e-5f, 1e-5f);
  REQUIRE(Flat(t.mask) == std::vector<float>{1, 1, 1, 1, 0, 0, 0, 0});
  REQUIRE(Flat(t.cls) == std::vector<float>{2, 0});
}

TEST_CASE("MultiBoxTarget: zero gradient", "[ops][MultiBoxTarget]") {
  NDArray anchor = Boxes(2, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  NDArray label = Labels(1, 1, 5, {1, 0.1f, 0.1f, 0.5f, 0.6f});
  NDArray pred = RandomArray(TShape({1, 3, 2}), 1);
  auto exec = BindSingleOp("_contrib_MultiBoxTarget", {}, {{"anchor", anchor}, {"label", label}, {"cls_pred", pred}});
  exec->grad_arrays()[2].Fill(5.0f);
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({1, 8}), 2), RandomArray(TShape({1, 8}), 3), RandomArray(TShape({1, 2}), 4)});
  for (const NDArray& g : exec->grad_arrays())
    for (int64_t i = 0; i < g.Size(); ++i) REQUIRE(g.GetFlat(i) == 0.0f);
}

TEST_CASE("MultiBoxTarget: shapes and errors", "[ops][MultiBoxTarget]") {
  auto infer = [](const TShape& a, const TShape& l, const TShape& c) {
    return InferShape(SingleOpSymbol("_contrib_MultiBoxTarget", {}),
                      {{"op_anchor", a}, {"op_label", l}, {"op_cls_pred", c}});
  };
  auto r = infer(TShape({1, 6, 4}), TShape({2, 3, 5}), TShape({2, 4, 6}));
  REQUIRE(r.out_shapes == std::vector<TShape>{TShape({2, 24}), TShape({2, 24}), TShape({2, 6})});
  REQUIRE_THROWS_WITH(infer(TShape({2, 6, 4}), TShape({2, 3, 5}), TShape({2, 4, 6})),
                      Catch::Contains("anchor must be (1, anchors, 4)"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 6, 4}), TShape({2, 3, 4}), TShape({2, 4, 6})),
                      Catch::Contains("label must be (batch, labels > 0, width >= 5)"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 6, 4}), TShape({2, 3, 5}), TShape({2, 4, 5})),
                      Catch::Contains("cls_pred and anchor disagree on the number of anchors"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 6, 4}), TShape({2, 3, 5}), TShape({1, 4, 6})),
                      Catch::Contains("cls_pred and label disagree on the batch size"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_MultiBoxTarget", {{"variances", "(0.1, 0.2)"}}),
                      Catch::Contains("a tuple of 4 values"));
  REQUIRE_THROWS_WITH(
      SingleOpSymbol("_contrib_MultiBoxTarget", {{"negative_mining_ratio", "3"}, {"negative_mining_thresh", "0"}}),
      Catch::Contains("negative_mining_thresh must be > 0 when negative mining is on"));
  // A padding row (class -1) must be padding throughout.
  NDArray anchor = Boxes(1, {0, 0, 1, 1});
  NDArray label = Labels(1, 1, 5, {-1, 0, 0, 1, 1});
  REQUIRE_THROWS_WITH(Run({}, anchor, label, NDArray(TShape({1, 2, 1}), {0, 0})),
                      Catch::Contains("label row 0 of image 0 has class -1 (padding), so its box must be -1 too"));
}

TEST_CASE("MultiBoxTarget: NaN and infinite inputs", "[ops][MultiBoxTarget][hostile]") {
  const float nan = std::nanf(""), inf = INFINITY;
  NDArray anchor = Boxes(4, {nan, 0, 0.5f, 0.5f, 0, 0, inf, 0.5f, 0.1f, 0.1f, 0.4f, 0.4f, 0.6f, 0.6f, 0.9f, 0.9f});
  NDArray label = Labels(1, 2, 5, {1, 0.1f, 0.1f, 0.4f, 0.4f, 0, nan, 0.6f, 0.9f, 0.9f});
  NDArray pred(TShape({1, 2, 4}), {nan, 0, inf, 1, 0, nan, 0, -inf});
  Targets t = Run({{"negative_mining_ratio", "1"}, {"negative_mining_thresh", "0.5"}}, anchor, label, pred);
  REQUIRE(t.cls.GetFlat(2) == 2.0f);  // the one finite match
  for (int64_t j = 0; j < 4; ++j) {
    const float c = t.cls.GetFlat(j);
    REQUIRE((c == -1.0f || c == 0.0f || c == 1.0f || c == 2.0f));
  }
}
