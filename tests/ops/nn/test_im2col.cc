// im2col and col2im against naive sliding-window loops (1-D and 2-D, stride, dilation, pad);
// each the other's gradient, checked by finite differences; the shape errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Columns of a (N, C, H, W) image: row (c, ky, kx), column (oy, ox).
NDArray NaiveIm2Col(const NDArray& x, int k, int s, int d, int p) {
  const TShape& sh = x.shape();
  const int64_t n = sh[0], c = sh[1], h = sh[2], w = sh[3];
  const int64_t oh = (h + 2 * p - (d * (k - 1) + 1)) / s + 1, ow = (w + 2 * p - (d * (k - 1) + 1)) / s + 1;
  NDArray col(TShape({n, c * k * k, oh * ow}));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int ky = 0; ky < k; ++ky)
        for (int kx = 0; kx < k; ++kx)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
              const int64_t y = oy * s - p + ky * d, xx = ox * s - p + kx * d;
              const float v = y >= 0 && y < h && xx >= 0 && xx < w ? x.GetFlat(((b * c + ch) * h + y) * w + xx) : 0.0f;
              col.SetFlat(((b * c * k * k + (ch * k + ky) * k + kx) * oh + oy) * ow + ox, v);
            }
  return col;
}
}  // namespace

TEST_CASE("im2col extracts the sliding blocks and col2im sums them back", "[ops][im2col][grad]") {
  struct Case { int k, s, d, p, h = 5, w = 4; };
  // The last three: rows of 17-20 outputs at stride 2 (the vector gather), stride 3 with padding
  // wider than the window's reach, a 1x1 window at stride 2.
  for (Case c : {Case{3, 1, 1, 0}, Case{2, 2, 1, 1}, Case{2, 1, 2, 1}, Case{3, 2, 1, 1, 6, 39}, Case{2, 3, 1, 3, 7, 11},
                 Case{1, 2, 1, 0, 6, 34}}) {
    INFO("kernel " << c.k << " stride " << c.s << " dilate " << c.d << " pad " << c.p << " image " << c.h << "x" << c.w);
    NDArray x = RandomArray(TShape({2, 2, c.h, c.w}), 1);
    auto t = [](int v) { return "(" + std::to_string(v) + "," + std::to_string(v) + ")"; };
    const KwArgs p = {{"kernel", t(c.k)}, {"stride", t(c.s)}, {"dilate", t(c.d)}, {"pad", t(c.p)}};
    NDArray col = NaiveIm2Col(x, c.k, c.s, c.d, c.p);
    RequireClose(RunForward("im2col", p, {{"data", x}}), col);
    // col2im is the transpose: <im2col(x), y> = <x, col2im(y)>.
    KwArgs q = p;
    q["output_size"] = "(" + std::to_string(c.h) + "," + std::to_string(c.w) + ")";
    NDArray y = RandomArray(col.shape(), 2);
    NDArray back = RunForward("col2im", q, {{"data", y}});
    REQUIRE(back.shape() == x.shape());
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < col.Size(); ++i) lhs += static_cast<double>(col.GetFlat(i)) * y.GetFlat(i);
    for (int64_t i = 0; i < x.Size(); ++i) rhs += static_cast<double>(x.GetFlat(i)) * back.GetFlat(i);
    CHECK(lhs == Approx(rhs).epsilon(1e-5));
    CheckGradients("im2col", p, {{"data", RandomArray(TShape({1, 2, 4, 3}), 3)}});
  }
  const KwArgs q = {{"kernel", "(2,)"}, {"stride", "(2,)"}, {"output_size", "(5,)"}};
  CheckGradients("col2im", q, {{"data", RandomArray(TShape({1, 4, 2}), 4)}});
}

TEST_CASE("im2col and col2im reject windows that do not fit", "[ops][im2col]") {
  CHECK_THROWS_WITH(Invoke("im2col", {{"kernel", "(5,5)"}}, {RandomArray(TShape({1, 1, 3, 3}), 1)}),
                    Catch::Contains("exceeds the padded image"));
  CHECK_THROWS_WITH(Invoke("col2im", {{"kernel", "(2,2)"}, {"output_size", "(3,3)"}}, {RandomArray(TShape({1, 4, 5}), 1)}),
                    Catch::Contains("must be (N, C * 4, 4)"));
  CHECK_THROWS_WITH(Invoke("im2col", {{"kernel", "(2,2)"}}, {RandomArray(TShape({1, 3, 3}), 1)}),
                    Catch::Contains("must have 4 dims"));
}
