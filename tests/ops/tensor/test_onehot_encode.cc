// _onehot_encode: 1 at (i, lhs[i]) in an array shaped like rhs, against a naive loop; shape
// and index errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_onehot_encode writes one 1 per row at the index", "[ops][onehot_encode]") {
  const std::vector<float> idx = {2, 0, 3, 3, 1.7f};  // 1.7 truncates to 1
  NDArray lhs(TShape({5}), idx);
  NDArray rhs = RandomArray(TShape({5, 4}), 3);
  NDArray y = RunForward("_onehot_encode", {}, {{"lhs", lhs}, {"rhs", rhs}});
  REQUIRE(y.shape() == TShape({5, 4}));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(y.At({i, j}) == (j == static_cast<int64_t>(idx[static_cast<size_t>(i)]) ? 1.0f : 0.0f));
  // The Python package passes rhs as the output as well: it is overwritten.
  Invoke("_onehot_encode", {}, {lhs, rhs}, {rhs});
  CHECK(rhs.ToVector() == y.ToVector());
  // Integer indices and an int32 target.
  NDArray ilhs(TShape({2}), DType::kInt64);
  ilhs.data<int64_t>()[0] = 1;
  ilhs.data<int64_t>()[1] = 0;
  NDArray irhs(TShape({2, 2}), DType::kInt32);
  NDArray iy = Invoke("_onehot_encode", {}, {ilhs, irhs})[0];
  CHECK(std::vector<int32_t>(iy.data<int32_t>(), iy.data<int32_t>() + 4) == std::vector<int32_t>{0, 1, 1, 0});

  CHECK_THROWS_WITH(Invoke("_onehot_encode", {}, {NDArray(TShape({5}), std::vector<float>{0, 1, 4, 0, 0}), rhs}),
                    Catch::Contains("_onehot_encode: index 4 is out of bounds for an axis of size 4"));
  CHECK_THROWS_WITH(Invoke("_onehot_encode", {}, {NDArray(TShape({3})), rhs}),
                    Catch::Contains("3 indices for 5 rows of rhs"));
  CHECK_THROWS_WITH(Invoke("_onehot_encode", {}, {NDArray(TShape({5, 1})), rhs}),
                    Catch::Contains("the indices (lhs) must be 1-D"));
}
