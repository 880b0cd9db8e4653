// _contrib_box_iou, _contrib_bipartite_matching, _contrib_box_encode, _contrib_box_decode and
// _contrib_gradientmultiplier against naive loops and values worked by hand.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// IoU written out for corner boxes.
double NaiveIou(const float* a, const float* b) {
  const double w = std::max(0.0, std::min<double>(a[2], b[2]) - std::max<double>(a[0], b[0]));
  const double h = std::max(0.0, std::min<double>(a[3], b[3]) - std::max<double>(a[1], b[1]));
  const double i = w * h;
  if (i <= 0) return 0;
  return i / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i);
}
// Random corner boxes: (x0, y0) in [0, 1), sizes in (0, 0.6).
NDArray Boxes(const TShape& shape, uint64_t seed) {
  NDArray r = RandomArray(shape, seed, 0.0f, 1.0f);
  for (int64_t i = 0; i < r.Size() / 4; ++i) {
    float* b = r.fdata() + 4 * i;
    b[2] = b[0] + 0.05f + 0.55f * b[2];
    b[3] = b[1] + 0.05f + 0.55f * b[3];
  }
  return r;
}
}  // namespace

TEST_CASE("_contrib_box_iou: every pair's intersection over union, corner and center", "[ops][contrib]") {
  const NDArray l = Boxes(TShape({2, 3, 4}), 1), r = Boxes(TShape({5, 4}), 2);
  const NDArray iou = Invoke("_contrib_box_iou", {}, {l, r})[0];
  REQUIRE(iou.shape() == TShape({2, 3, 5}));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 5; ++j)
      CHECK(iou.fdata()[i * 5 + j] == Approx(NaiveIou(l.fdata() + 4 * i, r.fdata() + 4 * j)).margin(1e-6));
  // The same boxes as centers and sizes give the same overlaps.
  auto centers = [](const NDArray& c) {
    NDArray out(c.shape());
    for (int64_t i = 0; i < c.Size() / 4; ++i) {
      const float* b = c.fdata() + 4 * i;
      float* o = out.fdata() + 4 * i;
      o[0] = (b[0] + b[2]) / 2;
      o[1] = (b[1] + b[3]) / 2;
      o[2] = b[2] - b[0];
      o[3] = b[3] - b[1];
    }
    return out;
  };
  RequireClose(Invoke("_contrib_box_iou", {{"format", "center"}}, {centers(l), centers(r)})[0], iou, 1e-5f, 1e-5f);
  // float64 boxes give float64 overlaps.
  const NDArray d = Invoke("_contrib_box_iou", {}, {l.AsType(DType::kFloat64), r.AsType(DType::kFloat64)})[0];
  CHECK(d.dtype() == DType::kFloat64);
  RequireClose(d.AsType(DType::kFloat32), iou, 1e-6f, 1e-6f);
  // Disjoint boxes: 0; a box with itself: 1.
  NDArray a(TShape({2, 4}), {0, 0, 1, 1, 2, 2, 3, 3});
  const NDArray self = Invoke("_contrib_box_iou", {}, {a, a})[0];
  CHECK(self.fdata()[0] == 1.0f);
  CHECK(self.fdata()[1] == 0.0f);
  CHECK_THROWS_WITH(Invoke("_contrib_box_iou", {}, {NDArray(TShape({3, 5})), a}), Catch::Contains("4 values per box"));
}

TEST_CASE("_contrib_bipartite_matching: greedy matching by score", "[ops][contrib]") {
  NDArray s(TShape({3, 2}), {0.5f, 0.6f, 0.1f, 0.2f, 0.3f, 0.4f});
  // Descending: 0.6 matches (0, 1), 0.5 and 0.4 meet taken rows or columns, 0.3 matches (2, 0).
  std::vector<NDArray> m = Invoke("_contrib_bipartite_matching", {{"threshold", "1e-12"}}, {s});
  CHECK(m[0].ToVector() == std::vector<float>{1, -1, 0});
  CHECK(m[1].ToVector() == std::vector<float>{2, 0});
  // Ascending below 100: 0.1 matches (1, 0), then 0.4 matches (2, 1).
  m = Invoke("_contrib_bipartite_matching", {{"threshold", "100"}, {"is_ascend", "true"}}, {s});
  CHECK(m[0].ToVector() == std::vector<float>{-1, 0, 1});
  CHECK(m[1].ToVector() == std::vector<float>{1, 2});
  // The threshold stops the matching at the first free pair below it.
  m = Invoke("_contrib_bipartite_matching", {{"threshold", "0.35"}}, {s});
  CHECK(m[0].ToVector() == std::vector<float>{1, -1, -1});
  CHECK(m[1].ToVector() == std::vector<float>{-1, 0});
  // A batch of two matrices, float64.
  NDArray two(TShape({2, 3, 2}), {0.5f, 0.6f, 0.1f, 0.2f, 0.3f, 0.4f, 0.9f, 0.1f, 0.1f, 0.8f, 0.2f, 0.3f});
  m = Invoke("_contrib_bipartite_matching", {{"threshold", "0"}}, {two.AsType(DType::kFloat64)});
  CHECK(m[0].dtype() == DType::kFloat64);
  CHECK(m[0].AsType(DType::kFloat32).ToVector() == std::vector<float>{1, -1, 0, 0, 1, -1});
  CHECK(m[1].AsType(DType::kFloat32).ToVector() == std::vector<float>{2, 0, 0, 1});
}

