// _contrib_MultiBoxDetection: a naive reference (argmax class, box decoding, sort, per-class or
// forced NMS, nms_topk), hand-checked cases for threshold, clipping and force_suppress, and
// shape errors.
#include <algorithm>
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
struct Det {
  float id, score, box[4];
};

double IoU(const float* a, const float* b) {
  double iw = std::max(0.0, double(std::min(a[2], b[2])) - std::max(a[0], b[0]));
  double ih = std::max(0.0, double(std::min(a[3], b[3])) - std::max(a[1], b[1]));
  double i = iw * ih, u = double(a[2] - a[0]) * (a[3] - a[1]) + double(b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0 ? 0.0 : i / u;
}

// One image's rows, as MXNet's CPU kernel defines them.
std::vector<Det> NaiveDetect(const NDArray& cls, const NDArray& loc, const NDArray& anchor, int64_t n,
                             float threshold, bool clip, float nms, bool force, int topk) {
  const int64_t C = cls.shape()[1], A = cls.shape()[2];
  const float v[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  std::vector<Det> dets;
  for (int64_t i = 0; i < A; ++i) {
    int64_t best = 0;
    float score = -1;
    for (int64_t j = 1; j < C; ++j)
      if (cls.GetFlat((n * C + j) * A + i) > score) score = cls.GetFlat((n * C + j) * A + i), best = j;
    if (score < threshold) best = 0;
    if (best == 0) continue;
    float an[4], d[4];
    for (int k = 0; k < 4; ++k) an[k] = anchor.GetFlat(i * 4 + k), d[k] = loc.GetFlat(n * A * 4 + i * 4 + k);
    const double aw = an[2] - an[0], ah = an[3] - an[1], ax = (an[0] + an[2]) / 2, ay = (an[1] + an[3]) / 2;
    const double ox = d[0] * v[0] * aw + ax, oy = d[1] * v[1] * ah + ay;
    const double ow = std::exp(d[2] * v[2]) * aw / 2, oh = std::exp(d[3] * v[3]) * ah / 2;
    Det det{float(best - 1), score, {float(ox - ow), float(oy - oh), float(ox + ow), float(oy + oh)}};
    if (clip)
      for (float& b : det.box) b = std::min(1.0f, std::max(0.0f, b));
    dets.push_back(det);
  }
  std::stable_sort(dets.begin(), dets.end(), [](const Det& a, const Det& b) { return a.score > b.score; });
  if (topk > 0 && size_t(topk) < dets.size()) dets.resize(size_t(topk));
  std::vector<Det> kept;
  for (Det& d : dets) {
    for (const Det& k : kept)
      if ((force || k.id == d.id) && IoU(k.box, d.box) >= nms) d.id = -1;
    if (d.id >= 0) kept.push_back(d);
  }
  return dets;  // suppressed rows stay in place with id -1
}

// The rows of image n in the output that are detections (id >= 0), in order.
std::vector<Det> Detections(const NDArray& y, int64_t n) {
  std::vector<Det> out;
  const int64_t A = y.shape()[1];
  for (int64_t i = 0; i < A; ++i) {
    auto at = [&](int k) { return y.GetFlat((n * A + i) * 6 + k); };
    if (at(0) >= 0) out.push_back({at(0), at(1), {at(2), at(3), at(4), at(5)}});
  }
  return out;
}

void RequireSameDetections(const std::vector<Det>& got, std::vector<Det> want) {
  want.erase(std::remove_if(want.begin(), want.end(), [](const Det& d) { return d.id < 0; }), want.end());
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].id == want[i].id);
    REQUIRE(got[i].score == want[i].score);
    for (int k = 0; k < 4; ++k) REQUIRE(std::fabs(got[i].box[k] - want[i].box[k]) <= 1e-5f);
  }
}

// Softmax-like class probabilities (batch, classes, anchors) and anchors inside [0, 1].
void RandomInputs(int64_t B, int64_t C, int64_t A, uint64_t seed, NDArray* cls, NDArray* loc, NDArray* anchor) {
  *cls = RandomArray(TShape({B, C, A}), seed, 0.0f, 1.0f);
  *loc = RandomArray(TShape({B, A * 4}), seed + 1, -1.0f, 1.0f);
  *anchor = NDArray(TShape({1, A, 4}));
  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < A; ++i) {
    const float x = u(rng) * 0.7f, y = u(rng) * 0.7f, w = 0.1f + u(rng) * 0.4f, h = 0.1f + u(rng) * 0.4f;
    for (int k = 0; k < 4; ++k) anchor->SetFlat(i * 4 + k, std::vector<float>{x, y, x + w, y + h}[k]);
  }
}
}  // namespace

