// _contrib_box_nms: MXNet's documented example (forward and gradient), a naive greedy NMS
// written here over many parameter combinations (valid_thresh, topk, background_id,
// force_suppress, id/score/coordinate positions, in/out formats), and torchvision's nms /
// batched_nms (goldens from scripts/gen_detection_goldens.py).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
const std::string kGoldens = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/";

struct NmsOptions {
  float overlap = 0.5f, valid = 0.0f;
  int topk = -1, coord = 2, score = 1, id = -1, background = -1;
  bool force = false;
  KwArgs Params() const {
    return {{"overlap_thresh", std::to_string(overlap)}, {"valid_thresh", std::to_string(valid)},
            {"topk", std::to_string(topk)}, {"coord_start", std::to_string(coord)},
            {"score_index", std::to_string(score)}, {"id_index", std::to_string(id)},
            {"background_id", std::to_string(background)}, {"force_suppress", force ? "1" : "0"}};
  }
};

double CornerIoU(const float* a, const float* b) {
  auto area = [](const float* r) {
    double w = r[2] - r[0], h = r[3] - r[1];
    return (w < 0 || h < 0) ? 0.0 : w * h;
  };
  double iw = std::max(0.0, double(std::min(a[2], b[2])) - std::max(a[0], b[0]));
  double ih = std::max(0.0, double(std::min(a[3], b[3])) - std::max(a[1], b[1]));
  double inter = iw * ih;
  return inter / (area(a) + area(b) - inter);
}

// Greedy NMS: visit valid boxes by descending score (first topk), keep a box unless a kept box
// (of its class, unless forced) overlaps it by more than the threshold. Returns, per batch, the
// kept input rows in order (corner coordinates read at o.coord).
std::vector<std::vector<int64_t>> NaiveNms(const NDArray& x, const NmsOptions& o) {
  const TShape& s = x.shape();
  const int64_t N = s[s.ndim() - 2], K = s[s.ndim() - 1], B = x.Size() / (N * K);
  std::vector<float> v = x.ToVector();
  std::vector<std::vector<int64_t>> result;
  for (int64_t b = 0; b < B; ++b) {
    const float* rows = v.data() + b * N * K;
    std::vector<int64_t> cand;
    for (int64_t i = 0; i < N; ++i) {
      const float* r = rows + i * K;
      if (r[o.score] <= o.valid) continue;
      if (o.id >= 0 && r[o.id] == static_cast<float>(o.background)) continue;
      cand.push_back(i);
    }
    std::stable_sort(cand.begin(), cand.end(),
                     [&](int64_t i, int64_t j) { return rows[i * K + o.score] > rows[j * K + o.score]; });
    if (o.topk >= 0 && static_cast<int64_t>(cand.size()) > o.topk) cand.resize(static_cast<size_t>(o.topk));
    std::vector<int64_t> kept;
    for (int64_t i : cand) {
      bool keep = true;
      for (int64_t k : kept) {
        if (!o.force && o.id >= 0 && int(rows[i * K + o.id]) != int(rows[k * K + o.id])) continue;
        if (CornerIoU(rows + k * K + o.coord, rows + i * K + o.coord) > o.overlap) keep = false;
      }
      if (keep) kept.push_back(i);
    }
    result.push_back(kept);
  }
  return result;
}

// The output NaiveNms implies: kept rows first, the rest -1.
NDArray NmsOutput(const NDArray& x, const std::vector<std::vector<int64_t>>& kept) {
  const TShape& s = x.shape();
  const int64_t N = s[s.ndim() - 2], K = s[s.ndim() - 1];
  NDArray y(s);
  y.Fill(-1.0f);
  for (size_t b = 0; b < kept.size(); ++b)
    for (size_t r = 0; r < kept[b].size(); ++r)
      for (int64_t k = 0; k < K; ++k)
        y.SetFlat((int64_t(b) * N + int64_t(r)) * K + k, x.GetFlat((int64_t(b) * N + kept[b][r]) * K + k));
  return y;
}

// Random boxes [.., score, .., x1, y1, x2, y2 at coord ..] with ids in [0, classes).
NDArray RandomBoxes(const TShape& s, int coord, int score, int id, int classes, uint64_t seed) {
  NDArray x = RandomArray(s, seed, 0.0f, 1.0f);
  const int64_t K = s[s.ndim() - 1], rows = x.Size() / K;
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float x1 = u(rng) * 6, y1 = u(rng) * 6, w = 0.5f + u(rng) * 3, h = 0.5f + u(rng) * 3;
    x.SetFlat(r * K + coord, x1);
    x.SetFlat(r * K + coord + 1, y1);
    x.SetFlat(r * K + coord + 2, x1 + w);
    x.SetFlat(r * K + coord + 3, y1 + h);
    x.SetFlat(r * K + score, u(rng));
    if (id >= 0) x.SetFlat(r * K + id, static_cast<float>(static_cast<int>(u(rng) * classes)));
  }
  return x;
}
}  // namespace

