// _linalg_syrk: alpha A A^T and alpha A^T A, batched, with gradients.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg syrk multiplies a matrix with its transpose", "[ops][linalg][syrk]") {
  for (bool transpose : {false, true}) {
    INFO("transpose=" << transpose);
    std::vector<Dense> as, want;
    for (uint64_t i = 0; i < 3; ++i) {
      as.push_back(RandomDense(2, 5, 140 + i));
      const Dense at = Transposed(as.back());
      want.push_back(Combine(-2, transpose ? MatMul(at, as.back()) : MatMul(as.back(), at)));
    }
    const KwArgs p = Flags({{"transpose", transpose}}, {{"alpha", "-2"}});
    const NDArray a = Stack(as, TShape({3, 2, 5}));
    const NDArray y = Invoke("_linalg_syrk", p, {a})[0];
    CHECK(y.shape() == (transpose ? TShape({3, 5, 5}) : TShape({3, 2, 2})));
    RequireNear(y, want, 1e-12);
    CheckGradients64("linalg_syrk", p, {{"A", a}});
  }
  CHECK_THROWS_AS(Invoke("_linalg_syrk", {}, {NDArray(TShape({4}), DType::kFloat64)}), ShapeError);
}