TEST_CASE("MultiBoxDetection: naive reference over clip, threshold, force_suppress and nms_topk",
          "[ops][MultiBoxDetection]") {
  NDArray cls, loc, anchor;
  RandomInputs(2, 4, 40, 11, &cls, &loc, &anchor);
  struct Case {
    bool clip;
    float threshold, nms;
    bool force;
    int topk;
  };
  for (const Case& c : {Case{true, 0.01f, 0.5f, false, -1}, Case{false, 0.5f, 0.3f, false, -1},
                        Case{true, 0.2f, 0.3f, true, -1}, Case{true, 0.01f, 0.45f, false, 8}}) {
    CAPTURE(c.clip, c.threshold, c.nms, c.force, c.topk);
    KwArgs p = {{"clip", c.clip ? "True" : "False"}, {"threshold", std::to_string(c.threshold)},
                {"nms_threshold", std::to_string(c.nms)}, {"force_suppress", c.force ? "True" : "False"},
                {"nms_topk", std::to_string(c.topk)}};
    NDArray y = RunForward("_contrib_MultiBoxDetection", p, {{"cls_prob", cls}, {"loc_pred", loc}, {"anchor", anchor}});
    REQUIRE(y.shape() == TShape({2, 40, 6}));
    for (int64_t n = 0; n < 2; ++n)
      RequireSameDetections(Detections(y, n),
                            NaiveDetect(cls, loc, anchor, n, c.threshold, c.clip, c.nms, c.force, c.topk));
  }
}

TEST_CASE("MultiBoxDetection: hand-made cases", "[ops][MultiBoxDetection]") {
  // Two anchors, the same box, classes (bg, a, b). Anchor 0 says a (0.9), anchor 1 says b (0.8).
  NDArray anchor(TShape({1, 2, 4}), {0.1f, 0.1f, 0.5f, 0.5f, 0.1f, 0.1f, 0.5f, 0.5f});
  NDArray loc(TShape({1, 8}), std::vector<float>(8, 0.0f));
  NDArray cls(TShape({1, 3, 2}), {0.05f, 0.1f, 0.9f, 0.1f, 0.05f, 0.8f});
  auto run = [&](const KwArgs& p) {
    return RunForward("_contrib_MultiBoxDetection", p, {{"cls_prob", cls}, {"loc_pred", loc}, {"anchor", anchor}});
  };
  // Different classes survive NMS; zero deltas decode to the anchor.
  NDArray y = run({});
  RequireClose(y, NDArray(TShape({1, 2, 6}), {0, 0.9f, 0.1f, 0.1f, 0.5f, 0.5f, 1, 0.8f, 0.1f, 0.1f, 0.5f, 0.5f}),
               1e-6f, 0, "class-aware");
  // force_suppress removes the weaker one: its id becomes -1, the rest of its row stays.
  y = run({{"force_suppress", "True"}});
  REQUIRE(y.At({0, 1, 0}) == -1.0f);
  REQUIRE(y.At({0, 1, 1}) == Approx(0.8f));
  // Below threshold the anchor is background; background rows are all -1.
  y = run({{"threshold", "0.85"}});
  REQUIRE(y.At({0, 0, 0}) == 0.0f);
  for (int k = 0; k < 6; ++k) REQUIRE(y.At({0, 1, k}) == -1.0f);
  // Clipping: a box decoded past the border.
  NDArray far(TShape({1, 8}), {5, 5, 8, 8, 0, 0, 0, 0});
  y = RunForward("_contrib_MultiBoxDetection", {}, {{"cls_prob", cls}, {"loc_pred", far}, {"anchor", anchor}});
  REQUIRE(y.At({0, 0, 4}) == 1.0f);
  y = RunForward("_contrib_MultiBoxDetection", {{"clip", "False"}}, {{"cls_prob", cls}, {"loc_pred", far}, {"anchor", anchor}});
  REQUIRE(y.At({0, 0, 4}) > 1.0f);
}

TEST_CASE("MultiBoxDetection: shape errors", "[ops][MultiBoxDetection]") {
  auto infer = [](const TShape& c, const TShape& l, const TShape& a) {
    InferShape(SingleOpSymbol("_contrib_MultiBoxDetection", {}),
               {{"op_cls_prob", c}, {"op_loc_pred", l}, {"op_anchor", a}});
  };
  REQUIRE_THROWS_WITH(infer(TShape({1, 3, 5}), TShape({1, 16}), TShape({1, 5, 4})),
                      Catch::Contains("loc_pred must hold 4 values per anchor"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 3, 5}), TShape({1, 20}), TShape({1, 4, 4})),
                      Catch::Contains("disagree on the number of anchors"));
  REQUIRE_NOTHROW(infer(TShape({2, 3, 5}), TShape({2, 20}), TShape({1, 5, 4})));
}
