// _linalg_trmm and _linalg_trsm: every combination of transpose, rightside and lower with an
// alpha, on a batch, against naive products (trsm: out satisfies op(A) out = alpha B), gradients.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

namespace {
void ForEachCombination(const std::function<void(bool, bool, bool)>& fn) {
  for (bool transpose : {false, true})
    for (bool rightside : {false, true})
      for (bool lower : {false, true}) {
        INFO("transpose=" << transpose << " rightside=" << rightside << " lower=" << lower);
        fn(transpose, rightside, lower);
      }
}
}  // namespace

TEST_CASE("linalg trmm multiplies by a triangle", "[ops][linalg][trmm]") {
  ForEachCombination([](bool transpose, bool rightside, bool lower) {
    std::vector<Dense> as, bs, want;
    for (uint64_t i = 0; i < 2; ++i) {
      const Dense full = RandomDense(3, 3, 80 + i);  // the other triangle is junk
      const Dense t = TriangleOf(full, lower), ot = transpose ? Transposed(t) : t;
      as.push_back(full);
      bs.push_back(rightside ? RandomDense(4, 3, 90 + i) : RandomDense(3, 4, 90 + i));
      want.push_back(Combine(-2, rightside ? MatMul(bs.back(), ot) : MatMul(ot, bs.back())));
    }
    const KwArgs p = Flags({{"transpose", transpose}, {"rightside", rightside}, {"lower", lower}}, {{"alpha", "-2"}});
    const NDArray a = Stack(as, TShape({2, 3, 3})), b = Stack(bs, TShape({2, bs[0].rows, bs[0].cols}));
    RequireNear(Invoke("_linalg_trmm", p, {a, b})[0], want, 1e-12);
    CheckGradients64("_linalg_trmm", p, {{"A", a}, {"B", b}});
  });
}

TEST_CASE("linalg trsm solves with a triangle", "[ops][linalg][trsm]") {
  ForEachCombination([](bool transpose, bool rightside, bool lower) {
    std::vector<Dense> as, bs, ots;
    for (uint64_t i = 0; i < 2; ++i) {
      Dense full = RandomDense(3, 3, 100 + i);
      const Dense t = RandomTriangle(3, 110 + i, lower);
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 3; ++c)
          if (lower ? c <= r : c >= r) full(r, c) = t(r, c);
      as.push_back(full);
      ots.push_back(transpose ? Transposed(t) : t);
      bs.push_back(rightside ? RandomDense(4, 3, 120 + i) : RandomDense(3, 4, 120 + i));
    }
    const KwArgs p = Flags({{"transpose", transpose}, {"rightside", rightside}, {"lower", lower}}, {{"alpha", "0.5"}});
    const NDArray a = Stack(as, TShape({2, 3, 3})), b = Stack(bs, TShape({2, bs[0].rows, bs[0].cols}));
    const NDArray x = Invoke("_linalg_trsm", p, {a, b})[0];
    for (int64_t i = 0; i < 2; ++i) {
      const Dense xi = MatrixOf(x, i, bs[0].rows, bs[0].cols);
      // op(A) x = alpha B, or x op(A) = alpha B.
      const Dense back = rightside ? MatMul(xi, ots[static_cast<size_t>(i)]) : MatMul(ots[static_cast<size_t>(i)], xi);
      RequireNear(Stack(back), Combine(0.5, bs[static_cast<size_t>(i)]), 1e-12);
    }
    CheckGradients64("_linalg_trsm", p, {{"A", a}, {"B", b}});
  });
}

TEST_CASE("linalg trmm and trsm shapes and errors", "[ops][linalg][trmm][trsm]") {
  const NDArray a = Stack(RandomTriangle(3, 1, true)), b = Stack(RandomDense(3, 2, 2));
  CHECK(Invoke("_linalg_trmm", {}, {a, b})[0].shape() == TShape({3, 2}));
  CHECK_THROWS_AS(Invoke("_linalg_trmm", {{"rightside", "True"}}, {a, b}), ShapeError);
  CHECK_THROWS_AS(Invoke("_linalg_trsm", {}, {Stack(RandomDense(3, 2, 3)), b}), ShapeError);
  Dense singular = RandomTriangle(3, 4, true);
  singular(2, 2) = 0;
  CHECK_THROWS_WITH(Invoke("_linalg_trsm", {}, {Stack(singular), b}),
                    Catch::Contains("_linalg_trsm") && Catch::Contains("singular"));
}
