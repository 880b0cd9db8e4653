// Pooling_v1: a naive reference of MXNet's v1 arithmetic (zero padding seen by max pooling,
// avg divided by the kernel area, windows clipped to the padded input), gradients by finite
// differences, shapes for the valid and full conventions and global pooling.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
struct V1Case {
  std::string pool_type, convention;
  int64_t k, s, p;
  bool global = false;
};

NDArray NaivePoolV1(const NDArray& x, const V1Case& c) {
  const TShape& d = x.shape();
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3];
  const int64_t kh = c.global ? H : c.k, kw = c.global ? W : c.k, s = c.global ? 1 : c.s, p = c.global ? 0 : c.p;
  auto out_size = [&](int64_t in, int64_t k) {
    const double span = static_cast<double>(in + 2 * p - k) / s;
    return 1 + static_cast<int64_t>(c.convention == "full" ? std::ceil(span) : std::floor(span));
  };
  const int64_t OH = out_size(H, kh), OW = out_size(W, kw);
  NDArray y(TShape({N, C, OH, OW}));
  int64_t o = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = c.pool_type == "max" ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t py = oy * s; py < std::min(oy * s + kh, H + 2 * p); ++py)
            for (int64_t px = ox * s; px < std::min(ox * s + kw, W + 2 * p); ++px) {
              const int64_t iy = py - p, ix = px - p;
              const double v = iy >= 0 && iy < H && ix >= 0 && ix < W ? x.At({n, ch, iy, ix}) : 0.0;
              acc = c.pool_type == "max" ? std::max(acc, v) : acc + v;
            }
          if (c.pool_type == "avg") acc /= static_cast<double>(kh * kw);
          y.SetFlat(o++, static_cast<float>(acc));
        }
  return y;
}

KwArgs Params(const V1Case& c) {
  if (c.global) return {{"pool_type", c.pool_type}, {"global_pool", "True"}};
  const std::string k = std::to_string(c.k), s = std::to_string(c.s), p = std::to_string(c.p);
  return {{"pool_type", c.pool_type}, {"pooling_convention", c.convention}, {"kernel", "(" + k + "," + k + ")"},
          {"stride", "(" + s + "," + s + ")"}, {"pad", "(" + p + "," + p + ")"}};
}
}  // namespace

TEST_CASE("Pooling_v1 forward matches MXNet's v1 arithmetic", "[ops][Pooling_v1]") {
  // Values below zero show that max pooling sees the zero padding.
  NDArray x = RandomArray(TShape({2, 3, 7, 6}), 11, -2.0f, 0.5f);
  std::vector<V1Case> cases = {{"max", "valid", 3, 2, 1}, {"max", "full", 3, 2, 1}, {"avg", "valid", 2, 2, 0},
                               {"avg", "full", 3, 2, 1},  {"sum", "full", 2, 3, 1}, {"sum", "valid", 3, 1, 0},
                               {"max", "valid", 0, 0, 0, true}, {"avg", "valid", 0, 0, 0, true}};
  for (auto& c : cases) {
    INFO(c.pool_type << " " << c.convention << " k" << c.k << " s" << c.s << " p" << c.p << (c.global ? " global" : ""));
    RequireClose(RunForward("Pooling_v1", Params(c), {{"data", x}}), NaivePoolV1(x, c));
  }
}

TEST_CASE("Pooling_v1 gradients", "[ops][Pooling_v1][grad]") {
  NDArray x = RandomArray(TShape({1, 2, 5, 5}), 12);
  for (auto& c : std::vector<V1Case>{{"max", "valid", 2, 2, 1}, {"avg", "full", 3, 2, 1}, {"sum", "valid", 2, 1, 0},
                                     {"avg", "valid", 0, 0, 0, true}}) {
    INFO(c.pool_type << " " << c.convention);
    CheckGradients("Pooling_v1", Params(c), {{"data", x}});
  }
}

TEST_CASE("Pooling_v1 shapes and parameter errors", "[ops][Pooling_v1][shape]") {
  auto out = [](const KwArgs& p, const TShape& d) {
    Symbol s = Symbol::Create("Pooling_v1", "p", p, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  CHECK(out({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}}, TShape({1, 2, 8, 8})) == TShape({1, 2, 3, 3}));
  CHECK(out({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}}, TShape({1, 2, 8, 8})) ==
        TShape({1, 2, 4, 4}));
  CHECK(out({{"global_pool", "True"}}, TShape({1, 2, 8, 5})) == TShape({1, 2, 1, 1}));
  CHECK_THROWS_AS(out({{"kernel", "(9, 9)"}}, TShape({1, 2, 8, 8})), ShapeError);
  CHECK_THROWS_AS(out({{"kernel", "(2, 2)"}}, TShape({1, 2, 8})), ShapeError);
  CHECK_THROWS_AS(Symbol::Create("Pooling_v1", "p", {{"kernel", "(2, 2, 2)"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("Pooling_v1", "p", {}, {}), ParamError);  // no kernel, no global_pool
  CHECK_THROWS_AS(Symbol::Create("Pooling_v1", "p", {{"kernel", "(2, 2)"}, {"pool_type", "lp"}}, {}), ParamError);
}
