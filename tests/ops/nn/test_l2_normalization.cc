// L2Normalization: every mode forward, gradients, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("L2Normalization forward in all modes", "[ops][L2Normalization]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 27);
  for (std::string mode : {"instance", "channel", "spatial"}) {
    INFO(mode);
    NDArray y = RunForward("L2Normalization", {{"mode", mode}}, {{"data", x}});
    NDArray want(x.shape());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t s = 0; s < 4; ++s) {
          double sq = 0;
          for (int64_t c2 = 0; c2 < 3; ++c2)
            for (int64_t s2 = 0; s2 < 4; ++s2) {
              bool same_group = mode == "instance" || (mode == "channel" && s2 == s) || (mode == "spatial" && c2 == c);
              if (same_group) sq += std::pow(x.GetFlat((n * 3 + c2) * 4 + s2), 2);
            }
          int64_t at = (n * 3 + c) * 4 + s;
          want.SetFlat(at, static_cast<float>(x.GetFlat(at) / std::sqrt(sq + 1e-10)));
        }
    RequireClose(y, want);
  }
}

TEST_CASE("L2Normalization gradients, shapes and errors", "[ops][L2Normalization][grad]") {
  for (std::string mode : {"instance", "channel", "spatial"}) {
    INFO(mode);
    CheckGradients("L2Normalization", {{"mode", mode}}, {{"data", RandomArray(TShape({2, 3, 2}), 28)}});
  }
  auto infer = [](const std::string& mode, const TShape& d) {
    Symbol s = Symbol::Create("L2Normalization", "l2", {{"mode", mode}}, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  CHECK(infer("instance", TShape({2, 3})) == TShape({2, 3}));
  CHECK_THROWS_WITH(infer("channel", TShape({2, 3})), Catch::Contains("at least 3 dimensions"));
  CHECK_THROWS_AS(infer("bogus", TShape({2, 3})), ParamError);
  // eps 0 divided a zero row by sqrt(0); a negative eps took sqrt of a negative sum.
  for (const char* eps : {"0", "-1e-10"})
    CHECK_THROWS_WITH(Symbol::Create("L2Normalization", "l2", {{"eps", eps}}, {{"data", Symbol::Variable("data")}}),
                      Catch::StartsWith(StrCat("value ", eps, " for Parameter eps should be > 0 (the norm is divided by sqrt(sum + eps))")));
}
