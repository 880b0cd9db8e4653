// _linalg_gelqf: A = L Q with Q's rows orthonormal and L lower triangular, batched, with
// gradients of Q and of L.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg gelqf factors wide matrices", "[ops][linalg][gelqf]") {
  for (auto mn : {std::pair<int64_t, int64_t>{3, 5}, {4, 4}, {1, 3}}) {
    const int64_t m = mn.first, n = mn.second;
    INFO(m << " x " << n);
    std::vector<Dense> as;
    for (uint64_t i = 0; i < 2; ++i) as.push_back(RandomDense(m, n, 150 + i));
    const NDArray a = Stack(as, TShape({2, m, n}));
    const auto out = Invoke("_linalg_gelqf", {}, {a});
    REQUIRE(out.size() == 2);
    CHECK(out[0].shape() == TShape({2, m, n}));
    CHECK(out[1].shape() == TShape({2, m, m}));
    for (int64_t b = 0; b < 2; ++b) {
      const Dense q = MatrixOf(out[0], b, m, n), l = MatrixOf(out[1], b, m, m);
      RequireNear(Stack(MatMul(q, Transposed(q))), Eye(m), 1e-12, "Q Q^T");
      RequireNear(Stack(MatMul(l, q)), as[static_cast<size_t>(b)], 1e-12, "L Q");
      RequireNear(Stack(l), TriangleOf(l, true), 0, "L lower");
    }
    CheckGradients64("linalg_gelqf", {}, {{"A", a}});
  }
  CHECK_THROWS_WITH(Invoke("_linalg_gelqf", {}, {NDArray(TShape({3, 2}), DType::kFloat64)}),
                    Catch::Contains("no more rows than columns"));
}
