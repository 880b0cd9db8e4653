// LRN: forward against MXNet's formula, gradients, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("LRN forward matches MXNet's formula", "[ops][LRN]") {
  NDArray x = RandomArray(TShape({2, 5, 2, 2}), 35, -2.0f, 2.0f);
  KwArgs kw{{"nsize", "3"}, {"alpha", "0.5"}, {"beta", "0.75"}, {"knorm", "1.5"}};
  NDArray y = RunForward("LRN", kw, {{"data", x}});
  NDArray want(x.shape());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t s = 0; s < 4; ++s) {
        double sq = 0;
        for (int64_t k = c - 1; k <= c + 1; ++k)
          if (k >= 0 && k < 5) sq += std::pow(x.GetFlat((n * 5 + k) * 4 + s), 2);
        int64_t at = (n * 5 + c) * 4 + s;
        want.SetFlat(at, static_cast<float>(x.GetFlat(at) * std::pow(1.5 + 0.5 / 3 * sq, -0.75)));
      }
  RequireClose(y, want);
}

TEST_CASE("LRN gradients, shapes and errors", "[ops][LRN][grad]") {
  CheckGradients("LRN", {{"nsize", "3"}, {"alpha", "0.5"}, {"knorm", "1"}},
                 {{"data", RandomArray(TShape({1, 4, 2, 1}), 36, -2.0f, 2.0f)}});
  CheckGradients("LRN", {{"nsize", "5"}, {"alpha", "0.3"}, {"beta", "0.5"}},
                 {{"data", RandomArray(TShape({2, 3, 1, 2}), 37, -2.0f, 2.0f)}});
  auto infer = [](const KwArgs& kw, const TShape& d) {
    Symbol s = Symbol::Create("LRN", "lrn", kw, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  CHECK(infer({{"nsize", "5"}}, TShape({1, 3, 4, 4})) == TShape({1, 3, 4, 4}));
  CHECK_THROWS_WITH(infer({{"nsize", "4"}}, TShape({1, 3, 4, 4})), Catch::Contains("odd values"));
  CHECK_THROWS_WITH(infer({{"nsize", "3"}}, TShape({3, 4})), Catch::Contains("4-D"));
  CHECK_THROWS_AS(Symbol::Create("LRN", "lrn", {}, {}), ParamError);  // nsize is required
}
