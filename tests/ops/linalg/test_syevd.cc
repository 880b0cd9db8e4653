// _linalg_syevd: A = U^T diag(L) U for symmetric A, eigenvalues ascending, MXNet's signs,
// batched, with gradients (symmetric perturbations, as the op reads one triangle).
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

namespace {
Dense RandomSymmetric(int64_t n, uint64_t seed) {
  const Dense r = RandomDense(n, n, seed);
  return Combine(0.5, r, 0.5, Transposed(r));
}
}  // namespace

TEST_CASE("linalg syevd decomposes symmetric matrices", "[ops][linalg][syevd]") {
  const int64_t n = 4;
  std::vector<Dense> as;
  for (uint64_t i = 0; i < 3; ++i) as.push_back(RandomSymmetric(n, 160 + i));
  const NDArray a = Stack(as, TShape({3, n, n}));
  const auto out = Invoke("_linalg_syevd", {}, {a});
  REQUIRE(out.size() == 2);
  CHECK(out[1].shape() == TShape({3, n}));
  for (int64_t b = 0; b < 3; ++b) {
    const Dense u = MatrixOf(out[0], b, n, n), l = MatrixOf(out[1], b, 1, n);
    Dense diag(n, n);
    for (int64_t i = 0; i < n; ++i) diag(i, i) = l(0, i);
    RequireNear(Stack(MatMul(u, Transposed(u))), Eye(n), 1e-12, "U U^T");
    RequireNear(Stack(MatMul(MatMul(Transposed(u), diag), u)), as[static_cast<size_t>(b)], 1e-12, "U^T L U");
    for (int64_t i = 0; i + 1 < n; ++i) CHECK(l(0, i) <= l(0, i + 1));
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = 0;
      for (int64_t j = 1; j < n; ++j)
        if (std::fabs(u(i, j)) > std::fabs(u(i, k))) k = j;
      CHECK(u(i, k) > 0);
    }
  }
  // MXNet's example (test_laop_4), in float32 too.
  Dense ex(2, 2);
  ex.v = {1, 2, 2, 4};
  Dense u_ex(2, 2), l_ex(1, 2);
  u_ex.v = {0.89442718, -0.44721359, 0.44721359, 0.89442718};
  l_ex.v = {0, 5};
  for (DType t : {DType::kFloat64, DType::kFloat32}) {
    const auto o = Invoke("_linalg_syevd", {}, {Stack(ex, t)});
    RequireNear(o[0], u_ex, 1e-6);
    RequireNear(o[1], l_ex, 1e-6);
  }
  Grad64Options opt;
  opt.symmetric = "A";
  opt.matrix_size = n;
  CheckGradients64("_linalg_syevd", {}, {{"A", a}}, opt);
  CHECK_THROWS_AS(Invoke("_linalg_syevd", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), ShapeError);
}
