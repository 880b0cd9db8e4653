// _contrib_BilinearResize2D: forward against a naive bilinear sampler written here (both
// align_corners settings), the output size of every mode, finite-difference gradients.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Source coordinate of output index i (MXNet's area_pixel_compute_source_index).
double SourceCoord(int64_t i, int64_t in, int64_t out, bool align_corners) {
  if (out <= 1) return 0.0;
  if (align_corners) return static_cast<double>(i) * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  double s = (static_cast<double>(i) + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  return s < 0 ? 0 : s;
}

NDArray NaiveResize(const NDArray& x, int64_t OH, int64_t OW, bool align_corners) {
  const TShape& s = x.shape();
  const int64_t H = s[2], W = s[3];
  NDArray y(TShape({s[0], s[1], OH, OW}));
  for (int64_t p = 0; p < s[0] * s[1]; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double sh = H == OH ? oh : SourceCoord(oh, H, OH, align_corners);
        double sw = W == OW ? ow : SourceCoord(ow, W, OW, align_corners);
        int64_t h0 = static_cast<int64_t>(std::floor(sh)), w0 = static_cast<int64_t>(std::floor(sw));
        int64_t h1 = std::min(h0 + 1, H - 1), w1 = std::min(w0 + 1, W - 1);
        double ah = sh - h0, aw = sw - w0;
        auto at = [&](int64_t h, int64_t w) { return static_cast<double>(x.GetFlat((p * H + h) * W + w)); };
        double v = (1 - ah) * ((1 - aw) * at(h0, w0) + aw * at(h0, w1)) + ah * ((1 - aw) * at(h1, w0) + aw * at(h1, w1));
        y.SetFlat((p * OH + oh) * OW + ow, static_cast<float>(v));
      }
  return y;
}

TShape OutShape(const KwArgs& p, const TShape& in) {
  Symbol s = Symbol::Create("_contrib_BilinearResize2D", "r", p, {});
  return InferShape(s, {{"r_data", in}}).out_shapes[0];
}
}  // namespace

TEST_CASE("BilinearResize2D matches a naive sampler", "[ops][BilinearResize2D]") {
  NDArray x = RandomArray(TShape({2, 2, 5, 4}), 1);
  for (bool align : {true, false}) {
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{9, 7}, {3, 2}, {1, 1}, {5, 4}, {5, 9}, {12, 1}}) {
      INFO("align_corners=" << align << " out=" << oh << "x" << ow);
      KwArgs p = {{"height", std::to_string(oh)}, {"width", std::to_string(ow)},
                  {"align_corners", align ? "True" : "False"}};
      RequireClose(RunForward("_contrib_BilinearResize2D", p, {{"data", x}}), NaiveResize(x, oh, ow, align), 1e-5f, 1e-4f);
    }
  }
  // align_corners keeps the corners exactly.
  NDArray y = RunForward("_contrib_BilinearResize2D", {{"height", "11"}, {"width", "13"}}, {{"data", x}});
  CHECK(y.At({1, 1, 10, 12}) == x.At({1, 1, 4, 3}));
  CHECK(y.At({0, 1, 0, 0}) == x.At({0, 1, 0, 0}));
}

TEST_CASE("BilinearResize2D output size modes", "[ops][BilinearResize2D][shape]") {
  TShape in({1, 2, 5, 8});
  CHECK(OutShape({{"height", "3"}, {"width", "6"}}, in) == TShape({1, 2, 3, 6}));
  CHECK(OutShape({{"scale_height", "2"}, {"scale_width", "0.5"}}, in) == TShape({1, 2, 10, 4}));
  // MXNet's quirk: scale_width alone is ignored in mode 'size'.
  CHECK(OutShape({{"height", "3"}, {"width", "6"}, {"scale_width", "2"}}, in) == TShape({1, 2, 3, 6}));
  CHECK(OutShape({{"mode", "odd_scale"}, {"scale_height", "2"}, {"scale_width", "2"}}, in) == TShape({1, 2, 9, 16}));
  CHECK(OutShape({{"mode", "to_even_down"}}, in) == TShape({1, 2, 4, 8}));
  CHECK(OutShape({{"mode", "to_even_up"}}, in) == TShape({1, 2, 6, 8}));
  CHECK(OutShape({{"mode", "to_odd_down"}}, in) == TShape({1, 2, 5, 7}));
  CHECK(OutShape({{"mode", "to_odd_up"}}, in) == TShape({1, 2, 5, 9}));
  Symbol like = Symbol::Create("_contrib_BilinearResize2D", "r", {{"mode", "like"}}, {});
  CHECK(like.ListArguments() == std::vector<std::string>{"r_data", "r_like"});
  CHECK(InferShape(like, {{"r_data", in}, {"r_like", TShape({3, 1, 7, 2})}}).out_shapes[0] == TShape({1, 2, 7, 2}));
  CHECK_THAT(ErrorOf([&] { OutShape({{"mode", "odd_scale"}}, in); }), Catch::Contains("mode 'odd_scale' needs scale_height"));
  CHECK_THAT(ErrorOf([&] { OutShape({{"scale_height", "2"}}, in); }), Catch::Contains("mode 'size' needs scale_width"));
  CHECK_THAT(ErrorOf([&] { OutShape({}, TShape({2, 5, 8})); }), Catch::Contains("input must be 4-D (NCHW)"));
}

TEST_CASE("BilinearResize2D gradients by finite differences", "[ops][BilinearResize2D][grad]") {
  NDArray x = RandomArray(TShape({1, 2, 4, 3}), 2);
  for (bool align : {true, false})
    for (auto [oh, ow] : {std::pair<int64_t, int64_t>{7, 5}, {2, 2}, {4, 3}}) {
      INFO("align_corners=" << align << " out=" << oh << "x" << ow);
      CheckGradients("_contrib_BilinearResize2D",
                     {{"height", std::to_string(oh)}, {"width", std::to_string(ow)}, {"align_corners", align ? "1" : "0"}},
                     {{"data", x}});
    }
  CheckGradients("_contrib_BilinearResize2D", {{"mode", "like"}},
                 {{"data", x}, {"like", RandomArray(TShape({1, 2, 6, 6}), 3)}});
}