TEST_CASE("box_nms: MXNet's documented example, forward and gradient", "[ops][box_nms]") {
  NDArray x(TShape({4, 6}), {0, 0.5f, 0.1f, 0.1f, 0.2f, 0.2f, 1, 0.4f, 0.1f, 0.1f, 0.2f, 0.2f,
                             0, 0.3f, 0.1f, 0.1f, 0.14f, 0.14f, 2, 0.6f, 0.5f, 0.5f, 0.7f, 0.8f});
  KwArgs params = {{"overlap_thresh", "0.1"}, {"coord_start", "2"}, {"score_index", "1"},
                   {"id_index", "0"}, {"force_suppress", "True"}, {"in_format", "corner"},
                   {"out_format", "corner"}};
  auto exec = BindSingleOp("_contrib_box_nms", params, {{"data", x}});
  exec->Forward(true);
  NDArray want(TShape({4, 6}), {2, 0.6f, 0.5f, 0.5f, 0.7f, 0.8f, 0, 0.5f, 0.1f, 0.1f, 0.2f, 0.2f,
                                -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
  RequireClose(exec->outputs()[0], want, 1e-6f, 0.0f, "output");
  REQUIRE(exec->outputs().size() == 1);  // the record output is hidden
  std::vector<float> head_values;
  for (float v : {0.1f, 0.2f, 0.3f, 0.4f})
    for (int k = 0; k < 6; ++k) head_values.push_back(v);
  exec->Backward({NDArray(TShape({4, 6}), head_values)});
  std::vector<float> grad_want;
  for (float v : {0.2f, 0.0f, 0.0f, 0.1f})
    for (int k = 0; k < 6; ++k) grad_want.push_back(v);
  RequireClose(exec->grad_arrays()[0], NDArray(TShape({4, 6}), grad_want), 1e-7f, 0.0f, "gradient");
}

TEST_CASE("box_nms: naive greedy NMS over thresholds, topk, classes and background",
          "[ops][box_nms]") {
  std::vector<NmsOptions> cases;
  NmsOptions o;
  cases.push_back(o);                                    // defaults: no classes
  o.overlap = 0.3f; o.valid = 0.4f; cases.push_back(o);  // valid_thresh filters
  o.topk = 7; cases.push_back(o);                        // topk of the valid boxes
  o = {}; o.id = 0; cases.push_back(o);                  // per-class suppression
  o.force = true; cases.push_back(o);                    // force_suppress across classes
  o.force = false; o.background = 1; cases.push_back(o); // background class dropped
  o.topk = 0; o.background = -1; cases.push_back(o);     // topk 0: nothing visited
  o = {}; o.id = 0; o.topk = 200; o.overlap = 0.05f; cases.push_back(o);  // topk above count
  int seed = 10;
  for (const NmsOptions& c : cases) {
    CAPTURE(c.overlap, c.valid, c.topk, c.id, c.background, c.force);
    NDArray x = RandomBoxes(TShape({2, 3, 25, 6}), 2, 1, 0, 3, seed++);
    NDArray y = RunForward("_contrib_box_nms", c.Params(), {{"data", x}});
    if (c.topk == 0) {
      RequireClose(y, x, 0.0f, 0.0f, "topk=0 passes the input through");
      continue;
    }
    RequireClose(y, NmsOutput(x, NaiveNms(x, c)), 0.0f, 0.0f, "box_nms");
  }
}

TEST_CASE("box_nms: score, id and coordinate positions anywhere in the row", "[ops][box_nms]") {
  NmsOptions o;
  o.coord = 0; o.score = 4; o.id = 6; o.overlap = 0.25f; o.valid = 0.1f;
  NDArray x = RandomBoxes(TShape({40, 7}), o.coord, o.score, o.id, 2, 3);
  NDArray y = RunForward("_contrib_box_nms", o.Params(), {{"data", x}});
  RequireClose(y, NmsOutput(x, NaiveNms(x, o)), 0.0f, 0.0f, "box_nms");
}

TEST_CASE("box_nms: center in_format and out_format", "[ops][box_nms]") {
  NmsOptions o;
  o.overlap = 0.2f;
  NDArray corner = RandomBoxes(TShape({30, 6}), 2, 1, -1, 1, 5);
  NDArray center = corner.Copy();
  for (int64_t r = 0; r < 30; ++r) {
    float x1 = corner.GetFlat(r * 6 + 2), y1 = corner.GetFlat(r * 6 + 3);
    float x2 = corner.GetFlat(r * 6 + 4), y2 = corner.GetFlat(r * 6 + 5);
    center.SetFlat(r * 6 + 2, (x1 + x2) / 2);
    center.SetFlat(r * 6 + 3, (y1 + y2) / 2);
    center.SetFlat(r * 6 + 4, x2 - x1);
    center.SetFlat(r * 6 + 5, y2 - y1);
  }
  auto kept = NaiveNms(corner, o);
  KwArgs p = o.Params();
  // corner -> center: the kept boxes in center form.
  p["out_format"] = "center";
  RequireClose(RunForward("_contrib_box_nms", p, {{"data", corner}}), NmsOutput(center, kept), 1e-5f,
               1e-5f, "corner->center");
  // center -> corner, and center -> center.
  p["in_format"] = "center";
  RequireClose(RunForward("_contrib_box_nms", p, {{"data", center}}), NmsOutput(center, kept), 0.0f,
               0.0f, "center->center");
  p["out_format"] = "corner";
  RequireClose(RunForward("_contrib_box_nms", p, {{"data", center}}), NmsOutput(corner, kept), 1e-5f,
               1e-5f, "center->corner");
}

TEST_CASE("box_nms: the gradient follows kept rows, suppressed rows get zero", "[ops][box_nms]") {
  NmsOptions o;
  o.id = 0; o.overlap = 0.3f;
  NDArray x = RandomBoxes(TShape({2, 20, 6}), 2, 1, 0, 2, 8);
  auto kept = NaiveNms(x, o);
  NDArray head = RandomArray(x.shape(), 9);
  NDArray want(x.shape());
  want.Fill(0.0f);
  for (size_t b = 0; b < kept.size(); ++b)
    for (size_t r = 0; r < kept[b].size(); ++r)
      for (int k = 0; k < 6; ++k)
        want.SetFlat((int64_t(b) * 20 + kept[b][r]) * 6 + k, head.GetFlat((int64_t(b) * 20 + int64_t(r)) * 6 + k));
  for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
    auto exec = BindSingleOp("_contrib_box_nms", o.Params(), {{"data", x}}, {}, req);
    NDArray g = exec->grad_arrays()[0];
    g.Fill(req == OpReq::kAdd ? 1.0f : 5.0f);
    exec->Forward(true);
    exec->Backward({head});
    NDArray expect = want.Copy();
    if (req == OpReq::kAdd)
      for (int64_t i = 0; i < expect.Size(); ++i) expect.SetFlat(i, expect.GetFlat(i) + 1.0f);
    RequireClose(exec->grad_arrays()[0], expect, 0.0f, 0.0f, "gradient");
  }
}

TEST_CASE("box_nms: agrees with torchvision nms and batched_nms", "[ops][box_nms][goldens]") {
  for (bool classes : {false, true}) {
    const std::string pre = classes ? "nms_class_" : "nms_";
    NDArray boxes = LoadNpy(kGoldens + pre + "boxes.npy");
    NDArray scores = LoadNpy(kGoldens + pre + "scores.npy");
    NDArray keep = LoadNpy(kGoldens + pre + "keep.npy");
    const int64_t n = boxes.shape()[0];
    NDArray x(TShape({n, 6}));
    for (int64_t i = 0; i < n; ++i) {
      x.SetFlat(i * 6, classes ? LoadNpy(kGoldens + pre + "ids.npy").GetFlat(i) : 0.0f);
      x.SetFlat(i * 6 + 1, scores.GetFlat(i));
      for (int k = 0; k < 4; ++k) x.SetFlat(i * 6 + 2 + k, boxes.GetFlat(i * 4 + k));
    }
    KwArgs p = {{"overlap_thresh", classes ? "0.15" : "0.2"}, {"valid_thresh", "0"}};
    if (classes) p["id_index"] = "0";
    NDArray y = RunForward("_contrib_box_nms", p, {{"data", x}});
    std::vector<std::vector<int64_t>> kept(1);
    for (int64_t i = 0; i < keep.Size(); ++i) kept[0].push_back(static_cast<int64_t>(keep.GetFlat(i)));
    CAPTURE(classes, keep.Size());
    RequireClose(y, NmsOutput(x, kept), 0.0f, 0.0f, "torchvision");
  }
}

TEST_CASE("box_nms: shape errors", "[ops][box_nms]") {
  auto infer = [](const KwArgs& p, const TShape& s) {
    InferShape(SingleOpSymbol("_contrib_box_nms", p), {{"op_data", s}});
  };
  REQUIRE_THROWS_WITH(infer({}, TShape({4, 4})),
                      Catch::Contains("the last dimension must have at least 5 elements"));
  REQUIRE_THROWS_WITH(infer({{"score_index", "3"}}, TShape({4, 6})),
                      Catch::Contains("score_index 3 conflicts with coordinates [2, 5]"));
  REQUIRE_THROWS_WITH(infer({{"id_index", "1"}}, TShape({4, 6})),
                      Catch::Contains("id_index 1 conflicts with score_index 1"));
  REQUIRE_NOTHROW(infer({}, TShape({2, 3, 8, 6})));
}

TEST_CASE("box_nms and Proposal: NMS thresholds are between 0 and 1", "[ops][box_nms][Proposal]") {
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_box_nms", {{"overlap_thresh", "1.5"}}),
                      Catch::StartsWith("value 1.5 for Parameter overlap_thresh should be in range [0, 1]"));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_box_nms", {{"overlap_thresh", "nan"}}),
                      Catch::StartsWith("value nan for Parameter overlap_thresh should be a finite number"));
  REQUIRE_THROWS_WITH(Symbol::Create("_contrib_Proposal", "p", {{"threshold", "-0.1"}}, {}),
                      Catch::StartsWith("value -0.1 for Parameter threshold should be in range [0, 1]"));
  REQUIRE_NOTHROW(SingleOpSymbol("_contrib_box_nms", {{"overlap_thresh", "1"}}));
}
