// _linalg_sumlogdiag: sum of the logs of each matrix's diagonal, batched, and its gradient.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg sumlogdiag sums the logs of each diagonal", "[ops][linalg][sumlogdiag]") {
  std::vector<Dense> as;
  Dense want(1, 6);
  for (int64_t i = 0; i < 6; ++i) {
    as.push_back(RandomDense(3, 3, 130 + static_cast<uint64_t>(i), 0.5, 2));
    for (int64_t k = 0; k < 3; ++k) want(0, i) += std::log(as.back()(k, k));
  }
  const NDArray a = Stack(as, TShape({2, 3, 3, 3}));
  const NDArray y = Invoke("linalg_sumlogdiag", {}, {a})[0];
  CHECK(y.shape() == TShape({2, 3}));
  RequireNear(y, want, 1e-12);
  // One matrix gives shape (1,).
  const NDArray one = Invoke("_linalg_sumlogdiag", {}, {Stack(as[0], DType::kFloat32)})[0];
  CHECK(one.shape() == TShape({1}));
  CHECK(one.dtype() == DType::kFloat32);
  CHECK(std::fabs(Doubles(one)[0] - want(0, 0)) < 1e-5);
  CheckGradients64("_linalg_sumlogdiag", {}, {{"A", a}});
  CHECK_THROWS_AS(Invoke("_linalg_sumlogdiag", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), ShapeError);
}