TEST_CASE("_contrib_box_encode and _contrib_box_decode: targets of matched anchors and boxes back", "[ops][contrib]") {
  NDArray anchors(TShape({1, 2, 4}), {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  NDArray refs(TShape({1, 2, 4}), {0.1f, 0.2f, 0.3f, 0.4f, 0.4f, 0.5f, 0.8f, 1.0f});
  NDArray samples(TShape({1, 2}), {0.f, 1.f}), matches(TShape({1, 2}), {0.f, 1.f});
  NDArray means(TShape({4}), {0.f, 0.f, 0.f, 0.f}), stds(TShape({4}), {0.1f, 0.1f, 0.2f, 0.2f});
  const std::vector<NDArray> e = Invoke("_contrib_box_encode", {}, {samples, matches, anchors, refs, means, stds});
  REQUIRE(e[0].shape() == TShape({1, 2, 4}));
  // Anchor 1: center (0.6, 0.7), size 0.2 x 0.2; ref 1: center (0.6, 0.75), size 0.4 x 0.5.
  const std::vector<float> t = e[0].ToVector(), mask = e[1].ToVector();
  CHECK(std::vector<float>(t.begin(), t.begin() + 4) == std::vector<float>{0, 0, 0, 0});  // a negative sample
  CHECK(t[4] == Approx(0.0).margin(1e-5));
  CHECK(t[5] == Approx(0.05 / 0.2 / 0.1).epsilon(1e-5));
  CHECK(t[6] == Approx(std::log(2.0) / 0.2).epsilon(1e-5));
  CHECK(t[7] == Approx(std::log(2.5) / 0.2).epsilon(1e-5));
  CHECK(mask == std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1});
  // Decoding the targets with the same stds gives ref 1 back (anchors in corner format).
  NDArray row(TShape({1, 1, 4}), std::vector<float>(t.begin() + 4, t.end()));
  NDArray anchor1(TShape({1, 1, 4}), {0.5f, 0.6f, 0.7f, 0.8f});
  const NDArray back = Invoke("_contrib_box_decode", {{"std0", "0.1"}, {"std1", "0.1"}, {"std2", "0.2"}, {"std3", "0.2"},
                                                      {"format", "corner"}}, {row, anchor1})[0];
  RequireClose(back, NDArray(TShape({1, 1, 4}), {0.4f, 0.5f, 0.8f, 1.0f}), 1e-5f, 1e-5f);
  // Center anchors (x, y, w, h), worked by hand: x = 0.1 * 0.1 * 0.3 + 0.1, w = exp(0.3 * 0.2) * 0.3.
  NDArray data(TShape({1, 1, 4}), {0.1f, 0.2f, 0.3f, 0.4f});
  NDArray center(TShape({1, 1, 4}), {0.1f, 0.2f, 0.3f, 0.4f});
  const NDArray box = Invoke("_contrib_box_decode", {{"std0", "0.1"}, {"std1", "0.1"}, {"std2", "0.2"}, {"std3", "0.2"}},
                             {data, center})[0];
  const double x = 0.103, y = 0.208, w = std::exp(0.06) * 0.3, h = std::exp(0.08) * 0.4;
  RequireClose(box, NDArray(TShape({1, 1, 4}), {float(x - w / 2), float(y - h / 2), float(x + w / 2), float(y + h / 2)}),
               1e-6f, 1e-5f);
  // clip bounds the log-size offsets before exp.
  const NDArray clipped = Invoke("_contrib_box_decode", {{"clip", "0.01"}}, {data, center})[0];
  CHECK(clipped.fdata()[2] - clipped.fdata()[0] == Approx(std::exp(0.01) * 0.3).epsilon(1e-5));
  CHECK_THROWS_AS(Invoke("_contrib_box_encode", {}, {samples, matches, NDArray(TShape({1, 3, 4})), refs, means, stds}),
                  ShapeError);
  NDArray far(TShape({1, 2}), {0.f, 5.f});
  CHECK_THROWS_AS(Invoke("_contrib_box_encode", {}, {samples, far, anchors, refs, means, stds}), IndexError);
}

TEST_CASE("_contrib_gradientmultiplier: identity forward, gradient times scalar", "[ops][contrib]") {
  NDArray x(TShape({2, 3}), {1, -2, 3, -4, 5, -6});
  auto exec = BindSingleOp("_contrib_gradientmultiplier", {{"scalar", "-0.5"}}, {{"data", x}});
  exec->Forward(true);
  RequireClose(exec->outputs()[0], x, 0.f, 0.f);
  NDArray head(TShape({2, 3}), {1, 2, 3, 4, 5, 6});
  exec->Backward({head});
  RequireClose(exec->grad_dict().at("op_data"), NDArray(TShape({2, 3}), {-0.5f, -1, -1.5f, -2, -2.5f, -3}), 0.f, 0.f);
}
