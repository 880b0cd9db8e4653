// _linalg_gemm and _linalg_gemm2: every transpose, alpha and beta, batches, the row axis,
// float32 and float64, gradients and shape errors.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

namespace {
Dense TransposedIf(const Dense& a, bool t) { return t ? Transposed(a) : a; }

// Swaps axes x and y of a 4-D float64 array, as numpy.swapaxes.
NDArray SwapAxes(const NDArray& a, int x, int y) {
  std::vector<int64_t> d = a.shape().dims();
  std::vector<int64_t> nd = d;
  std::swap(nd[static_cast<size_t>(x)], nd[static_cast<size_t>(y)]);
  NDArray out(TShape(nd), DType::kFloat64);
  const double* s = a.data<double>();
  double* o = out.data<double>();
  int64_t idx[4];
  for (idx[0] = 0; idx[0] < d[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < d[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < d[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < d[3]; ++idx[3]) {
          int64_t j[4] = {idx[0], idx[1], idx[2], idx[3]};
          std::swap(j[x], j[y]);
          o[((j[0] * nd[1] + j[1]) * nd[2] + j[2]) * nd[3] + j[3]] = s[((idx[0] * d[1] + idx[1]) * d[2] + idx[2]) * d[3] + idx[3]];
        }
  return out;
}
}  // namespace

TEST_CASE("linalg gemm and gemm2 with every transpose and alpha and beta", "[ops][linalg][gemm]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a=" << ta << " transpose_b=" << tb);
      const Dense a = RandomDense(ta ? 4 : 3, ta ? 3 : 4, 1), b = RandomDense(tb ? 5 : 4, tb ? 4 : 5, 2),
                  c = RandomDense(3, 5, 3);
      const Dense ab = MatMul(TransposedIf(a, ta), TransposedIf(b, tb));
      const KwArgs p = Flags({{"transpose_a", ta}, {"transpose_b", tb}}, {{"alpha", "-1.5"}, {"beta", "0.25"}});
      RequireNear(Invoke("_linalg_gemm", p, {Stack(a), Stack(b), Stack(c)})[0], Combine(-1.5, ab, 0.25, c), 1e-12);
      KwArgs p2 = p;
      p2.erase("beta");
      RequireNear(Invoke("linalg_gemm2", p2, {Stack(a), Stack(b)})[0], Combine(-1.5, ab), 1e-12);
      // float32 in, float32 out.
      NDArray y = Invoke("_linalg_gemm2", p2, {Stack(a, DType::kFloat32), Stack(b, DType::kFloat32)})[0];
      CHECK(y.dtype() == DType::kFloat32);
      RequireNear(y, Combine(-1.5, ab), 1e-5);
      CheckGradients64("_linalg_gemm", p, {{"A", Stack(a)}, {"B", Stack(b)}, {"C", Stack(c)}});
      CheckGradients64("_linalg_gemm2", p2, {{"A", Stack(a)}, {"B", Stack(b)}});
    }
}

TEST_CASE("linalg gemm on batches with the row axis moved", "[ops][linalg][gemm]") {
  std::vector<Dense> as, bs, cs, want;
  for (uint64_t i = 0; i < 6; ++i) {
    as.push_back(RandomDense(2, 3, 10 + i));
    bs.push_back(RandomDense(3, 4, 20 + i));
    cs.push_back(RandomDense(2, 4, 30 + i));
    want.push_back(Combine(4, MatMul(as.back(), bs.back()), 7, cs.back()));
  }
  const NDArray a = Stack(as, TShape({3, 2, 2, 3})), b = Stack(bs, TShape({3, 2, 3, 4})), c = Stack(cs, TShape({3, 2, 2, 4}));
  const KwArgs p = {{"alpha", "4"}, {"beta", "7"}};
  const NDArray y = Invoke("_linalg_gemm", p, {a, b, c})[0];
  CHECK(y.shape() == TShape({3, 2, 2, 4}));
  RequireNear(y, want, 1e-12);
  // Rows along axis 0 or axis -3 (= 1): the same products on swapped layouts.
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    KwArgs pa = p;
    pa["axis"] = axis == 0 ? "0" : "-3";
    const NDArray ya = Invoke("_linalg_gemm", pa, {SwapAxes(a, axis, 2), SwapAxes(b, axis, 2), SwapAxes(c, axis, 2)})[0];
    RequireNear(SwapAxes(ya, axis, 2), want, 1e-12);
    CheckGradients64("_linalg_gemm", pa, {{"A", SwapAxes(a, axis, 2)}, {"B", SwapAxes(b, axis, 2)}, {"C", SwapAxes(c, axis, 2)}});
    pa.erase("beta");
    RequireNear(SwapAxes(Invoke("_linalg_gemm2", pa, {SwapAxes(a, axis, 2), SwapAxes(b, axis, 2)})[0], axis, 2),
                [&] {
                  std::vector<Dense> w;
                  for (size_t i = 0; i < as.size(); ++i) w.push_back(Combine(4, MatMul(as[i], bs[i])));
                  return w;
                }(),
                1e-12);
  }
  CheckGradients64("_linalg_gemm", p, {{"A", a}, {"B", b}, {"C", c}});
}

TEST_CASE("linalg gemm refuses mismatched shapes", "[ops][linalg][gemm]") {
  const NDArray a = Stack(RandomDense(2, 3, 1)), b = Stack(RandomDense(4, 2, 2));
  CHECK_THROWS_AS(Invoke("_linalg_gemm2", {}, {a, b}), ShapeError);
  CHECK_THROWS_WITH(Invoke("_linalg_gemm2", {}, {a, b}), Catch::Contains("incompatible matrix dimensions"));
  CHECK_THROWS_AS(Invoke("_linalg_gemm2", {}, {NDArray(TShape({3}), DType::kFloat64), b}), ShapeError);
  CHECK_THROWS_AS(Invoke("_linalg_gemm2", {{"axis", "-1"}}, {a, Stack(RandomDense(3, 2, 2))}), ShapeError);
  CHECK_THROWS_AS(Invoke("_linalg_gemm2", {}, {NDArray(TShape({2, 2, 3}), DType::kFloat64),
                                              NDArray(TShape({3, 3, 2}), DType::kFloat64)}), ShapeError);
  CHECK_THROWS_AS(Invoke("_linalg_gemm", {}, {a, Stack(RandomDense(3, 2, 2)), Stack(RandomDense(3, 3, 2))}), ShapeError);
}
