// _linalg_inverse: batched inverses against Gauss-Jordan, gradients, a singular matrix.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg inverse inverts batches of matrices", "[ops][linalg][inverse]") {
  std::vector<Dense> as, want;
  for (uint64_t i = 0; i < 4; ++i) {
    as.push_back(Combine(1, RandomDense(3, 3, 170 + i), 3, Eye(3)));
    want.push_back(NaiveInverse(as.back()));
  }
  const NDArray a = Stack(as, TShape({2, 2, 3, 3}));
  RequireNear(Invoke("_linalg_inverse", {}, {a})[0], want, 1e-12);
  RequireNear(Invoke("_npi_inv", {}, {Stack(as, TShape({2, 2, 3, 3}), DType::kFloat32)})[0], want, 1e-5);
  CheckGradients64("linalg_inverse", {}, {{"A", a}});
  CHECK_THROWS_WITH(Invoke("_linalg_inverse", {}, {NDArray(TShape({2, 2}), DType::kFloat64)}),
                    Catch::Contains("singular"));
  CHECK_THROWS_AS(Invoke("_linalg_inverse", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), ShapeError);
}
