// _linalg_det and _linalg_slogdet against Laplace expansion, singular matrices, the hidden
// outputs, gradients.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg det and slogdet of batches", "[ops][linalg][det]") {
  std::vector<Dense> as;
  Dense det(1, 4), sign(1, 4), logabs(1, 4);
  for (int64_t i = 0; i < 4; ++i) {
    as.push_back(RandomDense(3, 3, 180 + static_cast<uint64_t>(i), -2, 2));
    det(0, i) = NaiveDet(as.back());
    sign(0, i) = det(0, i) > 0 ? 1 : -1;
    logabs(0, i) = std::log(std::fabs(det(0, i)));
  }
  const NDArray a = Stack(as, TShape({2, 2, 3, 3}));
  const auto d = Invoke("_linalg_det", {}, {a});
  REQUIRE(d.size() == 1);  // LU and pivots are hidden
  CHECK(d[0].shape() == TShape({2, 2}));
  RequireNear(d[0], det, 1e-12);
  const auto s = Invoke("linalg_slogdet", {}, {a});
  REQUIRE(s.size() == 2);
  RequireNear(s[0], sign, 0);
  RequireNear(s[1], logabs, 1e-12);
  CHECK(Invoke("_npi_det", {}, {Stack(as[0])})[0].shape() == TShape({1}));
  CheckGradients64("_linalg_det", {}, {{"A", a}});
  CheckGradients64("_linalg_slogdet", {}, {{"A", a}});
}

TEST_CASE("linalg det of a singular matrix is 0 with no gradient", "[ops][linalg][det]") {
  Dense singular(3, 3);
  singular.v = {1, 2, 3, 2, 4, 6, 0, 1, 1};
  CHECK(Doubles(Invoke("_linalg_det", {}, {Stack(singular)})[0])[0] == 0);
  const auto s = Invoke("_linalg_slogdet", {}, {Stack(singular)});
  CHECK(Doubles(s[0])[0] == 0);
  CHECK(std::isinf(Doubles(s[1])[0]));
  auto exec = BindSingleOp("_linalg_det", {}, {{"A", Stack(singular)}});
  exec->Forward(true);
  NDArray head(TShape({1}), DType::kFloat64);
  head.data<double>()[0] = 1;
  exec->Backward({head});
  for (double g : Doubles(exec->grad_arrays()[0])) CHECK(g == 0);
  CHECK_THROWS_AS(Invoke("_linalg_det", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), ShapeError);
}
