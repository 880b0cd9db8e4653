// depth_to_space and space_to_depth against the reshape-transpose-reshape definitions (naive
// loops), each the other's inverse; gradients by finite differences; the shape errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// depth_to_space: (n, c, h, w) -> (n, c / b^2, h b, w b), channel (i b + j) c' + k of the input
// lands at (k, y b + i, x b + j).
NDArray NaiveDepthToSpace(const NDArray& x, int64_t b) {
  const TShape& s = x.shape();
  const int64_t n = s[0], c = s[1] / (b * b), h = s[2], w = s[3];
  NDArray y(TShape({n, c, h * b, w * b}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j)
        for (int64_t k = 0; k < c; ++k)
          for (int64_t yy = 0; yy < h; ++yy)
            for (int64_t xx = 0; xx < w; ++xx) {
              const int64_t src = ((in * b * b * c + (i * b + j) * c + k) * h + yy) * w + xx;
              const int64_t dst = ((in * c + k) * h * b + yy * b + i) * w * b + xx * b + j;
              y.SetFlat(dst, x.GetFlat(src));
            }
  return y;
}
}  // namespace

TEST_CASE("depth_to_space and space_to_depth move blocks as MXNet's definitions", "[ops][depth_space][grad]") {
  for (int64_t b : {2, 3}) {
    INFO("block_size " << b);
    const KwArgs p = {{"block_size", std::to_string(b)}};
    NDArray x = RandomArray(TShape({2, b * b * 2, 2, 3}), 5);
    NDArray y = NaiveDepthToSpace(x, b);
    RequireClose(RunForward("depth_to_space", p, {{"data", x}}), y);
    RequireClose(RunForward("space_to_depth", p, {{"data", y}}), x);
    CheckGradients("depth_to_space", p, {{"data", RandomArray(TShape({1, b * b, 2, 1}), 6)}});
    CheckGradients("space_to_depth", p, {{"data", RandomArray(TShape({1, 2, b, 2 * b}), 7)}});
  }
  // Any dtype: a permutation of elements.
  NDArray xi = RandomArray(TShape({1, 4, 1, 2}), 8, 0, 50).AsType(DType::kInt32);
  NDArray yi = Invoke("depth_to_space", {{"block_size", "2"}}, {xi})[0];
  CHECK(yi.dtype() == DType::kInt32);
  RequireClose(yi.AsType(DType::kFloat32), NaiveDepthToSpace(xi.AsType(DType::kFloat32), 2));
}

TEST_CASE("depth_to_space and space_to_depth reject shapes the block does not fit", "[ops][depth_space]") {
  CHECK_THROWS_WITH(Invoke("depth_to_space", {{"block_size", "2"}}, {RandomArray(TShape({1, 3, 2, 2}), 1)}),
                    Catch::Contains("multiple of block_size"));
  CHECK_THROWS_WITH(Invoke("depth_to_space", {{"block_size", "2"}}, {RandomArray(TShape({1, 4, 0, 3}), 1)}),
                    Catch::Contains("cannot be 0"));
  CHECK_THROWS_WITH(Invoke("space_to_depth", {{"block_size", "2"}}, {RandomArray(TShape({1, 1, 3, 4}), 1)}),
                    Catch::Contains("multiples of block_size"));
  CHECK_THROWS_WITH(Invoke("space_to_depth", {{"block_size", "2"}}, {RandomArray(TShape({4, 4}), 1)}),
                    Catch::Contains("4-D"));
  CHECK_THROWS(Invoke("space_to_depth", {{"block_size", "0"}}, {RandomArray(TShape({1, 1, 2, 2}), 1)}));
}
