// tile and repeat: forward and gradients.
#include <cmath>

#include <symbind/core/shape_semantics.h>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("tile forward and gradient", "[ops][tile][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 4);
  struct Case {
    std::string reps;
    TShape want;
  };
  for (auto& c : std::vector<Case>{{"(2,)", TShape({2, 6})}, {"(2,2)", TShape({4, 6})},
                                   {"(2,1,3)", TShape({2, 2, 9})}, {"()", TShape({2, 3})}}) {
    INFO(c.reps);
    NDArray y = RunForward("tile", {{"reps", c.reps}}, {{"data", x}});
    REQUIRE(y.shape() == c.want);
    for (int64_t k = 0; k < y.Size(); ++k) {
      auto oi = Unravel(k, c.want);
      int64_t r = oi[oi.size() - 2] % 2, col = oi.back() % 3;
      CHECK(y.GetFlat(k) == x.GetFlat(r * 3 + col));
    }
    CheckGradients("tile", {{"reps", c.reps}}, {{"data", x}});
  }
  // A 0 in reps makes an empty array under NumPy shape semantics only, as in MXNet.
  CHECK_THROWS_WITH(OutShape("tile", {{"reps", "(2,0)"}}, TShape({2, 3})), Catch::Contains("NumPy shape semantics"));
  const bool was = SetNumpyShapeSemantics(true);
  CHECK(OutShape("tile", {{"reps", "(2,0)"}}, TShape({2, 3})) == TShape({4, 0}));
  SetNumpyShapeSemantics(was);
}

TEST_CASE("repeat forward and gradient", "[ops][repeat][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 5);
  NDArray flat = RunForward("repeat", {{"repeats", "2"}}, {{"data", x}});
  REQUIRE(flat.shape() == TShape({12}));
  for (int64_t k = 0; k < 12; ++k) CHECK(flat.GetFlat(k) == x.GetFlat(k / 2));
  NDArray ax1 = RunForward("repeat", {{"repeats", "3"}, {"axis", "1"}}, {{"data", x}});
  REQUIRE(ax1.shape() == TShape({2, 9}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 9; ++c) CHECK(ax1.GetFlat(r * 9 + c) == x.GetFlat(r * 3 + c / 3));
  NDArray axm = RunForward("repeat", {{"repeats", "2"}, {"axis", "-2"}}, {{"data", x}});
  REQUIRE(axm.shape() == TShape({4, 3}));
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 3; ++c) CHECK(axm.GetFlat(r * 3 + c) == x.GetFlat((r / 2) * 3 + c));
  CheckGradients("repeat", {{"repeats", "2"}}, {{"data", x}});
  CheckGradients("repeat", {{"repeats", "3"}, {"axis", "1"}}, {{"data", x}});
  CheckGradients("repeat", {{"repeats", "2"}, {"axis", "0"}}, {{"data", x}});
  CHECK(OutShape("repeat", {{"repeats", "0"}, {"axis", "1"}}, TShape({2, 3})) == TShape({0}));
  CHECK_THAT(ErrorOf([] { OutShape("repeat", {{"repeats", "2"}, {"axis", "2"}}, TShape({2, 3})); }),
             Catch::Contains("axis 2 is out of range"));
}
