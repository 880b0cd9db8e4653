// _linalg_potrf and _linalg_potri: lower and upper factors of batches against a naive Cholesky
// (Cholesky-Banachiewicz), the inverse from the factor, gradients in float64, errors.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

namespace {
// The lower factor L of A = L L^T, column by column.
Dense NaiveCholesky(const Dense& a) {
  const int64_t n = a.rows;
  Dense l(n, n);
  for (int64_t j = 0; j < n; ++j) {
    double d = a(j, j);
    for (int64_t k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
    l(j, j) = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = a(i, j);
      for (int64_t k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = s / l(j, j);
    }
  }
  return l;
}
}  // namespace

TEST_CASE("linalg potrf factors batches of SPD matrices lower and upper", "[ops][linalg][potrf]") {
  std::vector<Dense> as, lower, upper;
  for (uint64_t i = 0; i < 6; ++i) {
    as.push_back(RandomSpd(4, 40 + i));
    lower.push_back(NaiveCholesky(as.back()));
    upper.push_back(Transposed(lower.back()));
  }
  const NDArray a = Stack(as, TShape({2, 3, 4, 4}));
  RequireNear(Invoke("_linalg_potrf", {}, {a})[0], lower, 1e-12, "lower");
  RequireNear(Invoke("linalg_potrf", {{"lower", "False"}}, {a})[0], upper, 1e-12, "upper");
  RequireNear(Invoke("_linalg_potrf", {}, {Stack(as, TShape({2, 3, 4, 4}), DType::kFloat32)})[0], lower, 1e-5, "float32");
  // Only the triangle named by `lower` is read.
  Dense junk_upper = as[0], junk_lower = as[0];
  junk_upper(0, 3) = 100;
  junk_lower(3, 0) = 100;
  RequireNear(Invoke("_linalg_potrf", {}, {Stack(junk_upper)})[0], lower[0], 1e-12);
  RequireNear(Invoke("_linalg_potrf", {{"lower", "False"}}, {Stack(junk_lower)})[0], upper[0], 1e-12);
}

TEST_CASE("linalg potrf gradients are symmetric as MXNet defines them", "[ops][linalg][potrf][grad]") {
  Grad64Options opt;
  opt.symmetric = "A";
  opt.matrix_size = 3;
  const NDArray a = Stack({RandomSpd(3, 50), RandomSpd(3, 51)}, TShape({2, 3, 3}));
  for (bool lower : {true, false}) {
    INFO("lower=" << lower);
    CheckGradients64("_linalg_potrf", Flags({{"lower", lower}}), {{"A", a}}, opt);
  }
}

TEST_CASE("linalg potrf names a matrix that is not positive definite", "[ops][linalg][potrf]") {
  Dense bad = RandomSpd(3, 60);
  bad(2, 2) = -5;
  const NDArray a = Stack({RandomSpd(3, 61), bad}, TShape({2, 3, 3}));
  CHECK_THROWS_WITH(Invoke("_linalg_potrf", {}, {a}),
                    Catch::Contains("_linalg_potrf") && Catch::Contains("matrix 1") && Catch::Contains("positive definite"));
  CHECK_THROWS_AS(Invoke("_linalg_potrf", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), ShapeError);
  CHECK_THROWS_WITH(Invoke("_linalg_potrf", {}, {NDArray(TShape({2, 3}), DType::kFloat64)}), Catch::Contains("square"));
  CHECK_THROWS_AS(Invoke("_linalg_potrf", {}, {NDArray(TShape({3}), DType::kFloat64)}), ShapeError);
  CHECK_THROWS_AS(Invoke("_linalg_potrf", {}, {NDArray(TShape({2, 2}), DType::kInt32)}), TypeError);
}

TEST_CASE("linalg potri inverts A from its Cholesky factor", "[ops][linalg][potri]") {
  std::vector<Dense> ls, us, want;
  for (uint64_t i = 0; i < 3; ++i) {
    ls.push_back(RandomTriangle(4, 70 + i, true));
    us.push_back(Transposed(ls.back()));
    want.push_back(NaiveInverse(MatMul(ls.back(), us.back())));
  }
  // The other triangle holds junk that must not be read.
  std::vector<Dense> l_junk = ls, u_junk = us;
  for (auto& m : l_junk) m(0, 2) = 9;
  for (auto& m : u_junk) m(2, 0) = 9;
  RequireNear(Invoke("_linalg_potri", {}, {Stack(l_junk, TShape({3, 4, 4}))})[0], want, 1e-10, "lower");
  RequireNear(Invoke("linalg_potri", {{"lower", "False"}}, {Stack(u_junk, TShape({3, 4, 4}))})[0], want, 1e-10, "upper");
  for (bool lower : {true, false}) {
    INFO("lower=" << lower);
    CheckGradients64("_linalg_potri", Flags({{"lower", lower}}), {{"A", Stack(lower ? l_junk : u_junk, TShape({3, 4, 4}))}});
  }
  Dense singular = ls[0];
  singular(1, 1) = 0;
  CHECK_THROWS_WITH(Invoke("_linalg_potri", {}, {Stack(singular)}), Catch::Contains("singular"));
}
