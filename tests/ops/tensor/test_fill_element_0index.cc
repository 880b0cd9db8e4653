// fill_element_0index: a copy of lhs with (i, rhs[i]) = mhs[i], against a naive loop; shape and
// index errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("fill_element_0index sets one element per row", "[ops][fill_element_0index]") {
  NDArray lhs = RandomArray(TShape({4, 3}), 5);
  const std::vector<float> vals = {10, 20, 30, 40}, cols = {2, 0, 0, 1};
  NDArray y = RunForward("fill_element_0index", {},
                         {{"lhs", lhs}, {"mhs", NDArray(TShape({4}), vals)}, {"rhs", NDArray(TShape({4}), cols)}});
  REQUIRE(y.shape() == TShape({4, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const bool hit = j == static_cast<int64_t>(cols[static_cast<size_t>(i)]);
      CHECK(y.At({i, j}) == (hit ? vals[static_cast<size_t>(i)] : lhs.At({i, j})));
    }
  CHECK_THROWS_WITH(Invoke("fill_element_0index", {},
                           {lhs, NDArray(TShape({4}), vals), NDArray(TShape({4}), std::vector<float>{0, 3, 0, 0})}),
                    Catch::Contains("fill_element_0index: index 3 is out of bounds for an axis of size 3"));
  CHECK_THROWS_WITH(Invoke("fill_element_0index", {}, {lhs, NDArray(TShape({2})), NDArray(TShape({4}))}),
                    Catch::Contains("mhs has 2 elements for the 4 rows of lhs"));
  CHECK_THROWS_WITH(Invoke("fill_element_0index", {}, {NDArray(TShape({4})), NDArray(TShape({4})), NDArray(TShape({4}))}),
                    Catch::Contains("lhs must be 2-D"));
}
